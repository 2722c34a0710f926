/* hk_fwd_pair.cuh - the forward kernels, several haplotype columns per step
 * (included by hk_launch.cuh): every float and double kernel, single- and
 * multi-tile.
 *
 * The recurrences (scaled for float, plain for double), groups, tiles,
 * emission table and multi-tile scratch of hk_fwd.cuh, but lane t works on
 * columns NC(s-t) .. NC(s-t)+NC-1 at step s (NC = 2, or 4 for the
 * constant-gap family). What each step costs besides its cells (the warp
 * vote, the code load, loop control) is then spread over NC*K cells per
 * lane instead of K, and the columns' dependency chains interleave: column
 * k's row r needs column k-1's rows r-1 and r only.
 *
 * The kernels read the haplotypes' padded copy (hbase2, hap_off2), in which
 * every haplotype's length is a multiple of HK_HAP_ALIGN (4): a step's NC
 * codes are one aligned load, and a haplotype starts or the item ends only
 * at a step's first column, so the reset stays out of the step. A haplotype
 * is padded with HK_HAP_PAD columns: their emission is a row of zeros (one
 * per block, after the groups' tables), so M and I' are 0 down the whole
 * column and it adds exactly nothing to the sums; the next haplotype's
 * first column resets the state.
 *
 * Two coefficient sets: hk_coef_rows, one set per row as hk_fwd has them
 * (reads whose gap qualities vary), and hk_coef_const for reads whose gap
 * qualities are constant on every row but the last (hk_read_gaps_t, the CGAP
 * family). For those the coefficients are scalars, not per-row registers:
 * a' b' c for the body, and the last register of lane P-1 (the read's last
 * row) has its own. Where every read of a launch has the chunk's set
 * (hk_chunk::cgap), the body's are the kernel parameter's
 * (hk_chunk_dev::cgap, HK_CG_CHUNK): the compiler keeps them in uniform
 * registers, and three of a cell's five FMAs read two vector registers
 * instead of three. Row 0's own b' would be gm/mm (the row above is the
 * initial row, D' = D = C/n); the body's is gm ed/mm, so row 0's emission
 * entries are divided by ed instead. Only dd stays per register: padding
 * rows keep D' constant with dd = 1. That leaves room for 14-24 rows per
 * lane. The double kernels (plain recurrence: hk_coef_rows's cell) and the
 * multi-tile ones use the per-row set.
 */
#ifndef HK_FWD_PAIR_CUH
#define HK_FWD_PAIR_CUH

#include <type_traits>
#include "hk_fwd.cuh"

/* Steps per loop iteration (a tuning knob). */
#ifndef HK_PAIR_UNROLL
#define HK_PAIR_UNROLL 1
#endif

/* Per-row coefficients, hk_fwd's c0..c4 (SCALED: c0 = mm is folded into the
 * table and left unused), and the cell of either recurrence. */
template <typename T, int P, int K, bool SCALED, bool MULTI>
struct hk_coef_rows {
    typedef hk_fwd<T, P, K, SCALED, MULTI> F;
    T c0[K], c1[K], c2[K], c3[K], c4[K];
    __device__ __forceinline__ void setup(const hk_chunk_dev &c, const hk_read_gaps_t &gq, uint32_t tile, int t,
                                          uint32_t ro, uint32_t m, uint32_t pad, T *tab, T &milast, uint32_t &padmask)
    {
        T mm[K];                                   /* SCALED: mm is folded into the table */
        F::setup_rows(c, gq, tile, t, ro, m, pad, tab, SCALED ? mm : c0, c1, c2, c3, c4, milast, padmask);
    }
    /* row r at one column: e its emission, (dM, dI, dD) the diagonal, (uM,
     * uI) the cell above, (oM, oD) the cell to the left */
    __device__ __forceinline__ void cell(int r, T e, T dM, T dI, T dD, T uM, T uI, T oM, T oD,
                                         T &nM, T &nI, T &nD) const
    {
        if (SCALED) {       /* e = emission * mm */
            nM = e * fma(c1[r], dI, fma(c2[r], dD, dM));
            nI = fma(c3[r], uI, uM);
            nD = fma(c4[r], oD, oM);
        } else {
            nM = e * fma(c0[r], dM, c1[r] * (dI + dD));
            nI = fma(c2[r], uM, c4[r] * uI);
            nD = fma(c3[r], oM, c4[r] * oD);
        }
    }
};

