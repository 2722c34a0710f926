/* hk_cpu.h - private to the CPU scorer (hk_model.c, hk_cpu_lanes.c,
 * hk_cpu_batch.c; hk_pdhmm.c for the error table and scale): the recurrence stated once, the scalar passes, and the
 * vector passes' common interface. Not for other modules: they use hk_model.h.
 */
#ifndef HK_CPU_H
#define HK_CPU_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include "hk_model_types.h"
#include "hk_types.h"

/* Every pass must round exactly as the scalar pass does, and every build as
 * every other: no a * b + c fused into one FMA. The project's flags say so
 * (-ffp-contract=off, AM_CFLAGS): GCC fuses in GNU C mode (-std=gnu11 in a
 * user's CFLAGS) wherever the target has FMA, as AArch64 always has (an
 * aarch64 build then differed from x86 on most pairs: tests/arm.bats);
 * clang fuses by default and follows this pragma too (AVX-512 has FMA:
 * tests/unit/test_model fails when a vector pass fuses and the scalar not). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif


/* err[q] = 10^(-q/10) (hk_err_values.inc). */
extern const double hk_cpu_err_of_q[256];

/* The model's recurrence, stated once for the scalar and the vector passes.
 * hk_cpu_row_coeffs: row i's transition and emission probabilities in
 * double, as GATK computes them; HK_ROW_COEFFS: the same as scalars of type
 * T (rounded once).
 * The GPU's small-call kernel computes the same doubles from the same
 * table (kernels/device/hk_kernel_small.cu; tests/gpu/small_vs_cpu checks
 * the bits): change both or neither.
 * HK_CELL: cell (i, j) from the diagonal (dM, dI, dD), the cell above (M[j],
 * I[j], D[j] on entry) and the cell to the left (lM, lD), with emission
 * EMIT; updates the rows in place and moves the carried values along. */
enum { HK_C_MM, HK_C_GM, HK_C_MI, HK_C_II, HK_C_MD, HK_C_DD, HK_C_MATCH, HK_C_MISM, HK_C_N };

static inline void hk_cpu_row_coeffs(const uint8_t *q, const uint8_t *ins, const uint8_t *del,
                                     const uint8_t *gcp, uint32_t i, double c[HK_C_N])
{
    const double e = hk_cpu_err_of_q[q[i]], ei = hk_cpu_err_of_q[ins[i]];
    const double ed = hk_cpu_err_of_q[del[i]], eg = hk_cpu_err_of_q[gcp[i]];
    c[HK_C_MM] = 1.0 - (ei + ed);
    c[HK_C_GM] = 1.0 - eg;
    c[HK_C_MI] = ei;
    c[HK_C_II] = eg;
    c[HK_C_MD] = ed;
    c[HK_C_DD] = eg;
    c[HK_C_MATCH] = 1.0 - e;
    c[HK_C_MISM] = e / 3.0;
}

/* A base code as the vector passes compare it: one bit a base (A C G T),
 * all bits for N, so that "equal, or either is N" is one test, (h & r) != 0
 * (one vptestmd where three compares and two ORs were: a float cell's vector
 * work went from 17 to 13 operations). Other codes (PDHMM's lower case,
 * which no vector pass sees) keep a bit of their own. 0: no base (a lane
 * past its read, whose coefficients are 0). */
static inline int32_t hk_cpu_base_bits(uint8_t code)
{
    return code == HK_BASE_N ? -1 : code < 31 ? (int32_t)(1u << code) : 0;
}

#define HK_ROW_COEFFS(T, i)                                                      \
    double c_[HK_C_N];                                                           \
    hk_cpu_row_coeffs(q, ins, del, gcp, i, c_);                                  \
    const T mm = (T)c_[HK_C_MM], gm = (T)c_[HK_C_GM];                            \
    const T mi = (T)c_[HK_C_MI], ii = (T)c_[HK_C_II];                            \
    const T md = (T)c_[HK_C_MD], dd = (T)c_[HK_C_DD];                            \
    const T match_p = (T)c_[HK_C_MATCH], mism_p = (T)c_[HK_C_MISM]

