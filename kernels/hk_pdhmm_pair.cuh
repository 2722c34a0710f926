/* hk_pdhmm_pair.cuh - the single-tile PDHMM kernels, two haplotype columns
 * per step (included by hk_pdhmm.cu after hk_pdhmm.cuh); HK_PD_COLUMNS=2.
 *
 * Why it was tried: the one-column kernels (hk_pdhmm.cuh) ran at 0.68 TCUPS
 * on the NA12878-like PD mix with half the issue slots idle: two warps per
 * scheduler (255 registers), and each step's cells hang on one chain, I down
 * the K rows (one DFMA each), after the shuffles. As in hk_fwd_pair.cuh,
 * lane t works on columns 2(s-t) and 2(s-t)+1 at step s: column B's row r
 * needs column A's rows r-1 and r only, so the two chains interleave.
 * Outcome on an H100: slower (0.62 TCUPS on the mix, 0.58-0.85 on equal
 * lengths against 0.71-0.92): two columns fit only 4 or 6 rows per lane in
 * 255 registers, so the step's fixed cost (twelve shuffles, the selects of
 * lane 0, code words, votes) is spread over no more cells than one column of
 * 8 rows, and the issue slots stayed half idle (ncu: 3.1 cycles per issued
 * instruction, 7 warps per SM). Kept, tested, as the starting point for a
 * form with fewer registers per row.
 *
 * The kernels read the haplotypes' padded code words (hcode2, hap_off2):
 * every haplotype has an even length, an odd one's last pair ending in a
 * HK_PDC_PAD column. A pad column is computed like any other (its code has
 * no flag: NORMAL, mismatches), but it is left out of the sum and the next
 * column is a haplotype's first (which resets everything) or past the item's
 * end, so nothing reads it. A haplotype starts, and an item ends, only at a
 * pair's first column (A).
 *
 * Cells, the slow steps, the branch values and the results are those of
 * hk_pd_fwd (fast_column, slow_column, finish), called once per column. In a
 * slow step the branch values of the row above come for both columns: lane
 * t-1's at its column A (kept in registers, aB*) and at its column B (its
 * shared-memory row), shuffled before a first column resets them.
 */
#ifndef HK_PDHMM_PAIR_CUH
#define HK_PDHMM_PAIR_CUH

#include "hk_pdhmm.cuh"

template <int P, int K>
struct hk_pd_pair {
    typedef hk_pd_fwd<P, K, false, false, false> F;       /* rows, cells, finish, shared layout */
    typedef typename F::rows_t rows_t;
    static constexpr int ROWS = F::ROWS;
    static constexpr int GROUPS = F::GROUPS;
    static constexpr int WARP_ITEMS = F::WARP_ITEMS;
    static constexpr size_t SMEM_CN = F::SMEM_CN;
    static constexpr size_t SMEM_BYTES = F::SMEM_BYTES;

    static __device__ void body(const hk_pd_dev &c, const hk_item *items, uint32_t n_items)
    {
        extern __shared__ __align__(16) unsigned char hk_smem_raw[];
        const int lane = threadIdx.x & 31;
        const int t = lane & (P - 1);
        const int group = threadIdx.x / P;
        double *cn = reinterpret_cast<double *>(hk_smem_raw) + group * HK_MAX_ITEM_HAPS;
        double *sB = reinterpret_cast<double *>(hk_smem_raw + SMEM_CN) + threadIdx.x;
        const uint32_t wpb = HK_BLOCK_THREADS / 32;
        const uint32_t warps_total = gridDim.x * wpb;

        for (uint32_t w = blockIdx.x * wpb + threadIdx.x / 32; (uint64_t)w * WARP_ITEMS < n_items;
             w += warps_total) {
            const uint32_t idx = w * WARP_ITEMS + lane / P;
            const bool tv = idx < n_items;
            hk_item it = {0, 0, 0, 0};
            uint32_t ro = 0, m = 0, ho2 = 0, total = 0;
            if (tv) {
                it = items[idx];
                ro = c.read_off[it.read];
                m = c.read_off[it.read + 1] - ro;
                ho2 = c.hap_off2[it.hap];
                total = (c.hap_off2[it.hap + it.n_haps] - ho2) / 2;   /* column pairs */
            }
            const uint32_t pad = tv ? ROWS - m : 0;
            /* lane P-1 meets the end marker (pair total) at step total + P - 1 */
            const uint32_t steps = __reduce_max_sync(0xffffffffu, tv ? total + P - 1 : 0);

            __syncwarp();                                  /* the last item's C/n reads done */
            if (tv)
                for (uint32_t h = t; h < it.n_haps; h += P)
                    cn[h] = 0x1p1020 / (double)(c.hap_off[it.hap + h + 1] - c.hap_off[it.hap + h]);
            __syncwarp();

            rows_t co;
            F::setup_rows(c, 0, t, ro, pad, tv, co, nullptr);
            const bool above_pad = t == 0 || (uint32_t)(t * K) - 1 < pad;
            sweep(c, it, co, tv, above_pad, total, ho2, steps, t, cn, sB);
        }
    }

