/* hk_model.c - the Pair-HMM forward algorithm on the CPU, one pair at a time
 * (see hk_model.h): the scalar reference passes, the rescue, one pair's
 * score. Batches: hk_cpu_batch.c; vector passes: hk_cpu_lanes.c. */
#include "hk_cpu.h"
#include "hk_model.h"

#include <math.h>

const double hk_cpu_err_of_q[256] = {
#include "hk_err_values.inc"
};

size_t hk_model_ws_size(uint32_t hlen)
{
    /* three DP rows of doubles (the float path uses the first half of each) */
    return 3 * ((size_t)hlen + 1) * sizeof(double);
}

/* One forward pass in type T; returns the scaled sum of the last row.
 * The DP rows hold row i-1 on entry to row i and are overwritten in place:
 * dM/dI/dD carry row i-1 at column j-1 (the diagonal), lM/lD row i at j-1. */
#define HK_FORWARD(NAME, T, SCALE)                                               \
T NAME(const uint8_t *rb, const uint8_t *q, const uint8_t *ins,           \
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

HK_FORWARD(hk_cpu_forward_f, float, HK_SCALE_F)
HK_FORWARD(hk_cpu_forward_d, double, HK_SCALE_D)

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
    if (rlen == 0 || hlen == 0) return -INFINITY;   /* no alignment: truly 0 */
    double *M = ws, *I = M + (hlen + 1), *D = I + (hlen + 1);
    const double init = HK_SCALE_D / (double)hlen;
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
    return log10(sum) + (double)shift * HK_LOG10_2 - HK_LOG10_SCALE_D;
}

/* The double pass of one pair: GATK's arithmetic, and where its sum
 * underflows to 0 (GATK would print -Infinity) or its cells overflow (the
 * sum is inf or NaN) the rescue's true value. */
static double double_pass(const uint8_t *rb, const uint8_t *q, const uint8_t *ins,
                          const uint8_t *del, const uint8_t *gcp, uint32_t rlen,
                          const uint8_t *hb, uint32_t hlen, double *d)
{
    const hk_lane_pair_t p = { rb, q, ins, del, gcp, hb, rlen, hlen };
    return hk_cpu_double_score(hk_cpu_forward_d(rb, q, ins, del, gcp, rlen, hb, hlen,
                                                d, d + (hlen + 1), d + 2 * (hlen + 1)), &p, d);
}

double hk_cpu_double_score(double s, const hk_lane_pair_t *p, void *ws)
{
    if (s == 0 || !isfinite(s)) return hk_model_rescue_pair(p->rb, p->q, p->ins, p->del, p->gcp, p->rlen,
                                            p->hb, p->hlen, ws);
    return log10(s) - HK_LOG10_SCALE_D;
}

double hk_model_score_pair(const hk_model_t *m,
                           const uint8_t *rb, const uint8_t *q,
                           const uint8_t *ins, const uint8_t *del,
                           const uint8_t *gcp, uint32_t rlen,
                           const uint8_t *hb, uint32_t hlen,
                           void *ws, int *recomputed)
{
    *recomputed = m->precision == HK_PREC_MIXED;    /* unless float's sum is kept */
    if (hk_cpu_float_first(m, rlen, hlen)) {
        float *f = ws;
        const unsigned fp_mode = hk_cpu_flush_begin();
        const float s = hk_cpu_forward_f(rb, q, ins, del, gcp, rlen, hb, hlen,
                                         f, f + (hlen + 1), f + 2 * (hlen + 1));
        hk_cpu_flush_end(fp_mode);
        if (hk_cpu_float_kept(m, s)) {
            *recomputed = 0;
            return log10((double)s) - HK_LOG10_SCALE_F;
        }
    }
    return double_pass(rb, q, ins, del, gcp, rlen, hb, hlen, ws);
}

