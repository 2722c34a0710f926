/* hk_cpu_batch.c - hk_model_score_batch: a batch's pairs on the CPU's vector
 * lanes and threads (see hk_model.h).
 *
 * Every pair of the batch, whatever its region or read, goes in one list,
 * sorted by (haplotype length / 16, read length): consecutive pairs then
 * have nearly the same shape, and a group of them fills a pass's lanes with
 * little padding (97 % of the cells computed are the pairs' own on the
 * NA12878-like mix with 16 lanes, against ~60 % for one read's haplotypes
 * padded to the longest). Threads take groups one at a time, largest first,
 * so the work is shared by cells and the last groups are the small ones.
 * Pairs whose float sum is under the threshold are gathered per thread and
 * recomputed in double lanes, a group at a time.
 */
#include "hk_cpu.h"
#include "hk_model.h"
#include "hk_log.h"
#include "hk_threads.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* One pair of the batch. */
typedef struct {
    uint32_t read, hap;   /* batch indices */
    uint64_t out;         /* its result: lk[out] */
} pair_ref_t;

/* Haplotype lengths that share a sort bucket (read length sorts within). */
#define HAP_BUCKET_SHIFT 4

/* Workers whose start and end a trace reports. */
#define MAX_TRACED 256

typedef struct {
    const hk_model_t    *m;
    hk_batch_t          *b;
    const hk_cpu_pass_t *pass;
    hk_diag_f_fn         diag;        /* the pass's anti-diagonal float pass; NULL: none */
    int                  diag_mode;   /* HK_DIAG_* */
    const pair_ref_t    *order;       /* float pairs, then double ones, each part sorted */
    size_t               n_float;     /* pairs scored in float first */
    size_t               n_double;    /* pairs scored in double from the start */
    size_t               float_size, double_size;   /* pairs a group: the pass's lanes, or fewer (below) */
    const size_t        *float_cut;   /* else float group k is order[cut[k], cut[k + 1]) (a small batch) */
    size_t               float_groups, n_groups;
    atomic_size_t        next;        /* groups taken */
    atomic_ullong        recomputed;
    atomic_int           failed;
    /* traced: when each worker started and ended (see hk_model_score_batch) */
    int                  tracing;
    atomic_int           workers;
    double               t_begin[MAX_TRACED], t_end[MAX_TRACED];
} score_job_t;

/* One thread's memory and its pairs awaiting a double recompute. */
typedef struct {
    hk_lane_mem_t mem;
    void         *ws;                 /* the rescue's rows */
    void         *diag;               /* the anti-diagonal pass's rows */
    uint8_t      *gap_rows;           /* each lane's gap rows where its read has only a summary */
    pair_ref_t    redo[HK_MAX_LANES];
    int           n_redo;
    unsigned long long recomputed;
} worker_t;

/* A lane's pair; scratch: room for its read's gap rows (hk_batch_gap_rows). */
static hk_lane_pair_t lane_pair(const hk_batch_t *b, const pair_ref_t *r, uint8_t *scratch)
{
    const uint64_t o = b->read_off[r->read];
    const uint8_t *gap[3];
    hk_batch_gap_rows(b, r->read, scratch, gap);
    return (hk_lane_pair_t){ b->read_base + o, b->read_q + o, gap[0], gap[1], gap[2],
                             b->hap_base + b->hap_off[r->hap],
                             hk_batch_read_len(b, r->read), hk_batch_hap_len(b, r->hap) };
}

/* Lanes for n pairs (1 <= n <= lanes); spare lanes repeat the first pair. */
static void fill_lanes(const hk_batch_t *b, const pair_ref_t *g, int n, int lanes,
                       hk_lane_pair_t *lp, uint8_t *gap_rows)
{
    const size_t lane_rows = 3 * (size_t)b->max_read_len;
    for (int l = 0; l < lanes; l++) lp[l] = l < n ? lane_pair(b, &g[l], gap_rows + (size_t)l * lane_rows) : lp[0];
}

