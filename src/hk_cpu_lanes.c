/* hk_cpu_lanes.c - the vector passes of the CPU scorer and the choice of one
 * (see hk_cpu.h).
 *
 * A pass scores one pair per lane: lane l runs read l against haplotype l.
 * Rows (read positions) are the outer loop, columns (haplotype positions) the
 * inner one, and every lane walks the group's longest haplotype and longest
 * read. Column j depends only on columns <= j, so each lane sums its own
 * columns; a lane whose read ends early sums its last row when it ends, and
 * from then on its row coefficients are 0, which keeps its cells at 0 (no
 * subnormals, no work the result needs). The batch scorer groups pairs of
 * similar lengths so that little of this padding is computed.
 *
 * -ffp-contract=off (AM_CFLAGS) keeps the compiler from contracting a * b + c
 * to FMA (AArch64 and AVX-512 have it), so every lane computes
 * exactly what the scalar pass computes (tests/unit/test_model.c checks every
 * pass this CPU runs, bit for bit).
 */
#include "hk_cpu.h"
#include "hk_model.h"
#include "hk_log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Row i's coefficients, one lane a pair, into the vectors named X; a lane
 * whose read has ended keeps 0s. ending##X: the lanes whose read ends here. */
#define LANE_ROW(X, i, N, T, IT)                                                         \
    vt mm##X = zero, gm##X = zero, mi##X = zero, ii##X = zero, md##X = zero;            \
    vt dd##X = zero, match##X = zero, mism##X = zero;                                   \
    vi rcode##X = { 0 }, ending##X = { 0 };                                             \
    int any_ending##X = 0;                                                              \
    for (int l = 0; l < N; l++) {                                                       \
        if ((i) >= p[l].rlen) continue;      /* done: coefficients 0 */                 \
        double c[HK_C_N];                                                               \
        hk_cpu_row_coeffs(p[l].q, p[l].ins, p[l].del, p[l].gcp, (i), c);                \
        mm##X[l] = (T)c[HK_C_MM]; gm##X[l] = (T)c[HK_C_GM];                             \
        mi##X[l] = (T)c[HK_C_MI]; ii##X[l] = (T)c[HK_C_II];                             \
        md##X[l] = (T)c[HK_C_MD]; dd##X[l] = (T)c[HK_C_DD];                             \
        match##X[l] = (T)c[HK_C_MATCH]; mism##X[l] = (T)c[HK_C_MISM];                   \
        rcode##X[l] = (IT)hk_cpu_base_bits(p[l].rb[(i)]);                               \
        ending##X[l] = (i) + 1 == p[l].rlen ? -1 : 0;                                   \
        any_ending##X |= (i) + 1 == p[l].rlen;                                          \
    }                                                                                   \
    (void)0

/* Cell (row X, column j) from the diagonal (d*X), the cell above (uM, uI)
 * and the left (l*X): HK_CELL's operations in its order, the cell in n*X. */
#define LANE_CELL(X)                                                                    \
    const vi is_match##X = (h & rcode##X) != 0;    /* equal, or an N (hk_cpu_base_bits) */ \
    const vt emit##X = (vt)((is_match##X & (vi)match##X) | (~is_match##X & (vi)mism##X)); \
    const vt nM##X = emit##X * (mm##X * dM##X + gm##X * (dI##X + dD##X));               \
    const vt nI##X = mi##X * uM##X + ii##X * uI##X;                                     \
    const vt nD##X = md##X * lM##X + dd##X * lD##X

/* Rows A and B along the haplotype: A's cells go to B in registers, B's to
 * the rows in memory; SUM adds the row's cells of the lanes that end there
 * (or nothing). */
#define LANE_TWO_ROWS(SUM)                                                              \
    for (uint32_t j = 1; j <= hmax; j++) {                                              \
        const vi h = hcode[j - 1];                                                      \
        const vt uMA = M[j], uIA = I[j], uDA = D[j];                                    \
        LANE_CELL(A);                                                                   \
        const vt uMB = nMA, uIB = nIA;                                                  \
        LANE_CELL(B);                                                                   \
        SUM;                                                                            \
        dMA = uMA; dIA = uIA; dDA = uDA; lMA = nMA; lDA = nDA;                          \
        dMB = nMA; dIB = nIA; dDB = nDA; lMB = nMB; lDB = nDB;                          \
        M[j] = nMB; I[j] = nIB; D[j] = nDB;                                             \
    }

/* LANE_PASS(NAME, T, IT, N, SCALE, TARGET): the pass of N lanes of type T;
 * IT is the integer type of T's size (for the masks). Two rows a sweep
 * along the haplotype: the upper row's cells go to the lower in registers,
 * and the rows in memory (three vectors a column, beyond the first level
 * of cache from about 170 columns) are read and written once for both. */
