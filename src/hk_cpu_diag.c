/* hk_cpu_diag.c - the float pass across one pair's anti-diagonals (see
 * hk_cpu.h): for the pairs that a call has too few of, or of too unlike
 * lengths, to fill a lane pass's lanes.
 *
 * The read is cut into strips of N rows; lane k holds row i0 + k of the
 * strip and, at step d, column j = d - k + 1, so the lanes of a step lie on
 * one anti-diagonal. A cell's left neighbour is its own lane's previous
 * step, the cell above is lane k - 1's previous step and the diagonal
 * lane k - 1's step before that: each step shifts the previous step's
 * cells up one lane, lane 0 taking row i0 - 1 from the last lane of the
 * strip before, whose every step is kept in memory. Two strips run at once,
 * the second N steps behind the first, so that the core has two chains of
 * dependent steps to overlap. A lane that has not reached column 1 computes
 * 0 from 0s (column 0's value, from which the scalar pass starts a row);
 * lanes past the haplotype's end or the read's compute what no cell of the
 * pair reads. Every cell is HK_CELL on the same operands, and the last row
 * is summed in column order afterwards: the result is the scalar pass's,
 * bit for bit (tests/unit/test_model checks every pass this CPU runs).
 */
#include "hk_cpu.h"
#include "hk_model.h"

#include <string.h>

/* Lane shifts: lane 0 from b's lane 0, lane k from a's lane k - 1. */
#define SHIFT_4()  4, 0, 1, 2
#define SHIFT_8()  8, 0, 1, 2, 3, 4, 5, 6
#define SHIFT_16() 16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14

/* Strip X's rows from i0 on: its coefficients, one lane a row (0 past the
 * read, which keeps those lanes at 0), and its state at step 0. */
