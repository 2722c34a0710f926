/* test_model.c - unit tests of the model, the reader's region rebuilding and
 * number formatting. Run by `make check` with HK_TESTDATA set. */
#include "hk_model.h"
#include "hk_cpu.h"   /* the anti-diagonal pass's switch */
#include "hk_numfmt.h"
#include "hk_reader.h"
#include "hk_log.h"
#include "hk_threads.h"
#include "tap.h"
#include "model_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read rk's gap rows (hk_batch_gap_rows) in a scratch of this file's: valid
 * until the next call. */
static const uint8_t *const *gap_rows(const hk_batch_t *b, size_t rk)
{
    static uint8_t *scratch;
    static size_t cap;
    static const uint8_t *rows[3];
    const size_t need = 3 * (size_t)hk_batch_read_len(b, rk) + 1;
    if (need > cap) {
        free(scratch);
        if (!(scratch = malloc(need))) abort();
        cap = need;
    }
    hk_batch_gap_rows(b, rk, scratch, rows);
    return rows;
}

static const char *data_dir(void)
{
    const char *d = getenv("HK_TESTDATA");
    return d ? d : "tests/data";
}

static hk_model_t model(int precision)
{
    hk_model_t m = { .precision = precision, .float_threshold = HK_FLOAT_THRESHOLD, .min_base_quality = 6,
                     .gcp = -1, .unknown_as_n = 0 };
    return m;
}

/* Read a whole file into b; the number of regions or -1. */
static int read_all(const char *path, const hk_model_t *m, hk_batch_t *b)
{
    hk_reader_t *r;
    if (hk_reader_open(path, HK_FMT_AUTO, hk_model_seq_rules(m), NULL, &r)) return -1;
    size_t got, total = 0;
    hk_status_t st;
    while (!(st = hk_reader_next(r, b, (size_t)-1, &got)) && got > 0) total += got;
    hk_reader_close(r);
    return st ? -1 : (int)total;
}

/* Largest |lk - expected| over the file's pairs after scoring. */
static double max_error_vs_expected(const char *file, int precision, size_t *pairs)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", data_dir(), file);
    hk_model_t m = model(precision);
    hk_batch_t b;
    hk_batch_init(&b);
    double worst = INFINITY;
    if (read_all(path, &m, &b) > 0 && hk_model_score_batch(&m, &b, 2) == 0) {
        worst = 0;
        for (size_t i = 0; i < b.n_pairs; i++) {
            double d = fabs(b.lk[i] - b.expected[i]);
            if (!(d <= worst)) worst = d;    /* NaN propagates as a failure */
        }
        *pairs = b.n_pairs;
    }
    hk_batch_free(&b);
    return worst;
}

static void test_gatk_values(void)
{
    size_t n = 0;
    double e = max_error_vs_expected("pairhmm-testdata.txt", HK_PREC_MIXED, &n);
    TAP_OK(n == 104 && e <= 1e-5, "pairhmm-testdata mixed: %zu pairs, max error %.2g <= 1e-5", n, e);
    e = max_error_vs_expected("pairhmm-testdata.txt", HK_PREC_DOUBLE, &n);
    TAP_OK(n == 104 && e <= 1e-5, "pairhmm-testdata double: %zu pairs, max error %.2g <= 1e-5", n, e);
    e = max_error_vs_expected("hc-NA12878-20_10000117.java.hmmresults.txt", HK_PREC_DOUBLE, &n);
    TAP_OK(n == 284 && e <= 1e-6, "NA12878 java, double: %zu pairs, max error %.2g <= 1e-6", n, e);
    e = max_error_vs_expected("hc-NA12878-20_10000117.avx.hmmresults.txt", HK_PREC_MIXED, &n);
    TAP_OK(n == 284 && e <= 1e-5, "NA12878 avx, mixed: %zu pairs, max error %.2g <= 1e-5", n, e);
}

static void test_regions_rebuilt(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/hc-NA12878-20_10000117.java.hmmresults.txt", data_dir());
    hk_model_t m = model(HK_PREC_MIXED);
    hk_batch_t b;
    hk_batch_init(&b);
    int n = read_all(path, &m, &b);
    TAP_OK(n == 2 && b.regions[0].n_reads == 78 && b.regions[0].n_haps == 2 &&
           b.regions[1].n_reads == 64 && b.regions[1].n_haps == 2,
           "results file rebuilt into 78x2 and 64x2 regions");
    TAP_OK(n == 2 && b.regions[0].line == 2 && b.regions[1].line == 158,
           "regions start at lines 2 and 158");
    hk_batch_free(&b);
}

/* Write text to a temporary file and read it. */
static int read_text(const char *text, hk_batch_t *b)
{
    char path[] = "/tmp/hk_test_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) return -1;
    close(fd);
    hk_model_t m = model(HK_PREC_MIXED);
    int n = read_all(path, &m, b);
    unlink(path);
    return n;
}

#define REC(h, r) h " " r " IIII IIII IIII IIII -1.0e+00\n"