/* Constant gap qualities: the body's scalars (k*b), lane P-1's last register's
 * (k*x), dd per register (1 on padding rows). CG: the body's are the
 * chunk's (HK_CG_CHUNK, the kernel parameter hk_chunk_dev::cgap), or each
 * read's (HK_CG_READ), made by the same expression from the same values. */
template <int P, int K, int CG>
struct hk_coef_const {
    typedef float T;
    typedef hk_fwd<float, P, K, true, false> F;
    T d[K];
    T k1b, k2b, k3b, k1x, k2x, k3x;
    __device__ __forceinline__ T a1(int r) const { return r == K - 1 ? k1x : k1b; }
    __device__ __forceinline__ T a2(int r) const { return r == K - 1 ? k2x : k2b; }
    __device__ __forceinline__ T a3(int r) const { return r == K - 1 ? k3x : k3b; }
    __device__ __forceinline__ T dd(int r) const { return d[r]; }
    __device__ __forceinline__ void cell(int r, T e, T dM, T dI, T dD, T uM, T uI, T oM, T oD,
                                         T &nM, T &nI, T &nD) const
    {
        nM = e * fma(a1(r), dI, fma(a2(r), dD, dM));
        nI = fma(a3(r), uI, uM);
        nD = fma(dd(r), oD, oM);
    }
    /* The tile's emission table and the coefficients (single tile: tile is
     * 0); padmask gets the padding rows. */
    __device__ __forceinline__ void setup(const hk_chunk_dev &c, const hk_read_gaps_t &gq, uint32_t, int t,
                                         uint32_t ro, uint32_t m, uint32_t pad, T *tab, T &milast, uint32_t &padmask)
    {
        const double eib = hk_err_tab[gq.ins], edb = hk_err_tab[gq.del], egb = hk_err_tab[gq.gcp];
        const double eil = hk_err_tab[gq.ins_last], edl = hk_err_tab[gq.del_last];
        const double egl = hk_err_tab[gq.gcp_last];
        const double mmb = 1.0 - (eib + edb), mml = 1.0 - (eil + edl);
        const hk_cgap_coef kb = CG == HK_CG_CHUNK ? c.cgap : hk_cgap_body(eib, edb, egb);
        k1b = kb.k1; k2b = kb.k2; k3b = kb.k3;
        const bool lastrow = t == P - 1;          /* single tile: lane P-1's last register */
        k1x = lastrow ? (T)((1.0 - egl) * eib / mml) : k1b;
        k2x = lastrow ? (T)((1.0 - egl) * edb / mml) : k2b;
        k3x = lastrow ? (T)(egl * eib / eil) : k3b;
        milast = (T)eil;
#pragma unroll
        for (int r = 0; r < K; r++) {
            const int i = (int)(t * K + r) - (int)pad;
            T em[5];
            if (i >= 0) {
                const uint32_t o = ro + (uint32_t)i;
                const int b = c.rbase[o];
                const double e = hk_err_tab[c.rq[o]];
                const double mm = (uint32_t)i + 1 == m ? mml : mmb;
                const double em_scale = i == 0 ? mm / edb : mm;
                d[r] = (T)egb;
                const T match = (T)((1.0 - e) * em_scale), mism = (T)(e / 3.0 * em_scale);
#pragma unroll
                for (int k = 0; k < 4; k++) em[k] = (b == HK_BASE_N || b == k) ? match : mism;
                em[4] = match;
            } else {                          /* padding: D' stays C/n */
                d[r] = 1;
                padmask |= 1u << r;
#pragma unroll
                for (int k = 0; k < 5; k++) em[k] = 0;
            }
#pragma unroll
            for (int k = 0; k < 5; k++) tab[k * F::CODE + F::tab_off(t, r)] = em[k];
        }
    }
};