#define DIAG_SETUP(X, i0, top, N)                                                          \
    vt mm##X = zero, gm##X = zero, mi##X = zero, ii##X = zero, md##X = zero;            \
    vt dd##X = zero, match##X = zero, mism##X = zero;                                   \
    vi rcode##X = { 0 };                                                                \
    for (int k = 0; k < N && (i0) + (uint32_t)k < rlen; k++) {                          \
        double cf[HK_C_N];                                                              \
        hk_cpu_row_coeffs(p->q, p->ins, p->del, p->gcp, (i0) + (uint32_t)k, cf);        \
        mm##X[k] = (float)cf[HK_C_MM]; gm##X[k] = (float)cf[HK_C_GM];                   \
        mi##X[k] = (float)cf[HK_C_MI]; ii##X[k] = (float)cf[HK_C_II];                   \
        md##X[k] = (float)cf[HK_C_MD]; dd##X[k] = (float)cf[HK_C_DD];                   \
        match##X[k] = (float)cf[HK_C_MATCH]; mism##X[k] = (float)cf[HK_C_MISM];         \
        rcode##X[k] = hk_cpu_base_bits(p->rb[(i0) + (uint32_t)k]);                      \
    }                                                                                   \
    /* each lane's previous cell (its left: column 0's 0 until the lane starts, */     \
    /* as the lane below is then still at 0 too), and the diagonal */                  \
    vt lM##X = zero, lI##X = zero, lD##X = zero, dM##X = zero, dI##X = zero;            \
    vt dD##X = zero;                                                                    \
    if (top) { dD##X[0] = init; }     /* row -1 at column 0; 0 below row 0 */          \
    (void)0

/* Step d of strip X: the row above at column d + 1 is the last lane of the
 * strip above at its step d + N - 1 (in ABOVE); the cells go to OUT. */
#define DIAG_STEP(X, d, ABOVE, OUT, N, SHIFT)                                                     \
    do {                                                                                \
        const float *up = (const float *)((ABOVE) + (d) + N - 1) + (N - 1);             \
        vt aM = { up[0] }, aI = { up[stride] }, aD = { up[2 * stride] };                \
        aM = __builtin_shufflevector(lM##X, aM, SHIFT());                                 \
        aI = __builtin_shufflevector(lI##X, aI, SHIFT());                                 \
        aD = __builtin_shufflevector(lD##X, aD, SHIFT());                                 \
        vi h;                                                                           \
        memcpy(&h, rev + (c - (d)), sizeof h);                                          \
        const vi is_match = (h & rcode##X) != 0;                                        \
        const vt emit = (vt)((is_match & (vi)match##X) | (~is_match & (vi)mism##X));    \
        const vt nM = emit * (mm##X * dM##X + gm##X * (dI##X + dD##X));                 \
        const vt nI = mi##X * aM + ii##X * aI;                                          \
        const vt nD = md##X * lM##X + dd##X * lD##X;                                    \
        dM##X = aM; dI##X = aI; dD##X = aD;                                             \
        lM##X = nM; lI##X = nI; lD##X = nD;                                             \
        (OUT)[d] = nM; (OUT)[(d) + n_steps] = nI; (OUT)[(d) + 2 * n_steps] = nD;        \
    } while (0)

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
    /* every step's cells (M, I, D; hlen + 2N steps each) of the even strips, then */  \
    /* of the odd ones: a strip reads its row above from the last lane of the */       \
    /* other's; then the haplotype's bases (hk_cpu_base_bits) reversed: lane k of the load at c - d */ \
    /* is hb[d - k] */                                                                 \
    const size_t n_steps = (size_t)hlen + 2 * N, stride = n_steps * N;                  \
    vt *even = mem, *odd = even + 3 * n_steps;                                          \
    int32_t *rev = (int32_t *)(odd + 3 * n_steps);                                      \
    const size_t c = (size_t)hlen + N - 2;                                              \
    for (size_t y = 0; y < c + N; y++)                                                  \
        rev[y] = hk_cpu_base_bits(y <= c && c - y < hlen ? p->hb[c - y] : HK_BASE_N);  \
    /* row -1, above strip 0: M and I 0, D init */                                     \
    const float init = HK_SCALE_F / (float)hlen;                                        \
    for (size_t d = 0; d < n_steps; d++) {                                              \
        odd[d] = zero; odd[d + n_steps] = zero; odd[d + 2 * n_steps] = zero + init;     \
    }                                                                                   \
    const uint32_t steps = hlen + N - 1;                                                \
    /* two strips at once, the odd one N steps behind the even one whose last */       \
    /* lane it reads: two chains of dependent steps for the core to overlap */         \
    for (uint32_t i0 = 0; i0 < rlen; i0 += 2 * N) {                                    \
        DIAG_SETUP(A, i0, i0 == 0, N);                                                     \
        if (i0 + N >= rlen) {                                                           \
            for (uint32_t d = 0; d < steps; d++) DIAG_STEP(A, d, odd, even, N, SHIFT);            \
            break;                                                                      \
        }                                                                               \
        DIAG_SETUP(B, i0 + N, 0, N);                                                       \
        uint32_t t = 0;                                                                 \
        for (; t < N; t++) DIAG_STEP(A, t, odd, even, N, SHIFT);                                  \
        for (; t < steps; t++) {                                                        \
            DIAG_STEP(A, t, odd, even, N, SHIFT);                                                 \
            DIAG_STEP(B, t - N, even, odd, N, SHIFT);                                             \
        }                                                                               \
        for (; t < steps + N; t++) DIAG_STEP(B, t - N, even, odd, N, SHIFT);                      \
    }                                                                                   \
    /* the last row: lane last of the last strip, column j at step j + last - 1 */    \
    const uint32_t last = (rlen - 1) % N;                                               \
    const vt *hM = (rlen - 1) / N % 2 ? odd : even, *hI = hM + n_steps;                 \
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
#if defined(__aarch64__) && defined(__GNUC__)
DIAG_PASS(diag_neon_f, 4, SHIFT_4, )
#endif

size_t hk_cpu_diag_mem_size(uint32_t hlen)
{
    const size_t steps = (size_t)hlen + 2 * HK_MAX_LANES;
    return 6 * steps * HK_VEC_BYTES + steps * sizeof(int32_t);
}

hk_diag_f_fn hk_cpu_diag_f(int lanes)
{
#if defined(__x86_64__) && defined(__GNUC__)
    switch (lanes) {
    case 4: return diag_sse2_f;
    case 8: return diag_avx2_f;
    case 16: return diag_avx512_f;
    }
#elif defined(__aarch64__) && defined(__GNUC__)
    if (lanes == 4) return diag_neon_f;
#endif
    (void)lanes;
    return NULL;
}