static void test_tricky_regions(void)
{
    hk_batch_t b;
    hk_batch_init(&b);
    /* a read repeated in a row stays two rows; a new haplotype list is a new region */
    int n = read_text(REC("ACGTA", "ACGT") REC("CCGTA", "ACGT") REC("ACGTA", "ACGT")
                      REC("CCGTA", "ACGT") REC("TTTTT", "ACGA") REC("GGGGG", "ACGA"), &b);
    TAP_OK(n == 2 && b.regions[0].n_reads == 2 && b.regions[0].n_haps == 2 &&
           b.regions[1].n_reads == 1 && b.regions[1].n_haps == 2,
           "repeated read kept twice; changed haplotypes start a region");
    hk_batch_clear(&b);
    /* second region shares its first haplotype with the first region */
    n = read_text(REC("AAAAA", "ACGT") REC("CCCCC", "ACGT") REC("AAAAA", "TTGT")
                  REC("GGGGG", "TTGT"), &b);
    TAP_OK(n == 2 && b.regions[0].n_reads == 1 && b.regions[1].n_reads == 1 &&
           b.n_haps == 4, "a region whose first haplotype equals the previous one's");
    hk_batch_clear(&b);
    /* one-haplotype regions, and a tag that separates regions */
    n = read_text(REC("AAAAA", "ACGT") REC("AAAAA", "TCGT") "# region chr1:1-10\n"
                  REC("AAAAA", "GCGT"), &b);
    TAP_OK(n == 2 && b.regions[0].n_reads == 2 && b.regions[0].n_haps == 1 &&
           b.regions[1].n_reads == 1 && b.regions[1].name &&
           !strcmp(b.regions[1].name, "chr1:1-10") && b.regions[0].name == NULL,
           "one-haplotype regions; tags name and separate regions");
    hk_batch_clear(&b);
    /* batch format with CRLF line ends and lower case */
    n = read_text("1 2\r\nacgt IIII IIII IIII IIII\r\nACGTA\r\nACGTT\r\n", &b);
    TAP_OK(n == 1 && b.n_reads == 1 && b.n_haps == 2 && b.read_base[0] == 0,
           "batch format, CRLF, lower case");
    hk_batch_free(&b);
}

static void test_underflow_pair(void)
{
    /* 1m.in holds a pair that float underflows: mixed must give the double value */
    char path[4096];
    snprintf(path, sizeof path, "%s/1m.in", data_dir());
    hk_model_t mixed = model(HK_PREC_MIXED), dbl = model(HK_PREC_DOUBLE);
    hk_batch_t a, d;
    hk_batch_init(&a);
    hk_batch_init(&d);
    int ok = read_all(path, &mixed, &a) == 110 && read_all(path, &dbl, &d) == 110 &&
             hk_model_score_batch(&mixed, &a, 2) == 0 && hk_model_score_batch(&dbl, &d, 2) == 0;
    double worst = 0;
    size_t nonfinite = 0;
    for (size_t i = 0; ok && i < a.n_pairs; i++) {
        if (!isfinite(a.lk[i]) || !isfinite(d.lk[i])) { nonfinite++; continue; }
        if (fabs(a.lk[i] - d.lk[i]) > worst) worst = fabs(a.lk[i] - d.lk[i]);
    }
    TAP_OK(ok && nonfinite == 0 && worst <= 1e-4,
           "1m.in: no -inf/NaN in mixed or double; mixed within %.2g of double", worst);
    TAP_OK(ok && a.n_recomputed > 0, "1m.in: %llu pairs recomputed in double",
           (unsigned long long)a.n_recomputed);
    hk_batch_free(&a);
    hk_batch_free(&d);
}


static unsigned rnd(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 8) & 0xffffff;
}

/* A base, N one time in 50. */
static char rnd_base(unsigned *seed)
{
    return rnd(seed) % 50 ? "ACGT"[rnd(seed) % 4] : 'N';
}

/* The vector pass in use (the widest this CPU runs, or HK_CPU_PASS's) against
 * the scalar reference, pair by pair, on random regions whose pair counts
 * leave spare lanes and whose lengths differ in a group. */
