/* hk_pdhmm.cuh - the partially determined Pair-HMM (SPEC 1b) on the GPU, in
 * double with C = 2^1020, exactly the recurrence of src/hk_pdhmm.c (the
 * reference it is tested against). Included by hk_kernel_pdhmm.cu only.
 *
 * The wavefront of hk_fwd.cuh: a group of P lanes scores one item (a read
 * against consecutive haplotypes of its region), lane t holding read rows
 * [t*K, t*K+K) of the tile in registers and working on column s - t at step
 * s; shuffles carry the last row of lane t-1 to lane t. Reads are padded at
 * the top to whole tiles with copies of row 0 (M = I = 0, D = C/n: zero
 * coefficients, gap-continuation 1), which also keep the branch values at 0
 * or C/n, harmless under the max they meet.
 *
 * Cost per cell, the plain recurrence (a column whose code has no
 * HK_PDC_SLOW, nearly every column):
 *   M = p_mm * fma(gm/mm, I' + D', M')    DADD DFMA DMUL
 *   I = fma(ii, I^, mi * M^)              DMUL DFMA
 *   D = fma(dd, D<, md * M<)              DMUL DFMA
 * 7 FP64 instructions, the emission folded into p_mm = prior*mm (prior:
 * match or mismatch, picked by the bit of the read base's code in the
 * column's match mask: one LOP3 and two selects). I is written with its own
 * chain (ii * I^) as the FMA's multiplicand so that the dependency along the
 * column is one DFMA per row. gm/mm needs mm > 0: a read with a row whose
 * gap-open sum is 1 or more (mm = 0, qualities below Q4) goes to the SAFE
 * variant, M = fma(p_mm, M', p_gm * (I' + D')) with p_gm = prior*gm (four
 * selects), in the multi-tile kernel whatever its length. The first form,
 * with more instructions per step, ran slower (docs/PERFORMANCE.md).
 *
 * The branch values BM, BI, BD are only read at a DEL_END column (I from the
 * row above) and at the column after it (AFTER: the left and diagonal
 * operands), and only need to be right where they can reach such a read:
 * from a span's DEL_START column to its DEL_END. Those columns carry
 * HK_PDC_SLOW; a step where any lane of the warp has one runs the general
 * cell for the whole warp (selects on the column's state, the max of SPEC
 * 1b, the branch values in shared memory, three more shuffles); the others
 * never touch the branch values. Every read of a branch value is of a column
 * that was itself slow, so it was kept up to date. The slow steps were 18 %
 * of the mix's instructions (112 per row); slow_column_uniform brought the
 * row to about 41 (docs/PERFORMANCE.md).
 */
#ifndef HK_PDHMM_CUH
#define HK_PDHMM_CUH

#include <cstdint>
#include <cfloat>
#include "hk_cuda.h"
#include "hk_cuda_internal.h"
#include "hk_err_table.h"
#include "hk_pdhmm_internal.h"

/* Steps of the wavefront per loop iteration (a tuning knob): two let the
 * compiler alternate the registers of the rows instead of moving them. */
#ifndef HK_PD_STEP_UNROLL
#define HK_PD_STEP_UNROLL 2
#endif

/* SHC: the emission coefficients of each row, {p_mm, p_gm} for a match and
 * for a mismatch, live in shared memory (one 16-byte load per cell, its
 * address picked by the emission) instead of four or five registers per row
 * (pmm_m, pmm_x, r or pgm_m, pgm_x): M = fma(p_mm, M', p_gm * (I' + D')),
 * the SAFE form, for every read. Fewer registers, more blocks per SM. */
#ifndef HK_PD_SHC_DEFAULT
#define HK_PD_SHC_DEFAULT 1
#endif
/* The default: SHC on the single-tile kernels of up to 6 rows per lane
 * (then 168 registers or fewer without spills, 3 or 4 blocks per SM); 8
 * rows spill in 168 registers and keep their coefficients in registers (2
 * blocks), as does the multi-tile kernel: 6 rows ran faster with SHC, 8
 * rows slower (docs/PERFORMANCE.md). */
