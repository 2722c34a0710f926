import com.intel.gkl.IntelGKLUtils;
import com.intel.gkl.pairhmm.IntelPairHmmOMP;
import org.broadinstitute.gatk.nativebindings.pairhmm.HaplotypeDataHolder;
import org.broadinstitute.gatk.nativebindings.pairhmm.PairHMMNativeArguments;
import org.broadinstitute.gatk.nativebindings.pairhmm.ReadDataHolder;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * HaplotypeCaller's loading path through GKL's own classes (the real gkl.jar,
 * not the stand-ins of tests/jni): IntelPairHmmOMP.load asks IntelGKLUtils
 * (libgkl_utils.so) whether AVX is supported, then loads gkl_pairhmm_omp from
 * java.library.path; initialize and computeLikelihoods as GATK calls them.
 *
 *   java -Djava.library.path=DIR -cp gkl.jar:...:CLASSES GklReal utils
 *       each IntelGKLUtils answer on its own line ("avx true", "threads N", ...)
 *   java ... GklReal replay DUMP TOL mixed|double
 *       every pair of a HaplotypeCaller results dump, one computeLikelihoods per
 *       region; prints "ok replay P: N pairs, largest difference D" when each is
 *       within TOL of the dump's expected value, else "FAIL ..." and exits 1
 */
public final class GklReal {
    static void fail(String what) {
        System.out.println("FAIL " + what);
        System.exit(1);
    }

    static byte[] phred(String s) {
        byte[] q = new byte[s.length()];
        for (int i = 0; i < q.length; i++) q[i] = (byte) (s.charAt(i) - 33);
        return q;
    }

    public static void main(String[] a) throws Exception {
        if (a.length == 1 && a[0].equals("utils")) {
            IntelGKLUtils u = new IntelGKLUtils();
            if (!u.load(null)) fail("IntelGKLUtils.load: gkl_utils not loaded");
            System.out.println("avx " + u.isAvxSupported());
            System.out.println("avx2 " + u.isAvx2Supported());
            System.out.println("avx512 " + u.isAvx512Supported());
            boolean was = u.getFlushToZero();
            u.setFlushToZero(true);
            boolean on = u.getFlushToZero();
            u.setFlushToZero(false);
            boolean off = u.getFlushToZero();
            u.setFlushToZero(was);
            System.out.println("ftz set " + on + " cleared " + off);
            System.out.println("threads " + u.getAvailableOmpThreads());
            return;
        }
        if (a.length != 4 || !a[0].equals("replay")) fail("usage: utils | replay DUMP TOL mixed|double");
        double tol = Double.parseDouble(a[2]);
        IntelPairHmmOMP hmm = new IntelPairHmmOMP();
        if (!hmm.load(null)) fail("IntelPairHmmOMP.load refused (gkl_utils or gkl_pairhmm_omp not loaded)");
        PairHMMNativeArguments args = new PairHMMNativeArguments();
        args.useDoublePrecision = a[3].equals("double");
        args.maxNumberOfThreads = 2;
        hmm.initialize(args);

        List<String[]> recs = new ArrayList<>();
        for (String line : Files.readAllLines(Paths.get(a[1])))
            if (!line.isEmpty() && !line.startsWith("#")) recs.add(line.trim().split("\\s+"));
        // a read: consecutive records with the same read fields until a haplotype repeats;
        // a region: consecutive reads with the same haplotype list
        int k = 0, pairs = 0;
        double worst = 0;
        while (k < recs.size()) {
            List<String> haps = null;
            List<ReadDataHolder> reads = new ArrayList<>();
            List<Double> expected = new ArrayList<>();
            while (k < recs.size()) {
                String[] first = recs.get(k);
                List<String> h = new ArrayList<>();
                List<Double> v = new ArrayList<>();
                int j = k;
                while (j < recs.size() && Arrays.equals(Arrays.copyOfRange(recs.get(j), 1, 6),
                                                        Arrays.copyOfRange(first, 1, 6))
                       && !h.contains(recs.get(j)[0])) {
                    h.add(recs.get(j)[0]);
                    v.add(Double.parseDouble(recs.get(j)[6]));
                    j++;
                }
                if (haps != null && !haps.equals(h)) break;
                haps = h;
                ReadDataHolder r = new ReadDataHolder();
                r.readBases = first[1].getBytes();
                r.readQuals = phred(first[2]);
                r.insertionGOP = phred(first[3]);
                r.deletionGOP = phred(first[4]);
                r.overallGCP = phred(first[5]);
                reads.add(r);
                expected.addAll(v);
                k = j;
            }
            HaplotypeDataHolder[] hh = new HaplotypeDataHolder[haps.size()];
            for (int h = 0; h < hh.length; h++) {
                hh[h] = new HaplotypeDataHolder();
                hh[h].haplotypeBases = haps.get(h).getBytes();
            }
            double[] out = new double[expected.size()];
            hmm.computeLikelihoods(reads.toArray(new ReadDataHolder[0]), hh, out);
            for (int i = 0; i < out.length; i++) {
                double d = Math.abs(out[i] - expected.get(i));
                if (!(d <= tol)) fail("pair " + (pairs + i) + ": " + out[i] + ", expected " + expected.get(i));
                worst = Math.max(worst, d);
            }
            pairs += out.length;
        }
        hmm.done();
        if (pairs == 0) fail(a[1] + ": no pairs");
        System.out.println("ok replay " + a[3] + ": " + pairs + " pairs, largest difference " + worst);
    }
}
