/* bench_regions - the CPU scorer on one region at a time, as the GKL-compatible
 * library scores HaplotypeCaller's calls: every region of a HaplotypeCaller
 * results file becomes a batch of its own, and the batches are scored one
 * after the other on the calling thread. Prints the thread's CPU time per
 * pass over all regions (less disturbed than wall time on a shared host).
 *
 *   tests/bench/bench_regions DUMP REGIONS [PASSES [auto|off|all]]
 *
 * REGIONS gives each region's reads and haplotypes ("R H" a line), in the
 * file's order, as `PairHmmBench --list-regions` prints them
 * (tests/bench/jni/); DUMP's records are read-major within a region. The
 * last argument is HK_CPU_DIAG's choice of the anti-diagonal pass.
 * Build: make tests/bench/bench_regions. */
#include "hk_batch.h"
#include "hk_cpu.h"
#include "hk_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_regions: error: %s\n", what);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 3) die("usage: bench_regions DUMP REGIONS [PASSES [auto|off|all]]");
    const int passes = argc > 3 ? atoi(argv[3]) : 3;
    const char *mode = argc > 4 ? argv[4] : "auto";
    const int diag = !strcmp(mode, "off") ? HK_DIAG_OFF : !strcmp(mode, "all") ? HK_DIAG_ALL : HK_DIAG_AUTO;
    FILE *df = fopen(argv[1], "r"), *rf = fopen(argv[2], "r");
    if (!df || !rf) die("cannot open the dump or the regions");
    hk_model_t m = { .precision = HK_PREC_MIXED, .float_threshold = HK_FLOAT_THRESHOLD, .min_base_quality = 0, .gcp = -1 };
    const hk_seq_rules_t rules = hk_model_seq_rules(&m);
    size_t n = 0, cap = 0;
    hk_batch_t *b = NULL;
    long long pairs = 0;
    char *line = NULL;
    size_t line_cap = 0;
    int R, H;
    while (fscanf(rf, "%d %d", &R, &H) == 2) {
        if (n == cap && !(b = realloc(b, (cap = cap ? 2 * cap : 1024) * sizeof *b))) die("out of memory");
        hk_batch_t *bb = &b[n++];
        hk_batch_init(bb);
        hk_batch_set_no_text(bb, 1);
        if (hk_batch_begin_region(bb, NULL, 0)) die("out of memory");
        for (int i = 0; i < R; i++)
            for (int h = 0; h < H; h++) {
                do {
                    if (getline(&line, &line_cap, df) < 0) die("the dump ends before the regions do");
                } while (line[0] == '#');
                char *f[7], *s = line;
                for (int k = 0; k < 7; k++) f[k] = strsep(&s, " \t\n");
                if (!f[5]) die("a record with fewer than 6 fields");
                hk_batch_error_t bad;
                if (i == 0 && hk_batch_add_hap(bb, &rules, f[0], (uint32_t)strlen(f[0]), &bad)) die("a bad haplotype");
                if (h == 0 && hk_batch_add_read(bb, &rules, f[1], f[2], f[3], f[4], f[5], (uint32_t)strlen(f[1]), &bad))
                    die("a bad read");
            }
        if (hk_batch_end_region(bb)) die("out of memory");
        pairs += (long long)R * H;
    }
    hk_cpu_set_diag(diag);
    for (int p = 0; p < passes; p++) {
        const double t0 = cpu_now();
        for (size_t k = 0; k < n; k++)
            if (hk_model_score_batch(&m, &b[k], 1)) die("scoring failed");
        const double t = cpu_now() - t0;
        printf("pass=%s diag=%s regions=%zu pairs=%lld cpu_s=%.3f pairs_per_cpu_s=%.0f us_per_call=%.1f\n",
               hk_model_cpu_pass(), mode, n, pairs, t, (double)pairs / t, t / (double)n * 1e6);
    }
    for (size_t k = 0; k < n; k++) hk_batch_free(&b[k]);
    free(b);
    free(line);
    fclose(df);
    fclose(rf);
    return 0;
}
