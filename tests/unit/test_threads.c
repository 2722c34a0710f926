/* test_threads.c - hk_threads_run runs every one of its n calls, however
 * many (more than the threads it keeps), each once; a batch scored on more
 * threads than that (engine.threads goes to 1024) has every pair's value.
 * Run by `make check`. */
#include "hk_threads.h"
#include "hk_model.h"
#include "hk_log.h"
#include "tap.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    atomic_int *calls;   /* shared: calls of the whole run */
    int         runs;    /* this job's calls */
} job_t;

static void *count(void *arg)
{
    job_t *j = arg;
    j->runs++;
    atomic_fetch_add(j->calls, 1);
    return NULL;
}

static void *count_shared(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
    return NULL;
}

/* 60 regions of 4 reads and 3 haplotypes (random, seeded). */
static int build(hk_batch_t *b, const hk_model_t *m)
{
    const hk_seq_rules_t rules = hk_model_seq_rules(m);
    unsigned seed = 11;
    char s[5][64];
    hk_batch_error_t bad;
    int ok = 1;
    for (int g = 0; ok && g < 60; g++) {
        ok &= hk_batch_begin_region(b, NULL, 1 + g) == 0;
        for (int r = 0; ok && r < 4 + 3; r++) {
            const uint32_t len = 20 + (uint32_t)(g + r) % 40;
            for (uint32_t i = 0; i < len; i++) {
                seed = seed * 1103515245u + 12345u;
                s[0][i] = "ACGT"[(seed >> 16) & 3];
                s[1][i] = (char)(33 + 10 + (int)((seed >> 20) % 30));
                s[2][i] = s[3][i] = '+';
                s[4][i] = '*';
            }
            ok &= r < 4 ? hk_batch_add_read(b, &rules, s[0], s[1], s[2], s[3], s[4], len, &bad) == 0
                        : hk_batch_add_hap(b, &rules, s[0], len, &bad) == 0;
        }
        ok &= hk_batch_end_region(b) == 0;
    }
    return ok;
}

/* Ordered on all its threads (as batches of 2^20 pairs are), a batch on 1
 * and on 300 threads: the same bits, every value finite. */
static void test_score_many_threads(void)
{
    const hk_model_t m = { .precision = HK_PREC_MIXED, .float_threshold = HK_FLOAT_THRESHOLD, .min_base_quality = 6, .gcp = -1 };
    hk_batch_t b;
    hk_batch_init(&b);
    int ok = build(&b, &m) && hk_model_score_batch(&m, &b, 1) == 0;
    const size_t n = b.n_pairs;
    double *one = malloc(n * sizeof *one);
    ok &= one != NULL;
    if (ok) memcpy(one, b.lk, n * sizeof *one);
    for (size_t i = 0; i < n; i++) b.lk[i] = NAN;
    const size_t was = hk_model_set_cpu_parallel_order(1);
    ok &= ok && hk_model_score_batch(&m, &b, 300) == 0;
    hk_model_set_cpu_parallel_order(was);
    size_t differ = 0, nonfinite = 0;
    for (size_t i = 0; ok && i < n; i++) {
        nonfinite += !isfinite(b.lk[i]);
        differ += memcmp(&one[i], &b.lk[i], sizeof one[i]) != 0;
    }
    TAP_OK(ok && n == 720 && differ == 0 && nonfinite == 0,
           "a batch of %zu pairs on 300 threads, ordered on all: the bits of 1 thread (%zu differ, %zu not finite)",
           n, differ, nonfinite);
    free(one);
    hk_batch_free(&b);
}

int main(void)
{
    hk_log_set_quiet(1);
    static const int n[] = { 1, 2, 255, 256, 257, 1000, 5000 };
    for (size_t k = 0; k < sizeof n / sizeof *n; k++) {
        atomic_int calls = 0;
        job_t *jobs = calloc((size_t)n[k], sizeof *jobs);
        if (!jobs) return 1;
        for (int i = 0; i < n[k]; i++) jobs[i].calls = &calls;
        hk_threads_run(count, jobs, sizeof *jobs, n[k]);
        int once = 0;
        for (int i = 0; i < n[k]; i++) once += jobs[i].runs == 1;
        TAP_OK(once == n[k] && atomic_load(&calls) == n[k],
               "%d jobs: each ran once (%d did, %d calls in all)", n[k], once, atomic_load(&calls));
        free(jobs);
    }
    atomic_int shared = 0;
    hk_threads_run(count_shared, &shared, 0, 1000);
    TAP_OK(atomic_load(&shared) == 1000, "1000 calls sharing one argument: all ran (%d)", atomic_load(&shared));
    test_score_many_threads();
    return TAP_DONE();
}