/* T float with SCALED (the scaled recurrence) or double without; CG: the
 * coefficients (HK_CG_NONE: per row; HK_CG_READ, HK_CG_CHUNK: constant gap
 * qualities, float, single tile); MULTI: reads longer than a tile, tile
 * after tile as in hk_fwd, lane P-1 writing every column of each
 * step to the scratch row that lane 0 of the next tile reads, one step
 * ahead. NC: columns per step, 2 or 4 (HK_HAP_ALIGN, the padded copy's
 * multiple: NC = 4 meets a haplotype's start or a pad column only where the
 * copy puts them, NC = 2 may meet pad columns in either column). */
template <typename T, int P, int K, bool SCALED, int CG, bool MULTI, int NC>
struct hk_fwd_pair {
    static constexpr bool CGAP = CG != HK_CG_NONE;
    typedef hk_fwd<T, P, K, SCALED, MULTI> F;      /* layout, tables and finish as there */
    typedef hk_cell3<T> cell3;
    typedef typename std::conditional<CGAP, hk_coef_const<P, K, CG>, hk_coef_rows<T, P, K, SCALED, MULTI> >::type coef_t;
    typedef typename std::conditional<NC == 4, uint32_t, uint16_t>::type word_t;   /* a step's codes */
    typedef typename F::vec_t vec_t;
    static constexpr int VEC = F::VEC;
    static constexpr int ROWS = F::ROWS;
    static constexpr int GROUPS = F::GROUPS;
    static constexpr int WARP_ITEMS = F::WARP_ITEMS;
    static constexpr int SMEM_GROUP = F::SMEM_GROUP;
    static constexpr size_t SMEM_BYTES = F::SMEM_BYTES + ROWS * sizeof(T);   /* + the pad column's zeros */
    static constexpr int UNROLL = HK_PAIR_UNROLL;
    static_assert(!CGAP || (SCALED && !MULTI && sizeof(T) == sizeof(float)),
                  "the constant-gap coefficients are the float family's, single tile");
    static_assert(NC == 2 || NC == HK_HAP_ALIGN, "columns per step: 2, or the padded copy's multiple");
    /* Column c of a step may be a pad column (NC = HK_HAP_ALIGN: never the first). */
    static __host__ __device__ constexpr bool may_pad(int col) { return col > 0 || NC < HK_HAP_ALIGN; }