template <int K, bool MULTI> constexpr bool hk_pd_shc_default() { return HK_PD_SHC_DEFAULT && K <= 6 && !MULTI; }

/* CG: the form for reads whose gap qualities are the same on every row but
 * the last (hk_read_gaps_t.constant, HaplotypeCaller's usual reads), single
 * tile, match-to-match at least 1/2. As the float family's SCALED form
 * (hk_fwd.cuh), I and D are kept divided by their gap-open probability,
 * I' = I / mi and D' = D / md, which makes each one FMA:
 *   I'(i,j) = M(i-1,j) + ii_i (mi_{i-1} / mi_i) I'(i-1,j)
 *   D'(i,j) = M(i,j-1) + dd_i D'(i,j-1)
 *   M(i,j)  = p_mm (M + (gm_i mi_{i-1} / mm_i) I' + (gm_i md_{i-1} / mm_i) D')(i-1,j-1)
 * 5 FP64 instructions per cell instead of 7, and the gap coefficients are
 * per lane, not per row (the last row, always lane P-1's row K-1, has its
 * own). The branch values and the maxes of SPEC 1b compare values of one
 * row, or of one row above, so they hold in the scaled units unchanged. The
 * initial row's D' is C / (n md) with the body's md (the first row's
 * mi_{i-1}, md_{i-1}), padding rows keep it with dd = 1, and the sum of the
 * last row is M + mi_last I'. I' and D' reach C / mi: C = 2^HK_PD_CG_LOG2C
 * leaves room for Phred 93 on both and mm >= 1/2 (host: pd_read_form). */
#define HK_PD_CG_LOG2C 986
template <int P, int K, bool MULTI, bool SAFE, bool SHC = hk_pd_shc_default<K, MULTI>(), bool CG = false>
struct hk_pd_fwd {
    static_assert(!CG || (!MULTI && !SAFE), "the constant-gap form is single-tile, not SAFE");
    static constexpr int ROWS = P * K;
    static constexpr double LOG2_C = CG ? HK_PD_CG_LOG2C : HK_LOG2_SCALE_D;
    static constexpr int STEP_UNROLL = HK_PD_STEP_UNROLL;
    static constexpr int GROUPS = HK_BLOCK_THREADS / P;
    static constexpr int WARP_ITEMS = 32 / P;
    /* shared: C/n of each group's haplotypes, then the branch values of every
     * lane's rows, [row][BM, BI, BD][thread] (conflict-free: a warp reads 32
     * consecutive doubles) */
    static constexpr size_t SMEM_CN = (size_t)GROUPS * HK_MAX_ITEM_HAPS * sizeof(double);
    static constexpr size_t SMEM_B = (size_t)K * 3 * HK_BLOCK_THREADS * sizeof(double);
    /* SHC: [row][mismatch, match][thread] of double2 (a quarter-warp's 8
     * threads read 128 consecutive bytes modulo 2 KB: conflict-free) */
    static constexpr size_t SMEM_Q = SHC ? (size_t)K * 2 * HK_BLOCK_THREADS * (CG ? sizeof(double) : sizeof(double2)) : 0;
    static constexpr size_t SMEM_BYTES = SMEM_CN + SMEM_B + SMEM_Q;

    static_assert(P == 2 || P == 4 || P == 8 || P == 16 || P == 32, "group size must be 2, 4, 8, 16 or 32 lanes");
    static_assert(K >= 1 && K <= 32, "rows per lane must fit the 32-bit row masks");
    static_assert(sizeof(hk_pd_cell) <= 2 * 4 * sizeof(double), "scratch cells fit the engine's columns (two hk_cell3<double>)");