static void test_lanes_vs_scalar(void)
{
    unsigned seed = 12345;
#define RND() rnd(&seed)
    for (int precision = HK_PREC_MIXED; precision <= HK_PREC_FLOAT; precision++) {
        hk_model_t m = model(precision);
        const hk_seq_rules_t rules = hk_model_seq_rules(&m);
        hk_batch_t b;
        hk_batch_init(&b);
        int ok = 1;
        for (int region = 0; region < 12 && ok; region++) {
            char rb[300], q[300], gi[300], gd[300], gc[300], hb[400];
            hk_batch_error_t bad;
            ok &= hk_batch_begin_region(&b, NULL, region + 1) == 0;
            const int n_haps = 1 + (int)(RND() % 11), n_reads = 1 + (int)(RND() % 4);
            for (int h = 0; h < n_haps && ok; h++) {
                const uint32_t hl = 1 + RND() % 399;
                for (uint32_t j = 0; j < hl; j++) hb[j] = rnd_base(&seed);
                ok &= hk_batch_add_hap(&b, &rules, hb, hl, &bad) == 0;
            }
            for (int r = 0; r < n_reads && ok; r++) {
                const uint32_t rl = 1 + RND() % 299;
                for (uint32_t i = 0; i < rl; i++) {
                    rb[i] = rnd_base(&seed);
                    q[i] = (char)(33 + RND() % 60);
                    gi[i] = (char)(33 + 10 + RND() % 40);
                    gd[i] = (char)(33 + 10 + RND() % 40);
                    gc[i] = (char)(34 + RND() % 39);      /* from Q1: Q0 is refused */
                }
                ok &= hk_batch_add_read(&b, &rules, rb, q, gi, gd, gc, rl, &bad) == 0;
            }
            ok &= hk_batch_end_region(&b) == 0;
        }
        ok &= hk_model_score_batch(&m, &b, 2) == 0;
        double worst = 0;
        size_t pairs = 0;
        void *ws = malloc(hk_model_ws_size(b.max_hap_len));
        for (size_t ri = 0; ok && ri < b.n_regions; ri++) {
            const hk_region_t *rg = &b.regions[ri];
            for (uint32_t r = 0; r < rg->n_reads; r++)
                for (uint32_t h = 0; h < rg->n_haps; h++) {
                    const size_t rk = rg->read0 + r, hk = rg->hap0 + h, o = b.read_off[rk];
                    int rc;
                    const uint8_t *const *g = gap_rows(&b, rk);
                    double want = hk_model_score_pair(&m, b.read_base + o, b.read_q + o, g[0], g[1], g[2],
                                                      hk_batch_read_len(&b, rk),
                                                      b.hap_base + b.hap_off[hk],
                                                      hk_batch_hap_len(&b, hk), ws, &rc);
                    double got = b.lk[rg->pair0 + (size_t)r * rg->n_haps + h];
                    double d = fabs(got - want);
                    if (isfinite(want) != isfinite(got)) d = INFINITY;
                    else if (!isfinite(want)) d = 0;
                    if (!(d <= worst)) worst = d;
                    pairs++;
                }
        }
        free(ws);
        TAP_OK(ok && pairs > 100 && worst <= 1e-5,
               "%s: vector pass equals the scalar reference on %zu random pairs (max %.2g)",
               precision == HK_PREC_MIXED ? "mixed" : "float", pairs, worst);
        hk_batch_free(&b);
    }
#undef RND
}

/* The one-pair scorer on read rk and haplotype hk of b: the reference a batch
 * scorer's value is compared with. */
static double score_one(const hk_model_t *m, const hk_batch_t *b, size_t rk, size_t hk, void *ws)
{
    const size_t o = b->read_off[rk];
    int rc;
    const uint8_t *const *g = gap_rows(b, rk);
    return hk_model_score_pair(m, b->read_base + o, b->read_q + o, g[0], g[1], g[2],
                               hk_batch_read_len(b, rk), b->hap_base + b->hap_off[hk],
                               hk_batch_hap_len(b, hk), ws, &rc);
}

/* A random batch that needs every path of the CPU scorer: reads of 1..299
 * and haplotypes of 1..399 bases, so that the lanes of one group end at
 * different rows and columns; N in reads and haplotypes; pairs under the
 * float threshold (recomputed in double lanes); A-only reads against C-only
 * haplotypes at Q60, beyond GATK's double range (rescued); a read longer than
 * HK_MIXED_FLOAT_MAX_READ now and then (double from the start in mixed). */
static int build_pass_batch(hk_batch_t *b, const hk_model_t *m, unsigned seed, int n_regions)
{
    const hk_seq_rules_t rules = hk_model_seq_rules(m);
#define RND() rnd(&seed)
    static char rb[900], q[900], gi[900], gd[900], gc[900], hb[400];
    hk_batch_error_t bad;
    int ok = 1;
    for (int region = 0; region < n_regions && ok; region++) {
        const int hopeless = region % 4 == 3, long_read = region % 8 == 5;
        ok &= hk_batch_begin_region(b, NULL, region + 1) == 0;
        const int n_haps = 1 + (int)(RND() % 11), n_reads = 1 + (int)(RND() % 6);
        for (int h = 0; h < n_haps && ok; h++) {
            const uint32_t hl = 1 + RND() % 399;
            for (uint32_t j = 0; j < hl; j++) hb[j] = hopeless ? 'C' : rnd_base(&seed);
            ok &= hk_batch_add_hap(b, &rules, hb, hl, &bad) == 0;
        }
        for (int r = 0; r < n_reads && ok; r++) {
            const uint32_t rl = long_read && r == 0 ? HK_MIXED_FLOAT_MAX_READ + 1 + RND() % 99
                                                    : 1 + RND() % 299;
            for (uint32_t i = 0; i < rl; i++) {
                rb[i] = hopeless ? 'A' : rnd_base(&seed);
                q[i] = (char)(33 + (hopeless ? 60 : RND() % 60));
                gi[i] = (char)(33 + (hopeless ? 60 : 10 + RND() % 40));
                gd[i] = (char)(33 + (hopeless ? 60 : 10 + RND() % 40));
                gc[i] = (char)(hopeless ? 33 + 60 : 34 + RND() % 39);   /* from Q1: Q0 is refused */
            }
            ok &= hk_batch_add_read(b, &rules, rb, q, gi, gd, gc, rl, &bad) == 0;
        }
        ok &= hk_batch_end_region(b) == 0;
    }
    return ok;
#undef RND
}

/* Every CPU pass this machine runs gives the scalar pass's bits, whatever
 * the number of threads, and the scalar batch gives hk_model_score_pair's. */
