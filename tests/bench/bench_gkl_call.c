/* bench_gkl_call - where a HaplotypeCaller-sized call's microseconds go in
 * the GKL-compatible library, stage by stage, outside the JVM: each region of
 * a HaplotypeCaller results file is built into a batch of its own from GKL's
 * input (raw Phred qualities, as ReadDataHolder holds them) and scored, as
 * libhaplik_gkl.so does for one computeLikelihoodsNative. Stages, each timed
 * over every region, the median of PASSES passes (wall time, microseconds a
 * call):
 *   text    raw qualities to Phred+33 text (what the library did before
 *           hk_batch_add_read_phred)
 *   build   the reads into the batch from that text (hk_batch_add_read)
 *   raw     the reads into the batch from the raw qualities (hk_batch_add_read_phred)
 *   score1  hk_model_score_batch on the calling thread
 *   scoreT  the same on T threads (the library's pool: spinning 200 us
 *           between calls, the share rule of cpu_threads)
 * The JNI layer's own copies (holders' arrays in, results out) are measured
 * by scripts/bench-gkl.sh's overhead row.
 *
 *   tests/bench/bench_gkl_call DUMP REGIONS [PASSES [T]]
 *
 * REGIONS gives each region's reads and haplotypes ("R H" a line), as
 * `PairHmmBench --list-regions` prints them. Build: make tests/bench/bench_gkl_call. */
#include "hk_batch.h"
#include "hk_log.h"
#include "hk_model.h"
#include "hk_threads.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void die(const char *what)
{
    fprintf(stderr, "bench_gkl_call: error: %s\n", what);
    exit(2);
}

/* One read as a Java holder has it: bases, then four rows of raw Phred values. */
typedef struct {
    uint32_t len;
    char    *f[5];
} read_t;

typedef struct {
    int     n_reads, n_haps;
    read_t *reads;
    char  **haps;
    uint32_t *hap_len;
    uint64_t cells;
} region_t;

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The JNI layer's old conversion: raw Phred values (clamped at 93) to text. */
static void to_text(const char *raw, char *text, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        const signed char q = (signed char)raw[i];
        text[i] = (char)((q > 93 ? 93 : q) + 33);
    }
}

/* The per-thread count libhaplik_gkl.so scores a call on (hk_gkl_state.c). */
static int share(uint64_t cells, int t)
{
    const uint64_t most = cells >> 15;
    return (uint64_t)t > most ? (most > 1 ? (int)most : 1) : t;
}