#define HK_CELL(V, EMIT)                                                         \
    do {                                                                         \
        const V oM = M[j], oI = I[j], oD = D[j];                                 \
        const V nM = (EMIT) * (mm * dM + gm * (dI + dD));                        \
        const V nI = mi * oM + ii * oI;                                          \
        const V nD = md * lM + dd * lD;                                          \
        M[j] = nM; I[j] = nI; D[j] = nD;                                         \
        dM = oM; dI = oI; dD = oD; lM = nM; lD = nD;                             \
    } while (0)

/* The scalar forward passes (hk_model.c): the scaled sum of the last row.
 * M, I, D: hlen + 1 entries each. */
float hk_cpu_forward_f(const uint8_t *rb, const uint8_t *q, const uint8_t *ins,
                       const uint8_t *del, const uint8_t *gcp, uint32_t rlen,
                       const uint8_t *hb, uint32_t hlen, float *M, float *I, float *D);
double hk_cpu_forward_d(const uint8_t *rb, const uint8_t *q, const uint8_t *ins,
                        const uint8_t *del, const uint8_t *gcp, uint32_t rlen,
                        const uint8_t *hb, uint32_t hlen, double *M, double *I, double *D);

/* Whether mixed or float mode scores a pair of rlen and hlen bases in float
 * first (float's error grows with both: hk_types.h). */
static inline int hk_cpu_float_first(const hk_model_t *m, uint32_t rlen, uint32_t hlen)
{
    return m->precision == HK_PREC_FLOAT ||
           (m->precision == HK_PREC_MIXED && rlen <= HK_MIXED_FLOAT_MAX_READ &&
            hlen <= HK_MIXED_FLOAT_MAX_HAP);
}

/* Whether float's scaled sum s is the result: always in float mode; in mixed
 * mode when it reaches the threshold and FLT_MIN (0 or a subnormal sum has
 * lost its digits: with a threshold of 0 it came out as -inf) and is finite
 * (cells past FLT_MAX: inf, or NaN, which fails every comparison). The float
 * passes flush subnormals to 0 here; the GPU's do not, and apply the same
 * rule (kernels/hk_fwd.cuh). */
static inline int hk_cpu_float_kept(const hk_model_t *m, float s)
{
    return m->precision == HK_PREC_FLOAT || (s >= FLT_MIN && s <= FLT_MAX && (double)s >= m->float_threshold);
}

/* The float passes flush subnormal results to zero (x86 MXCSR.FZ; AArch64
 * FPCR.FZ, which flushes subnormal operands too: with every result flushed,
 * none reaches a later operation on either), as GKL's
 * Pair-HMM does: a cell below FLT_MIN is 2^-246 under the scaled sum of any
 * pair kept in float, and subnormal arithmetic costs an Intel core ~100
 * cycles per operation (5x on the NA12878-like mix). The double passes keep
 * IEEE subnormals. hk_cpu_flush_begin returns the mode to restore. */
#define HK_FPCR_FZ ((uint64_t)1 << 24)
static inline unsigned hk_cpu_flush_begin(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    const unsigned old = __builtin_ia32_stmxcsr();
    __builtin_ia32_ldmxcsr(old | 0x8000u);
    return old;
#elif defined(__aarch64__) && defined(__GNUC__)
    uint64_t old;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(old));
    __asm__ __volatile__("msr fpcr, %0" : : "r"(old | HK_FPCR_FZ));
    return (unsigned)old;        /* FPCR's defined bits are its low 32 */
#else
    return 0;
#endif
}

static inline void hk_cpu_flush_end(unsigned old)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_ia32_ldmxcsr(old);
#elif defined(__aarch64__) && defined(__GNUC__)
    __asm__ __volatile__("msr fpcr, %0" : : "r"((uint64_t)old));