#define LANE_PASS(NAME, T, IT, N, SCALE, TARGET)                                        \
typedef T NAME##_vt __attribute__((vector_size(N * sizeof(T))));                        \
typedef IT NAME##_vi __attribute__((vector_size(N * sizeof(IT))));                      \
TARGET static void NAME(const hk_lane_pair_t *p, const hk_lane_mem_t *mem, T *sums)    \
{                                                                                       \
    typedef NAME##_vt vt;                                                               \
    typedef NAME##_vi vi;                                                               \
    const vt zero = { 0 };                                                              \
    vt init = zero;                                                                     \
    vi len = { 0 };                                                                     \
    uint32_t hmax = 0, rmax = 0;                                                        \
    for (int l = 0; l < N; l++) {                                                       \
        init[l] = (T)(SCALE) / (T)p[l].hlen;                                            \
        len[l] = (IT)p[l].hlen;                                                         \
        if (p[l].hlen > hmax) hmax = p[l].hlen;                                         \
        if (p[l].rlen > rmax) rmax = p[l].rlen;                                         \
    }                                                                                   \
    /* haplotype bases, lane-interleaved; N (matches all) past a lane's end */          \
    IT *code = mem->hcode;                                                              \
    for (int l = 0; l < N; l++)                                                         \
        for (uint32_t j = 0; j < hmax; j++)                                             \
            code[(size_t)j * N + l] = (IT)hk_cpu_base_bits(j < p[l].hlen ? p[l].hb[j] : HK_BASE_N); \
    const vi *hcode = mem->hcode;                                                       \
    vt *M = mem->rows, *I = M + (hmax + 1), *D = I + (hmax + 1);                        \
    for (uint32_t j = 0; j <= hmax; j++) { M[j] = zero; I[j] = zero; D[j] = init; }      \
    vt sum = zero;              /* a lane whose read is empty sums 0, as the scalar */  \
    /* a lane sums its own columns of its last row, in order: adding the */            \
    /* other lanes' 0s leaves each lane's sum as the scalar pass's */                  \
    uint32_t i = 0;                                                                     \
    for (; i + 1 < rmax; i += 2) {                                                      \
        LANE_ROW(A, i, N, T, IT);                                                        \
        LANE_ROW(B, i + 1, N, T, IT);                                                    \
        vt dMA = M[0], dIA = I[0], dDA = D[0], lMA = zero, lDA = zero;                  \
        vt dMB = zero, dIB = zero, dDB = zero, lMB = zero, lDB = zero;                  \
        M[0] = zero; I[0] = zero; D[0] = zero;                                          \
        if (!any_endingA && !any_endingB) {                                             \
            LANE_TWO_ROWS((void)0)                                                      \
        } else {                                                                        \
            LANE_TWO_ROWS(const vi in = (vi){ 0 } + (IT)j <= len;                       \
                          sum += (vt)(in & endingA & (vi)(nMA + nIA));                  \
                          sum += (vt)(in & endingB & (vi)(nMB + nIB)))                  \
        }                                                                               \
    }                                                                                   \
    for (; i < rmax; i++) {     /* the last of an odd count of rows */                 \
        LANE_ROW(A, i, N, T, IT);                                                        \
        vt dMA = M[0], dIA = I[0], dDA = D[0], lMA = zero, lDA = zero;                  \
        M[0] = zero; I[0] = zero; D[0] = zero;                                          \
        for (uint32_t j = 1; j <= hmax; j++) {                                          \
            const vi h = hcode[j - 1];                                                  \
            const vt uMA = M[j], uIA = I[j], uDA = D[j];                                \
            LANE_CELL(A);                                                               \
            const vi in = (vi){ 0 } + (IT)j <= len;                                     \
            sum += (vt)(in & endingA & (vi)(nMA + nIA));                                \
            dMA = uMA; dIA = uIA; dDA = uDA; lMA = nMA; lDA = nDA;                      \
            M[j] = nMA; I[j] = nIA; D[j] = nDA;                                         \
        }                                                                               \
        (void)any_endingA;                                                              \
    }                                                                                   \
    for (int l = 0; l < N; l++) sums[l] = sum[l];                                       \
}

