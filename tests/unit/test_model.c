/* test_model.c - unit tests of the model, the reader's region rebuilding and
 * number formatting. Run by `make check` with HK_TESTDATA set. */
#include "hk_model.h"
#include "hk_numfmt.h"
#include "hk_reader.h"
#include "hk_log.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *data_dir(void)
{
    const char *d = getenv("HK_TESTDATA");
    return d ? d : "tests/data";
}

static hk_model_t model(int precision)
{
    hk_model_t m = { .precision = precision, .float_threshold = 1e-28, .min_base_quality = 6,
                     .gcp = -1, .unknown_as_n = 0 };
    return m;
}

/* Read a whole file into b; the number of regions or -1. */
static int read_all(const char *path, const hk_model_t *m, hk_batch_t *b)
{
    hk_reader_t *r = hk_reader_open(path, HK_FMT_AUTO, m);
    if (!r) return -1;
    int got, total = 0;
    while ((got = hk_reader_next(r, b, (size_t)-1)) > 0) total += got;
    hk_reader_close(r);
    return got < 0 ? -1 : total;
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

/* The vectorised pass (4 or 8 haplotypes at once, padded to the longest)
 * against the scalar reference, pair by pair, on random regions whose
 * haplotype counts leave spare lanes and whose lengths differ in a group. */
static void test_lanes_vs_scalar(void)
{
    unsigned seed = 12345;
#define RND() rnd(&seed)
    for (int precision = HK_PREC_MIXED; precision <= HK_PREC_FLOAT; precision++) {
        hk_model_t m = model(precision);
        hk_batch_t b;
        hk_batch_init(&b);
        int ok = 1;
        for (int region = 0; region < 12 && ok; region++) {
            char rb[300], q[300], gi[300], gd[300], gc[300], hb[400];
            const char *bad;
            ok &= hk_batch_begin_region(&b, NULL, region + 1) == 0;
            const int n_haps = 1 + (int)(RND() % 11), n_reads = 1 + (int)(RND() % 4);
            for (int h = 0; h < n_haps && ok; h++) {
                const uint32_t hl = 1 + RND() % 399;
                for (uint32_t j = 0; j < hl; j++) hb[j] = rnd_base(&seed);
                ok &= hk_batch_add_hap(&b, &m, hb, hl, &bad) == 0;
            }
            for (int r = 0; r < n_reads && ok; r++) {
                const uint32_t rl = 1 + RND() % 299;
                for (uint32_t i = 0; i < rl; i++) {
                    rb[i] = rnd_base(&seed);
                    q[i] = (char)(33 + RND() % 60);
                    gi[i] = (char)(33 + 10 + RND() % 40);
                    gd[i] = (char)(33 + 10 + RND() % 40);
                    gc[i] = (char)(33 + RND() % 40);
                }
                ok &= hk_batch_add_read(&b, &m, rb, q, gi, gd, gc, rl, &bad) == 0;
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
                    double want = hk_model_score_pair(&m, b.read_base + o, b.read_q + o,
                                                      b.read_i + o, b.read_d + o, b.read_g + o,
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
        { "IIHIN", "IIIIN", "+++++", -1, { 0, 40, 40, 10, 45, 45, 10, 0 }, "an insertion quality differs" },
        { "IIIIN", "IIIIN", "++,++", -1, { 0, 40, 40, 10, 45, 45, 10, 0 }, "a gap continuation differs" },
        { "IIIIN", "IIIIN", "++,++", 12, { 1, 40, 40, 12, 45, 45, 12, 0 }, "the gcp override makes it constant" },
        { "HIIIN", "IIIIN", "+++++", -1, { 0, 39, 40, 10, 45, 45, 10, 0 }, "the first position differs" },
        { "N", "M", "+", -1, { 1, 45, 44, 10, 45, 44, 10, 0 }, "one base" },
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        hk_model_t m = model(HK_PREC_MIXED);
        m.gcp = c[k].gcp_override;
        hk_batch_t b;
        hk_batch_init(&b);
        const char *bad;
        const uint32_t len = (uint32_t)strlen(c[k].ins);
        int rc = hk_batch_begin_region(&b, NULL, 1);
        if (!rc) rc = hk_batch_add_read(&b, &m, "ACGTA", "IIIII", c[k].ins, c[k].del, c[k].gcp, len, &bad);
        const hk_read_gaps_t *g = rc ? NULL : &b.read_gaps[0];
        TAP_OK(g && !memcmp(g, &c[k].want, sizeof *g),
               "gap summary: %s (constant %d, body %d/%d/%d, last %d/%d/%d)", c[k].what,
               g ? g->constant : -1, g ? g->ins : -1, g ? g->del : -1, g ? g->gcp : -1,
               g ? g->ins_last : -1, g ? g->del_last : -1, g ? g->gcp_last : -1);
        hk_batch_free(&b);
    }
}

static void test_numfmt(void)
{
    static const struct { double v; int dec; const char *want; } cases[] = {
        { -1.6648144, 6, "-1.664814" }, { -0.0000004, 6, "-0.000000" }, { 0.0, 6, "0.000000" },
        { -85.2068994, 6, "-85.206899" }, { -12.5, 0, "-13" }, { -1234567.25, 2, "-1234567.25" },
        { -1e20, 3, "-100000000000000000000.000" }, { NAN, 6, "null" }, { -INFINITY, 6, "null" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[HK_NUMFMT_MAX_LEN + 1];
        *hk_numfmt_fixed(buf, cases[i].v, cases[i].dec) = '\0';
        TAP_OK(!strcmp(buf, cases[i].want), "numfmt %g with %d decimals: '%s' (want '%s')",
               cases[i].v, cases[i].dec, buf, cases[i].want);
    }
}

int main(void)
{
    hk_log_set_quiet(1);
    test_gatk_values();
    test_regions_rebuilt();
    test_tricky_regions();
    test_underflow_pair();
    test_lanes_vs_scalar();
    test_gap_summary();
    test_numfmt();
    return TAP_DONE();
}