#else
    (void)old;
#endif
}

/* ---- vector passes (hk_cpu_lanes.c) ---- */

/* One lane's pair: the read's arrays (rlen entries) and the haplotype's codes. */
typedef struct {
    const uint8_t *rb, *q, *ins, *del, *gcp, *hb;
    uint32_t rlen, hlen;
} hk_lane_pair_t;

/* Most lanes of any pass, and the bytes of its widest vector. */
#define HK_MAX_LANES 16
#define HK_VEC_BYTES 64

/* A pass's memory, HK_VEC_BYTES-aligned: rows holds 3 * (hmax + 1) vectors,
 * hcode hmax vectors (of the pass's width), where hmax is the longest
 * haplotype of a call. */
typedef struct {
    void *rows;
    void *hcode;
} hk_lane_mem_t;

/* Score n_float (n_double) pairs at once; sums[l] is lane l's scaled sum,
 * bit for bit what hk_cpu_forward_f (_d) returns for pair l. Every lane
 * holds a pair (callers repeat one in spare lanes). */
typedef void (*hk_lanes_f_fn)(const hk_lane_pair_t *p, const hk_lane_mem_t *mem, float *sums);
typedef void (*hk_lanes_d_fn)(const hk_lane_pair_t *p, const hk_lane_mem_t *mem, double *sums);

typedef struct {
    const char   *name;       /* "scalar", "sse2", "avx2", "avx512", "neon" */
    int           n_float;    /* lanes of the float pass */
    int           n_double;   /* lanes of the double pass */
    hk_lanes_f_fn forward_f;
    hk_lanes_d_fn forward_d;
} hk_cpu_pass_t;

/* The pass in use: the one hk_cpu_set_pass named where this CPU runs it,
 * else the widest this CPU runs; or the one hk_model_set_cpu_pass chose. */
const hk_cpu_pass_t *hk_cpu_pass(void);
/* The pass to use, by name (NULL: the widest): HK_CPU_PASS, which the edge
 * hands here (hk_options_apply) before the first hk_cpu_pass. */
void hk_cpu_set_pass(const char *name);

/* ---- the anti-diagonal float pass (hk_cpu_diag.c) ---- */

/* One pair's scaled float sum, bit for bit hk_cpu_forward_f's, computed
 * across its anti-diagonals in one vector of lanes (rows of the read): no
 * other pair is needed to fill the lanes. mem holds
 * hk_cpu_diag_mem_size(hlen) bytes. */
typedef float (*hk_diag_f_fn)(const hk_lane_pair_t *p, void *mem);
/* The anti-diagonal pass of a vector of lanes float lanes (4, 8 or 16 on
 * x86-64, 4 on AArch64), the width of the lane pass of that many; NULL for
 * others. */
hk_diag_f_fn hk_cpu_diag_f(int lanes);
size_t hk_cpu_diag_mem_size(uint32_t hlen);

/* Which float groups of a batch go to the anti-diagonal pass: HK_DIAG_AUTO
 * those whose pairs it scores in fewer steps than the lane pass (few pairs,
 * or lengths far apart), HK_DIAG_OFF none, HK_DIAG_ALL all; HK_DIAG_AUTO
 * until hk_cpu_set_diag (the edge, from HK_CPU_DIAG: hk_options_apply; tests,
 * measurements; not while a batch is being scored) sets another, which
 * returns the previous mode. */
enum { HK_DIAG_AUTO, HK_DIAG_OFF, HK_DIAG_ALL };
int hk_cpu_set_diag(int mode);

/* The double pass of one pair as a score: log10 of the unscaled sum, or
 * where the sum s underflowed to 0 or overflowed (inf or NaN: a cell passed
 * DBL_MAX), the rescue's value (ws as for hk_model_rescue_pair). */
double hk_cpu_double_score(double s, const hk_lane_pair_t *p, void *ws);

#endif