/* Score n pairs in double (a recompute in mixed mode, or double-first ones). */
static void run_double(const score_job_t *job, worker_t *w, const pair_ref_t *g, int n)
{
    hk_lane_pair_t lp[HK_MAX_LANES];
    double sums[HK_MAX_LANES];
    fill_lanes(job->b, g, n, job->pass->n_double, lp, w->gap_rows);
    job->pass->forward_d(lp, &w->mem, sums);
    for (int l = 0; l < n; l++)
        job->b->lk[g[l].out] = hk_cpu_double_score(sums[l], &lp[l], w->ws);
    if (job->m->precision == HK_PREC_MIXED) w->recomputed += (unsigned)n;   /* fallbacks or long reads */
}

/* The anti-diagonal pass's cost of a step against the lane pass's, in
 * sixteenths: 26 measured before the lane pass took two rows a sweep, which
 * made it about 1.4 times faster on a Xeon (not on an AMD EPYC); 36 scored
 * HaplotypeCaller's default there 5-10 % faster, and the same on the EPYC
 * (docs/PERFORMANCE.md, "Why the defaults are what they are"). */
#define DIAG_STEP_COST16 36

/* A pair's steps in the anti-diagonal pass of that many lanes: strips of
 * lanes rows, each walking the haplotype and lanes - 1 more (hk_cpu_diag.c). */
static uint64_t diag_steps(uint64_t rlen, uint64_t hlen, uint64_t lanes)
{
    return (rlen + lanes - 1) / lanes * (hlen + lanes - 1);
}

/* Whether the n pairs of a float group (n <= lanes) take fewer steps each
 * across its anti-diagonals than together in the lanes, which all walk the
 * group's longest read and haplotype. */
static int diag_cheaper(const hk_lane_pair_t *lp, int n, int lanes)
{
    uint64_t rmax = 0, hmax = 0, diag = 0;
    for (int l = 0; l < n; l++) {
        const uint64_t r = lp[l].rlen, h = lp[l].hlen;
        if (r > rmax) rmax = r;
        if (h > hmax) hmax = h;
        diag += diag_steps(r, h, (uint64_t)lanes);
    }
    return diag * DIAG_STEP_COST16 < 16 * rmax * hmax;
}

