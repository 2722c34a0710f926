/* hk_model.c - the Pair-HMM forward algorithm on the CPU (see hk_model.h). */
#include "hk_model.h"
#include "hk_log.h"
#include "hk_threads.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Scale constants of SPEC section 1: keep the float path away from underflow. */
#define SCALE_F 0x1p120f
#define SCALE_D 0x1p1020
#define LOG10_SCALE_F (120.0 * 0.30102999566398119521)
#define LOG10_SCALE_D (1020.0 * 0.30102999566398119521)

static double err_of_q[256];
static pthread_once_t err_once = PTHREAD_ONCE_INIT;

static void err_init(void)
{
    for (int q = 0; q < 256; q++) err_of_q[q] = pow(10.0, -q / 10.0);
}

size_t hk_model_ws_size(uint32_t hlen)
{
    /* three DP rows of doubles (the float path uses the first half of each) */
    return 3 * ((size_t)hlen + 1) * sizeof(double);
}

/* The model's recurrence, stated once for the scalar and the vector passes.
 * HK_ROW_COEFFS: row i's transition and emission probabilities, as scalars of
 * type T (computed in double, as GATK does, then rounded once).
 * HK_CELL: cell (i, j) from the diagonal (dM, dI, dD), the cell above (M[j],
 * I[j], D[j] on entry) and the cell to the left (lM, lD), with emission
 * EMIT; updates the rows in place and moves the carried values along. */
#define HK_ROW_COEFFS(T, i)                                                      \
    const double e = err_of_q[q[i]], ei = err_of_q[ins[i]];                      \
    const double ed = err_of_q[del[i]], eg = err_of_q[gcp[i]];                   \
    const T mm = (T)(1.0 - (ei + ed)), gm = (T)(1.0 - eg);                       \
    const T mi = (T)ei, ii = (T)eg, md = (T)ed, dd = (T)eg;                      \
    const T match_p = (T)(1.0 - e), mism_p = (T)(e / 3.0)

#define HK_CELL(V, EMIT)                                                         \
    do {                                                                         \
        const V oM = M[j], oI = I[j], oD = D[j];                                 \
        const V nM = (EMIT) * (mm * dM + gm * (dI + dD));                        \
        const V nI = mi * oM + ii * oI;                                          \
        const V nD = md * lM + dd * lD;                                          \
        M[j] = nM; I[j] = nI; D[j] = nD;                                         \
        dM = oM; dI = oI; dD = oD; lM = nM; lD = nD;                             \
    } while (0)

/* One forward pass in type T; returns the scaled sum of the last row.
 * The DP rows hold row i-1 on entry to row i and are overwritten in place:
 * dM/dI/dD carry row i-1 at column j-1 (the diagonal), lM/lD row i at j-1. */
#define HK_FORWARD(NAME, T, SCALE)                                               \
static T NAME(const uint8_t *rb, const uint8_t *q, const uint8_t *ins,           \
              const uint8_t *del, const uint8_t *gcp, uint32_t rlen,             \
              const uint8_t *hb, uint32_t hlen, T *M, T *I, T *D)                \
{                                                                                \
    const T init = (T)(SCALE) / (T)hlen;                                         \
    for (uint32_t j = 0; j <= hlen; j++) { M[j] = 0; I[j] = 0; D[j] = init; }    \
    for (uint32_t i = 0; i < rlen; i++) {                                        \
        HK_ROW_COEFFS(T, i);                                                     \
        T emit[5];                                                               \
        for (int c = 0; c < 4; c++)                                              \
            emit[c] = (rb[i] == HK_BASE_N || rb[i] == c) ? match_p : mism_p;     \
        emit[HK_BASE_N] = match_p;                                               \
        T dM = M[0], dI = I[0], dD = D[0], lM = 0, lD = 0;                       \
        M[0] = 0; I[0] = 0; D[0] = 0;                                            \
        for (uint32_t j = 1; j <= hlen; j++)                                     \
            HK_CELL(T, emit[hb[j - 1]]);                                         \
    }                                                                            \
    T sum = 0;                                                                   \
    for (uint32_t j = 1; j <= hlen; j++) sum += M[j] + I[j];                     \
    return sum;                                                                  \
}

HK_FORWARD(forward_f, float, SCALE_F)
HK_FORWARD(forward_d, double, SCALE_D)

/* The rescue keeps each row's largest cell within [RESCALE_LO, RESCALE_HI]
 * by powers of two (exact on normal numbers), moving it to 2^RESCALE_TO:
 * far from overflow (a row's cells exceed the row above's largest by a few
 * times at most) and with 2^-1574 of room below a row's largest cell before
 * a cell flushes to zero. */
#define RESCALE_LO 0x1p500
#define RESCALE_HI 0x1p1010
#define RESCALE_TO 1000