    static __device__ __forceinline__ void sweep(const hk_pd_dev &c, const hk_item &it, const rows_t &co, bool tv,
                                                 bool above_pad, uint32_t total, uint32_t ho2, uint32_t steps,
                                                 int t, const double *cn, double *sB)
    {
        double M[K], I[K], D[K];
#pragma unroll
        for (int r = 0; r < K; r++) M[r] = I[r] = D[r] = 0;
        double aM = 0, aI = 0, aD = 0;                 /* last row, column A of the last step */
        double aBM = 0, aBI = 0, aBD = 0;              /* its branch values (slow steps) */
        double pM = 0, pI = 0, pD = 0;                 /* row above, the column before A */
        double pBM = 0, pBI = 0, pBD = 0;
        double sum = 0, cnh = 0;
        int h = -1;
        const uint2 *hp = reinterpret_cast<const uint2 *>(c.hcode2 + ho2);
        const uint32_t tot = tv ? total : 0;
        auto pair_at = [&](uint32_t p) -> uint2 {
            return p < tot ? __ldg(hp + p) : make_uint2(p == tot && tv ? HK_PDC_STOP : 0u, 0u);
        };
        uint2 l0 = pair_at(0u - (uint32_t)t), l1 = pair_at(1u - (uint32_t)t), l2 = pair_at(2u - (uint32_t)t);
        const bool lane0 = t == 0;
        const bool fin = tv && t == P - 1;

#pragma unroll 1
        for (uint32_t s = 0; s <= steps; s++) {
            double uMa = __shfl_up_sync(0xffffffffu, aM, 1, P);
            double uIa = __shfl_up_sync(0xffffffffu, aI, 1, P);
            double uDa = __shfl_up_sync(0xffffffffu, aD, 1, P);
            double uMb = __shfl_up_sync(0xffffffffu, M[K - 1], 1, P);
            double uIb = __shfl_up_sync(0xffffffffu, I[K - 1], 1, P);
            double uDb = __shfl_up_sync(0xffffffffu, D[K - 1], 1, P);
            const uint2 rc = l0;
            l0 = l1; l1 = l2;
            l2 = pair_at(s + 3 - (uint32_t)t);
            const bool rare = __any_sync(0xffffffffu, (rc.x | rc.y) & (HK_PDC_SLOW | HK_PDC_FIRST | HK_PDC_STOP));
            const bool slow = rare && __any_sync(0xffffffffu, (rc.x | rc.y) & HK_PDC_SLOW);
            double uBMa = 0, uBIa = 0, uBDa = 0, uBMb = 0, uBIb = 0, uBDb = 0;
            if (slow) {                                /* before a first column resets them */
                uBMa = __shfl_up_sync(0xffffffffu, aBM, 1, P);
                uBIa = __shfl_up_sync(0xffffffffu, aBI, 1, P);
                uBDa = __shfl_up_sync(0xffffffffu, aBD, 1, P);
                uBMb = __shfl_up_sync(0xffffffffu, F::bval(sB, K - 1, 0), 1, P);
                uBIb = __shfl_up_sync(0xffffffffu, F::bval(sB, K - 1, 1), 1, P);
                uBDb = __shfl_up_sync(0xffffffffu, F::bval(sB, K - 1, 2), 1, P);
            }
            if (lane0) { uMa = 0; uIa = 0; uMb = 0; uIb = 0; }
            if (rare && (rc.x & (HK_PDC_FIRST | HK_PDC_STOP))) {
                if (fin && h >= 0) F::finish(c, it, h, sum);
                if (rc.x & HK_PDC_FIRST) {            /* column 0: M = I = D = 0, B = 0 */
                    h++;
                    cnh = cn[h];
                    pM = 0; pI = 0; pD = above_pad ? cnh : 0.0;
                    pBM = pBI = pBD = 0;
#pragma unroll
                    for (int r = 0; r < K; r++) {
                        M[r] = 0; I[r] = 0; D[r] = (co.padmask >> r) & 1 ? cnh : 0.0;
                        F::bval(sB, r, 0) = 0; F::bval(sB, r, 1) = 0; F::bval(sB, r, 2) = 0;
                    }
                    sum = 0;
                } else {
                    h = 64;                             /* past the end: nothing more to finish */
                }
            }
            if (lane0) { uDa = cnh; uDb = cnh; }       /* the row above is row 0 */
            const double padb = rc.y & HK_PDC_PAD ? 0.0 : 1.0;   /* a pad column adds nothing */
            if (slow) {
                if (lane0) uBMa = uBIa = uBDa = uBMb = uBIb = uBDb = 0;
                F::slow_column(co, rc.x, uMa, uIa, uBMa, uBIa, pM, pI, pD, pBM, pBI, pBD, M, I, D, sB, nullptr);
                sum += M[K - 1] + I[K - 1];
                aM = M[K - 1]; aI = I[K - 1]; aD = D[K - 1];
                aBM = F::bval(sB, K - 1, 0); aBI = F::bval(sB, K - 1, 1); aBD = F::bval(sB, K - 1, 2);
                F::slow_column(co, rc.y, uMb, uIb, uBMb, uBIb, uMa, uIa, uDa, uBMa, uBIa, uBDa, M, I, D, sB, nullptr);
                pBM = uBMb; pBI = uBIb; pBD = uBDb;
            } else {
                F::fast_column(co, rc.x, uMa, uIa, pM, pI, pD, M, I, D, nullptr);
                sum += M[K - 1] + I[K - 1];
                aM = M[K - 1]; aI = I[K - 1]; aD = D[K - 1];
                F::fast_column(co, rc.y, uMb, uIb, uMa, uIa, uDa, M, I, D, nullptr);
            }
            sum = fma(padb, M[K - 1] + I[K - 1], sum);
            pM = uMb; pI = uIb; pD = uDb;
        }
    }
};

#endif
