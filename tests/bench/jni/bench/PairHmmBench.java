package bench;

import com.intel.gkl.pairhmm.IntelPairHmm;
import com.intel.gkl.pairhmm.IntelPairHmmOMP;
import org.broadinstitute.gatk.nativebindings.pairhmm.HaplotypeDataHolder;
import org.broadinstitute.gatk.nativebindings.pairhmm.PairHMMNativeArguments;
import org.broadinstitute.gatk.nativebindings.pairhmm.ReadDataHolder;

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.GZIPInputStream;

/**
 * Replays a HaplotypeCaller Pair-HMM results file region by region through a GKL-compatible
 * native library, as HaplotypeCaller calls it: one computeLikelihoods per region, from T Java
 * threads, each with its own object (initialised in that thread, so GKL's flush-to-zero
 * setting, which is per thread, holds where it computes). Prints one line of key=value pairs,
 * mapped= naming the Pair-HMM library the process mapped (/proc/self/maps).
 *
 *   java -Djava.library.path=DIR -cp CLASSES bench.PairHmmBench (--library LIB | --class C)
 *        --dump FILE[.gz] [--threads T] [--max-threads M] [--seconds S] [--warmup S]
 *        [--double] [--results FILE] [--first N] [--list-regions]
 *
 * It compiles against GKL's own classes (GKL's jar and gatk-native-bindings) as against the
 * stand-ins of tests/jni. --class omp (IntelPairHmmOMP) or avx (IntelPairHmm) creates that
 * class's objects and loads the library as GKL's load() does; --library LIB loads LIB with
 * System.loadLibrary and uses IntelPairHmm (the stand-ins only).
 * A region is a run of consecutive records that share one list of haplotypes, rebuilt as
 * haplik rebuilds them from such a file. --results scores every region once, in order, on each
 * of T threads (--threads), stops with an error unless every thread's values have the same bits
 * as the first's, and writes the values one per line (read-major, the file's record order)
 * instead of timing. --first N times a fresh object's first pass over the regions, then N more
 * passes: first_us is the first call's time, later_us the median of region 0's later calls.
 * --list-regions prints each region's reads and haplotypes ("R H") instead.
 */
public final class PairHmmBench {
    private static final class Region {
        final ReadDataHolder[] reads;
        final HaplotypeDataHolder[] haps;
        final long cells;

        Region(ReadDataHolder[] reads, HaplotypeDataHolder[] haps) {
            this.reads = reads;
            this.haps = haps;
            long rl = 0, hl = 0;
            for (ReadDataHolder r : reads) rl += r.readBases.length;
            for (HaplotypeDataHolder h : haps) hl += h.haplotypeBases.length;
            this.cells = rl * hl;
        }

        int pairs() { return reads.length * haps.length; }
    }

    private static void die(String what) {
        System.err.println("PairHmmBench: error: " + what);
        System.exit(2);
    }

    private static InputStream open(String path) throws IOException {
        InputStream in = new FileInputStream(path);
        return path.endsWith(".gz") ? new GZIPInputStream(in, 1 << 16) : in;
    }