static void test_passes_bit_identical(void)
{
    static const char *const names[] = { "sse2", "avx2", "avx512", "neon" };
    const char *was = hk_model_cpu_pass();
    for (int precision = HK_PREC_MIXED; precision <= HK_PREC_DOUBLE; precision++) {
        const char *pname = precision == HK_PREC_MIXED ? "mixed"
                          : precision == HK_PREC_FLOAT ? "float" : "double";
        hk_model_t m = model(precision);
        hk_batch_t b;
        hk_batch_init(&b);
        int ok = build_pass_batch(&b, &m, 777u + (unsigned)precision, 24);
        ok &= hk_model_set_cpu_pass("scalar") == 0;
        ok &= ok && hk_model_score_batch(&m, &b, 1) == 0;
        const size_t n = b.n_pairs;
        double *ref = malloc(n * sizeof *ref);
        void *ws = malloc(hk_model_ws_size(b.max_hap_len));
        ok &= ref && ws;
        size_t differ = 0, rescued = 0, long_pairs = 0;
        const uint64_t recomputed = b.n_recomputed;
        for (size_t ri = 0; ok && ri < b.n_regions; ri++) {
            const hk_region_t *rg = &b.regions[ri];
            for (uint32_t r = 0; r < rg->n_reads; r++)
                for (uint32_t h = 0; h < rg->n_haps; h++) {
                    const size_t rk = rg->read0 + r, hk = rg->hap0 + h;
                    const size_t i = rg->pair0 + (size_t)r * rg->n_haps + h;
                    const double want = score_one(&m, &b, rk, hk, ws);
                    differ += memcmp(&want, &b.lk[i], sizeof want) != 0;
                    rescued += isfinite(want) && want < -700;   /* GATK's double: 0 below ~-631 */
                    long_pairs += hk_batch_read_len(&b, rk) > HK_MIXED_FLOAT_MAX_READ;
                }
        }
        if (ok) memcpy(ref, b.lk, n * sizeof *ref);
        TAP_OK(ok && n > 300 && differ == 0 && long_pairs > 0 &&
               (precision == HK_PREC_FLOAT || rescued > long_pairs) &&
               (precision != HK_PREC_MIXED || recomputed > long_pairs),
               "%s: scalar batch equals hk_model_score_pair bit for bit on %zu pairs "
               "(%zu differ; %zu beyond GATK's range, %zu of long reads, %llu recomputed)",
               pname, n, differ, rescued, long_pairs, (unsigned long long)recomputed);
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            if (hk_model_set_cpu_pass(names[k])) {
                TAP_OK(1, "%s: %s pass # SKIP this CPU does not run it", pname, names[k]);
                continue;
            }
            for (size_t i = 0; i < n; i++) b.lk[i] = NAN;
            b.n_recomputed = 0;
            const int threads = 1 + (int)k;
            /* with more than one thread, the pairs are ordered on all of them too */
            const size_t par_was = hk_model_set_cpu_parallel_order(threads > 1 ? 1 : SIZE_MAX);
            int scored = ok && hk_model_score_batch(&m, &b, threads) == 0;
            hk_model_set_cpu_parallel_order(par_was);
            differ = 0;
            for (size_t i = 0; scored && i < n; i++) differ += memcmp(&ref[i], &b.lk[i], sizeof ref[i]) != 0;
            TAP_OK(scored && differ == 0 && b.n_recomputed == recomputed,
                   "%s: %s pass (%s, %d threads%s) equals the scalar pass bit for bit on %zu pairs "
                   "(%zu differ, %llu recomputed)", pname, names[k], hk_model_cpu_pass(), threads,
                   threads > 1 ? ", ordered on all" : "", n, differ, (unsigned long long)b.n_recomputed);
            /* every float pair across its anti-diagonals instead of in the lanes */
            for (size_t i = 0; i < n; i++) b.lk[i] = NAN;
            b.n_recomputed = 0;
            const int diag_was = hk_cpu_set_diag(HK_DIAG_ALL);
            scored = ok && hk_model_score_batch(&m, &b, threads) == 0;
            hk_cpu_set_diag(diag_was);
            differ = 0;
            for (size_t i = 0; scored && i < n; i++) differ += memcmp(&ref[i], &b.lk[i], sizeof ref[i]) != 0;
            TAP_OK(scored && differ == 0 && b.n_recomputed == recomputed,
                   "%s: %s anti-diagonal pass (every float pair, %d threads) equals the scalar pass bit for "
                   "bit on %zu pairs (%zu differ, %llu recomputed)", pname, names[k], threads, n, differ,
                   (unsigned long long)b.n_recomputed);
        }
        free(ref);
        free(ws);
        hk_batch_free(&b);
    }
    TAP_OK(hk_model_set_cpu_pass(was) == 0, "the CPU pass %s is back", was);
}

/* A region of fewer pairs than a pass's lanes times the threads (a
 * HaplotypeCaller call on maxThreads threads) is cut into smaller groups, one
 * per thread: the same bits as one thread, in every pass. */