double hk_model_rescue_pair(const uint8_t *rb, const uint8_t *q, const uint8_t *ins,
                            const uint8_t *del, const uint8_t *gcp, uint32_t rlen,
                            const uint8_t *hb, uint32_t hlen, void *ws)
{
    pthread_once(&err_once, err_init);
    if (rlen == 0 || hlen == 0) return -INFINITY;   /* no alignment: truly 0 */
    double *M = ws, *I = M + (hlen + 1), *D = I + (hlen + 1);
    const double init = SCALE_D / (double)hlen;
    int64_t shift = 0;                              /* the true rows are these times 2^shift */
    for (uint32_t j = 0; j <= hlen; j++) { M[j] = 0; I[j] = 0; D[j] = init; }
    for (uint32_t i = 0; i < rlen; i++) {
        HK_ROW_COEFFS(double, i);
        double emit[5];
        for (int c = 0; c < 4; c++)
            emit[c] = (rb[i] == HK_BASE_N || rb[i] == c) ? match_p : mism_p;
        emit[HK_BASE_N] = match_p;
        double dM = M[0], dI = I[0], dD = D[0], lM = 0, lD = 0, top = 0;
        M[0] = 0; I[0] = 0; D[0] = 0;
        for (uint32_t j = 1; j <= hlen; j++) {
            HK_CELL(double, emit[hb[j - 1]]);
            const double c = M[j] + I[j] + D[j];   /* between the cell's largest and 3 times it */
            top = c > top ? c : top;
        }
        if (top == 0) return -INFINITY;             /* cannot happen with valid qualities */
        if (top < RESCALE_LO || top > RESCALE_HI) {
            int e;
            frexp(top, &e);
            const double f = ldexp(1.0, RESCALE_TO - e);
            for (uint32_t j = 1; j <= hlen; j++) { M[j] *= f; I[j] *= f; D[j] *= f; }
            shift -= RESCALE_TO - e;
        }
    }
    double sum = 0;
    for (uint32_t j = 1; j <= hlen; j++) sum += M[j] + I[j];
    return log10(sum) + (double)shift * 0.30102999566398119521 - LOG10_SCALE_D;
}

/* The double pass of one pair: GATK's arithmetic, and where its sum
 * underflows to 0 (GATK would print -Infinity) the rescue's true value. */
static double double_pass(const uint8_t *rb, const uint8_t *q, const uint8_t *ins,
                          const uint8_t *del, const uint8_t *gcp, uint32_t rlen,
                          const uint8_t *hb, uint32_t hlen, double *d)
{
    const double s = forward_d(rb, q, ins, del, gcp, rlen, hb, hlen, d, d + (hlen + 1), d + 2 * (hlen + 1));
    if (s == 0) return hk_model_rescue_pair(rb, q, ins, del, gcp, rlen, hb, hlen, d);
    return log10(s) - LOG10_SCALE_D;
}

/* Whether mixed or float mode scores a read of rlen bases in float first. */
static int float_first(const hk_model_t *m, uint32_t rlen)
{
    return m->precision == HK_PREC_FLOAT ||
           (m->precision == HK_PREC_MIXED && rlen <= HK_MIXED_FLOAT_MAX_READ);
}

double hk_model_score_pair(const hk_model_t *m,
                           const uint8_t *rb, const uint8_t *q,
                           const uint8_t *ins, const uint8_t *del,
                           const uint8_t *gcp, uint32_t rlen,
                           const uint8_t *hb, uint32_t hlen,
                           void *ws, int *recomputed)
{
    pthread_once(&err_once, err_init);
    *recomputed = m->precision == HK_PREC_MIXED;    /* unless float's sum is kept */
    if (float_first(m, rlen)) {
        float *f = ws;
        float s = forward_f(rb, q, ins, del, gcp, rlen, hb, hlen,
                            f, f + (hlen + 1), f + 2 * (hlen + 1));
        if (m->precision == HK_PREC_FLOAT || (double)s >= m->float_threshold) {
            *recomputed = 0;
            return log10((double)s) - LOG10_SCALE_F;
        }
    }
    return double_pass(rb, q, ins, del, gcp, rlen, hb, hlen, ws);
}

#define MAX_LANES 8

/* FORWARD_LANES(NAME, N, TARGET): the pass over N lanes.
 * hcode: haplotype codes interleaved, hcode[j * N + l] for j < hmax; hlen:
 * each lane's length; rows: 3 * (hmax + 1) vectors; sums: the N results. */