    /* The coefficients of a lane's rows: the emission folded into mm (and
     * gm, SAFE), for a match (p*_m) and a mismatch (p*_x); r = gm/mm. */
    struct rows_t {
        double pmm_m[K], pmm_x[K], r[K], pgm_m[K], pgm_x[K], mi[K], md[K], gc[K];
        double dd[K];                                 /* CG: gap continuation, 1 on padding */
        double a1b, a2b, a3b, a1x, a2x, a3x, milast;  /* CG: the body's, the last row's */
        uint32_t rbit[K];     /* 1 << the read base's code (0 on padding rows) */
        uint32_t padmask;     /* padding rows */
        uint32_t row1mask;    /* the read's first row (state of row 1) */
    };

    static __device__ __forceinline__ double2 &qval(unsigned char *sQ, int r, int em)
    { return reinterpret_cast<double2 *>(sQ)[(r * 2 + em) * HK_BLOCK_THREADS]; }
    /* CG's SHC table: p_mm alone, [row][mismatch, match][thread] of double */
    static __device__ __forceinline__ double &pval(unsigned char *sQ, int r, int em)
    { return reinterpret_cast<double *>(sQ)[(r * 2 + em) * HK_BLOCK_THREADS]; }

    /* The cell of row r, given the emission (em), the row above at the
     * column before (xM, xI, xD), the row above at this column (aM, aI) and
     * this row at the column before (lM, lD). */
    static __device__ __forceinline__ void cell(const rows_t &co, int r, bool em, double xM, double xI, double xD,
                                                double aM, double aI, double lM, double lD, unsigned char *sQ,
                                                double &nM, double &nI, double &nD)
    {
        if (CG) {
            const bool lr = r == K - 1;               /* lane P-1: the read's last row */
            const double p = SHC ? pval(sQ, r, em) : em ? co.pmm_m[r] : co.pmm_x[r];
            nM = p * fma(lr ? co.a1x : co.a1b, xI, fma(lr ? co.a2x : co.a2b, xD, xM));
            nI = fma(lr ? co.a3x : co.a3b, aI, aM);
            nD = fma(co.dd[r], lD, lM);
            return;
        }
        if (SHC) {
            const double2 q = qval(sQ, r, em);
            nM = fma(q.x, xM, q.y * (xI + xD));
        } else if (SAFE) nM = fma(em ? co.pmm_m[r] : co.pmm_x[r], xM, (em ? co.pgm_m[r] : co.pgm_x[r]) * (xI + xD));
        else nM = (em ? co.pmm_m[r] : co.pmm_x[r]) * fma(co.r[r], xI + xD, xM);
        nI = fma(co.gc[r], aI, co.mi[r] * aM);
        nD = fma(co.gc[r], lD, co.md[r] * lM);
    }

    static __device__ __forceinline__ double &bval(double *sB, int r, int x)
    { return sB[(r * 3 + x) * HK_BLOCK_THREADS]; }

