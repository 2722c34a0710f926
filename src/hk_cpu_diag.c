/* hk_cpu_diag.c - the float pass across one pair's anti-diagonals (see
 * hk_cpu.h): for the pairs that a call has too few of, or of too unlike
 * lengths, to fill a lane pass's lanes.
 *
 * The read is cut into strips of N rows; lane k holds row i0 + k of the
 * strip and, at step d, column j = d - k + 1, so the lanes of a step lie on
 * one anti-diagonal. A cell's left neighbour is its own lane's previous
 * step, the cell above is the lane below's previous step and the diagonal
 * the lane below's step before that: each step shifts the previous step's
 * cells up one lane, lane 0 taking row i0 - 1 from the strip before (kept
 * in a row of memory that the strip's last lane overwrites as it goes).
 * Lanes outside the pair's columns are held at 0, column 0's value, so that
 * a lane starts from the boundary the scalar pass starts from. Every cell
 * is HK_CELL on the same operands, and the last row is summed in column
 * order afterwards: the result is the scalar pass's, bit for bit
 * (tests/unit/test_model checks every pass this CPU runs).
 */
#include "hk_cpu.h"

#include <string.h>

/* Lane shifts: lane 0 from b's lane 0, lane k from a's lane k - 1. */
#define SHIFT_4  4, 0, 1, 2
#define SHIFT_8  8, 0, 1, 2, 3, 4, 5, 6
#define SHIFT_16 16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14