int main(int argc, char **argv)
{
    if (argc < 3) die("usage: bench_gkl_call DUMP REGIONS [PASSES [T]]");
    const int passes = argc > 3 ? atoi(argv[3]) : 5, threads = argc > 4 ? atoi(argv[4]) : 4;
    if (passes < 1 || threads < 1) die("PASSES and T: positive numbers");
    FILE *df = fopen(argv[1], "r"), *rf = fopen(argv[2], "r");
    if (!df || !rf) die("cannot open the dump or the regions");
    region_t *rg = NULL;
    size_t n = 0, cap = 0, max_len = 0;
    long long pairs = 0;
    char *line = NULL;
    size_t line_cap = 0;
    int R, H;
    while (fscanf(rf, "%d %d", &R, &H) == 2) {
        if (n == cap && !(rg = realloc(rg, (cap = cap ? 2 * cap : 1024) * sizeof *rg))) die("out of memory");
        region_t *g = &rg[n++];
        *g = (region_t){ .n_reads = R, .n_haps = H, .reads = calloc((size_t)R, sizeof(read_t)),
                         .haps = calloc((size_t)H, sizeof(char *)), .hap_len = calloc((size_t)H, 4) };
        if (!g->reads || !g->haps || !g->hap_len) die("out of memory");
        uint64_t rsum = 0, hsum = 0;
        for (int i = 0; i < R; i++)
            for (int h = 0; h < H; h++) {
                do {
                    if (getline(&line, &line_cap, df) < 0) die("the dump ends before the regions do");
                } while (line[0] == '#');
                char *f[7], *s = line;
                for (int k = 0; k < 7; k++) f[k] = strsep(&s, " \t\n");
                if (!f[5]) die("a record with fewer than 6 fields");
                if (i == 0) {
                    g->haps[h] = strdup(f[0]);
                    g->hap_len[h] = (uint32_t)strlen(f[0]);
                    hsum += g->hap_len[h];
                }
                if (h) continue;
                read_t *r = &g->reads[i];
                r->len = (uint32_t)strlen(f[1]);
                rsum += r->len;
                if (r->len > max_len) max_len = r->len;
                for (int k = 0; k < 5; k++) {
                    if (!(r->f[k] = strdup(f[k + 1]))) die("out of memory");
                    if (k)
                        for (uint32_t p = 0; p < r->len; p++) r->f[k][p] = (char)(r->f[k][p] - 33);
                }
            }
        g->cells = rsum * hsum;
        pairs += (long long)R * H;
    }
    if (!n) die("no regions");
    hk_model_t m = { .precision = HK_PREC_MIXED, .float_threshold = HK_FLOAT_THRESHOLD, .min_base_quality = 0, .gcp = -1 };
    const hk_seq_rules_t rules = hk_model_seq_rules(&m);
    hk_threads_set_spin(200000L);
    hk_batch_t b;
    hk_batch_init(&b);
    hk_batch_set_no_text(&b, 1);
    char *text = malloc(4 * max_len + 1);
    enum { TEXT, BUILD, RAW, SCORE1, SCORET, N_STAGES };
    static const char *const names[N_STAGES] = { "text", "build", "raw", "score1", "scoreT" };
    double *t[N_STAGES];
    for (int s = 0; s < N_STAGES; s++)
        if (!(t[s] = malloc((size_t)passes * sizeof(double)))) die("out of memory");
    if (!text) die("out of memory");
    hk_batch_error_t e;
    for (int p = 0; p < passes; p++) {
        double sum[N_STAGES] = { 0 };
        for (size_t k = 0; k < n; k++) {
            const region_t *g = &rg[k];
            double t0 = hk_log_now();
            for (int i = 0; i < g->n_reads; i++)
                for (int f = 1; f < 5; f++)
                    to_text(g->reads[i].f[f], text + (size_t)(f - 1) * g->reads[i].len, g->reads[i].len);
            double t1 = hk_log_now();
            sum[TEXT] += t1 - t0;
            /* from text: the conversion again, untimed, then the batch's parse of it, timed */
            hk_batch_clear(&b);
            if (hk_batch_begin_region(&b, NULL, 0)) die("out of memory");
            for (int h = 0; h < g->n_haps; h++)
                if (hk_batch_add_hap(&b, &rules, g->haps[h], g->hap_len[h], &e)) die("a bad haplotype");
            for (int i = 0; i < g->n_reads; i++) {
                const read_t *r = &g->reads[i];
                to_text(r->f[1], text, r->len);
                to_text(r->f[2], text + r->len, r->len);
                to_text(r->f[3], text + 2 * r->len, r->len);
                to_text(r->f[4], text + 3 * r->len, r->len);
                const double a = hk_log_now();
                if (hk_batch_add_read(&b, &rules, r->f[0], text, text + r->len, text + 2 * r->len,
                                      text + 3 * r->len, r->len, &e))
                    die("a bad read");
                sum[BUILD] += hk_log_now() - a;
            }
            if (hk_batch_end_region(&b)) die("out of memory");
            hk_batch_clear(&b);
            if (hk_batch_begin_region(&b, NULL, 0)) die("out of memory");
            for (int h = 0; h < g->n_haps; h++)
                if (hk_batch_add_hap(&b, &rules, g->haps[h], g->hap_len[h], &e)) die("a bad haplotype");
            for (int i = 0; i < g->n_reads; i++) {
                const read_t *r = &g->reads[i];
                const double a = hk_log_now();
                if (hk_batch_add_read_phred(&b, &rules, r->f[0], (const uint8_t *)r->f[1], (const uint8_t *)r->f[2],
                                            (const uint8_t *)r->f[3], (const uint8_t *)r->f[4], r->len, &e))
                    die("a bad read");
                sum[RAW] += hk_log_now() - a;
            }
            if (hk_batch_end_region(&b)) die("out of memory");
            t1 = hk_log_now();
            if (hk_model_score_batch(&m, &b, 1)) die("scoring failed");
            const double t2 = hk_log_now();
            sum[SCORE1] += t2 - t1;
            if (hk_model_score_batch(&m, &b, share(b.cells, threads))) die("scoring failed");
            sum[SCORET] += hk_log_now() - t2;
        }
        for (int s = 0; s < N_STAGES; s++) t[s][p] = sum[s] / (double)n * 1e6;
    }
    printf("regions=%zu pairs_per_call=%.1f passes=%d T=%d (us a call, median [min-max] of the passes)\n", n,
           (double)pairs / (double)n, passes, threads);
    for (int s = 0; s < N_STAGES; s++) {
        qsort(t[s], (size_t)passes, sizeof(double), cmp_d);
        printf("%-7s %8.2f [%.2f-%.2f]\n", names[s], t[s][passes / 2], t[s][0], t[s][passes - 1]);
    }
    hk_batch_free(&b);
    return 0;
}
