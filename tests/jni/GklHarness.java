import com.intel.gkl.pairhmm.IntelPairHmm;
import com.intel.gkl.pairhmm.IntelPairHmmOMP;
import org.broadinstitute.gatk.nativebindings.pairhmm.HaplotypeDataHolder;
import org.broadinstitute.gatk.nativebindings.pairhmm.ReadDataHolder;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Replays HaplotypeCaller's --pair-hmm-results-file dumps through the
 * GKL-compatible library as GATK calls it: one computeLikelihoods per
 * region (a run of reads that share one haplotype list, as haplik rebuilds
 * regions), holders with raw Phred qualities, results read-major.
 *
 *   java -Djava.library.path=DIR GklHarness LIB COMMAND ...
 *     LIB: gkl_pairhmm_omp or gkl_pairhmm (loaded by System.loadLibrary)
 *     replay DUMP TOL TSV mixed|double [TOL2]
 *                                        each value within TOL of the dump's expected value and
 *                                        within TOL2 [1e-12] of `haplik score` (TSV, 12 decimals)
 *     threads DUMP N ROUNDS [TOL]       N threads, one object each, ROUNDS replays: results
 *                                        identical to one thread's (within TOL where given: a
 *                                        GPU's calls against one thread's CPU calls)
 *     errors DUMP                       every bad call raises its exception; a good call after
 *     lifecycle DUMP                    initNative / doneNative counting across objects
 *     bench DUMP THREADS SECONDS        pairs per second, THREADS Java threads (maxThreads 1 each)
 * Prints "ok ..." lines; a failure prints "FAIL ..." and exits 1.
 */
public final class GklHarness {
    static final class Region {
        final ReadDataHolder[] reads;
        final HaplotypeDataHolder[] haps;
        final double[] expected;    // read-major, as the dump lists them
        Region(ReadDataHolder[] r, HaplotypeDataHolder[] h, double[] e) { reads = r; haps = h; expected = e; }
        int pairs() { return reads.length * haps.length; }
    }

    static byte[] phred(String s) {
        byte[] q = new byte[s.length()];
        for (int i = 0; i < q.length; i++) q[i] = (byte) (s.charAt(i) - 33);
        return q;
    }