    static __device__ void body(const hk_pd_dev &c, const hk_item *items, uint32_t n_items,
                                unsigned char *scratch, size_t scratch_stride)
    {
        extern __shared__ __align__(16) unsigned char hk_smem_raw[];
        const int lane = threadIdx.x & 31;
        const int t = lane & (P - 1);
        const int group = threadIdx.x / P;
        double *cn = reinterpret_cast<double *>(hk_smem_raw) + group * HK_MAX_ITEM_HAPS;
        double *sB = reinterpret_cast<double *>(hk_smem_raw + SMEM_CN) + threadIdx.x;
        /* the thread's column of the SHC table (CG's entries are doubles, see pval) */
        unsigned char *sQ = hk_smem_raw + SMEM_CN + SMEM_B + threadIdx.x * (CG ? sizeof(double) : sizeof(double2));
        const uint32_t wpb = HK_BLOCK_THREADS / 32;
        const uint32_t warps_total = gridDim.x * wpb;
        hk_pd_cell *sc = nullptr;
        if (MULTI)    /* the group's row: scratch_stride bytes (the engine's columns are larger) */
            sc = reinterpret_cast<hk_pd_cell *>(scratch + ((size_t)blockIdx.x * GROUPS + group) * scratch_stride);

        for (uint32_t w = blockIdx.x * wpb + threadIdx.x / 32; (uint64_t)w * WARP_ITEMS < n_items;
             w += warps_total) {
            const uint32_t idx = w * WARP_ITEMS + lane / P;
            const bool valid = idx < n_items;
            hk_item it = {0, 0, 0, 0};
            uint32_t ro = 0, m = 0, ho = 0, total = 0;
            if (valid) {
                it = items[idx];
                ro = c.read_off[it.read];
                m = c.read_off[it.read + 1] - ro;
                ho = c.hap_off[it.hap];
                total = c.hap_off[it.hap + it.n_haps] - ho;
            }
            const uint32_t tiles = MULTI ? (m + ROWS - 1) / ROWS : 1;
            const uint32_t pad = valid ? tiles * ROWS - m : 0;
            const uint32_t steps = __reduce_max_sync(0xffffffffu, valid ? total + P - 1 : 0);
            const uint32_t tiles_w = MULTI ? __reduce_max_sync(0xffffffffu, valid ? tiles : 0) : 1;

            __syncwarp();                                  /* the last item's C/n reads done */
            if (valid) {
                /* the initial row's D: C/n, or CG's D' = C / (n md) */
                const double cscale = CG ? ldexp(1.0, HK_PD_CG_LOG2C) / hk_err_tab[c.rd[ro]] : HK_SCALE_D;
                for (uint32_t h = t; h < it.n_haps; h += P)
                    cn[h] = cscale / (double)(c.hap_off[it.hap + h + 1] - c.hap_off[it.hap + h]);
            }
            __syncwarp();

            for (uint32_t tile = 0; tile < tiles_w; tile++) {
                const bool tv = valid && tile < tiles;
                const bool last = tile + 1 == tiles;
                rows_t co;
                if (CG) setup_rows_cg(c, t, ro, m, pad, tv, co, sQ);
                else setup_rows(c, tile, t, ro, pad, tv, co, sQ);
                const bool above_pad = t == 0 ? tile == 0 : tile * ROWS + t * K - 1 < pad;
                const bool from_scratch = MULTI && t == 0 && tile > 0;
                sweep(c, it, co, tv, last, above_pad, from_scratch, total, ho, steps, t, cn, sB, sQ, sc);
                __syncwarp();                              /* scratch written before the next tile reads it */
            }
        }
    }

    static __device__ __forceinline__ void setup_rows(const hk_pd_dev &c, uint32_t tile, int t, uint32_t ro,
                                                      uint32_t pad, bool tv, rows_t &co, unsigned char *sQ)
    {
        co.padmask = 0;
        co.row1mask = 0;
#pragma unroll
        for (int r = 0; r < K; r++) {
            const int i = (int)(tile * ROWS + t * K + r) - (int)pad;
            if (tv && i >= 0) {
                const uint32_t o = ro + (uint32_t)i;
                const double e = hk_err_tab[c.rq[o]], ei = hk_err_tab[c.ri[o]];
                const double ed = hk_err_tab[c.rd[o]], eg = hk_err_tab[c.rg[o]];
                /* as hk_pdhmm.c: match-to-match clamped at 0 */
                const double mm = 1.0 - (ei + ed < 1.0 ? ei + ed : 1.0), gm = 1.0 - eg;
                const double match = 1.0 - e, mism = e / 3.0;
                co.pmm_m[r] = match * mm; co.pgm_m[r] = match * gm;
                co.pmm_x[r] = mism * mm;  co.pgm_x[r] = mism * gm;
                co.r[r] = mm > 0 ? gm / mm : 0.0;    /* mm = 0: the SAFE kernel's reads only */
                co.mi[r] = ei; co.md[r] = ed; co.gc[r] = eg;
                co.rbit[r] = 1u << c.rbase[o];
                if (SHC) {
                    qval(sQ, r, 1) = make_double2(co.pmm_m[r], co.pgm_m[r]);
                    qval(sQ, r, 0) = make_double2(co.pmm_x[r], co.pgm_x[r]);
                }
                if (i == 0) co.row1mask |= 1u << r;
            } else {                      /* padding: a copy of row 0 */
                co.pmm_m[r] = co.pgm_m[r] = co.pmm_x[r] = co.pgm_x[r] = co.r[r] = 0;
                co.mi[r] = co.md[r] = 0; co.gc[r] = 1;
                co.rbit[r] = 0;
                co.padmask |= 1u << r;
                if (SHC) qval(sQ, r, 1) = qval(sQ, r, 0) = make_double2(0.0, 0.0);
            }
        }
    }

