/* hk_fwd.cuh - the Pair-HMM forward pass on the GPU, one device template for
 * every configuration (included by the kernel families hk_kernel_*.cu).
 *
 * A group of P consecutive lanes scores one item (a read against one or more
 * haplotypes of its region). Lane t holds read rows [t*K, t*K+K) of the
 * current tile in registers; the wavefront moves along the haplotypes, lane t
 * working on column s - t at step s, and warp shuffles carry the last row of
 * lane t-1 (M, I, D and the column's base code) to lane t. Haplotypes of an
 * item are scored back to back, so the pipeline fills once per item.
 *
 * The read is padded at the top to a whole number of tiles (padding rows
 * keep M = I = 0 and D = C/n, i.e. they reproduce row 0), so the last read
 * row is always the last row of lane P-1. Emission probabilities of the tile
 * (5 haplotype codes x P*K rows) live in shared memory, laid out so that each
 * lane reads its K rows with 16-byte loads.
 *
 * SCALED (the float path): I and D are kept divided by their own gap-open
 * probability, I'(i,j) = I(i,j)/mi_i and D'(i,j) = D(i,j)/md_i, which turns
 * both into one FMA per cell:
 *   I'(i,j) = M(i-1,j) + (ii_i mi_{i-1} / mi_i) I'(i-1,j)
 *   D'(i,j) = M(i,j-1) + dd_i D'(i,j-1)
 *   M(i,j)  = e(i,j) mm_i (M + (gm_i mi_{i-1}/mm_i) I' + (gm_i md_{i-1}/mm_i) D')(i-1,j-1)
 * with e(i,j) mm_i precomputed in the emission table: 5 FP32 instructions per
 * cell (M 3, I' 1, D' 1) instead of 8. Both stay below C times the row
 * mass; an overflow (only with extreme qualities) gives a non-finite sum,
 * which mixed mode recomputes in double. The double path uses the plain
 * recurrence (8 instructions), which cannot overflow.
 *
 * The kernels (two columns per step, every family, single- and multi-tile)
 * are in hk_fwd_pair.cuh, which uses this struct's layout, tables,
 * setup_rows, boundary and finish. One column per step ran slower in every
 * family (docs/PERFORMANCE.md).
 */
#ifndef HK_FWD_CUH
#define HK_FWD_CUH

#include <cstdint>
#include <cfloat>
#include "hk_cuda.h"
#include "hk_cuda_internal.h"
#include "hk_err_table.h"

/* The emission table laid out so that groups meet in no shared-memory bank
 * (hk_fwd::SPREAD; a measurement knob). */
#ifndef HK_SMEM_SPREAD
#define HK_SMEM_SPREAD 1
#endif
/* a third of an H100 SM's shared memory, less the 1 KB each block reserves */
#define HK_SMEM_SPREAD_MAX (233472 / 3 - 1024)
/* Steps of the wavefront per loop iteration (a tuning knob). */
#ifndef HK_STEP_UNROLL
#define HK_STEP_UNROLL 2
#endif

template <typename T> struct hk_real;
template <> struct hk_real<float> {
    enum { VEC = 4 };                            /* widest emission load: 16 bytes */
    static __device__ __forceinline__ float scale() { return HK_SCALE_F; }
    static constexpr double log10_scale = HK_LOG10_SCALE_F;
};
template <> struct hk_real<double> {
    enum { VEC = 2 };
    static __device__ __forceinline__ double scale() { return HK_SCALE_D; }
    static constexpr double log10_scale = HK_LOG10_SCALE_D;
};

/* The vector type of V elements of T (one shared-memory load). */
template <typename T, int V> struct hk_vec;
template <> struct hk_vec<float, 4> { typedef float4 type; };
template <> struct hk_vec<float, 2> { typedef float2 type; };
template <> struct hk_vec<float, 1> { typedef float type; };
template <> struct hk_vec<double, 2> { typedef double2 type; };
template <> struct hk_vec<double, 1> { typedef double type; };

/* One row of scratch for the multi-tile kernels. */
template <typename T> struct __align__(4 * sizeof(T)) hk_cell3 { T m, i, d, pad; };

/* Read k's gap summary, in one 8-byte load. */
static __device__ __forceinline__ hk_read_gaps_t hk_load_gaps(const hk_read_gaps_t *g, uint32_t k)
{
    const uint2 v = __ldg(reinterpret_cast<const uint2 *>(g) + k);
    hk_read_gaps_t r;
    memcpy(&r, &v, sizeof r);
    return r;
}

