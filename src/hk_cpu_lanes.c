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

/* LANE_PASS(NAME, T, IT, N, SCALE, TARGET): the pass of N lanes of type T;
 * IT is the integer type of T's size (for the masks). */
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
    for (uint32_t i = 0; i < rmax; i++) {                                               \
        vt mm = zero, gm = zero, mi = zero, ii = zero, md = zero, dd = zero;            \
        vt match = zero, mism = zero;                                                   \
        vi rcode = { 0 }, ending = { 0 };                                               \
        int any_ending = 0;                                                             \
        for (int l = 0; l < N; l++) {                                                   \
            if (i >= p[l].rlen) continue;      /* done: coefficients 0 */               \
            double c[HK_C_N];                                                           \
            hk_cpu_row_coeffs(p[l].q, p[l].ins, p[l].del, p[l].gcp, i, c);              \
            mm[l] = (T)c[HK_C_MM]; gm[l] = (T)c[HK_C_GM];                               \
            mi[l] = (T)c[HK_C_MI]; ii[l] = (T)c[HK_C_II];                               \
            md[l] = (T)c[HK_C_MD]; dd[l] = (T)c[HK_C_DD];                               \
            match[l] = (T)c[HK_C_MATCH]; mism[l] = (T)c[HK_C_MISM];                     \
            rcode[l] = (IT)hk_cpu_base_bits(p[l].rb[i]);                                \
            ending[l] = i + 1 == p[l].rlen ? -1 : 0;                                    \
            any_ending |= i + 1 == p[l].rlen;                                           \
        }                                                                               \
        vt dM = M[0], dI = I[0], dD = D[0], lM = zero, lD = zero;                       \
        M[0] = zero; I[0] = zero; D[0] = zero;                                          \
        for (uint32_t j = 1; j <= hmax; j++) {                                          \
            const vi h = hcode[j - 1];                                                  \
            const vi is_match = (h & rcode) != 0;    /* equal, or an N (hk_cpu_base_bits) */ \
            const vt emit = (vt)((is_match & (vi)match) | (~is_match & (vi)mism));      \
            HK_CELL(vt, emit);                                                          \
        }                                                                               \
        if (!any_ending) continue;                                                      \
        /* lanes whose read ends here: the sum over their own columns, in order */      \
        for (uint32_t j = 1; j <= hmax; j++) {                                          \
            const vi in = ((vi){ 0 } + (IT)j <= len) & ending;                          \
            sum += (vt)(in & (vi)(M[j] + I[j]));                                        \
        }                                                                               \
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