#define FORWARD_LANES(NAME, N, TARGET)                                                  \
typedef float NAME##_vf __attribute__((vector_size(N * sizeof(float))));                \
typedef int32_t NAME##_vi __attribute__((vector_size(N * sizeof(int32_t))));            \
TARGET static void NAME(const uint8_t *rb, const uint8_t *q, const uint8_t *ins,        \
                        const uint8_t *del, const uint8_t *gcp, uint32_t rlen,          \
                        const int32_t *hcode_, const int32_t *hlen, uint32_t hmax,      \
                        void *rows, float *sums)                                        \
{                                                                                       \
    typedef NAME##_vf vf;                                                               \
    typedef NAME##_vi vi;                                                               \
    const vi *hcode = (const vi *)hcode_;                                               \
    vf *M = rows, *I = M + (hmax + 1), *D = I + (hmax + 1);                             \
    vf init, zero = { 0 };                                                              \
    vi len;                                                                             \
    for (int l = 0; l < N; l++) { init[l] = SCALE_F / (float)hlen[l]; len[l] = hlen[l]; } \
    for (uint32_t j = 0; j <= hmax; j++) { M[j] = zero; I[j] = zero; D[j] = init; }      \
    for (uint32_t i = 0; i < rlen; i++) {                                               \
        HK_ROW_COEFFS(float, i);                                                        \
        const vi match = (vi)(zero + match_p), mism = (vi)(zero + mism_p);              \
        const int32_t r = rb[i];                                                        \
        const vi read_n = (vi){ 0 } + (r == HK_BASE_N ? -1 : 0); /* N matches all */    \
        vf dM = M[0], dI = I[0], dD = D[0], lM = zero, lD = zero;                       \
        M[0] = zero; I[0] = zero; D[0] = zero;                                          \
        for (uint32_t j = 1; j <= hmax; j++) {                                          \
            const vi h = hcode[j - 1];                                                  \
            const vi is_match = (h == r) | (h == HK_BASE_N) | read_n;                   \
            const vf emit = (vf)((is_match & match) | (~is_match & mism));              \
            HK_CELL(vf, emit);                                                          \
        }                                                                               \
    }                                                                                   \
    vf sum = zero;                                                                      \
    for (uint32_t j = 1; j <= hmax; j++) {                                              \
        const vi in = (vi){ 0 } + (int32_t)j <= len;                                    \
        sum += (vf)(in & (vi)(M[j] + I[j]));                                            \
    }                                                                                   \
    for (int l = 0; l < N; l++) sums[l] = sum[l];                                       \
}

/* Column j of the DP depends only on columns <= j, so the haplotypes of a
 * group are padded to the longest and each lane sums its own columns. Lanes
 * are floats: SSE2 (any x86-64) or, where the CPU has it, AVX2. ISO C keeps
 * the compiler from contracting to FMA, so every lane computes exactly what
 * the scalar forward_f computes (tests/unit/test_model.c checks it). */
FORWARD_LANES(forward_lanes4, 4, )
#if defined(__x86_64__) && defined(__GNUC__)
FORWARD_LANES(forward_lanes8, 8, __attribute__((target("avx2"))))
#endif

typedef void (*forward_lanes_fn)(const uint8_t *, const uint8_t *, const uint8_t *,
                                 const uint8_t *, const uint8_t *, uint32_t,
                                 const int32_t *, const int32_t *, uint32_t, void *, float *);

/* The widest lane function this CPU runs, and its lane count. */
static forward_lanes_fn pick_lanes(int *n)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2")) {
        *n = 8;
        return forward_lanes8;
    }
#endif
    *n = 4;
    return forward_lanes4;
}

/* ---- threads over the reads of a batch ---- */

typedef struct {
    const hk_model_t *m;
    hk_batch_t       *b;
    uint32_t         *read_region;  /* region of each read */
    atomic_size_t     next;         /* next read to take */
    atomic_ullong     recomputed;
    atomic_int        failed;
} score_job_t;

#define READS_PER_GRAB 8

/* Workspace of one thread: DP rows and interleaved haplotype codes. */
typedef struct {
    void    *ws;        /* double path: hk_model_ws_size(max_hap_len) */
    void    *rows;      /* lanes: 3 * (max_hap_len + 1) vectors */
    int32_t *hcode;     /* lanes: max_hap_len * MAX_LANES codes */
    forward_lanes_fn lanes_fn;
    int      lanes;
} worker_mem_t;