/* Gap qualities (ins, del, gcp) of row i of a read of length m whose row i
 * is at offset o. */
static __device__ __forceinline__ uchar3 hk_gap_row(const hk_chunk_dev &c, const hk_read_gaps_t &g,
                                                   uint32_t o, uint32_t i, uint32_t m)
{
    if (g.constant)
        return i + 1 == m ? make_uchar3(g.ins_last, g.del_last, g.gcp_last) : make_uchar3(g.ins, g.del, g.gcp);
    return make_uchar3(c.ri[o], c.rd[o], c.rg[o]);
}

template <typename T, int P, int K, bool SCALED, bool MULTI>
struct hk_fwd {
    typedef hk_real<T> R;
    typedef hk_cell3<T> cell3;
    /* rows per emission load: the widest vector that divides K */
    static constexpr int VEC = K % R::VEC == 0 ? R::VEC : K % 2 == 0 ? 2 : 1;
    typedef typename hk_vec<T, VEC>::type vec_t;
    static constexpr int STEP_UNROLL = HK_STEP_UNROLL;
    static constexpr int ROWS = P * K;
    static constexpr int GROUPS = HK_BLOCK_THREADS / P;      /* groups per block */
    static constexpr int WARP_ITEMS = 32 / P;                /* groups per warp */
    /* The emission table's layout. A warp's emission load is served 128
     * bytes (a phase) at a time, and a group's lanes read LOAD consecutive
     * elements of it. Where a phase holds several groups, which read the
     * rows of different codes, each code's rows start on a 128-byte boundary
     * (CODE: the elements from one code's rows to the next's) and the groups
     * lie LOAD elements apart modulo 128 bytes, so that the phase's groups
     * meet in no bank whatever their codes. Not where that would leave room
     * for fewer than three blocks' tables on an SM (the 2x20 and 2x22 tiles:
     * 3 blocks by their registers, 2 by such tables). */
    static constexpr int LOAD = P * VEC;
    static constexpr int PHASE = 128 / (int)sizeof(T);
    static constexpr int CODE_SPREAD = (ROWS + PHASE - 1) / PHASE * PHASE;
    static constexpr bool SPREAD = HK_SMEM_SPREAD && LOAD < PHASE &&
        (GROUPS * (5 * CODE_SPREAD + HK_MAX_ITEM_HAPS + LOAD) + ROWS) * sizeof(T) <= HK_SMEM_SPREAD_MAX;
    static constexpr int CODE = SPREAD ? CODE_SPREAD : ROWS;
    static constexpr int SMEM_GROUP = 5 * CODE + HK_MAX_ITEM_HAPS + (SPREAD ? LOAD : 0); /* elements */
    static constexpr size_t SMEM_BYTES = (size_t)GROUPS * SMEM_GROUP * sizeof(T);
    static_assert(!SPREAD || (5 * CODE + HK_MAX_ITEM_HAPS) % PHASE == 0, "groups start LOAD apart in the banks");

    static_assert(P == 2 || P == 4 || P == 8 || P == 16 || P == 32, "group size must be 2, 4, 8, 16 or 32 lanes");
    static_assert(K % VEC == 0, "rows per lane must fill whole emission loads");
    static_assert(K >= 1 && K <= 32, "rows per lane must fit the 32-bit padding mask");
    static_assert(HK_BLOCK_THREADS % 32 == 0, "blocks are whole warps");
    static_assert((SMEM_GROUP * sizeof(T)) % 16 == 0, "group tables stay 16-byte aligned");

    /* Lane t's offset of row r of code 0 in the emission table. */
    static __device__ __forceinline__ int tab_off(int t, int r)
    { return (r / VEC) * (VEC * P) + t * VEC + (r % VEC); }