/* Score n pairs in float; those under the threshold (mixed) wait in redo. */
static void run_float(const score_job_t *job, worker_t *w, const pair_ref_t *g, int n)
{
    hk_lane_pair_t lp[HK_MAX_LANES];
    float sums[HK_MAX_LANES];
    fill_lanes(job->b, g, n, job->pass->n_float, lp, w->gap_rows);
    const unsigned fp_mode = hk_cpu_flush_begin();
    if (job->diag && (job->diag_mode == HK_DIAG_ALL || diag_cheaper(lp, n, job->pass->n_float)))
        for (int l = 0; l < n; l++) sums[l] = job->diag(&lp[l], w->diag);
    else
        job->pass->forward_f(lp, &w->mem, sums);
    hk_cpu_flush_end(fp_mode);
    for (int l = 0; l < n; l++) {
        if (hk_cpu_float_kept(job->m, sums[l])) {
            job->b->lk[g[l].out] = log10((double)sums[l]) - HK_LOG10_SCALE_F;
            continue;
        }
        w->redo[w->n_redo++] = g[l];
        if (w->n_redo == job->pass->n_double) {
            run_double(job, w, w->redo, w->n_redo);
            w->n_redo = 0;
        }
    }
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* A thread's scoring memory, kept for its next batch: a call of a few dozen
 * pairs (a HaplotypeCaller region through the GKL library) would otherwise
 * allocate and free it, and fault its pages in again, every time. It grows
 * to the largest batch the thread has scored and is freed as the thread
 * exits. */
typedef struct {
    void   *rows, *hcode, *ws, *diag;
    uint8_t *gap_rows;
    size_t  rows_n, hcode_n, ws_n, gap_n, diag_n;
} thread_mem_t;

static pthread_key_t mem_key;
static pthread_once_t mem_once = PTHREAD_ONCE_INIT;
static int mem_key_ok;

static void thread_mem_free(void *p)
{
    thread_mem_t *t = p;
    free(t->rows);
    free(t->hcode);
    free(t->ws);
    free(t->gap_rows);
    free(t->diag);
    free(t);
}

static void mem_key_init(void) { mem_key_ok = pthread_key_create(&mem_key, thread_mem_free) == 0; }

/* *p holds at least n bytes (aligned to align when nonzero); its contents
 * are not kept. 0, or -1 without memory (*p unchanged). */
static int grow(void **p, size_t *have, size_t n, size_t align)
{
    if (n <= *have) return 0;
    n = n < 2 * *have ? 2 * *have : n;
    if (align) n = round_up(n, align);
    void *q = align ? aligned_alloc(align, n) : malloc(n);
    if (!q) return -1;
    free(*p);
    *p = q;
    *have = n;
    return 0;
}

/* This thread's memory for columns of cols vectors of vec bytes, ws_n bytes
 * of rescue rows, gap_n of gap rows and diag_n of anti-diagonal rows; NULL
 * without memory. */
static thread_mem_t *thread_mem(size_t cols, size_t vec, size_t ws_n, size_t gap_n, size_t diag_n)
{
    pthread_once(&mem_once, mem_key_init);
    if (!mem_key_ok) return NULL;
    thread_mem_t *t = pthread_getspecific(mem_key);
    if (!t) {
        if (!(t = calloc(1, sizeof *t))) return NULL;
        if (pthread_setspecific(mem_key, t)) { free(t); return NULL; }
    }
    if (grow(&t->rows, &t->rows_n, 3 * cols * vec, HK_VEC_BYTES) ||
        grow(&t->hcode, &t->hcode_n, cols * vec, HK_VEC_BYTES) || grow(&t->ws, &t->ws_n, ws_n, 0) ||
        grow((void **)&t->gap_rows, &t->gap_n, gap_n, 0) || grow(&t->diag, &t->diag_n, diag_n, HK_VEC_BYTES))
        return NULL;
    return t;
}

static void *score_worker(void *arg)
{
    score_job_t *job = arg;
    const int me = job->tracing ? atomic_fetch_add(&job->workers, 1) : MAX_TRACED;
    if (me < MAX_TRACED) job->t_begin[me] = hk_log_now();
    const hk_batch_t *b = job->b;
    const size_t cols = (size_t)b->max_hap_len + 1;
    /* a column of the pass's widest vector: 64 bytes for AVX-512, 8 for scalar double */
    size_t vec = (size_t)job->pass->n_float * sizeof(float);
    if ((size_t)job->pass->n_double * sizeof(double) > vec) vec = (size_t)job->pass->n_double * sizeof(double);
    worker_t w = { .n_redo = 0, .recomputed = 0 };
    thread_mem_t *tm = thread_mem(cols, vec, hk_model_ws_size(b->max_hap_len),
                                  HK_MAX_LANES * 3 * (size_t)b->max_read_len + 1,
                                  job->diag ? hk_cpu_diag_mem_size(b->max_hap_len) : 0);
    if (!tm) { atomic_store(&job->failed, 1); goto out; }
    w.mem.rows = tm->rows;
    w.mem.hcode = tm->hcode;
    w.ws = tm->ws;
    w.gap_rows = tm->gap_rows;
    w.diag = tm->diag;
    const size_t nf = job->float_size, nd = job->double_size;
    for (;;) {
        const size_t t = atomic_fetch_add(&job->next, 1);
        if (t >= job->n_groups) break;
        const size_t k = job->n_groups - 1 - t;     /* largest first */
        if (k < job->float_groups) {
            const size_t p0 = job->float_cut ? job->float_cut[k] : k * nf;
            const size_t n = job->float_cut ? job->float_cut[k + 1] - p0
                             : job->n_float - p0 < nf ? job->n_float - p0 : nf;
            run_float(job, &w, job->order + p0, (int)n);
        } else {
            const size_t p0 = (k - job->float_groups) * nd;
            const size_t n = job->n_double - p0 < nd ? job->n_double - p0 : nd;
            run_double(job, &w, job->order + job->n_float + p0, (int)n);
        }
    }
    if (w.n_redo) run_double(job, &w, w.redo, w.n_redo);
    atomic_fetch_add(&job->recomputed, w.recomputed);
out:
    if (me < MAX_TRACED) job->t_end[me] = hk_log_now();
    return NULL;
}

/* Start of each key's run in a stable counting sort of n keys < n_keys
 * (n_keys + 1 entries), or NULL without memory. */
static size_t *key_starts(const uint32_t *key, size_t n, size_t n_keys)
{
    size_t *start = calloc(n_keys + 1, sizeof *start);
    if (!start) return NULL;
    for (size_t k = 0; k < n; k++) start[key[k] + 1]++;
    for (size_t k = 0; k < n_keys; k++) start[k + 1] += start[k];
    return start;
}

/* A batch sorts its pairs by comparison instead of counting when the
 * counting sort's table has this many times more entries than it has pairs. */
#define SMALL_SORT_RATIO 8
#define SMALL_SORT_MAX   ((size_t)1 << 16)

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The pairs of b in the order of their keys, ties in batch order (what the
 * counting sort gives), into sorted. 0, or -1 without memory. */
static int small_sort(const hk_batch_t *b, const uint32_t *key, size_t n, pair_ref_t *sorted)
{
    uint64_t *kk = malloc(n * sizeof *kk);
    pair_ref_t *in_order = malloc(n * sizeof *in_order);
    if (!kk || !in_order) { free(kk); free(in_order); return -1; }
    size_t k = 0;
    for (size_t r = 0; r < b->n_regions; r++) {
        const hk_region_t *rg = &b->regions[r];
        for (uint32_t i = 0; i < rg->n_reads; i++)
            for (uint32_t h = 0; h < rg->n_haps; h++, k++) {
                in_order[k] = (pair_ref_t){ rg->read0 + i, rg->hap0 + h, rg->pair0 + (uint64_t)i * rg->n_haps + h };
                kk[k] = (uint64_t)key[k] << 32 | k;
            }
    }
    qsort(kk, n, sizeof *kk, cmp_u64);
    for (k = 0; k < n; k++) sorted[k] = in_order[(uint32_t)kk[k]];
    free(kk);
    free(in_order);
    return 0;
}

/* Most keys of a one-pass sort (its counts: 8 MiB). */
#define MAX_ONE_PASS_KEYS ((size_t)1 << 20)

/* The batch's pairs in scoring order (NULL without memory): float-first
 * pairs, then the others, each sorted by (haplotype length bucket, read
 * length); *n_float of them are float-first. One counting sort on the whole
 * key where its range is small (short reads), else two (read length, then
 * the rest). The pairs are written once, in place (the ordering is the
 * serial part of scoring a batch: page faults on a second array cost it a
 * third). */
static pair_ref_t *order_pairs(const hk_model_t *m, const hk_batch_t *b, size_t n, size_t *n_float)
{
    const size_t buckets = ((size_t)b->max_hap_len >> HAP_BUCKET_SHIFT) + 1;
    const size_t read_keys = (size_t)b->max_read_len + 1, hap_keys = 2 * buckets;
    const int one_pass = hap_keys * read_keys <= MAX_ONE_PASS_KEYS;
    pair_ref_t *sorted = malloc(n * sizeof *sorted), *tmp = NULL;
    uint32_t *key = malloc(n * sizeof *key);
    size_t *start = NULL;
    if (!sorted || !key) goto fail;
    size_t k = 0;
    *n_float = 0;
    for (size_t r = 0; r < b->n_regions; r++) {
        const hk_region_t *rg = &b->regions[r];
        for (uint32_t i = 0; i < rg->n_reads; i++) {
            const uint32_t rlen = hk_batch_read_len(b, rg->read0 + i);
            for (uint32_t h = 0; h < rg->n_haps; h++, k++) {
                const uint32_t hlen = hk_batch_hap_len(b, rg->hap0 + h);
                const int in_float = hk_cpu_float_first(m, rlen, hlen);
                *n_float += (size_t)in_float;
                const size_t hap_key = (in_float ? 0 : buckets) + (hlen >> HAP_BUCKET_SHIFT);
                key[k] = (uint32_t)(one_pass ? hap_key * read_keys + rlen : rlen);
            }
        }
    }
    if (one_pass && n <= SMALL_SORT_MAX && n * SMALL_SORT_RATIO < hap_keys * read_keys) {
        /* few pairs against many keys: sorting them costs less than
         * clearing and summing the counting sort's table */
        if (small_sort(b, key, n, sorted)) goto fail;
        free(key);
        return sorted;
    }
    start = key_starts(key, n, one_pass ? hap_keys * read_keys : read_keys);
    if (!start) goto fail;
    k = 0;
    for (size_t r = 0; r < b->n_regions; r++) {
        const hk_region_t *rg = &b->regions[r];
        for (uint32_t i = 0; i < rg->n_reads; i++)
            for (uint32_t h = 0; h < rg->n_haps; h++, k++)
                sorted[start[key[k]]++] = (pair_ref_t){ rg->read0 + i, rg->hap0 + h,
                                                        rg->pair0 + (uint64_t)i * rg->n_haps + h };
    }
    if (!one_pass) {   /* sorted by read length so far: now by class and bucket, stably */
        free(start);
        start = NULL;
        tmp = malloc(n * sizeof *tmp);
        if (!tmp) goto fail;
        for (k = 0; k < n; k++) {
            const uint32_t hlen = hk_batch_hap_len(b, sorted[k].hap);
            const int in_float = hk_cpu_float_first(m, hk_batch_read_len(b, sorted[k].read), hlen);
            key[k] = (uint32_t)((in_float ? 0 : buckets) + (hlen >> HAP_BUCKET_SHIFT));
        }
        start = key_starts(key, n, hap_keys);
        if (!start) goto fail;
        for (k = 0; k < n; k++) tmp[start[key[k]]++] = sorted[k];
        free(sorted);
        sorted = tmp;
        tmp = NULL;
    }
    free(start);
    free(key);
    return sorted;
fail:
    free(sorted);
    free(tmp);
    free(key);
    free(start);
    return NULL;
}

/* The same order built by all the scoring threads (on one, ordering a batch
 * of 2M pairs took 4 % of the time 16 threads then scored it). Regions are cut into parts of about equal pairs; each
 * part counts its pairs per (class, haplotype bucket); the counts become
 * offsets, part after part within a bucket, so that the parts scatter at
 * once and stably; then each bucket is sorted stably by read length on its
 * own. Stable by bucket, then stably by read length within it: exactly the
 * order of order_pairs. */
typedef struct {
    const hk_model_t *m;
    const hk_batch_t *b;
    size_t            hap_keys, buckets;
    const size_t     *cut;            /* parts + 1 region indices */
    size_t           *count;          /* [part * hap_keys + key]: counts, then offsets */
    size_t           *bucket_start;   /* hap_keys + 1 */
    pair_ref_t       *coarse, *sorted;
    int               scatter;        /* the phase: count (0) or scatter (1) */
    size_t            read_keys;
    atomic_size_t     next_bucket;
    atomic_int        failed;
} order_job_t;

typedef struct {
    order_job_t *job;
    size_t       part;
} order_arg_t;

/* Count or scatter one part's pairs by their bucket. */
static void *order_part(void *arg)
{
    const order_arg_t *a = arg;
    order_job_t *j = a->job;
    const hk_batch_t *b = j->b;
    size_t *count = j->count + a->part * j->hap_keys;
    for (size_t r = j->cut[a->part]; r < j->cut[a->part + 1]; r++) {
        const hk_region_t *rg = &b->regions[r];
        for (uint32_t i = 0; i < rg->n_reads; i++) {
            const uint32_t rlen = hk_batch_read_len(b, rg->read0 + i);
            for (uint32_t h = 0; h < rg->n_haps; h++) {
                const uint32_t hlen = hk_batch_hap_len(b, rg->hap0 + h);
                const size_t key = (hk_cpu_float_first(j->m, rlen, hlen) ? 0 : j->buckets) + (hlen >> HAP_BUCKET_SHIFT);
                if (!j->scatter) { count[key]++; continue; }
                j->coarse[count[key]++] = (pair_ref_t){ rg->read0 + i, rg->hap0 + h,
                                                        rg->pair0 + (uint64_t)i * rg->n_haps + h };
            }
        }
    }
    return NULL;
}

/* Sort buckets by read length (stable counting sort over the bucket's range
 * of lengths), taking them one at a time. */
static void *order_buckets(void *arg)
{
    order_job_t *j = arg;
    const hk_batch_t *b = j->b;
    size_t *start = malloc(j->read_keys * sizeof *start);
    if (!start) { atomic_store(&j->failed, 1); return NULL; }
    for (;;) {
        const size_t key = atomic_fetch_add(&j->next_bucket, 1);
        if (key >= j->hap_keys) break;
        const size_t s = j->bucket_start[key], e = j->bucket_start[key + 1];
        if (e - s < 2) {
            if (e > s) j->sorted[s] = j->coarse[s];
            continue;
        }
        uint32_t lo = UINT32_MAX, hi = 0;
        for (size_t k = s; k < e; k++) {
            const uint32_t len = hk_batch_read_len(b, j->coarse[k].read);
            if (len < lo) lo = len;
            if (len > hi) hi = len;
        }
        const size_t keys = (size_t)(hi - lo) + 1;
        memset(start, 0, (keys + 1) * sizeof *start);
        for (size_t k = s; k < e; k++) start[hk_batch_read_len(b, j->coarse[k].read) - lo + 1]++;
        start[0] = s;
        for (size_t k = 0; k < keys; k++) start[k + 1] += start[k];
        for (size_t k = s; k < e; k++)
            j->sorted[start[hk_batch_read_len(b, j->coarse[k].read) - lo]++] = j->coarse[k];
    }
    free(start);
    return NULL;
}

/* order_pairs on nthreads threads (NULL without memory). */
static pair_ref_t *order_pairs_par(const hk_model_t *m, const hk_batch_t *b, size_t n, int nthreads,
                                   size_t *n_float)
{
    order_job_t j = { .m = m, .b = b };
    j.buckets = ((size_t)b->max_hap_len >> HAP_BUCKET_SHIFT) + 1;
    j.hap_keys = 2 * j.buckets;
    j.read_keys = (size_t)b->max_read_len + 2;
    atomic_init(&j.next_bucket, 0);
    atomic_init(&j.failed, 0);
    const size_t parts = (size_t)nthreads;
    size_t *cut = malloc((parts + 1) * sizeof *cut);
    order_arg_t *args = malloc(parts * sizeof *args);
    j.count = calloc(parts * j.hap_keys, sizeof *j.count);
    j.bucket_start = malloc((j.hap_keys + 1) * sizeof *j.bucket_start);
    j.coarse = malloc(n * sizeof *j.coarse);
    j.sorted = malloc(n * sizeof *j.sorted);
    if (!cut || !args || !j.count || !j.bucket_start || !j.coarse || !j.sorted) goto fail;
    /* part p ends at the first region that takes the pairs past (p + 1) n / parts */
    size_t r = 0, done = 0;
    cut[0] = 0;
    for (size_t p = 0; p < parts; p++) {
        for (; r < b->n_regions && done < (p + 1) * n / parts; r++)
            done += (size_t)b->regions[r].n_reads * b->regions[r].n_haps;
        cut[p + 1] = r;
        args[p] = (order_arg_t){ &j, p };
    }
    cut[parts] = b->n_regions;
    j.cut = cut;
    j.scatter = 0;
    hk_threads_run(order_part, args, sizeof *args, (int)parts);
    size_t at = 0;
    for (size_t key = 0; key < j.hap_keys; key++) {
        j.bucket_start[key] = at;
        for (size_t p = 0; p < parts; p++) {
            const size_t c = j.count[p * j.hap_keys + key];
            j.count[p * j.hap_keys + key] = at;
            at += c;
        }
    }
    j.bucket_start[j.hap_keys] = at;
    *n_float = j.bucket_start[j.buckets];
    j.scatter = 1;
    hk_threads_run(order_part, args, sizeof *args, (int)parts);
    hk_threads_run(order_buckets, &j, 0, nthreads);
    if (atomic_load(&j.failed)) goto fail;
    free(cut);
    free(args);
    free(j.count);
    free(j.bucket_start);
    free(j.coarse);
    return j.sorted;
fail:
    free(cut);
    free(args);
    free(j.count);
    free(j.bucket_start);
    free(j.coarse);
    free(j.sorted);
    return NULL;
}

/* Batches of fewer pairs are ordered on one thread. Ordering on all costs
 * three more wake-ups of every worker, and the fork-join waits for the
 * latest, much longer when `score` reads and writes beside it; serial
 * ordering costs tens of nanoseconds a pair. So it pays
 * from about a million pairs: measured slower on batches of 2^16 pairs in
 * `score`'s default run (read, score and write stages), faster on one batch of 2M (docs/PERFORMANCE.md,
 * "Where the 16-thread gap goes"). */
static _Atomic size_t par_order_min = (size_t)1 << 20;

/* HK_DIAG_*, as hk_cpu_set_diag sets it. */
static atomic_int diag_set = HK_DIAG_AUTO;

static int diag_mode(void) { return atomic_load(&diag_set); }

int hk_cpu_set_diag(int mode)
{
    const int was = diag_mode();
    atomic_store(&diag_set, mode);
    return was;
}

size_t hk_model_set_cpu_parallel_order(size_t min_pairs)
{
    return atomic_exchange(&par_order_min, min_pairs);
}

/* Most threads whose small batch is cut by work (more take equal counts). */
#define HK_CPU_SMALL_CUT_MAX 256

/* Groups of at most size pairs that n pairs make (n / size rounded up). */
static size_t groups_of(size_t n, size_t size) { return (n + size - 1) / size; }

/* Pair r's work wherever a small group is scored: its anti-diagonal steps. */
static uint64_t pair_work(const hk_batch_t *b, const pair_ref_t *r, uint32_t lanes)
{
    return diag_steps(hk_batch_read_len(b, r->read), hk_batch_hap_len(b, r->hap), lanes);
}

/* Cut order[0, n) into groups of consecutive pairs, parts of about equal
 * work (pair_work) and none of more than most pairs (a pass's lanes), into
 * cut[0 .. groups]; returns the groups (at most parts + n / most). Cut by
 * count, a HaplotypeCaller region's longest reads (sorted last) made one
 * group that the other threads waited for. */
static size_t cut_by_work(const hk_batch_t *b, const pair_ref_t *order, size_t n, size_t parts, uint32_t lanes,
                          size_t most, size_t *cut)
{
    uint64_t total = 0, done = 0;
    for (size_t k = 0; k < n; k++) total += pair_work(b, &order[k], lanes);
    size_t g = 0, next = 1;   /* next: the work mark (next / parts of the total) to cut at */
    cut[0] = 0;
    for (size_t k = 0; k < n; k++) {
        done += pair_work(b, &order[k], lanes);
        int here = k + 1 - cut[g] == most;
        for (; next < parts && done * parts >= total * next; next++) here = 1;
        if (here && k + 1 < n) cut[++g] = k + 1;
    }
    cut[++g] = n;
    return g;
}

hk_status_t hk_model_score_batch(const hk_model_t *m, hk_batch_t *b, int nthreads)
{
    size_t n = 0;
    for (size_t r = 0; r < b->n_regions; r++) n += (size_t)b->regions[r].n_reads * b->regions[r].n_haps;
    if (n == 0) return HK_OK;
    score_job_t job = { .m = m, .b = b, .pass = hk_cpu_pass() };
    job.diag_mode = diag_mode();
    job.diag = job.diag_mode == HK_DIAG_OFF ? NULL : hk_cpu_diag_f(job.pass->n_float);
    const int tracing = hk_log_tracing();
    const double t0 = tracing ? hk_log_now() : 0;
    pair_ref_t *order = nthreads > 1 && n >= atomic_load(&par_order_min)
                        ? order_pairs_par(m, b, n, nthreads, &job.n_float)
                        : order_pairs(m, b, n, &job.n_float);
    const double t1 = tracing ? hk_log_now() : 0;
    if (!order) { hk_log_error("out of memory scoring a batch"); return HK_E_NOMEM; }
    job.order = order;
    job.n_double = n - job.n_float;
    size_t nf = (size_t)job.pass->n_float, nd = (size_t)job.pass->n_double;
    size_t small_cut[2 * HK_CPU_SMALL_CUT_MAX + 1];
    job.float_cut = NULL;
    job.float_groups = groups_of(job.n_float, nf);
    if (nthreads > 1 && groups_of(job.n_float, nf) + groups_of(job.n_double, nd) < (size_t)nthreads) {
        /* fewer groups than threads (a HaplotypeCaller region on maxThreads
         * threads): smaller groups, one a thread, of about equal work; a
         * group is one thread's, and 17 pairs in groups of 16 left all but
         * two of four threads idle (docs/PERFORMANCE.md); the anti-diagonal
         * pass scores a small group's pairs as fast each */
        const size_t t = (size_t)nthreads;
        nd = groups_of(job.n_double, t);
        if (nd < 1) nd = 1;
        if (job.n_float && t <= HK_CPU_SMALL_CUT_MAX) {
            job.float_groups = cut_by_work(b, order, job.n_float, t, (uint32_t)job.pass->n_float,
                                           (size_t)job.pass->n_float, small_cut);
            job.float_cut = small_cut;
        } else {
            nf = groups_of(job.n_float, t);
            if (nf < 1) nf = 1;
            job.float_groups = groups_of(job.n_float, nf);
        }
    }
    job.n_groups = job.float_groups + groups_of(job.n_double, nd);
    job.float_size = nf;
    job.double_size = nd;
    atomic_init(&job.next, 0);
    atomic_init(&job.recomputed, 0);
    atomic_init(&job.failed, 0);
    atomic_init(&job.workers, 0);
    job.tracing = tracing;
    if ((size_t)nthreads > job.n_groups) nthreads = (int)job.n_groups;
    hk_threads_run_shared(score_worker, &job, nthreads);   /* the workers share one job */
    free(order);
    if (tracing) {
        /* what a batch loses against T times one thread: the ordering (serial
         * below par_order_min), workers that start late (their cores busy
         * reading or writing) and ends far apart (the load-balance tail) */
        const int nw = atomic_load(&job.workers) < MAX_TRACED ? atomic_load(&job.workers) : MAX_TRACED;
        double b0 = job.t_begin[0], b1 = b0, e0 = job.t_end[0], e1 = e0;
        for (int k = 1; k < nw; k++) {
            if (job.t_begin[k] < b0) b0 = job.t_begin[k];
            if (job.t_begin[k] > b1) b1 = job.t_begin[k];
            if (job.t_end[k] < e0) e0 = job.t_end[k];
            if (job.t_end[k] > e1) e1 = job.t_end[k];
        }
        fprintf(stderr, "haplik: trace cpu: %zu pairs, ordered in %.2f ms, scored in %.2f ms "
                "(%s pass, %d threads; started %.3f-%.3f ms, ended %.3f ms apart)\n", n, (t1 - t0) * 1e3,
                (hk_log_now() - t1) * 1e3, job.pass->name, nthreads, (b0 - t1) * 1e3, (b1 - t1) * 1e3,
                (e1 - e0) * 1e3);
    }
    if (atomic_load(&job.failed)) { hk_log_error("out of memory scoring a batch"); return HK_E_NOMEM; }
    b->n_recomputed += atomic_load(&job.recomputed);
    return HK_OK;
}