static void test_small_batch_threads(void)
{
    static const char *const names[] = { "scalar", "sse2", "avx2", "avx512", "neon" };
    const char *was = hk_model_cpu_pass();
    hk_model_t m = model(HK_PREC_MIXED);
    hk_batch_t b;
    hk_batch_init(&b);
    int ok = 1;
    for (unsigned seed = 1; ok && (b.n_pairs < 5 || b.n_pairs > 24); seed++) {   /* 5-24 pairs: 1-3 groups of 8 */
        hk_batch_free(&b);
        hk_batch_init(&b);
        ok = build_pass_batch(&b, &m, seed, 1);
    }
    const size_t n = b.n_pairs;
    double *ref = malloc(n * sizeof *ref), *got = malloc(n * sizeof *got);
    ok &= ref && got;
    for (size_t k = 0; ok && k < sizeof names / sizeof names[0]; k++) {
        if (hk_model_set_cpu_pass(names[k])) {
            TAP_OK(1, "%s pass, a %zu-pair region on 4 threads # SKIP this CPU does not run it", names[k], n);
            TAP_OK(1, "%s pass, the same with spinning workers # SKIP this CPU does not run it", names[k]);
            continue;
        }
        int scored = hk_model_score_batch(&m, &b, 1) == 0;
        memcpy(ref, b.lk, n * sizeof *ref);
        /* the pool's threads sleeping between calls, then spinning (the GKL library's) */
        for (long spin = 0; spin <= 200000; spin += 200000) {
            hk_threads_set_spin(spin);
            int same = 1;
            for (int call = 0; call < 20; call++) {
                for (size_t i = 0; i < n; i++) b.lk[i] = NAN;
                scored &= hk_model_score_batch(&m, &b, 4) == 0;
                memcpy(got, b.lk, n * sizeof *got);
                same &= memcmp(ref, got, n * sizeof *ref) == 0;
            }
            TAP_OK(scored && same, "%s pass: a %zu-pair region on 4 threads, 20 calls, workers spinning %ld ns: "
                   "one thread's bits", names[k], n, spin);
        }
        hk_threads_set_spin(0);
    }
    TAP_OK(ok && hk_model_set_cpu_pass(was) == 0, "the CPU pass %s is back", was);
    free(ref);
    free(got);
    hk_batch_free(&b);
}

/* Where read length times haplotype-length bucket has too many values for
 * one counting sort (a 2100-base read against 4200-base haplotypes), the
 * batch is ordered in two (526 class-and-bucket keys x 2101 read lengths >
 * 2^20, hk_cpu_batch.c MAX_ONE_PASS_KEYS); every pair is still scored once,
 * in its place. */
static void test_two_pass_order(void)
{
    hk_model_t m = model(HK_PREC_MIXED);
    const hk_seq_rules_t rules = hk_model_seq_rules(&m);
    hk_batch_t b;
    hk_batch_init(&b);
    int ok = build_pass_batch(&b, &m, 4242u, 24);
    enum { RL = 2100, HL = 4200 };
    static char rb[RL], q[RL], gi[RL], gd[RL], gc[RL], hb[HL];
    unsigned seed = 99;
    hk_batch_error_t bad;
    for (int j = 0; j < HL; j++) hb[j] = "ACGT"[rnd(&seed) % 4];
    for (int i = 0; i < RL; i++) {
        rb[i] = hb[1000 + i];   /* an exact match, found in double */
        q[i] = '?'; gi[i] = 'I'; gd[i] = 'I'; gc[i] = '+';
    }
    ok &= hk_batch_begin_region(&b, NULL, 1000) == 0;
    for (int h = 0; h < 2 && ok; h++) {
        hb[2000 + h] = h ? 'A' : 'C';
        ok &= hk_batch_add_hap(&b, &rules, hb, HL, &bad) == 0;
    }
    ok &= hk_batch_add_read(&b, &rules, rb, q, gi, gd, gc, RL, &bad) == 0;
    ok &= hk_batch_end_region(&b) == 0;
    void *ws = malloc(hk_model_ws_size(b.max_hap_len));
    for (int par = 0; par < 2; par++) {   /* ordered on one thread, then on all */
        for (size_t i = 0; i < b.n_pairs; i++) b.lk[i] = NAN;
        const size_t par_was = hk_model_set_cpu_parallel_order(par ? 1 : SIZE_MAX);
        int scored = ok && hk_model_score_batch(&m, &b, 2) == 0;
        hk_model_set_cpu_parallel_order(par_was);
        size_t differ = 0, pairs = 0;
        for (size_t ri = 0; scored && ws && ri < b.n_regions; ri++) {
            const hk_region_t *rg = &b.regions[ri];
            for (uint32_t r = 0; r < rg->n_reads; r++)
                for (uint32_t h = 0; h < rg->n_haps; h++, pairs++) {
                    const size_t rk = rg->read0 + r, hk = rg->hap0 + h;
                    const double want = score_one(&m, &b, rk, hk, ws);
                    differ += memcmp(&want, &b.lk[rg->pair0 + (size_t)r * rg->n_haps + h], sizeof want) != 0;
                }
        }
        TAP_OK(scored && ws && pairs == b.n_pairs && differ == 0 && b.max_read_len == RL,
               "two-pass ordering (reads up to %u, haplotypes up to %u bases, ordered on %s): %zu pairs, "
               "%zu differ from hk_model_score_pair", b.max_read_len, b.max_hap_len,
               par ? "both threads" : "one thread", pairs, differ);
    }
    free(ws);
    hk_batch_free(&b);
}

/* Normalisation's summary of each read's gap qualities (hk_read_gaps_t),
 * which lets the CUDA engine skip the rows of constant reads. */