    /* Tile `tile` of the read: the emission table and each row's
     * coefficients (c0..c4 as the recurrence of SCALED uses them), the
     * lane's last-row ei (milast), and which rows are padding (padmask). */
    static __device__ __forceinline__ void setup_rows(const hk_chunk_dev &c, const hk_read_gaps_t &gq, uint32_t tile,
                                                      int t, uint32_t ro, uint32_t m, uint32_t pad, T *tab,
                                                      T (&c0)[K], T (&c1)[K], T (&c2)[K], T (&c3)[K], T (&c4)[K],
                                                      T &milast, uint32_t &padmask)
    {
#pragma unroll
        for (int r = 0; r < K; r++) {
            const int i = (int)(tile * ROWS + t * K + r) - (int)pad;
            T em[5];
            if (i >= 0) {
                const uint32_t o = ro + (uint32_t)i;
                const int b = c.rbase[o];
                const uchar3 g = hk_gap_row(c, gq, o, (uint32_t)i, m);
                const double e = hk_err_tab[c.rq[o]], ei = hk_err_tab[g.x];
                const double ed = hk_err_tab[g.y], eg = hk_err_tab[g.z];
                double eip = 1.0, edp = 1.0;  /* row 0: I' = 0, D' = D */
                if (i > 0) {
                    const uchar3 gp = hk_gap_row(c, gq, o - 1, (uint32_t)i - 1, m);
                    eip = hk_err_tab[gp.x]; edp = hk_err_tab[gp.y];
                }
                const double mm = 1.0 - (ei + ed), gm = 1.0 - eg;
                double em_scale = 1.0;
                c0[r] = (T)mm;
                if (SCALED) {              /* mm folded into the emission */
                    c1[r] = (T)(gm * eip / mm); c2[r] = (T)(gm * edp / mm);
                    c3[r] = (T)(eg * eip / ei); c4[r] = (T)eg;
                    em_scale = mm;
                } else {
                    c1[r] = (T)gm; c2[r] = (T)ei; c3[r] = (T)ed; c4[r] = (T)eg;
                }
                if (r == K - 1) milast = SCALED ? (T)ei : (T)1;
                const T match = (T)((1.0 - e) * em_scale), mism = (T)(e / 3.0 * em_scale);
#pragma unroll
                for (int k = 0; k < 4; k++) em[k] = (b == HK_BASE_N || b == k) ? match : mism;
                em[4] = match;
            } else {                          /* padding: a copy of row 0 */
                c0[r] = c1[r] = c2[r] = c3[r] = 0; c4[r] = 1;
                padmask |= 1u << r;
#pragma unroll
                for (int k = 0; k < 5; k++) em[k] = 0;
            }
#pragma unroll
            for (int k = 0; k < 5; k++) tab[k * CODE + tab_off(t, r)] = em[k];
        }
    }

    /* Before a column whose code has a flag (bit 3: a haplotype's first
     * column, bit 4: the item's end): lane P-1 (fin) finishes haplotype h;
     * at a first column the state is reset to column -1, the diagonal's
     * (dM, dI, dD: the row above, the column before) too. */
    static __device__ __forceinline__ void boundary(int code, const hk_chunk_dev &c, const hk_item &it, bool fin,
                                                    bool above_pad, uint32_t padmask, const T *cn, T milast,
                                                    int &h, T &cnh, T &sumM, T &sumI,
                                                    T (&M)[K], T (&I)[K], T (&D)[K], T &dM, T &dI, T &dD)
    {
        if (fin && h >= 0) finish(c, it, h, sumM, sumI, milast);
        if (code & 8) {
            h++;
            cnh = cn[h];
            dM = 0; dI = 0; dD = above_pad ? cnh : (T)0;
#pragma unroll
            for (int r = 0; r < K; r++) {
                M[r] = 0; I[r] = 0; D[r] = (padmask >> r) & 1 ? cnh : (T)0;
            }
            sumM = 0; sumI = 0;
        } else {
            h = 64;                                    /* past the end: nothing more to finish */
        }
    }

    /* The result of haplotype h of the item, from the sums of the last row. */
    static __device__ __forceinline__ void finish(const hk_chunk_dev &c, const hk_item &it, int h,
                                                  T sumM, T sumI, T milast)
    {
        const T s = sumM + milast * sumI;
        const uint32_t o = it.out + (uint32_t)h;
        const double ds = (double)s;
        if (sizeof(T) == sizeof(float) && c.precision == HK_PREC_MIXED &&
            !(ds >= (double)FLT_MIN && ds >= c.threshold && ds <= (double)FLT_MAX)) {   /* hk_cpu_float_kept */
            const uint32_t k = atomicAdd(c.n_redo, 1u);
            hk_item r = {it.read, it.hap + (uint32_t)h, 1u, o};
            c.redo[k] = r;
            return;
        }
        c.lk[o] = log10(ds) - R::log10_scale;
    }
};

#endif