    /* CG's coefficients (single tile): the body's gap probabilities from the
     * read's first row, the last row's from its last. */
    static __device__ __forceinline__ void setup_rows_cg(const hk_pd_dev &c, int t, uint32_t ro, uint32_t m,
                                                         uint32_t pad, bool tv, rows_t &co, unsigned char *sQ)
    {
        co.padmask = 0;
        co.row1mask = 0;
        const uint32_t ol = tv ? ro + m - 1 : ro;
        const double eib = hk_err_tab[c.ri[ro]], edb = hk_err_tab[c.rd[ro]], egb = hk_err_tab[c.rg[ro]];
        const double eil = hk_err_tab[c.ri[ol]], edl = hk_err_tab[c.rd[ol]], egl = hk_err_tab[c.rg[ol]];
        const double mmb = 1.0 - (eib + edb), mml = 1.0 - (eil + edl);
        co.a1b = (1.0 - egb) * eib / mmb; co.a2b = (1.0 - egb) * edb / mmb; co.a3b = egb;
        const bool lastlane = t == P - 1;
        co.a1x = lastlane ? (1.0 - egl) * eib / mml : co.a1b;
        co.a2x = lastlane ? (1.0 - egl) * edb / mml : co.a2b;
        co.a3x = lastlane ? egl * eib / eil : co.a3b;
        co.milast = eil;
#pragma unroll
        for (int r = 0; r < K; r++) {
            const int i = (int)(t * K + r) - (int)pad;
            if (tv && i >= 0) {
                const uint32_t o = ro + (uint32_t)i;
                const bool lr = (uint32_t)i + 1 == m;
                const double e = hk_err_tab[c.rq[o]], mm = lr ? mml : mmb;
                co.pmm_m[r] = (1.0 - e) * mm;
                co.pmm_x[r] = e / 3.0 * mm;
                co.dd[r] = lr ? egl : egb;
                co.rbit[r] = 1u << c.rbase[o];
                if (i == 0) co.row1mask |= 1u << r;
            } else {                      /* padding: M = I = 0, D' kept */
                co.pmm_m[r] = co.pmm_x[r] = 0;
                co.dd[r] = 1;
                co.rbit[r] = 0;
                co.padmask |= 1u << r;
            }
            if (SHC) { pval(sQ, r, 1) = co.pmm_m[r]; pval(sQ, r, 0) = co.pmm_x[r]; }
        }
    }