    private static byte[] phred(String quals, String path, long line) {
        byte[] q = quals.getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < q.length; i++) {
            q[i] -= 33;
            if (q[i] < 0) die(path + ":" + line + ": quality below '!'");
        }
        return q;
    }

    /** A record: its fields and where it was. */
    private static final class Rec {
        final String[] f;
        final String read;                            // fields 2-6, the read's identity
        final long line;

        Rec(String[] f, String read, long line) { this.f = f; this.read = read; this.line = line; }
    }

    /**
     * Rebuilds regions from a --pair-hmm-results-file as haplik does (src/hk_results_regions.c):
     * the first read's records, while the read stays the same and its haplotypes distinct, give
     * the region's haplotype list; later records must repeat that list read by read; a record
     * that does not closes the region after its last whole read, and the partial read starts
     * the next region.
     */
    private static final class Regions {
        final String path;
        final List<Region> out = new ArrayList<>();
        final Map<String, HaplotypeDataHolder> hapByText = new HashMap<>();
        final List<Rec> recs = new ArrayList<>();
        int nHaps, nDone;                             // nHaps 0: collecting the first read

        Regions(String path) { this.path = path; }

        boolean continues() {
            int prior = recs.size() - 1;
            Rec c = recs.get(prior);
            if (nHaps == 0) {
                if (prior == 0) return true;
                if (!c.read.equals(recs.get(prior - 1).read)) return false;
                for (int k = 0; k < prior; k++) if (recs.get(k).f[0].equals(c.f[0])) return false;
                return true;
            }
            if (!c.f[0].equals(recs.get(prior - nHaps).f[0])) return false;
            return prior == nDone || c.read.equals(recs.get(prior - 1).read);
        }

        void push(Rec r) {
            recs.add(r);
            for (;;) {
                if (continues()) {
                    if (nHaps > 0 && recs.size() - nDone == nHaps) nDone = recs.size();
                    return;
                }
                if (nHaps == 0) {
                    nHaps = nDone = recs.size() - 1;
                    continue;
                }
                emit();
            }
        }

        void close() {
            while (!recs.isEmpty()) {
                if (nHaps == 0) nHaps = nDone = recs.size();
                emit();
            }
        }

        void emit() {
            int H = nHaps, R = nDone / H;
            HaplotypeDataHolder[] haps = new HaplotypeDataHolder[H];
            for (int h = 0; h < H; h++) {
                haps[h] = hapByText.computeIfAbsent(recs.get(h).f[0], t -> {
                    HaplotypeDataHolder x = new HaplotypeDataHolder();
                    x.haplotypeBases = t.getBytes(StandardCharsets.US_ASCII);
                    return x;
                });
            }
            ReadDataHolder[] reads = new ReadDataHolder[R];
            for (int k = 0; k < R; k++) {
                Rec r = recs.get(k * H);
                ReadDataHolder x = new ReadDataHolder();
                x.readBases = r.f[1].getBytes(StandardCharsets.US_ASCII);
                x.readQuals = phred(r.f[2], path, r.line);
                x.insertionGOP = phred(r.f[3], path, r.line);
                x.deletionGOP = phred(r.f[4], path, r.line);
                x.overallGCP = phred(r.f[5], path, r.line);
                reads[k] = x;
            }
            out.add(new Region(reads, haps));
            recs.subList(0, nDone).clear();
            nDone = 0;
            nHaps = 0;
        }
    }

    /** Reads a --pair-hmm-results-file (7 space-separated fields a record) into regions. */
    private static List<Region> load(String path) throws IOException {
        Regions rs = new Regions(path);
        long lineNo = 0;
        try (BufferedReader br = new BufferedReader(
                new InputStreamReader(open(path), StandardCharsets.US_ASCII), 1 << 20)) {
            for (String line; (line = br.readLine()) != null; ) {
                lineNo++;
                if (line.isEmpty() || line.charAt(0) == '#') continue;
                String[] f = line.split(" ");
                if (f.length != 7) die(path + ":" + lineNo + ": expected 7 space-separated fields");
                for (int k = 2; k < 6; k++)
                    if (f[k].length() != f[1].length())
                        die(path + ":" + lineNo + ": field " + (k + 1) + " is not as long as the read");
                rs.push(new Rec(f, line.substring(f[0].length() + 1, line.length() - f[6].length() - 1), lineNo));
            }
        }
        rs.close();
        if (rs.out.isEmpty()) die(path + ": no records");
        return rs.out;
    }

    public static void main(String[] args) throws Exception {
        String library = null, dump = null, results = null;
        int threads = 1, maxThreads = 1, first = 0;
        double seconds = 3, warmup = 1;
        boolean useDouble = false, listRegions = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--double")) { useDouble = true; continue; }
            if (a.equals("--list-regions")) { listRegions = true; continue; }
            if (i + 1 >= args.length) die(a + " needs a value");
            String v = args[++i];
            try {
                switch (a) {
                    case "--library": library = v; break;
                    case "--class":
                        if (!v.equals("omp") && !v.equals("avx")) die("--class: omp or avx, not " + v);
                        omp = v.equals("omp");
                        byClass = true;
                        break;
                    case "--first": first = Integer.parseInt(v); break;
                    case "--dump": dump = v; break;
                    case "--results": results = v; break;
                    case "--threads": threads = Integer.parseInt(v); break;
                    case "--max-threads": maxThreads = Integer.parseInt(v); break;
                    case "--seconds": seconds = Double.parseDouble(v); break;
                    case "--warmup": warmup = Double.parseDouble(v); break;
                    default: die("unknown option " + a);
                }
            } catch (NumberFormatException e) {
                die(a + ": not a number: " + v);
            }
        }
        if ((library == null) == !byClass || dump == null) die("--library or --class, and --dump, are required");
        if (threads < 1 || maxThreads < 1 || !(seconds > 0) || !(warmup >= 0) || first < 0) die("bad sizes");

        // each of GKL's classes loads the library of its name: gkl_pairhmm_omp is IntelPairHmmOMP's, whose
        // useOmp field a library reads to score a call on maxThreads threads (IntelPairHmm's: on one)
        if (library != null && !byClass) omp = library.equals("gkl_pairhmm_omp");
        if (library != null) System.loadLibrary(library);
        else if (!newEngine().load(null)) die("the " + (omp ? "IntelPairHmmOMP" : "IntelPairHmm") + " library did not load");
        final String mapped = mappedLibraries();
        long t0 = System.nanoTime();
        List<Region> regions = load(dump);
        double loadS = (System.nanoTime() - t0) / 1e9;
        long pairsPerPass = 0, cellsPerPass = 0;
        for (Region r : regions) { pairsPerPass += r.pairs(); cellsPerPass += r.cells; }

        if (listRegions) {
            for (Region r : regions) System.out.println(r.reads.length + " " + r.haps.length);
            return;
        }
        final String name = library != null ? library : omp ? "IntelPairHmmOMP" : "IntelPairHmm";
        if (results != null) {
            writeResults(regions, results, useDouble, maxThreads, threads);
            System.out.printf(Locale.ROOT, "library=%s regions=%d pairs=%d threads=%d identical=yes results=%s "
                    + "mapped=%s%n", name, regions.size(), pairsPerPass, threads, results, mapped);
            return;
        }
        if (first > 0) {
            firstCalls(regions, first, useDouble, maxThreads, name, mapped);
            return;
        }
        Outcome o = time(regions, threads, maxThreads, useDouble, seconds, warmup);
        System.out.printf(Locale.ROOT,
                "library=%s class=%s threads=%d max_threads=%d double=%b regions=%d pairs_per_pass=%d load_s=%.2f "
                        + "calls=%d pairs=%d seconds=%.3f pairs_per_s=%.0f gcups=%.3f us_per_call=%.2f mapped=%s%n",
                name, omp ? "IntelPairHmmOMP" : "IntelPairHmm", threads, maxThreads, useDouble, regions.size(), pairsPerPass, loadS,
                o.calls, o.pairs, o.seconds, o.pairs / o.seconds, o.cells / o.seconds / 1e9,
                o.seconds * threads / o.calls * 1e6, mapped);
    }

    private static boolean omp, byClass;

    /** An object of the chosen class. */
    private static IntelPairHmm newEngine() {
        return omp ? new IntelPairHmmOMP() : new IntelPairHmm();
    }

    /** An engine initialised as GATK's VectorLoglessPairHMM does. */
    private static IntelPairHmm initialized(boolean useDouble, int maxThreads) {
        IntelPairHmm hmm = newEngine();
        PairHMMNativeArguments args = new PairHMMNativeArguments();
        args.useDoublePrecision = useDouble;
        args.maxNumberOfThreads = maxThreads;
        hmm.initialize(args);
        return hmm;
    }

    /** The files mapped by this process whose names hold "pairhmm", "haplik" or "copyonly". */
    private static String mappedLibraries() throws IOException {
        TreeSet<String> names = new TreeSet<>();
        for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
            int slash = line.indexOf('/');
            if (slash < 0) continue;
            String f = line.substring(slash);
            String base = f.substring(f.lastIndexOf('/') + 1);
            if (base.contains("pairhmm") || base.contains("haplik") || base.contains("copyonly")) names.add(f);
        }
        return names.isEmpty() ? "none" : String.join(",", names);
    }

    /**
     * Every region once on each of T threads (thread t starting at region t * n / T, so that
     * different regions run at once), each with its own object; the values of every thread must
     * have the same bits as thread 0's, which are written to path.
     */
    private static void writeResults(List<Region> regions, String path, boolean useDouble, int maxThreads,
                                     int threads) throws Exception {
        final int n = regions.size();
        final double[][][] outs = new double[threads][n][];
        final Throwable[] failure = new Throwable[1];
        final CyclicBarrier start = new CyclicBarrier(threads);
        List<Thread> pool = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int me = t;
            Thread th = new Thread(() -> {
                try {
                    IntelPairHmm hmm = initialized(useDouble, maxThreads);
                    start.await();
                    for (int k = 0; k < n; k++) {
                        int i = (int) (((long) me * n / threads + k) % n);
                        Region r = regions.get(i);
                        outs[me][i] = new double[r.pairs()];
                        hmm.computeLikelihoods(r.reads, r.haps, outs[me][i]);
                    }
                    hmm.done();
                } catch (Throwable e) {
                    synchronized (failure) { if (failure[0] == null) failure[0] = e; }
                    start.reset();
                }
            });
            pool.add(th);
            th.start();
        }
        for (Thread th : pool) th.join();
        if (failure[0] != null) die("a worker failed: " + failure[0]);
        for (int t = 1; t < threads; t++)
            for (int i = 0; i < n; i++)
                for (int p = 0; p < outs[0][i].length; p++)
                    if (Double.doubleToRawLongBits(outs[t][i][p]) != Double.doubleToRawLongBits(outs[0][i][p]))
                        die("thread " + t + ", region " + i + ", pair " + p + ": " + outs[t][i][p]
                                + " where thread 0 has " + outs[0][i][p]);
        try (PrintWriter w = new PrintWriter(path, StandardCharsets.US_ASCII)) {
            for (double[] out : outs[0])
                for (double x : out) w.println(Double.toString(x));
        }
    }

    /** A fresh object's first pass over the regions, then N passes more (see the class comment). */
    private static void firstCalls(List<Region> regions, int passes, boolean useDouble, int maxThreads,
                                   String name, String mapped) {
        final int n = regions.size();
        long t0 = System.nanoTime();
        IntelPairHmm hmm = initialized(useDouble, maxThreads);
        long t1 = System.nanoTime();
        double[][] outs = new double[n][];
        double[] firstPass = new double[n];
        for (int i = 0; i < n; i++) {
            Region r = regions.get(i);
            outs[i] = new double[r.pairs()];
            long a = System.nanoTime();
            hmm.computeLikelihoods(r.reads, r.haps, outs[i]);
            firstPass[i] = (System.nanoTime() - a) / 1e3;
        }
        double[] later = new double[passes];
        double laterPass = 0;
        for (int k = 0; k < passes; k++) {
            long p0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                Region r = regions.get(i);
                long a = System.nanoTime();
                hmm.computeLikelihoods(r.reads, r.haps, outs[i]);
                if (i == 0) later[k] = (System.nanoTime() - a) / 1e3;
            }
            laterPass += (System.nanoTime() - p0) / 1e3;
        }
        hmm.done();
        Arrays.sort(later);
        double first = firstPass[0], med = later[passes / 2], pass = 0;
        for (double x : firstPass) pass += x;
        System.out.printf(Locale.ROOT, "library=%s regions=%d max_threads=%d initialize_us=%.1f first_us=%.1f "
                        + "later_us=%.1f first_per_later=%.2f first_pass_us=%.1f later_pass_us=%.1f mapped=%s%n",
                name, n, maxThreads, (t1 - t0) / 1e3, first, med, first / med, pass, laterPass / passes, mapped);
    }

    private static final class Outcome {
        long calls, pairs, cells;
        double seconds;
    }

    /**
     * Each thread walks the regions cyclically from its own starting point (so that concurrent
     * calls differ) until the deadline; the clock runs from the barrier that starts all threads
     * to the end of the last call.
     */
    private static Outcome time(List<Region> regions, int threads, int maxThreads, boolean useDouble,
                                double seconds, double warmup) throws Exception {
        final int n = regions.size();
        // each barrier's action, run before it lets the threads go, sets the next deadline
        final AtomicLong deadline = new AtomicLong(), begun = new AtomicLong(), ended = new AtomicLong();
        final CyclicBarrier ready = new CyclicBarrier(threads,
                () -> deadline.set(System.nanoTime() + (long) (warmup * 1e9)));
        final CyclicBarrier measure = new CyclicBarrier(threads, () -> {
            begun.set(System.nanoTime());
            deadline.set(begun.get() + (long) (seconds * 1e9));
        });
        final CyclicBarrier finished = new CyclicBarrier(threads, () -> ended.set(System.nanoTime()));
        final AtomicLong calls = new AtomicLong(), pairs = new AtomicLong(), cells = new AtomicLong();
        final Throwable[] failure = new Throwable[1];
        List<Thread> pool = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int start = (int) ((long) t * n / threads);
            Thread th = new Thread(() -> {
                try {
                    IntelPairHmm hmm = initialized(useDouble, maxThreads);
                    double[][] outs = new double[n][];
                    for (int i = 0; i < n; i++) outs[i] = new double[regions.get(i).pairs()];
                    ready.await();
                    int i = start;
                    while (System.nanoTime() < deadline.get()) {     // warm-up, not counted
                        Region r = regions.get(i);
                        hmm.computeLikelihoods(r.reads, r.haps, outs[i]);
                        i = (i + 1) % n;
                    }
                    measure.await();
                    long c = 0, p = 0, x = 0;
                    do {
                        Region r = regions.get(i);
                        hmm.computeLikelihoods(r.reads, r.haps, outs[i]);
                        c++;
                        p += r.pairs();
                        x += r.cells;
                        i = (i + 1) % n;
                    } while (System.nanoTime() < deadline.get());
                    calls.addAndGet(c);
                    pairs.addAndGet(p);
                    cells.addAndGet(x);
                    finished.await();
                    hmm.done();
                } catch (Throwable e) {
                    synchronized (failure) { if (failure[0] == null) failure[0] = e; }
                    ready.reset();
                    measure.reset();
                    finished.reset();
                }
            });
            pool.add(th);
            th.start();
        }
        for (Thread th : pool) th.join();
        if (failure[0] != null) die("a worker failed: " + failure[0]);
        Outcome o = new Outcome();
        o.seconds = (ended.get() - begun.get()) / 1e9;
        o.calls = calls.get();
        o.pairs = pairs.get();
        o.cells = cells.get();
        return o;
    }
}