    /** The dump's records grouped by read, then reads sharing a haplotype list into regions. */
    static List<Region> load(String path) throws IOException {
        List<String[]> recs = new ArrayList<>();
        try (BufferedReader in = Files.newBufferedReader(Paths.get(path))) {
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isEmpty() || line.startsWith("#")) continue;
                recs.add(line.trim().split("\\s+"));
            }
        }
        List<Region> regions = new ArrayList<>();
        int k = 0;
        List<ReadDataHolder> reads = new ArrayList<>();
        List<Double> expected = new ArrayList<>();
        List<String> hapList = null;
        while (k < recs.size()) {
            String[] first = recs.get(k);
            List<String> haps = new ArrayList<>();
            List<Double> vals = new ArrayList<>();
            // one read: consecutive records with the same read fields, until a haplotype repeats
            while (k < recs.size() && Arrays.equals(Arrays.copyOfRange(recs.get(k), 1, 6), Arrays.copyOfRange(first, 1, 6))
                   && !haps.contains(recs.get(k)[0])) {
                haps.add(recs.get(k)[0]);
                vals.add(Double.parseDouble(recs.get(k)[6]));
                k++;
            }
            if (hapList != null && !hapList.equals(haps)) {
                regions.add(region(reads, hapList, expected));
                reads = new ArrayList<>();
                expected = new ArrayList<>();
            }
            hapList = haps;
            ReadDataHolder r = new ReadDataHolder();
            r.readBases = first[1].getBytes();
            r.readQuals = phred(first[2]);
            r.insertionGOP = phred(first[3]);
            r.deletionGOP = phred(first[4]);
            r.overallGCP = phred(first[5]);
            reads.add(r);
            expected.addAll(vals);
        }
        if (hapList != null) regions.add(region(reads, hapList, expected));
        return regions;
    }

    static Region region(List<ReadDataHolder> reads, List<String> hapList, List<Double> expected) {
        HaplotypeDataHolder[] haps = new HaplotypeDataHolder[hapList.size()];
        for (int h = 0; h < haps.length; h++) {
            haps[h] = new HaplotypeDataHolder();
            haps[h].haplotypeBases = hapList.get(h).getBytes();
        }
        double[] e = new double[expected.size()];
        for (int i = 0; i < e.length; i++) e[i] = expected.get(i);
        return new Region(reads.toArray(new ReadDataHolder[0]), haps, e);
    }

    static double[][] replay(IntelPairHmm hmm, List<Region> regions) {
        double[][] out = new double[regions.size()][];
        for (int i = 0; i < out.length; i++) {
            Region g = regions.get(i);
            out[i] = new double[g.pairs()];
            hmm.computeLikelihoods(g.reads, g.haps, out[i]);
        }
        return out;
    }

    static void fail(String what) {
        System.out.println("FAIL " + what);
        System.exit(1);
    }

    static IntelPairHmm newHmm(String lib) {
        return lib.equals("gkl_pairhmm_omp") ? new IntelPairHmmOMP() : new IntelPairHmm();
    }

    /** haplik score's log10_likelihood column, in table order. */
    static double[] tsv(String path) throws IOException {
        List<Double> v = new ArrayList<>();
        List<String> lines = Files.readAllLines(Paths.get(path));
        int col = java.util.Arrays.asList(lines.get(0).split("\t", -1)).indexOf("log10_likelihood");
        if (col < 0) fail(path + ": no log10_likelihood column in the header row");
        for (String line : lines.subList(1, lines.size()))
            v.add(Double.parseDouble(line.split("\t", -1)[col]));
        double[] a = new double[v.size()];
        for (int i = 0; i < a.length; i++) a[i] = v.get(i);
        return a;
    }

    static void replayCmd(String lib, List<Region> regions, double tol, String tsvPath, boolean dbl, double tol2)
        throws IOException {
        IntelPairHmm hmm = newHmm(lib);
        hmm.initialize(dbl, 4);
        double[][] out = replay(hmm, regions);
        hmm.done();
        double[] ref = tsv(tsvPath);
        int k = 0;
        double worstExp = 0, worstRef = 0;
        for (int i = 0; i < regions.size(); i++)
            for (int p = 0; p < out[i].length; p++, k++) {
                if (k >= ref.length) fail("haplik's table has fewer pairs than the dump");
                worstExp = Math.max(worstExp, Math.abs(out[i][p] - regions.get(i).expected[p]));
                worstRef = Math.max(worstRef, Math.abs(out[i][p] - ref[k]));
            }
        if (k != ref.length) fail("haplik's table has " + ref.length + " pairs, the dump " + k);
        String what = String.format("%s %s: %d regions, %d pairs; largest difference from the dump's expected %.3g "
                                    + "(tolerance %.3g), from haplik score %.3g", lib, dbl ? "double" : "mixed",
                                    regions.size(), k, worstExp, tol, worstRef);
        if (!(worstExp <= tol) || !(worstRef <= tol2)) fail(what);
        System.out.println("ok " + what);
    }

    static double worstDiff(double[][] a, double[][] b) {
        double w = 0;
        for (int i = 0; i < a.length; i++)
            for (int p = 0; p < a[i].length; p++) {
                double d = Math.abs(a[i][p] - b[i][p]);
                w = Math.max(w, Double.isNaN(d) ? Double.POSITIVE_INFINITY : d);
            }
        return w;
    }

    static void threadsCmd(String lib, List<Region> regions, int n, int rounds, double tol) throws Exception {
        IntelPairHmm one = newHmm(lib);
        one.initialize(false, 1);
        double[][] ref = replay(one, regions);   // one stays open meanwhile, as GATK's engines do
        AtomicReference<String> bad = new AtomicReference<>();
        Thread[] t = new Thread[n];
        for (int i = 0; i < n; i++) {
            t[i] = new Thread(() -> {
                try {
                    IntelPairHmm hmm = newHmm(lib);
                    hmm.initialize(false, 1);
                    for (int r = 0; r < rounds; r++) {
                        double[][] got = replay(hmm, regions);
                        if (tol == 0 ? !Arrays.deepEquals(got, ref) : worstDiff(got, ref) > tol)
                            bad.compareAndSet(null, "results differ from one thread's by " + worstDiff(got, ref));
                    }
                    hmm.done();
                } catch (Throwable e) {
                    bad.compareAndSet(null, e.toString());
                }
            });
            t[i].start();
        }
        for (Thread x : t) x.join();
        one.done();
        if (bad.get() != null) fail(lib + " threads: " + bad.get());
        System.out.println("ok " + lib + ": " + n + " threads, one object each, " + rounds
                           + " replays each: results " + (tol == 0 ? "identical to" : "within " + tol + " of") + " one thread's");
    }

    interface Call { void run(); }

    static int expect(String what, Class<? extends Throwable> cls, Call c) {
        try {
            c.run();
        } catch (Throwable e) {
            if (cls.isInstance(e)) {
                System.out.println("ok " + what + ": " + e.getClass().getSimpleName() + ": " + e.getMessage());
                return 0;
            }
            System.out.println("FAIL " + what + ": " + e + " instead of " + cls.getSimpleName());
            return 1;
        }
        System.out.println("FAIL " + what + ": no exception (expected " + cls.getSimpleName() + ")");
        return 1;
    }

    static ReadDataHolder copy(ReadDataHolder r) {
        ReadDataHolder c = new ReadDataHolder();
        c.readBases = r.readBases.clone();
        c.readQuals = r.readQuals.clone();
        c.insertionGOP = r.insertionGOP.clone();
        c.deletionGOP = r.deletionGOP.clone();
        c.overallGCP = r.overallGCP.clone();
        return c;
    }

    /** Region g with read 0 replaced by a changed copy. */
    static ReadDataHolder[] withRead(Region g, java.util.function.Consumer<ReadDataHolder> change) {
        ReadDataHolder[] r = g.reads.clone();
        r[0] = copy(r[0]);
        change.accept(r[0]);
        return r;
    }

    static HaplotypeDataHolder[] withHap(Region g, byte[] bases) {
        HaplotypeDataHolder[] h = g.haps.clone();
        h[0] = new HaplotypeDataHolder();
        h[0].haplotypeBases = bases;
        return h;
    }

    static void errorsCmd(String lib, List<Region> regions) {
        Region g = regions.get(0);
        IntelPairHmm hmm = newHmm(lib);
        int failed = 0;
        failed += expect("computeLikelihoodsNative before any initNative", IllegalStateException.class,
                         () -> hmm.computeUnchecked(g.reads, g.haps, new double[g.pairs()]));
        failed += expect("initNative with a null read holder class", NullPointerException.class,
                         () -> IntelPairHmm.initializeWith(null, HaplotypeDataHolder.class, false, 1));
        failed += expect("initNative with a holder class lacking GATK's fields", IllegalArgumentException.class,
                         () -> IntelPairHmm.initializeWith(String.class, HaplotypeDataHolder.class, false, 1));
        hmm.initialize(false, 2);
        double[] good = new double[g.pairs()];
        failed += expect("likelihood array one too short", IllegalArgumentException.class,
                         () -> hmm.computeUnchecked(g.reads, g.haps, new double[g.pairs() - 1]));
        failed += expect("likelihood array one too long", IllegalArgumentException.class,
                         () -> hmm.computeUnchecked(g.reads, g.haps, new double[g.pairs() + 1]));
        failed += expect("null likelihood array", NullPointerException.class,
                         () -> hmm.computeUnchecked(g.reads, g.haps, null));
        failed += expect("null read array", NullPointerException.class,
                         () -> hmm.computeUnchecked(null, g.haps, good));
        failed += expect("null haplotype array", NullPointerException.class,
                         () -> hmm.computeUnchecked(g.reads, null, good));
        failed += expect("null read holder", NullPointerException.class, () -> {
            ReadDataHolder[] r = g.reads.clone();
            r[1] = null;
            hmm.computeUnchecked(r, g.haps, good);
        });
        failed += expect("null haplotype holder", NullPointerException.class, () -> {
            HaplotypeDataHolder[] h = g.haps.clone();
            h[h.length - 1] = null;
            hmm.computeUnchecked(g.reads, h, good);
        });
        String[] fields = { "readBases", "readQuals", "insertionGOP", "deletionGOP", "overallGCP" };
        for (int f = 0; f < fields.length; f++) {
            final int ff = f;
            failed += expect("null " + fields[f], NullPointerException.class,
                             () -> hmm.computeUnchecked(withRead(g, r -> set(r, ff, null)), g.haps, good));
            if (f > 0)
                failed += expect(fields[f] + " shorter than the bases", IllegalArgumentException.class,
                                 () -> hmm.computeUnchecked(withRead(g, r -> set(r, ff, Arrays.copyOf(get(r, ff),
                                                            r.readBases.length - 1))), g.haps, good));
        }
        failed += expect("null haplotypeBases", NullPointerException.class,
                         () -> hmm.computeUnchecked(g.reads, withHap(g, null), good));
        for (char c : new char[] { 'X', 'a', '.', '\0' }) {
            failed += expect(String.format("read base 0x%02x", (int) c), IllegalArgumentException.class,
                             () -> hmm.computeUnchecked(withRead(g, r -> r.readBases[3] = (byte) c), g.haps, good));
            failed += expect(String.format("haplotype base 0x%02x", (int) c), IllegalArgumentException.class, () -> {
                byte[] b = g.haps[0].haplotypeBases.clone();
                b[b.length - 1] = (byte) c;
                hmm.computeUnchecked(g.reads, withHap(g, b), good);
            });
        }
        failed += expect("negative base quality", IllegalArgumentException.class,
                         () -> hmm.computeUnchecked(withRead(g, r -> r.readQuals[0] = -5), g.haps, good));
        // qualities above 93 are used as 93 (GKL takes up to 127): the same results
        double[] q93 = new double[g.pairs()], q120 = new double[g.pairs()];
        hmm.computeLikelihoods(withRead(g, r -> { r.readQuals[0] = 93; r.insertionGOP[1] = 93; }), g.haps, q93);
        hmm.computeLikelihoods(withRead(g, r -> { r.readQuals[0] = 120; r.insertionGOP[1] = 127; }), g.haps, q120);
        if (!Arrays.equals(q93, q120)) { System.out.println("FAIL qualities above 93 differ from 93"); failed++; }
        else System.out.println("ok qualities above 93 score as 93");
        failed += expect("gap-open qualities Q0", IllegalArgumentException.class,
                         () -> hmm.computeUnchecked(withRead(g, r -> { r.insertionGOP[2] = 0; r.deletionGOP[2] = 0; }), g.haps, good));
        failed += expect("gap-continuation quality Q0", IllegalArgumentException.class,
                         () -> hmm.computeUnchecked(withRead(g, r -> r.overallGCP[2] = 0), g.haps, good));
        failed += expect("a read array holding another class", IllegalArgumentException.class, () -> {
            Object[] r = Arrays.copyOf(g.reads, g.reads.length, Object[].class);
            r[0] = "not a holder";
            hmm.computeUnchecked(r, g.haps, good);
        });
        failed += expect("a haplotype holder in the read array", IllegalArgumentException.class, () -> {
            Object[] r = Arrays.copyOf(g.reads, g.reads.length, Object[].class);
            r[0] = g.haps[0];
            hmm.computeUnchecked(r, g.haps, good);
        });
        // a refused call writes nothing; and the library still scores correctly
        double[] out = new double[g.pairs()];
        Arrays.fill(out, 42.0);
        expect("a refused call", IllegalArgumentException.class,
               () -> hmm.computeUnchecked(withRead(g, r -> r.readBases[0] = 'Z'), g.haps, out));
        for (double v : out) if (v != 42.0) { System.out.println("FAIL a refused call wrote into the likelihood array"); failed++; break; }
        double[][] after = replay(hmm, regions);
        double worst = 0;
        for (int i = 0; i < regions.size(); i++)
            for (int p = 0; p < after[i].length; p++)
                worst = Math.max(worst, Math.abs(after[i][p] - regions.get(i).expected[p]));
        if (worst > 2e-5) { System.out.println("FAIL good calls after the bad ones: " + worst); failed++; }
        else System.out.println("ok good calls after the bad ones: within " + worst + " of the dump");
        double[] none = new double[0];
        hmm.computeLikelihoods(new ReadDataHolder[0], g.haps, none);
        hmm.computeLikelihoods(g.reads, new HaplotypeDataHolder[0], none);
        // also as a thread's first call (the library keeps each thread's memory)
        for (int k = 0; k < 2; k++) {
            final boolean noReads = k == 0;
            Thread first = new Thread(() -> hmm.computeLikelihoods(noReads ? new ReadDataHolder[0] : g.reads,
                                                                   noReads ? g.haps : new HaplotypeDataHolder[0], none));
            first.start();
            try { first.join(); } catch (InterruptedException e) { throw new RuntimeException(e); }
        }
        System.out.println("ok a call with no reads or no haplotypes returns nothing, a thread's first too");
        hmm.done();
        if (failed > 0) fail(failed + " bad calls not refused as they should be");
    }

    static byte[] get(ReadDataHolder r, int f) {
        switch (f) {
        case 0: return r.readBases;
        case 1: return r.readQuals;
        case 2: return r.insertionGOP;
        case 3: return r.deletionGOP;
        default: return r.overallGCP;
        }
    }

    static void set(ReadDataHolder r, int f, byte[] v) {
        switch (f) {
        case 0: r.readBases = v; break;
        case 1: r.readQuals = v; break;
        case 2: r.insertionGOP = v; break;
        case 3: r.deletionGOP = v; break;
        default: r.overallGCP = v; break;
        }
    }

    static void lifecycleCmd(String lib, List<Region> regions) {
        Region g = regions.get(0);
        int failed = 0;
        IntelPairHmm a = newHmm(lib), b = newHmm(lib);
        a.initialize(false, 1);
        b.initialize(false, 1);
        a.done();
        double[] out = new double[g.pairs()];
        b.computeLikelihoods(g.reads, g.haps, out);   // b still holds the library
        if (Math.abs(out[0] - g.expected[0]) > 2e-5) { System.out.println("FAIL b after a's done"); failed++; }
        else System.out.println("ok one object's doneNative leaves another's scoring intact");
        b.done();
        failed += expect("computeLikelihoodsNative after every object's doneNative", IllegalStateException.class,
                         () -> b.computeUnchecked(g.reads, g.haps, new double[g.pairs()]));
        IntelPairHmm c = newHmm(lib);
        for (int i = 0; i < 3; i++) c.initialize(i == 1, 1);   // initNative many times
        c.computeLikelihoods(g.reads, g.haps, out);
        if (Math.abs(out[0] - g.expected[0]) > 2e-5) { System.out.println("FAIL after re-initialisation"); failed++; }
        else System.out.println("ok initNative again after the last doneNative, and many times");
        if (failed > 0) fail("lifecycle");
    }

    static void benchCmd(String lib, List<Region> regions, int threads, double seconds) throws Exception {
        long[] pairs = new long[threads];
        Thread[] t = new Thread[threads];
        final long end = System.nanoTime() + (long) (seconds * 1e9);
        for (int i = 0; i < threads; i++) {
            final int me = i;
            t[i] = new Thread(() -> {
                IntelPairHmm hmm = newHmm(lib);
                hmm.initialize(false, 1);
                double[][] out = new double[regions.size()][];
                for (int k = 0; k < out.length; k++) out[k] = new double[regions.get(k).pairs()];
                for (int k = 0; System.nanoTime() < end; k = (k + 1) % out.length) {
                    Region g = regions.get(k);
                    hmm.computeLikelihoods(g.reads, g.haps, out[k]);
                    pairs[me] += g.pairs();
                }
                hmm.done();
            });
        }
        long t0 = System.nanoTime();
        for (Thread x : t) x.start();
        for (Thread x : t) x.join();
        double s = (System.nanoTime() - t0) * 1e-9;
        long total = 0;
        for (long p : pairs) total += p;
        System.out.printf("ok %s bench: %d Java threads, %d regions, %.4g pairs/s%n", lib, threads, regions.size(), total / s);
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) fail("usage: GklHarness LIB COMMAND DUMP ...");
        String lib = args[0];
        System.loadLibrary(lib);
        List<Region> regions = load(args[2]);
        switch (args[1]) {
        case "replay": replayCmd(lib, regions, Double.parseDouble(args[3]), args[4], args[5].equals("double"),
                                 args.length > 6 ? Double.parseDouble(args[6]) : 1e-12); break;
        case "threads": threadsCmd(lib, regions, Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                                  args.length > 5 ? Double.parseDouble(args[5]) : 0); break;
        case "errors": errorsCmd(lib, regions); break;
        case "lifecycle": lifecycleCmd(lib, regions); break;
        case "bench": benchCmd(lib, regions, Integer.parseInt(args[3]), Double.parseDouble(args[4])); break;
        default: fail("unknown command " + args[1]);
        }
    }
}