static void test_gap_summary(void)
{
    static const struct {
        const char *ins, *del, *gcp;
        int gcp_override;
        hk_read_gaps_t want;
        const char *what;
    } c[] = {
        { "IIIIN", "IIIIN", "+++++", -1, { 1, 40, 40, 10, 45, 45, 10, 0 }, "HaplotypeCaller's IIII...IN" },
        { "IIIII", "HHHHH", "+++++", -1, { 1, 40, 39, 10, 40, 39, 10, 0 }, "all the same" },
        { "IIHIN", "IIIIN", "+++++", -1, { 0, 40, 40, 10, 45, 45, 10, 1 }, "an insertion quality differs" },
        { "IIIIN", "IIIIN", "++,++", -1, { 0, 40, 40, 10, 45, 45, 10, 1 }, "a gap continuation differs" },
        { "IIIIN", "IIIIN", "++,++", 12, { 1, 40, 40, 12, 45, 45, 12, 0 }, "the gcp override makes it constant" },
        { "HIIIN", "IIIIN", "+++++", -1, { 0, 39, 40, 10, 45, 45, 10, 1 }, "the first position differs" },
        { "N", "M", "+", -1, { 1, 45, 44, 10, 45, 44, 10, 0 }, "one base" },
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        hk_model_t m = model(HK_PREC_MIXED);
        m.gcp = c[k].gcp_override;
        const hk_seq_rules_t rules = hk_model_seq_rules(&m);
        hk_batch_t b;
        hk_batch_init(&b);
        hk_batch_error_t bad;
        const uint32_t len = (uint32_t)strlen(c[k].ins);
        int rc = hk_batch_begin_region(&b, NULL, 1);
        if (!rc) rc = hk_batch_add_read(&b, &rules, "ACGTA", "IIIII", c[k].ins, c[k].del, c[k].gcp, len, &bad);
        const hk_read_gaps_t *g = rc ? NULL : &b.read_gaps[0];
        TAP_OK(g && !memcmp(g, &c[k].want, sizeof *g),
               "gap summary: %s (constant %d, body %d/%d/%d, last %d/%d/%d, rows kept %d)", c[k].what,
               g ? g->constant : -1, g ? g->ins : -1, g ? g->del : -1, g ? g->gcp : -1,
               g ? g->ins_last : -1, g ? g->del_last : -1, g ? g->gcp_last : -1, g ? g->rows : -1);
        hk_batch_free(&b);
    }
}

/* ---- beyond GATK's range, and long reads ---- */

/* A region of `reads` reads against `haps` haplotypes of the given lengths:
 * random bases (seeded) with realistic qualities, or, with `copy` >= 0,
 * read r a copy of haplotype `copy` with constant qualities q / g. */
static int add_region(hk_batch_t *b, const hk_model_t *m, unsigned *seed, const uint32_t *rlen,
                      int reads, const uint32_t *hlen, int haps, int copy, int q, int g)
{
    const hk_seq_rules_t rules = hk_model_seq_rules(m);
    const uint32_t cap = 20000;
    char *s = malloc(6 * (size_t)cap);
    char *qq = s + cap, *gi = qq + cap, *gd = gi + cap, *gc = gd + cap, *h0 = gc + cap;
    hk_batch_error_t bad;
    int ok = s && hk_batch_begin_region(b, NULL, 1) == 0;
    for (int h = 0; ok && h < haps; h++) {
        for (uint32_t j = 0; j < hlen[h]; j++) s[j] = "ACGT"[rnd(seed) % 4];
        if (h == copy) memcpy(h0, s, hlen[h]);
        ok &= hk_batch_add_hap(b, &rules, s, hlen[h], &bad) == 0;
    }
    for (int r = 0; ok && r < reads; r++) {
        for (uint32_t i = 0; i < rlen[r]; i++) {
            s[i] = copy >= 0 ? h0[i] : "ACGT"[rnd(seed) % 4];
            qq[i] = (char)(33 + (q >= 0 ? q : 10 + (int)(rnd(seed) % 31)));
            gi[i] = gd[i] = (char)(33 + (g >= 0 ? g : 45));
            gc[i] = (char)(33 + 10);
        }
        ok &= hk_batch_add_read(b, &rules, s, qq, gi, gd, gc, rlen[r], &bad) == 0;
    }
    ok &= hk_batch_end_region(b) == 0;
    free(s);
    return ok;
}

/* Score batch b with model m; compare every pair whose reference is below
 * `below` with the log-space reference, through the batch and the scalar
 * scorer. Largest relative difference of each; pairs not finite. */