    /* The lane's K rows at one column: e the emission table at the column's
     * code, (uM, uI) the row above at this column, (dM, dI, dD) the row above
     * at the column before; M, I, D hold the column before and get this one. */
    static __device__ __forceinline__ void column(const T *e, T uM, T uI, T dM, T dI, T dD,
                                                  T (&M)[K], T (&I)[K], T (&D)[K], const coef_t &co)
    {
#pragma unroll
        for (int q = 0; q < K / VEC; q++) {
            const vec_t v = *reinterpret_cast<const vec_t *>(e + q * VEC * P);
            const T *pv = reinterpret_cast<const T *>(&v);
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                const int r = q * VEC + j;
                const T oM = M[r], oI = I[r], oD = D[r];
                T nM, nI, nD;
                co.cell(r, pv[j], dM, dI, dD, uM, uI, oM, oD, nM, nI, nD);
                M[r] = nM; I[r] = nI; D[r] = nD;
                dM = oM; dI = oI; dD = oD; uM = nM; uI = nI;
            }
        }
    }

    /* n_items_dev (MULTI): the item count is on the device (mixed mode's
     * recompute list); scratch: MULTI's, two rows of scratch_cols cells per
     * group. */
    static __device__ void body(const hk_chunk_dev &c, const hk_item *items, uint32_t n_items,
                                const uint32_t *n_items_dev, cell3 *scratch, size_t scratch_cols)
    {
        extern __shared__ __align__(16) unsigned char hk_smem_raw[];
        const int lane = threadIdx.x & 31;
        const int t = lane & (P - 1);
        const int group = threadIdx.x / P;
        T *tab = reinterpret_cast<T *>(hk_smem_raw) + group * SMEM_GROUP;
        T *cn = tab + 5 * F::CODE;
        T *zeros = reinterpret_cast<T *>(hk_smem_raw) + GROUPS * SMEM_GROUP;
        for (int i = threadIdx.x; i < ROWS; i += HK_BLOCK_THREADS) zeros[i] = 0;
        __syncthreads();
        const uint32_t n = MULTI && n_items_dev ? *n_items_dev : n_items;   /* only the multi-tile kernel's */
        const uint32_t wpb = HK_BLOCK_THREADS / 32;
        const uint32_t warps_total = gridDim.x * wpb;
        cell3 *sc = nullptr;
        if (MULTI) sc = scratch + ((size_t)blockIdx.x * GROUPS + group) * 2 * scratch_cols;

        for (uint32_t w = blockIdx.x * wpb + threadIdx.x / 32; (uint64_t)w * WARP_ITEMS < n;
             w += warps_total) {
            const uint32_t idx = w * WARP_ITEMS + lane / P;
            const bool valid = idx < n;
            hk_item it = {0, 0, 0, 0};
            hk_read_gaps_t gq = {};
            uint32_t ro = 0, m = 0, ho = 0, total = 0;
            if (valid) {
                it = items[idx];
                gq = hk_load_gaps(c.gaps, it.read);
                ro = c.read_off[it.read];
                m = c.read_off[it.read + 1] - ro;
                ho = c.hap_off2[it.hap];
                total = (c.hap_off2[it.hap + it.n_haps] - ho) / NC;   /* steps of NC columns */
            }
            const uint32_t tiles = MULTI ? (m + ROWS - 1) / ROWS : 1;
            const uint32_t pad = valid ? tiles * ROWS - m : 0;
            /* lane P-1 meets the end marker (step total) at step total + P - 1 */
            const uint32_t steps = __reduce_max_sync(0xffffffffu, valid ? total + P - 1 : 0);
            const uint32_t tiles_w = MULTI ? __reduce_max_sync(0xffffffffu, valid ? tiles : 0) : 1;

            __syncwarp();                                  /* last item's table reads done */
            if (valid)
                for (uint32_t h = t; h < it.n_haps; h += P)
                    cn[h] = hk_real<T>::scale() / (T)(c.hap_off[it.hap + h + 1] - c.hap_off[it.hap + h]);

            for (uint32_t tile = 0; tile < tiles_w; tile++) {
                const bool tv = valid && tile < tiles;
                const bool last = tile + 1 == tiles;
                coef_t co;
                T milast = 1;
                uint32_t padmask = 0;
                if (MULTI) __syncwarp();                   /* the last tile's table and scratch reads done */
                if (tv) co.setup(c, gq, tile, t, ro, m, pad, tab, milast, padmask);
                __syncwarp();

                /* the row above lane t's first row is padding (or row 0) */
                const bool above_pad = t == 0 ? tile == 0 : tile * ROWS + (uint32_t)(t * K) - 1 < pad;
                const bool from_scratch = MULTI && t == 0 && tile > 0;
                const cell3 *sc_in = MULTI ? sc + (tile & 1) * scratch_cols : nullptr;
                cell3 *sc_out = MULTI ? sc + ((tile + 1) & 1) * scratch_cols : nullptr;
                T M[K], I[K], D[K];
#pragma unroll
                for (int r = 0; r < K; r++) M[r] = I[r] = D[r] = 0;
                T aM[NC - 1], aI[NC - 1], aD[NC - 1];      /* last row, the first NC-1 columns of the last step */
#pragma unroll
                for (int k = 0; k < NC - 1; k++) aM[k] = aI[k] = aD[k] = 0;
                T pM = 0, pI = 0, pD = 0;                  /* row above, the column before the step's first */
                T sumM = 0, sumI = 0, cnh = 0;
                int h = -1;
                /* Codes as in hk_fwd (bits 0-2 the base, bit 3 a haplotype's first
                 * column, bit 4 the step after the item's last, bit 5 the pad); a
                 * step's NC codes in one word, its first column in bits 0-7.
                 * Loaded 3 steps ahead. */
                const word_t *hp = reinterpret_cast<const word_t *>(c.hbase2 + ho);
                const uint32_t tot = MULTI && !tv ? 0 : total;   /* single tile: total is 0 where !tv */
                auto word_at = [&](uint32_t p) -> int {
                    return p < tot ? (int)__ldg(hp + p) : p == tot && tv ? 16 : 0;
                };
                int l0 = word_at(0u - (uint32_t)t), l1 = word_at(1u - (uint32_t)t), l2 = word_at(2u - (uint32_t)t);
                /* lane 0 of a later tile: the row above at every column of the
                 * next step (a step of a warp lasts longer than a load from L2;
                 * hk_fwd's two steps of look-ahead cost a copy of every value
                 * per step) */
                cell3 nx[NC];
#pragma unroll
                for (int k = 0; k < NC; k++) nx[k] = cell3{0, 0, 0, 0};
                if (from_scratch && tv)
#pragma unroll
                    for (int k = 0; k < NC; k++) nx[k] = sc_in[k];

                const bool lane0 = t == 0, lastlane = t == P - 1;
                const bool fin = tv && last && lastlane;
                const T *et0 = tab + t * VEC;
#pragma unroll UNROLL
                for (uint32_t s = 0; s <= steps; s++) {
                    /* the row above, each column of the step (lane 0: the
                     * initial row, selected, not branched around: a branch
                     * here made the multi-tile kernels 5-8 % slower) */
                    T uM[NC], uI[NC], uD[NC];
#pragma unroll
                    for (int k = 0; k < NC; k++) {
                        const T sM = __shfl_up_sync(0xffffffffu, k < NC - 1 ? aM[k] : M[K - 1], 1, P);
                        const T sI = __shfl_up_sync(0xffffffffu, k < NC - 1 ? aI[k] : I[K - 1], 1, P);
                        uD[k] = __shfl_up_sync(0xffffffffu, k < NC - 1 ? aD[k] : D[K - 1], 1, P);
                        uM[k] = lane0 ? (T)0 : sM;
                        uI[k] = lane0 ? (T)0 : sI;
                    }
                    const int rc = l0;
                    l0 = l1; l1 = l2;
                    l2 = word_at(s + 3 - (uint32_t)t);
                    if (MULTI && from_scratch) {
#pragma unroll
                        for (int k = 0; k < NC; k++) { uM[k] = nx[k].m; uI[k] = nx[k].i; uD[k] = nx[k].d; }
                        if (tv && s + 1 < total)
#pragma unroll
                            for (int k = 0; k < NC; k++) nx[k] = sc_in[NC * (s + 1) + k];
                    }
                    if (__any_sync(0xffffffffu, rc & 24) && (rc & 24))
                        F::boundary(rc, c, it, fin, above_pad, padmask, cn, milast, h, cnh, sumM, sumI, M, I, D,
                                    pM, pI, pD);
                    if (lane0 && !from_scratch)
#pragma unroll
                        for (int k = 0; k < NC; k++) uD[k] = cnh;
#pragma unroll
                    for (int k = 0; k < NC; k++) {
                        const int code = rc >> (8 * k);
                        const T *e = may_pad(k) && (code & HK_HAP_PAD_BIT) ? zeros + t * VEC
                                                                          : et0 + (code & 7) * F::CODE;
                        if (k == 0) column(e, uM[0], uI[0], pM, pI, pD, M, I, D, co);
                        else        column(e, uM[k], uI[k], uM[k - 1], uI[k - 1], uD[k - 1], M, I, D, co);
                        sumM += M[K - 1]; sumI += I[K - 1];
                        if (k < NC - 1) { aM[k] = M[K - 1]; aI[k] = I[K - 1]; aD[k] = D[K - 1]; }
                    }
                    if (MULTI && lastlane && !last) {
                        const uint32_t g = s - (uint32_t)t;
                        if (tv && g < total)
#pragma unroll
                            for (int k = 0; k < NC; k++) {
                                const cell3 v = k < NC - 1 ? cell3{aM[k], aI[k], aD[k], 0}
                                                           : cell3{M[K - 1], I[K - 1], D[K - 1], 0};
                                sc_out[NC * g + k] = v;
                            }
                    }
                    pM = uM[NC - 1]; pI = uI[NC - 1]; pD = uD[NC - 1];
                }
            }
        }
    }
};

#endif