    /* One tile of the read against the item's haplotypes. */
    static __device__ __forceinline__ void sweep(const hk_pd_dev &c, const hk_item &it, const rows_t &co,
                                                 bool tv, bool last, bool above_pad, bool from_scratch,
                                                 uint32_t total, uint32_t ho, uint32_t steps, int t,
                                                 const double *cn, double *sB, unsigned char *sQ, hk_pd_cell *sc)
    {
        double M[K], I[K], D[K];
#pragma unroll
        for (int r = 0; r < K; r++) M[r] = I[r] = D[r] = 0;
        double pM = 0, pI = 0, pD = 0;                 /* row above, the column before */
        double pBM = 0, pBI = 0, pBD = 0;              /* its branch values (slow steps only) */
        double sum = 0, cnh = 0;
        int h = -1;
        const uint32_t *hp = c.hcode + ho;
        const uint32_t tot = tv ? total : 0;
        auto code_at = [&](uint32_t g) -> uint32_t {
            return g < tot ? __ldg(hp + g) : g == tot && tv ? HK_PDC_STOP : 0u;
        };
        uint32_t l0 = code_at(0u - (uint32_t)t), l1 = code_at(1u - (uint32_t)t), l2 = code_at(2u - (uint32_t)t);
        hk_pd_cell u0 = {0, 0, 0, 0, 0, 0}, u1 = u0;
        if (MULTI && from_scratch && tv) { u0 = sc[0]; if (total > 1) u1 = sc[1]; }
        const bool lane0 = t == 0, lastlane = t == P - 1;
        const bool fin = tv && last && lastlane;

#pragma unroll STEP_UNROLL
        for (uint32_t s = 0; s < steps + 1; s++) {
            double rM = __shfl_up_sync(0xffffffffu, M[K - 1], 1, P);
            double rI = __shfl_up_sync(0xffffffffu, I[K - 1], 1, P);
            double rD = __shfl_up_sync(0xffffffffu, D[K - 1], 1, P);
            const uint32_t rc = l0;
            l0 = l1; l1 = l2;
            l2 = code_at(s + 3 - (uint32_t)t);
            const uint32_t g = s - (uint32_t)t;        /* this lane's column */
            hk_pd_cell up = u0;                         /* lane 0 of a later tile: the row above */
            /* a step where a lane's column needs the branch values: the row
             * above's at this column, shuffled (as M, I, D) before a first
             * column resets the lane's own */
            const bool rare = __any_sync(0xffffffffu, rc & (HK_PDC_SLOW | HK_PDC_FIRST | HK_PDC_STOP));
            const bool slow = rare && __any_sync(0xffffffffu, rc & HK_PDC_SLOW);
            double uBM = 0, uBI = 0, uBD = 0;
            if (slow) {
                uBM = __shfl_up_sync(0xffffffffu, bval(sB, K - 1, 0), 1, P);
                uBI = __shfl_up_sync(0xffffffffu, bval(sB, K - 1, 1), 1, P);
                uBD = __shfl_up_sync(0xffffffffu, bval(sB, K - 1, 2), 1, P);
            }
            if (lane0) { rM = 0; rI = 0; }
            if (MULTI && from_scratch) {
                rM = up.m; rI = up.i; rD = up.d;
                u0 = u1;
                if (tv && s + 2 < total) u1 = sc[s + 2];
            }
            if (rare && (rc & (HK_PDC_FIRST | HK_PDC_STOP))) {
                if (fin && h >= 0) finish(c, it, h, sum);
                if (rc & HK_PDC_FIRST) {              /* column 0: M = I = D = 0, B = 0 */
                    h++;
                    cnh = cn[h];
                    pM = 0; pI = 0; pD = above_pad ? cnh : 0.0;
                    pBM = pBI = pBD = 0;
#pragma unroll
                    for (int r = 0; r < K; r++) {
                        M[r] = 0; I[r] = 0; D[r] = (co.padmask >> r) & 1 ? cnh : 0.0;
                        bval(sB, r, 0) = 0; bval(sB, r, 1) = 0; bval(sB, r, 2) = 0;
                    }
                    sum = 0;
                } else {
                    h = 64;                             /* past the end: nothing more to finish */
                }
            }
            if (lane0 && !from_scratch) rD = cnh;
            if (slow) {
                if (lane0) {
                    if (from_scratch) { uBM = up.bm; uBI = up.bi; uBD = up.bd; }
                    else { uBM = 0; uBI = 0; uBD = 0; }
                }
                slow_column(co, rc, rM, rI, uBM, uBI, pM, pI, pD, pBM, pBI, pBD, M, I, D, sB, sQ);
                pBM = uBM; pBI = uBI; pBD = uBD;
            } else {
                fast_column(co, rc, rM, rI, pM, pI, pD, M, I, D, sQ);
            }
            sum = CG ? fma(co.milast, I[K - 1], sum + M[K - 1]) : sum + (M[K - 1] + I[K - 1]);
            if (MULTI && lastlane && !last && tv && g < total) {
                /* the branch values every step, not only at slow ones (where they
                 * are up to date and the only ones read): the next tile's lane 0
                 * loads whole cells, and no cell may be left unwritten */
                sc[g].m = M[K - 1]; sc[g].i = I[K - 1]; sc[g].d = D[K - 1];
                sc[g].bm = bval(sB, K - 1, 0); sc[g].bi = bval(sB, K - 1, 1); sc[g].bd = bval(sB, K - 1, 2);
            }
            pM = rM; pI = rI; pD = rD;
        }
    }