#define DIAG_PASS(NAME, N, SHIFT, TARGET)                                               \
typedef float NAME##_vt __attribute__((vector_size(N * sizeof(float))));                \
typedef int32_t NAME##_vi __attribute__((vector_size(N * sizeof(int32_t))));            \
TARGET static float NAME(const hk_lane_pair_t *p, void *mem)                            \
{                                                                                       \
    typedef NAME##_vt vt;                                                               \
    typedef NAME##_vi vi;                                                               \
    const uint32_t rlen = p->rlen, hlen = p->hlen;                                      \
    if (rlen == 0 || hlen == 0) return 0;      /* the scalar pass sums no cell */      \
    const vt zero = { 0 };                                                              \
    /* every step's cells (M, I, D), hlen + 2N steps each: the strip below reads */    \
    /* its row above from the last lane of these as it overwrites them; then the */    \
    /* haplotype's codes reversed: lane k of the load at c - d is hb[d - k] */         \
    const size_t n_steps = (size_t)hlen + 2 * N;                                        \
    vt *hM = mem, *hI = hM + n_steps, *hD = hI + n_steps;                               \
    int32_t *rev = (int32_t *)(hD + n_steps);                                           \
    const size_t c = (size_t)hlen + N - 2;                                              \
    for (size_t y = 0; y < c + N; y++)                                                  \
        rev[y] = y <= c && c - y < hlen ? p->hb[c - y] : HK_BASE_N;                     \
    /* row -1: M and I 0, D init; the last lane of step d is column d - N + 2 */       \
    const float init = HK_SCALE_F / (float)hlen;                                        \
    const vt vinit = zero + init;                                                       \
    for (size_t d = 0; d < n_steps; d++) { hM[d] = zero; hI[d] = zero; hD[d] = vinit; } \
    const uint32_t steps = hlen + N - 1;                                                \
    float dM0 = 0, dI0 = 0, dD0 = init;        /* row i0 - 1 at column 0 */            \
    for (uint32_t i0 = 0; i0 < rlen; i0 += N) {                                         \
        vt mm = zero, gm = zero, mi = zero, ii = zero, md = zero, dd = zero;            \
        vt match = zero, mism = zero;                                                   \
        vi rcode = { 0 };                                                               \
        for (int k = 0; k < N && i0 + (uint32_t)k < rlen; k++) {                        \
            double cf[HK_C_N];                                                          \
            hk_cpu_row_coeffs(p->q, p->ins, p->del, p->gcp, i0 + (uint32_t)k, cf);      \
            mm[k] = (float)cf[HK_C_MM]; gm[k] = (float)cf[HK_C_GM];                     \
            mi[k] = (float)cf[HK_C_MI]; ii[k] = (float)cf[HK_C_II];                     \
            md[k] = (float)cf[HK_C_MD]; dd[k] = (float)cf[HK_C_DD];                     \
            match[k] = (float)cf[HK_C_MATCH]; mism[k] = (float)cf[HK_C_MISM];           \
            rcode[k] = p->rb[i0 + (uint32_t)k];                                         \
        }                                                                               \
        const vi read_n = rcode == HK_BASE_N;                                           \
        /* each lane's previous cell (its left: column 0's 0 until the lane starts, */ \
        /* as the lane below is then still at 0 too), and the diagonal */              \
        vt lM = zero, lI = zero, lD = zero;                                             \
        vt dM = zero, dI = zero, dD = zero;                                             \
        dM[0] = dM0; dI[0] = dI0; dD[0] = dD0;                                          \
        const float *above = (const float *)hM + (size_t)(N - 1) * N + (N - 1);         \
        const size_t stride = (size_t)(hI - hM) * N;                                    \
        for (uint32_t d = 0; d < steps; d++) {                                          \
            /* row i0 - 1 at column d + 1: the strip above's last lane at step d + N - 1 */ \
            const float *up = above + (size_t)d * N;                                    \
            vt aM = { up[0] }, aI = { up[stride] }, aD = { up[2 * stride] };            \
            aM = __builtin_shufflevector(lM, aM, SHIFT);                                \
            aI = __builtin_shufflevector(lI, aI, SHIFT);                                \
            aD = __builtin_shufflevector(lD, aD, SHIFT);                                \
            vi h;                                                                       \
            memcpy(&h, rev + (c - d), sizeof h);                                        \
            const vi is_match = (h == rcode) | (h == HK_BASE_N) | read_n;               \
            const vt emit = (vt)((is_match & (vi)match) | (~is_match & (vi)mism));      \
            const vt nM = emit * (mm * dM + gm * (dI + dD));                            \
            const vt nI = mi * aM + ii * aI;                                            \
            const vt nD = md * lM + dd * lD;                                            \
            dM = aM; dI = aI; dD = aD;                                                  \
            lM = nM; lI = nI; lD = nD;                                                  \
            hM[d] = nM; hI[d] = nI; hD[d] = nD;                                         \
        }                                                                               \
        dM0 = 0; dI0 = 0; dD0 = 0;            /* column 0 below row 0 */               \
    }                                                                                   \
    /* the last row: lane last of the last strip, column j at step j + last - 1 */    \
    const uint32_t last = (rlen - 1) % N;                                               \
    float sum = 0;                                                                      \
    for (uint32_t j = 1; j <= hlen; j++) {                                              \
        const size_t d = (size_t)j + last - 1;                                          \
        sum += hM[d][last] + hI[d][last];                                               \
    }                                                                                   \
    return sum;                                                                         \
}

#if defined(__x86_64__) && defined(__GNUC__)
DIAG_PASS(diag_sse2_f, 4, SHIFT_4, )
DIAG_PASS(diag_avx2_f, 8, SHIFT_8, __attribute__((target("avx2"))))
DIAG_PASS(diag_avx512_f, 16, SHIFT_16, __attribute__((target("avx512f"))))
#endif

size_t hk_cpu_diag_mem_size(uint32_t hlen)
{
    const size_t steps = (size_t)hlen + 2 * HK_MAX_LANES;
    return 3 * steps * HK_VEC_BYTES + steps * sizeof(int32_t);
}

hk_diag_f_fn hk_cpu_diag_f(int lanes)
{
#if defined(__x86_64__) && defined(__GNUC__)
    switch (lanes) {
    case 4: return diag_sse2_f;
    case 8: return diag_avx2_f;
    case 16: return diag_avx512_f;
    }
#endif
    (void)lanes;
    return NULL;
}