#if defined(__x86_64__) && defined(__GNUC__)
#define TARGET_AVX2   __attribute__((target("avx2")))
#define TARGET_AVX512 __attribute__((target("avx512f")))
LANE_PASS(lanes_sse2_f, float, int32_t, 4, HK_SCALE_F, )
LANE_PASS(lanes_sse2_d, double, int64_t, 2, HK_SCALE_D, )
LANE_PASS(lanes_avx2_f, float, int32_t, 8, HK_SCALE_F, TARGET_AVX2)
LANE_PASS(lanes_avx2_d, double, int64_t, 4, HK_SCALE_D, TARGET_AVX2)
LANE_PASS(lanes_avx512_f, float, int32_t, 16, HK_SCALE_F, TARGET_AVX512)
LANE_PASS(lanes_avx512_d, double, int64_t, 8, HK_SCALE_D, TARGET_AVX512)
#endif
#if defined(__aarch64__) && defined(__GNUC__)
/* Advanced SIMD (every AArch64 core has it): one q register a vector, as sse2 */
LANE_PASS(lanes_neon_f, float, int32_t, 4, HK_SCALE_F, )
LANE_PASS(lanes_neon_d, double, int64_t, 2, HK_SCALE_D, )
#endif

/* The scalar "pass": one lane, the reference itself. */
static void lanes_scalar_f(const hk_lane_pair_t *p, const hk_lane_mem_t *mem, float *sums)
{
    float *M = mem->rows, *I = M + (p->hlen + 1), *D = I + (p->hlen + 1);
    sums[0] = hk_cpu_forward_f(p->rb, p->q, p->ins, p->del, p->gcp, p->rlen, p->hb, p->hlen, M, I, D);
}

static void lanes_scalar_d(const hk_lane_pair_t *p, const hk_lane_mem_t *mem, double *sums)
{
    double *M = mem->rows, *I = M + (p->hlen + 1), *D = I + (p->hlen + 1);
    sums[0] = hk_cpu_forward_d(p->rb, p->q, p->ins, p->del, p->gcp, p->rlen, p->hb, p->hlen, M, I, D);
}

/* Narrowest first. */
static const hk_cpu_pass_t passes[] = {
    { "scalar", 1, 1, lanes_scalar_f, lanes_scalar_d },
#if defined(__x86_64__) && defined(__GNUC__)
    { "sse2", 4, 2, lanes_sse2_f, lanes_sse2_d },
    { "avx2", 8, 4, lanes_avx2_f, lanes_avx2_d },
    { "avx512", 16, 8, lanes_avx512_f, lanes_avx512_d },
#endif
#if defined(__aarch64__) && defined(__GNUC__)
    { "neon", 4, 2, lanes_neon_f, lanes_neon_d },
#endif
};
#define N_PASSES (sizeof passes / sizeof passes[0])

static int runs_here(const hk_cpu_pass_t *p)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (!strcmp(p->name, "avx2")) return __builtin_cpu_supports("avx2");
    if (!strcmp(p->name, "avx512")) return __builtin_cpu_supports("avx512f");
#endif
    (void)p;
    return 1;
}

static const hk_cpu_pass_t *by_name(const char *name)
{
    for (size_t k = 0; k < N_PASSES; k++)
        if (!strcmp(passes[k].name, name)) return &passes[k];
    return NULL;
}

static _Atomic(const hk_cpu_pass_t *) chosen;
static pthread_once_t choose_once = PTHREAD_ONCE_INIT;

/* The pass asked for (hk_cpu_set_pass), "" for the widest. */
static char wanted[16];

void hk_cpu_set_pass(const char *name) { snprintf(wanted, sizeof wanted, "%s", name ? name : ""); }

static void choose(void)
{
    const hk_cpu_pass_t *widest = &passes[0];
    for (size_t k = 0; k < N_PASSES; k++)
        if (runs_here(&passes[k])) widest = &passes[k];
    if (wanted[0]) {
        const char *name = wanted;
        const hk_cpu_pass_t *p = by_name(name);
        if (p && runs_here(p)) widest = p;
        else hk_log_notice("HK_CPU_PASS=%s: this CPU does not run it; using %s", name, widest->name);
    }
    chosen = widest;
    if (hk_log_tracing())
        hk_log_notice("CPU pass %s: %d float lanes, %d double lanes", widest->name,
                      widest->n_float, widest->n_double);
}

const hk_cpu_pass_t *hk_cpu_pass(void)
{
    pthread_once(&choose_once, choose);
    return chosen;
}

const char *hk_model_cpu_pass(void)
{
    return hk_cpu_pass()->name;
}

hk_status_t hk_model_set_cpu_pass(const char *name)
{
    pthread_once(&choose_once, choose);
    const hk_cpu_pass_t *p = name ? by_name(name) : NULL;
    if (!p || !runs_here(p)) return HK_E_INPUT;
    chosen = p;
    return HK_OK;
}