    /* The plain recurrence down the lane's K rows at one column: (uM, uI)
     * the row above at this column, (dM, dI, dD) at the column before. */
    static __device__ __forceinline__ void fast_column(const rows_t &co, uint32_t rc, double uM, double uI,
                                                       double dM, double dI, double dD,
                                                       double (&M)[K], double (&I)[K], double (&D)[K],
                                                       unsigned char *sQ)
    {
#pragma unroll
        for (int r = 0; r < K; r++) {
            const bool em = (rc & co.rbit[r]) != 0;
            const double oM = M[r], oI = I[r], oD = D[r];
            double nM, nI, nD;
            cell(co, r, em, dM, dI, dD, uM, uI, oM, oD, sQ, nM, nI, nD);
            M[r] = nM; I[r] = nI; D[r] = nD;
            dM = oM; dI = oI; dD = oD; uM = nM; uI = nI;
        }
    }

    /* b where the column takes the max and b is larger, else a: max2 of
     * src/hk_pdhmm.c (no NaN reaches here), one compare and two selects. */
    static __device__ __forceinline__ double max_if(bool take, double b, double a) { return take && b > a ? b : a; }

    /* Row r of a slow column from its operands: the cell, and the branch
     * values (kept inside a span, else this column's left operands and I);
     * (uM, uI, uBM, uBI) become the row's, the next row's "above". */
    static __device__ __forceinline__ void slow_cell(const rows_t &co, int r, bool em, bool isI, double xM, double xI,
                                                     double xD, double aM, double aI, double lM, double lD, double oI,
                                                     double bm, double bi, double bd,
                                                     double (&M)[K], double (&I)[K], double (&D)[K], double *sB,
                                                     unsigned char *sQ, double &uM, double &uI, double &uBM, double &uBI)
    {
        double nM, nI, nD;
        cell(co, r, em, xM, xI, xD, aM, aI, lM, lD, sQ, nM, nI, nD);
        const double nBM = isI ? bm : lM, nBI = isI ? bi : oI, nBD = isI ? bd : lD;
        bval(sB, r, 0) = nBM; bval(sB, r, 1) = nBI; bval(sB, r, 2) = nBD;
        M[r] = nM; I[r] = nI; D[r] = nD;
        uM = nM; uI = nI; uBM = nBM; uBI = nBI;
    }