static int score_and_compare(const hk_model_t *m, hk_batch_t *b, double below, double *rel_ref,
                             double *rel_scalar, size_t *nonfinite)
{
    *rel_ref = *rel_scalar = 0;
    *nonfinite = 0;
    if (hk_model_score_batch(m, b, 2)) return 0;
    void *ws = malloc(hk_model_ws_size(b->max_hap_len));
    for (size_t ri = 0; ri < b->n_regions; ri++) {
        const hk_region_t *rg = &b->regions[ri];
        for (uint32_t r = 0; r < rg->n_reads; r++)
            for (uint32_t h = 0; h < rg->n_haps; h++) {
                const size_t rk = rg->read0 + r, hk = rg->hap0 + h, o = b->read_off[rk];
                const uint32_t rl = hk_batch_read_len(b, rk), hl = hk_batch_hap_len(b, hk);
                int rc;
                const double got = b->lk[rg->pair0 + (size_t)r * rg->n_haps + h];
                const uint8_t *const *g = gap_rows(b, rk);
                const double sc = hk_model_score_pair(m, b->read_base + o, b->read_q + o, g[0], g[1], g[2],
                                                      rl, b->hap_base + b->hap_off[hk], hl, ws, &rc);
                const double want = log10_reference(b->read_base + o, b->read_q + o, g[0], g[1], g[2], rl,
                                                    b->hap_base + b->hap_off[hk], hl);
                if (!isfinite(got) || !isfinite(sc)) { (*nonfinite)++; continue; }
                if (want >= below) continue;
                const double a = fabs(got - want) / fabs(want), s = fabs(sc - want) / fabs(want);
                if (a > *rel_ref) *rel_ref = a;
                if (s > *rel_scalar) *rel_scalar = s;
            }
    }
    free(ws);
    return 1;
}

/* SPEC 1, beyond GATK's range: where even the double sum is 0 (below about
 * log10 -631), the true finite value, in every pass of mixed and double. */
static void test_rescue(void)
{
    for (int precision = HK_PREC_MIXED; precision <= HK_PREC_DOUBLE; precision += 2) {
        const char *name = precision == HK_PREC_MIXED ? "mixed" : "double";
        hk_model_t m = model(precision);
        unsigned seed = 4242;
        hk_batch_t b;
        hk_batch_init(&b);
        /* unrelated reads: 600 bases (log10 about -590: GATK's double, kept),
         * 700 and 1500 (beyond it); three haplotypes leave spare lanes */
        const uint32_t rl[] = { 600, 700, 1500 }, hl[] = { 700, 1500, 650 };
        int ok = add_region(&b, &m, &seed, rl, 3, hl, 3, -1, -1, -1);
        const uint32_t rl2[] = { 300 }, hl2[] = { 300 };
        ok &= add_region(&b, &m, &seed, rl2, 1, hl2, 1, 0, 30, 45);     /* a usual pair */
        double rel_ref, rel_scalar;
        size_t nonfinite;
        /* mixed: the pairs of the double pass (float's own error is larger) */
        ok &= score_and_compare(&m, &b, precision == HK_PREC_MIXED ? -100 : 0, &rel_ref, &rel_scalar,
                                &nonfinite);
        double lowest = 0;
        for (size_t i = 0; i < b.n_pairs; i++) if (b.lk[i] < lowest) lowest = b.lk[i];
        TAP_OK(ok && nonfinite == 0, "%s: %zu pairs down to log10 %.1f are finite (%zu not)", name,
               b.n_pairs, lowest, nonfinite);
        TAP_OK(ok && nonfinite == 0 && lowest < -1000 && rel_ref <= 1e-9 && rel_scalar <= 1e-9,
               "%s: batch and scalar passes agree with a log-space reference (relative %.2g, %.2g <= 1e-9)",
               name, rel_ref, rel_scalar);
        /* where GATK's double does not underflow, the rescue is the same recurrence */
        double rel = 0;
        void *ws = malloc(hk_model_ws_size(b.max_hap_len));
        const hk_region_t *rg = &b.regions[0];
        const uint64_t o = b.read_off[rg->read0];
        for (uint32_t h = 0; ok && h < rg->n_haps; h++) {
            const size_t hk = rg->hap0 + h;
            const uint8_t *const *g = gap_rows(&b, rg->read0);
            const double r = hk_model_rescue_pair(b.read_base + o, b.read_q + o, g[0], g[1], g[2],
                                                  hk_batch_read_len(&b, rg->read0),
                                                  b.hap_base + b.hap_off[hk], hk_batch_hap_len(&b, hk), ws);
            const double want = b.lk[rg->pair0 + h];
            if (!(fabs(r - want) <= rel * fabs(want))) rel = fabs(r - want) / fabs(want);
        }
        free(ws);
        TAP_OK(ok && rel <= 1e-12, "%s: the rescue equals the double pass above GATK's limit (600 bases, "
               "relative %.2g)", name, rel);
        hk_batch_free(&b);
    }
}

/* SPEC 1, accuracy at every length: float's error grows with the read's
 * length (constant qualities make it systematic); mixed must stay within
 * 1e-4 of double however long the read. */
