/* hk_model.c - the Pair-HMM forward algorithm on the CPU (see hk_model.h). */
#include "hk_model.h"
#include "hk_log.h"

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

int hk_model_base_code(int c)
{
    switch (c) {
    case 'A': case 'a': return 0;
    case 'C': case 'c': return 1;
    case 'G': case 'g': return 2;
    case 'T': case 't': return 3;
    case 'N': case 'n': return HK_BASE_N;
    default: return -1;
    }
}

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
        const double e = err_of_q[q[i]], ei = err_of_q[ins[i]];                  \
        const double ed = err_of_q[del[i]], eg = err_of_q[gcp[i]];               \
        const T mm = (T)(1.0 - (ei + ed)), gm = (T)(1.0 - eg);                   \
        const T mi = (T)ei, ii = (T)eg, md = (T)ed, dd = (T)eg;                  \
        const T match = (T)(1.0 - e), mism = (T)(e / 3.0);                       \
        T emit[5];                                                               \
        for (int c = 0; c < 4; c++)                                              \
            emit[c] = (rb[i] == HK_BASE_N || rb[i] == c) ? match : mism;         \
        emit[HK_BASE_N] = match;                                                 \
        T dM = M[0], dI = I[0], dD = D[0], lM = 0, lD = 0;                       \
        M[0] = 0; I[0] = 0; D[0] = 0;                                            \
        for (uint32_t j = 1; j <= hlen; j++) {                                   \
            const T oM = M[j], oI = I[j], oD = D[j];                             \
            const T nM = emit[hb[j - 1]] * (mm * dM + gm * (dI + dD));          \
            const T nI = mi * oM + ii * oI;                                      \
            const T nD = md * lM + dd * lD;                                      \
            M[j] = nM; I[j] = nI; D[j] = nD;                                     \
            dM = oM; dI = oI; dD = oD; lM = nM; lD = nD;                         \
        }                                                                        \
    }                                                                            \
    T sum = 0;                                                                   \
    for (uint32_t j = 1; j <= hlen; j++) sum += M[j] + I[j];                     \
    return sum;                                                                  \
}

HK_FORWARD(forward_f, float, SCALE_F)
HK_FORWARD(forward_d, double, SCALE_D)

double hk_model_score_pair(const hk_model_t *m,
                           const uint8_t *rb, const uint8_t *q,
                           const uint8_t *ins, const uint8_t *del,
                           const uint8_t *gcp, uint32_t rlen,
                           const uint8_t *hb, uint32_t hlen,
                           void *ws, int *recomputed)
{
    pthread_once(&err_once, err_init);
    *recomputed = 0;
    if (m->precision != HK_PREC_DOUBLE) {
        float *f = ws;
        float s = forward_f(rb, q, ins, del, gcp, rlen, hb, hlen,
                            f, f + (hlen + 1), f + 2 * (hlen + 1));
        if (m->precision == HK_PREC_FLOAT || (double)s >= m->float_threshold)
            return log10((double)s) - LOG10_SCALE_F;
        *recomputed = 1;
    }
    double *d = ws;
    double s = forward_d(rb, q, ins, del, gcp, rlen, hb, hlen,
                         d, d + (hlen + 1), d + 2 * (hlen + 1));
    return log10(s) - LOG10_SCALE_D;
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

static void *score_worker(void *arg)
{
    score_job_t *job = arg;
    hk_batch_t *b = job->b;
    void *ws = malloc(hk_model_ws_size(b->max_hap_len));
    if (!ws) { atomic_store(&job->failed, 1); return NULL; }
    unsigned long long recomputed = 0;
    for (;;) {
        size_t k0 = atomic_fetch_add(&job->next, READS_PER_GRAB);
        if (k0 >= b->n_reads) break;
        size_t k1 = k0 + READS_PER_GRAB < b->n_reads ? k0 + READS_PER_GRAB : b->n_reads;
        for (size_t k = k0; k < k1; k++) {
            const hk_region_t *rg = &b->regions[job->read_region[k]];
            const uint64_t o = b->read_off[k];
            const uint32_t rlen = hk_batch_read_len(b, k);
            double *out = b->lk + rg->pair0 + (uint64_t)(k - rg->read0) * rg->n_haps;
            for (uint32_t h = 0; h < rg->n_haps; h++) {
                const size_t hk = rg->hap0 + h;
                int rc;
                out[h] = hk_model_score_pair(job->m, b->read_base + o, b->read_q + o,
                                             b->read_i + o, b->read_d + o, b->read_g + o, rlen,
                                             b->hap_base + b->hap_off[hk],
                                             hk_batch_hap_len(b, hk), ws, &rc);
                recomputed += (unsigned)rc;
            }
        }
    }
    atomic_fetch_add(&job->recomputed, recomputed);
    free(ws);
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
    pthread_t tid[256];
    if (nthreads > 256) nthreads = 256;
    int started = 0;
    for (int t = 1; t < nthreads; t++) {
        if (pthread_create(&tid[started], NULL, score_worker, &job) != 0) break;
        started++;
    }
    score_worker(&job);
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    free(job.read_region);
    if (atomic_load(&job.failed)) { hk_log_error("out of memory scoring a batch"); return -1; }
    b->n_recomputed += atomic_load(&job.recomputed);
    return 0;
}