/* Score read k against the haplotypes of its region; the count recomputed. */
static unsigned score_read(const hk_model_t *m, hk_batch_t *b, const hk_region_t *rg,
                           size_t k, worker_mem_t *w)
{
    const uint64_t o = b->read_off[k];
    const uint32_t rlen = hk_batch_read_len(b, k);
    double *out = b->lk + rg->pair0 + (uint64_t)(k - rg->read0) * rg->n_haps;
    unsigned recomputed = 0;
    const int L = w->lanes;
    for (uint32_t h0 = 0; h0 < rg->n_haps; h0 += (uint32_t)L) {
        const uint32_t n = rg->n_haps - h0 < (uint32_t)L ? rg->n_haps - h0 : (uint32_t)L;
        float sum[MAX_LANES];
        const int lanes = float_first(m, rlen);
        int need_double[MAX_LANES];
        for (int l = 0; l < MAX_LANES; l++) need_double[l] = !lanes;
        if (lanes) {
            int32_t hlen[MAX_LANES];
            uint32_t hmax = 0;
            for (int l = 0; l < L; l++) {   /* spare lanes repeat the group's first haplotype */
                const size_t hk = rg->hap0 + h0 + ((uint32_t)l < n ? (uint32_t)l : 0);
                hlen[l] = (int32_t)hk_batch_hap_len(b, hk);
                if ((uint32_t)hlen[l] > hmax) hmax = (uint32_t)hlen[l];
            }
            for (int l = 0; l < L; l++) {
                const size_t hk = rg->hap0 + h0 + ((uint32_t)l < n ? (uint32_t)l : 0);
                const uint8_t *hb = b->hap_base + b->hap_off[hk];
                for (uint32_t j = 0; j < hmax; j++)
                    w->hcode[(size_t)j * L + l] = j < (uint32_t)hlen[l] ? hb[j] : HK_BASE_N;
            }
            w->lanes_fn(b->read_base + o, b->read_q + o, b->read_i + o, b->read_d + o,
                        b->read_g + o, rlen, w->hcode, hlen, hmax, w->rows, sum);
            for (uint32_t l = 0; l < n; l++) {
                need_double[l] = m->precision == HK_PREC_MIXED && (double)sum[l] < m->float_threshold;
                if (!need_double[l]) out[h0 + l] = log10((double)sum[l]) - LOG10_SCALE_F;
            }
        }
        for (uint32_t l = 0; l < n; l++) {
            if (!need_double[l]) continue;
            const size_t hk = rg->hap0 + h0 + l;
            out[h0 + l] = double_pass(b->read_base + o, b->read_q + o, b->read_i + o, b->read_d + o,
                                      b->read_g + o, rlen, b->hap_base + b->hap_off[hk],
                                      hk_batch_hap_len(b, hk), w->ws);
            recomputed += m->precision == HK_PREC_MIXED;   /* a fallback or a long read */
        }
    }
    return recomputed;
}

static void *score_worker(void *arg)
{
    score_job_t *job = arg;
    hk_batch_t *b = job->b;
    worker_mem_t w;
    const size_t hl = (size_t)b->max_hap_len + 1;
    w.ws = malloc(hk_model_ws_size(b->max_hap_len));
    w.lanes_fn = pick_lanes(&w.lanes);
    w.rows = aligned_alloc(MAX_LANES * sizeof(float), 3 * hl * MAX_LANES * sizeof(float));
    w.hcode = aligned_alloc(MAX_LANES * sizeof(int32_t), hl * MAX_LANES * sizeof(int32_t));
    unsigned long long recomputed = 0;
    if (!w.ws || !w.rows || !w.hcode) { atomic_store(&job->failed, 1); goto out; }
    pthread_once(&err_once, err_init);
    for (;;) {
        size_t k0 = atomic_fetch_add(&job->next, READS_PER_GRAB);
        if (k0 >= b->n_reads) break;
        size_t k1 = k0 + READS_PER_GRAB < b->n_reads ? k0 + READS_PER_GRAB : b->n_reads;
        for (size_t k = k0; k < k1; k++)
            recomputed += score_read(job->m, b, &b->regions[job->read_region[k]], k, &w);
    }
    atomic_fetch_add(&job->recomputed, recomputed);
out:
    free(w.ws);
    free(w.rows);
    free(w.hcode);
    return NULL;
}

int hk_model_score_batch(const hk_model_t *m, hk_batch_t *b, int nthreads)
{
    if (b->n_reads == 0) return 0;
    score_job_t job = { .m = m, .b = b };
    atomic_init(&job.next, 0);
    atomic_init(&job.recomputed, 0);
    atomic_init(&job.failed, 0);
    job.read_region = malloc(b->n_reads * sizeof *job.read_region);
    if (!job.read_region) { hk_log_error("out of memory scoring a batch"); return -1; }
    for (size_t r = 0; r < b->n_regions; r++)
        for (uint32_t k = 0; k < b->regions[r].n_reads; k++)
            job.read_region[b->regions[r].read0 + k] = (uint32_t)r;

    if ((size_t)nthreads > b->n_reads / READS_PER_GRAB + 1)
        nthreads = (int)(b->n_reads / READS_PER_GRAB + 1);
    hk_threads_run(score_worker, &job, 0, nthreads);   /* the workers share one job */
    free(job.read_region);
    if (atomic_load(&job.failed)) { hk_log_error("out of memory scoring a batch"); return -1; }
    b->n_recomputed += atomic_load(&job.recomputed);
    return 0;
}