static void test_long_reads(void)
{
    const struct { uint32_t len; int q, g; } c[] = {
        { 3000, 75, 60 },    /* the worst constant qualities measured: 1.4e-4 off in float */
        { 6000, 37, 40 },    /* binned Illumina-like qualities */
        /* the longest reads still scored in float, with the worst qualities measured */
        { HK_MIXED_FLOAT_MAX_READ, 58, 60 }, { HK_MIXED_FLOAT_MAX_READ, 75, 60 },
    };
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        hk_model_t mixed = model(HK_PREC_MIXED), dbl = model(HK_PREC_DOUBLE);
        unsigned seed = 99;
        hk_batch_t a, d;
        hk_batch_init(&a);
        hk_batch_init(&d);
        const uint32_t rl[] = { c[k].len }, hl[] = { c[k].len, c[k].len + 100 };
        int ok = add_region(&a, &mixed, &seed, rl, 1, hl, 2, 0, c[k].q, c[k].g);
        seed = 99;
        ok &= add_region(&d, &dbl, &seed, rl, 1, hl, 2, 0, c[k].q, c[k].g);
        ok &= hk_model_score_batch(&mixed, &a, 2) == 0 && hk_model_score_batch(&dbl, &d, 2) == 0;
        double worst = 0;
        for (size_t i = 0; ok && i < a.n_pairs; i++) {
            const double e = fabs(a.lk[i] - d.lk[i]);
            if (!(e <= worst)) worst = e;
        }
        void *ws = malloc(hk_model_ws_size(a.max_hap_len));
        int rc = 0;
        const uint8_t *const *g = gap_rows(&a, 0);
        const double sc = ok ? hk_model_score_pair(&mixed, a.read_base, a.read_q, g[0], g[1], g[2],
                                                   rl[0], a.hap_base, hl[0], ws, &rc) : NAN;
        free(ws);
        const double esc = fabs(sc - d.lk[0]);
        TAP_OK(ok && worst <= 1e-4 && esc <= 1e-4,
               "%u-base exact match, Q%d, gap-open Q%d: mixed within %.2g (batch), %.2g (scalar) of double",
               c[k].len, c[k].q, c[k].g, worst, esc);
        const int long_read = c[k].len > HK_MIXED_FLOAT_MAX_READ;
        TAP_OK(ok && rc == long_read && (!long_read || a.n_recomputed == a.n_pairs),
               "%u-base read: %s (%llu recomputed)", c[k].len,
               long_read ? "its pairs go to double and are counted" : "its exact match scored in float",
               (unsigned long long)a.n_recomputed);
        hk_batch_free(&a);
        hk_batch_free(&d);
    }
}

static void test_numfmt(void)
{
    static const struct { double v; int dec; const char *want; } cases[] = {
        { -1.6648144, 6, "-1.664814" }, { -0.0000004, 6, "-0.000000" }, { 0.0, 6, "0.000000" },
        { -85.2068994, 6, "-85.206899" }, { -12.5, 0, "-13" }, { -1234567.25, 2, "-1234567.25" },
        { -1e20, 3, "-100000000000000000000.000" }, { NAN, 6, "null" }, { -INFINITY, 6, "null" },
        { -0.0000005, 6, "-0.000001" }, { -987654321.0123456, 6, "-987654321.012346" },
        { -3.25, 12, "-3.250000000000" }, { -0.07, 1, "-0.1" }, { -10.0, 3, "-10.000" },
        { -99.9999996, 6, "-100.000000" }, { -0.0, 6, "-0.000000" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[HK_NUMFMT_MAX_LEN + 1];
        *hk_numfmt_fixed(buf, cases[i].v, cases[i].dec) = '\0';
        TAP_OK(!strcmp(buf, cases[i].want), "numfmt %g with %d decimals: '%s' (want '%s')",
               cases[i].v, cases[i].dec, buf, cases[i].want);
    }
    /* integers (a merged table's indices), against printf at each digit count */
    static const uint64_t ints[] = { 0, 7, 9, 10, 99, 100, 12345, 999999, 1000000, 4294967296u,
                                     9007199254740992u, 18446744073709551615u };
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        char buf[HK_NUMFMT_U64_LEN + 1], want[32];
        *hk_numfmt_u64(buf, ints[i]) = '\0';
        snprintf(want, sizeof want, "%llu", (unsigned long long)ints[i]);
        TAP_OK(!strcmp(buf, want), "numfmt u64: '%s' (want '%s')", buf, want);
    }
}

/* The constants written once (src/hk_types.h, src/hk_err_values.inc) against
 * their formulas: every backend starts from these values. */
static void test_constants(void)
{
    static const double err[256] = {
#include "hk_err_values.inc"
    };
    int wrong = 0;
    for (int q = 0; q < 256; q++) {
        const double want = pow(10.0, -q / 10.0);
        wrong += memcmp(&want, &err[q], sizeof want) != 0;
    }
    TAP_OK(wrong == 0, "hk_err_values.inc is pow(10, -q/10) bit for bit for q = 0..255 (%d differ)", wrong);
    TAP_OK(HK_SCALE_F == ldexpf(1.0f, HK_LOG2_SCALE_F) && HK_SCALE_D == ldexp(1.0, HK_LOG2_SCALE_D) &&
           HK_LOG10_2 == log10(2.0),
           "the scale constants are 2^%d and 2^%d, and HK_LOG10_2 is log10(2)", HK_LOG2_SCALE_F, HK_LOG2_SCALE_D);
}

/* test_model passes: the CPU passes against the scalar one alone (tests/arm.bats, under emulation). */
int main(int argc, char **argv)
{
    const int all = argc < 2 || strcmp(argv[1], "passes") != 0;
    hk_log_set_quiet(1);
    if (all) {
        test_constants();
        test_gatk_values();
        test_regions_rebuilt();
        test_tricky_regions();
        test_underflow_pair();
    }
    test_lanes_vs_scalar();
    test_passes_bit_identical();
    test_small_batch_threads();
    if (all) {
        test_two_pass_order();
        test_gap_summary();
        test_rescue();
        test_long_reads();
        test_numfmt();
    }
    return TAP_DONE();
}
