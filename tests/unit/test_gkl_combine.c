/* test_gkl_combine.c - the JNI library's combiner of concurrent calls
 * (src/gkl/hk_gkl_combine.h), run without a GPU:
 *   1. many threads score many small one-region batches through the
 *      combiner on the CPU engine: every result is bit for bit the one
 *      the batch gets scored alone;
 *   2. a scorer that holds its first call until every other thread waits:
 *      the next call then takes all of them at once (the gathering is seen,
 *      not hoped for), and max_pairs splits what exceeds it;
 *   3. with two scorer contexts, two leaders score at once, one on each;
 *   4. a scorer that fails: every waiting caller hears of it. */
#include "gkl/hk_gkl_combine.h"
#include "hk_config.h"
#include "hk_engine.h"
#include "hk_model.h"
#include "tap.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define THREADS 16
#define PER_THREAD 24

static uint64_t rng = 88172645463325252ull;
static uint32_t next_rand(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* One region of 1-6 reads x 1-4 haplotypes, 10-150 bases, mutated copies. */
static void make_batch(hk_batch_t *b)
{
    static const char acgt[] = "ACGT";
    const hk_seq_rules_t rules = { .min_base_quality = 6, .gcp = -1 };
    char hap[200], read[200], q[200], ins[200], del[200], gcp[200];
    hk_batch_error_t bad;
    hk_batch_init(b);
    hk_batch_set_no_text(b, 1);
    if (hk_batch_begin_region(b, NULL, 0)) abort();
    const int nh = 1 + (int)(next_rand() % 4), nr = 1 + (int)(next_rand() % 6);
    const uint32_t hlen = 30 + next_rand() % 120;
    for (uint32_t i = 0; i < hlen; i++) hap[i] = acgt[next_rand() % 4];
    for (int h = 0; h < nh; h++) {
        hap[next_rand() % hlen] = acgt[next_rand() % 4];
        if (hk_batch_add_hap(b, &rules, hap, hlen, &bad)) abort();
    }
    for (int r = 0; r < nr; r++) {
        const uint32_t rlen = 10 + next_rand() % (hlen - 10 + 1);
        const uint32_t at = next_rand() % (hlen - rlen + 1);
        for (uint32_t i = 0; i < rlen; i++) {
            read[i] = next_rand() % 20 ? hap[at + i] : acgt[next_rand() % 4];
            q[i] = (char)(33 + 6 + next_rand() % 35);
            ins[i] = del[i] = (char)(33 + 40 + next_rand() % 6);
            gcp[i] = '+';
        }
        if (hk_batch_add_read(b, &rules, read, q, ins, del, gcp, rlen, &bad)) abort();
    }
    if (hk_batch_end_region(b)) abort();
}

static hk_batch_t batches[THREADS * PER_THREAD];
static double *alone[THREADS * PER_THREAD];
static hk_model_t model;

typedef struct {
    hk_gkl_combine_t *c;
    int               first, n;   /* batches [first, first + n) */
    int               failures;
} worker_arg_t;

static void *worker(void *p)
{
    worker_arg_t *a = p;
    for (int k = a->first; k < a->first + a->n; k++) {
        for (size_t i = 0; i < batches[k].n_pairs; i++) batches[k].lk[i] = NAN;
        if (hk_gkl_combine_score(a->c, &batches[k], SIZE_MAX)) a->failures++;
    }
    return NULL;
}

static int run_threads(hk_gkl_combine_t *c, int threads, int per_thread)
{
    pthread_t t[THREADS];
    worker_arg_t a[THREADS];
    int failures = 0;
    for (int i = 0; i < threads; i++) {
        a[i] = (worker_arg_t){ c, i * per_thread, per_thread, 0 };
        pthread_create(&t[i], NULL, worker, &a[i]);
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        failures += a[i].failures;
    }
    return failures;
}

static int same_as_alone(int n)
{
    for (int k = 0; k < n; k++)
        if (memcmp(batches[k].lk, alone[k], batches[k].n_pairs * sizeof(double))) return 0;
    return 1;
}

static hk_status_t engine_score(void *e, hk_batch_t *const *b, size_t n, hk_engine_done_fn done, void *arg)
{
    return hk_engine_score(e, b, n, done, arg);
}

/* Scorer 2: the first call waits until the others have all queued. */
static hk_gkl_combine_t *gated;
static atomic_int gated_calls;
static size_t biggest_call;   /* the most regions in one engine call */
static hk_status_t gated_score(void *e, hk_batch_t *const *b, size_t n, hk_engine_done_fn done, void *arg)
{
    if (atomic_fetch_add(&gated_calls, 1) == 0)
        while (hk_gkl_combine_waiting(gated) < THREADS - 1) {
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
        }
    size_t regions = 0;   /* a call's batches may come merged into one */
    for (size_t i = 0; i < n; i++) regions += b[i]->n_regions;
    if (regions > biggest_call) biggest_call = regions;
    return engine_score(e, b, n, done, arg);
}

/* Scorer 4, for two contexts: its first call waits (up to 10 s) until a
 * second call is in the scorer at the same time; it counts the most calls
 * in at once and which contexts were used. */
static atomic_int inside, most_inside, lane_calls;
static void *lane_ctx[2];
static atomic_int lanes_used;   /* bit i: lane_ctx[i] was called */
static hk_status_t two_lane_score(void *e, hk_batch_t *const *b, size_t n, hk_engine_done_fn done, void *arg)
{
    const int now = atomic_fetch_add(&inside, 1) + 1;
    for (int m = atomic_load(&most_inside); now > m && !atomic_compare_exchange_weak(&most_inside, &m, now);)
        ;
    atomic_fetch_or(&lanes_used, e == lane_ctx[0] ? 1 : e == lane_ctx[1] ? 2 : 4);
    if (atomic_fetch_add(&lane_calls, 1) == 0)
        for (int waited = 0; atomic_load(&inside) < 2 && waited < 10000; waited++) {
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
        }
    const hk_status_t rc = engine_score(e, b, n, done, arg);
    atomic_fetch_sub(&inside, 1);
    return rc;
}

/* Scorer 5: its first call stays in the scorer until held_release is set. */
static atomic_int held_calls, held_inside, held_release;
static hk_status_t held_score(void *e, hk_batch_t *const *b, size_t n, hk_engine_done_fn done, void *arg)
{
    if (atomic_fetch_add(&held_calls, 1) == 0) {
        atomic_store(&held_inside, 1);
        while (!atomic_load(&held_release)) {
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
        }
    }
    return engine_score(e, b, n, done, arg);
}

static size_t held_queue_max;
static void *score_one(void *p)
{
    worker_arg_t *a = p;
    if (hk_gkl_combine_score(a->c, &batches[a->first], held_queue_max)) a->failures++;
    return NULL;
}

/* Scorer 3: fails every call without reporting a batch. */
static hk_status_t failing_score(void *e, hk_batch_t *const *b, size_t n, hk_engine_done_fn done, void *arg)
{
    (void)e; (void)b; (void)n; (void)done; (void)arg;
    return HK_E_RUNTIME;
}

int main(void)
{
    hk_config_t cfg;
    hk_config_init(&cfg);
    cfg.backend = HK_BACKEND_CPU;
    cfg.threads = 2;
    model = cfg.model;
    hk_engine_t *e;
    if (hk_engine_start(&cfg, &e)) return 1;
    void *ctx = e;
    const int n = THREADS * PER_THREAD;
    size_t total_pairs = 0;
    for (int k = 0; k < n; k++) {
        make_batch(&batches[k]);
        total_pairs += batches[k].n_pairs;
        if (hk_model_score_batch(&model, &batches[k], 1)) return 1;
        alone[k] = malloc(batches[k].n_pairs * sizeof(double));
        memcpy(alone[k], batches[k].lk, batches[k].n_pairs * sizeof(double));
    }

    /* 1: the CPU engine, all threads at once */
    hk_gkl_combine_t *c;
    if (hk_gkl_combine_open(engine_score, &ctx, 1, 1000, &c)) return 1;
    TAP_OK(run_threads(c, THREADS, PER_THREAD) == 0, "%d threads x %d calls: none failed", THREADS, PER_THREAD);
    TAP_OK(same_as_alone(n), "%zu pairs of %d batches: combined results equal each batch scored alone", total_pairs, n);
    size_t calls, done;
    hk_gkl_combine_counts(c, &calls, &done, NULL);
    TAP_OK(done == (size_t)n && calls >= 1 && calls <= (size_t)n, "%zu batches in %zu engine calls", done, calls);
    hk_gkl_combine_close(c);

    /* 2: the gathering, made certain */
    if (hk_gkl_combine_open(gated_score, &ctx, 1, (size_t)-1, &gated)) return 1;
    TAP_OK(run_threads(gated, THREADS, 1) == 0, "gated: %d threads, one call each", THREADS);
    hk_gkl_combine_counts(gated, &calls, &done, NULL);
    TAP_OK(calls == 2 && biggest_call == THREADS - 1,
           "the %d callers that waited went in one engine call (calls %zu, largest %zu regions)", THREADS - 1, calls,
           biggest_call);
    TAP_OK(same_as_alone(THREADS), "gated: results equal each batch scored alone");
    hk_gkl_combine_close(gated);
    /* the same with a bound of one batch's pairs: the waiting callers go one call each */
    if (hk_gkl_combine_open(gated_score, &ctx, 1, 1, &gated)) return 1;
    atomic_store(&gated_calls, 0);
    biggest_call = 0;
    TAP_OK(run_threads(gated, THREADS, 1) == 0 && same_as_alone(THREADS), "max_pairs 1: all scored");
    hk_gkl_combine_counts(gated, &calls, &done, NULL);
    TAP_OK(calls == THREADS && biggest_call == 1, "max_pairs 1: %zu calls of at most %zu region", calls, biggest_call);
    hk_gkl_combine_close(gated);

    /* 2b: two contexts: a second leader scores while the first is in the scorer */
    hk_engine_t *e2;
    if (hk_engine_start(&cfg, &e2)) return 1;
    void *two[2] = { e, e2 };
    lane_ctx[0] = e;
    lane_ctx[1] = e2;
    if (hk_gkl_combine_open(two_lane_score, two, 2, (size_t)-1, &c)) return 1;
    TAP_OK(run_threads(c, THREADS, 2) == 0 && same_as_alone(THREADS * 2), "two contexts: all scored, results equal");
    TAP_OK(atomic_load(&most_inside) == 2 && atomic_load(&lanes_used) == 3,
           "two contexts: two calls were in the scorer at once, one on each (most at once %d)",
           atomic_load(&most_inside));
    hk_gkl_combine_close(c);
    hk_engine_close(e2);
    hk_gkl_combine_t *none = (hk_gkl_combine_t *)two, *many = (hk_gkl_combine_t *)two;   /* must be set to NULL */
    const hk_status_t st0 = hk_gkl_combine_open(engine_score, two, 0, 1, &none);
    const hk_status_t st_many = hk_gkl_combine_open(engine_score, two, HK_GKL_COMBINE_MAX_CTX + 1, 1, &many);
    TAP_OK(st0 == HK_E_INVAL && !none && st_many == HK_E_INVAL && !many,
           "no context, or more than %d: refused, HK_E_INVAL (%d, %d)", HK_GKL_COMBINE_MAX_CTX, (int)st0, (int)st_many);

    /* 2c: a bounded queue: with the one context busy and queue_max callers
     * waiting, a call is declined at once and its batch left alone */
    for (size_t queue_max = 0; queue_max <= 1; queue_max++) {
        if (hk_gkl_combine_open(held_score, &ctx, 1, (size_t)-1, &c)) return 1;
        atomic_store(&held_calls, 0);
        atomic_store(&held_inside, 0);
        atomic_store(&held_release, 0);
        held_queue_max = queue_max;
        pthread_t t[2];
        worker_arg_t a[2] = { { c, 0, 1, 0 }, { c, 1, 1, 0 } };
        pthread_create(&t[0], NULL, score_one, &a[0]);
        while (!atomic_load(&held_inside)) nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
        if (queue_max) {
            pthread_create(&t[1], NULL, score_one, &a[1]);
            while (hk_gkl_combine_waiting(c) < 1) nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
        }
        hk_batch_t *third = &batches[2];
        for (size_t i = 0; i < third->n_pairs; i++) third->lk[i] = NAN;
        const hk_status_t rc = hk_gkl_combine_score(c, third, queue_max);
        int untouched = 1;
        for (size_t i = 0; i < third->n_pairs; i++) untouched &= isnan(third->lk[i]);
        atomic_store(&held_release, 1);
        pthread_join(t[0], NULL);
        if (queue_max) pthread_join(t[1], NULL);
        size_t declined;
        hk_gkl_combine_counts(c, &calls, &done, &declined);
        TAP_OK(rc == HK_E_NODEV && untouched && declined == 1, "queue_max %zu, the context busy: a call is declined, "
               "its results untouched (rc %d, declined %zu)", queue_max, (int)rc, declined);
        TAP_OK(a[0].failures + a[1].failures == 0 && done == 1 + queue_max && same_as_alone(1 + (int)queue_max),
               "queue_max %zu: the calls taken were scored (%zu)", queue_max, done);
        hk_gkl_combine_close(c);
    }

    /* 3: a failing engine: every caller hears it, none hangs */
    if (hk_gkl_combine_open(failing_score, &ctx, 1, 1000, &c)) return 1;
    TAP_OK(run_threads(c, THREADS, 2) == THREADS * 2, "a failing scorer: all %d calls report the failure", THREADS * 2);
    hk_gkl_combine_close(c);

    for (int k = 0; k < n; k++) { hk_batch_free(&batches[k]); free(alone[k]); }
    hk_engine_close(e);
    hk_config_free(&cfg);
    return TAP_DONE();
}
