package bench;

import com.intel.gkl.pairhmm.IntelPairHmm;
import org.broadinstitute.gatk.nativebindings.pairhmm.HaplotypeDataHolder;
import org.broadinstitute.gatk.nativebindings.pairhmm.ReadDataHolder;

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.GZIPInputStream;

/**
 * Replays a HaplotypeCaller Pair-HMM results file region by region through a GKL-compatible
 * native library, as HaplotypeCaller calls it: one computeLikelihoods per region, from T Java
 * threads, each with its own object (initialised in that thread, so GKL's flush-to-zero
 * setting, which is per thread, holds where it computes). Prints one line of key=value pairs.
 *
 *   java -Djava.library.path=DIR -cp CLASSES bench.PairHmmBench --library gkl_pairhmm
 *        --dump FILE[.gz] [--threads T] [--max-threads M] [--seconds S] [--warmup S]
 *        [--double] [--results FILE] [--list-regions]
 *
 * A region is a run of consecutive records that share one list of haplotypes, rebuilt as
 * haplik rebuilds them from such a file. --results scores every region once, in order, on one
 * thread, and writes the values one per line (read-major, the file's record order) instead
 * of timing; --list-regions prints each region's reads and haplotypes ("R H") instead.
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
     * Rebuilds regions from a --pair-hmm-results-file as haplik does (src/hk_format_results.c):
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
        int threads = 1, maxThreads = 1;
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
        if (library == null || dump == null) die("--library and --dump are required");
        if (threads < 1 || maxThreads < 1 || !(seconds > 0) || !(warmup >= 0)) die("bad sizes");

        System.loadLibrary(library);
        long t0 = System.nanoTime();
        List<Region> regions = load(dump);
        double loadS = (System.nanoTime() - t0) / 1e9;
        long pairsPerPass = 0, cellsPerPass = 0;
        for (Region r : regions) { pairsPerPass += r.pairs(); cellsPerPass += r.cells; }

        if (listRegions) {
            for (Region r : regions) System.out.println(r.reads.length + " " + r.haps.length);
            return;
        }
        if (results != null) {
            writeResults(regions, results, useDouble, maxThreads);
            System.out.printf(Locale.ROOT, "library=%s regions=%d pairs=%d results=%s%n",
                    library, regions.size(), pairsPerPass, results);
            return;
        }
        Outcome o = time(regions, threads, maxThreads, useDouble, seconds, warmup);
        System.out.printf(Locale.ROOT,
                "library=%s threads=%d max_threads=%d double=%b regions=%d pairs_per_pass=%d load_s=%.2f "
                        + "calls=%d pairs=%d seconds=%.3f pairs_per_s=%.0f gcups=%.3f us_per_call=%.2f%n",
                library, threads, maxThreads, useDouble, regions.size(), pairsPerPass, loadS,
                o.calls, o.pairs, o.seconds, o.pairs / o.seconds, o.cells / o.seconds / 1e9,
                o.seconds * threads / o.calls * 1e6);
    }

    private static void writeResults(List<Region> regions, String path, boolean useDouble, int maxThreads)
            throws IOException {
        IntelPairHmm hmm = new IntelPairHmm();
        hmm.initialize(useDouble, maxThreads);
        try (PrintWriter w = new PrintWriter(path, StandardCharsets.US_ASCII)) {
            for (Region r : regions) {
                double[] out = new double[r.pairs()];
                hmm.computeLikelihoods(r.reads, r.haps, out);
                for (double x : out) w.println(Double.toString(x));
            }
        }
        hmm.done();
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
                    IntelPairHmm hmm = new IntelPairHmm();
                    hmm.initialize(useDouble, maxThreads);
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