    /* The general cell of SPEC 1b down the lane's K rows: the state of the
     * column (row 1's or the later rows'), the max of "span present" and
     * "span skipped" after a span, the branch values (sB: this lane's, at
     * the column before on entry, at this column on return). uBM, uBI: the
     * row above's branch values at this column, dB*: at the column before. */
    static __device__ __forceinline__ void slow_column(const rows_t &co, uint32_t rc, double uM, double uI,
                                                       double uBM, double uBI,
                                                       double dM, double dI, double dD,
                                                       double dBM, double dBI, double dBD,
                                                       double (&M)[K], double (&I)[K], double (&D)[K], double *sB,
                                                       unsigned char *sQ)
    {
        const uint32_t s2 = (rc >> HK_PDC_S2_SHIFT) & 3, s1 = (rc >> HK_PDC_S1_SHIFT) & 3;
        const bool dend = rc & HK_PDC_DEL_END;
        if (co.row1mask == 0 || s1 == s2) {
            slow_column_uniform(co, rc, s2, dend, uM, uI, uBM, uBI, dM, dI, dD, dBM, dBI, dBD, M, I, D, sB, sQ);
            return;
        }
#pragma unroll
        for (int r = 0; r < K; r++) {
            const uint32_t st = (co.row1mask >> r) & 1 ? s1 : s2;
            const bool isA = st == HK_PDS_AFTER, isI = st == HK_PDS_INSIDE;
            const bool em = (rc & co.rbit[r]) != 0;
            const double oM = M[r], oI = I[r], oD = D[r];
            const double bm = bval(sB, r, 0), bi = bval(sB, r, 1), bd = bval(sB, r, 2);
            const double lM = max_if(isA, bm, oM), lD = max_if(isA, bd, oD);
            const double xM = max_if(isA, dBM, dM), xI = max_if(isA, dBI, dI), xD = max_if(isA, dBD, dD);
            const double aM = max_if(dend, uBM, uM), aI = max_if(dend, uBI, uI);
            slow_cell(co, r, em, isI, xM, xI, xD, aM, aI, lM, lD, oI, bm, bi, bd, M, I, D, sB, sQ, uM, uI, uBM, uBI);
            dM = oM; dI = oI; dD = oD; dBM = bm; dBI = bi; dBD = bd;
        }
    }

    /* slow_column where all the lane's rows have one state st (nearly
     * always: row 1's state differs from the later rows' only at the first
     * columns of a haplotype whose rows end inside a span). Row r's diagonal
     * operands after a span, max(B, X) of row r-1 at the column before, are
     * then row r-1's own left operands: three maxes per row instead of five. */
    static __device__ __forceinline__ void slow_column_uniform(const rows_t &co, uint32_t rc, uint32_t st, bool dend,
                                                               double uM, double uI, double uBM, double uBI,
                                                               double dM, double dI, double dD,
                                                               double dBM, double dBI, double dBD,
                                                               double (&M)[K], double (&I)[K], double (&D)[K],
                                                               double *sB, unsigned char *sQ)
    {
        const bool isA = st == HK_PDS_AFTER, isI = st == HK_PDS_INSIDE;
        double xM = max_if(isA, dBM, dM), xI = max_if(isA, dBI, dI), xD = max_if(isA, dBD, dD);
#pragma unroll
        for (int r = 0; r < K; r++) {
            const bool em = (rc & co.rbit[r]) != 0;
            const double oM = M[r], oI = I[r], oD = D[r];
            const double bm = bval(sB, r, 0), bi = bval(sB, r, 1), bd = bval(sB, r, 2);
            const double lM = max_if(isA, bm, oM), lI = max_if(isA, bi, oI), lD = max_if(isA, bd, oD);
            const double aM = max_if(dend, uBM, uM), aI = max_if(dend, uBI, uI);
            slow_cell(co, r, em, isI, xM, xI, xD, aM, aI, lM, lD, oI, bm, bi, bd, M, I, D, sB, sQ, uM, uI, uBM, uBI);
            xM = lM; xI = lI; xD = lD;
        }
    }

    /* The result of haplotype h of the item: a sum that is not a normal
     * double gives -inf, which the host scores as the CPU does
     * (src/hk_engine.c). A subnormal sum keeps only the digits above 2^-1074,
     * and which of them survive depends on the order of every rounding on
     * the way: the GPU's order (FMA, CG's scaled units) is not the CPU's, so
     * a pair near -629 was 0.038 off in log10. */
    static __device__ __forceinline__ void finish(const hk_pd_dev &c, const hk_item &it, int h, double s)
    {
        c.lk[it.out + (uint32_t)h] = s >= DBL_MIN && s <= DBL_MAX ? log10(s) - LOG2_C * HK_LOG10_2 : -INFINITY;
    }
};

#endif
