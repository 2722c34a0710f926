/* hk_kernel_small.cu - the small-call kernel: a warp per pair, in the
 * precision policy of the CPU (see hk_cuda_small.h). */
#include <cfloat>
#include "hk_cuda_internal.h"
#include "hk_err_table.h"

#define SMALL_WARPS 4                 /* warps (pairs) per block */
#define FULL_MASK 0xffffffffu
/* Columns a step for K rows a lane, and where the last row's sum is taken
 * (SUM_IN_ROW: as each cell is made; else once a step, from the row's
 * cells): the fastest of C = 2, 3, 4 and 8 and of both sums for each K on
 * an H200 (docs/PERFORMANCE.md, "The GPU's small-call path"). */
#define SMALL_C(K) ((K) <= 4 ? 4 : (K) <= 6 ? 3 : 2)
#define SMALL_SUM_IN_ROW(K) ((K) <= 2)

/* The arithmetic of the CPU's passes, one rounding per operation and no
 * fused multiply-add: IEEE double; float with results below FLT_MIN flushed
 * to zero, as the CPU's float passes run (x86 MXCSR.FZ, src/hk_cpu.h). No
 * input is ever subnormal there (every cell is such a result, and the
 * coefficients are normal), so PTX's ftz, which also flushes inputs, gives
 * the same bits. */
template <typename T> struct small_arith;
template <> struct small_arith<double> {
    static constexpr double scale = HK_SCALE_D;
    static __device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
    static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
    static __device__ __forceinline__ double div(double a, double b) { return __ddiv_rn(a, b); }
};
template <> struct small_arith<float> {
    static constexpr float scale = HK_SCALE_F;
    static __device__ __forceinline__ float mul(float a, float b)
    {
        float r;
        asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
    }
    static __device__ __forceinline__ float add(float a, float b)
    {
        float r;
        asm("add.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
    }
    static __device__ __forceinline__ float div(float a, float b)
    {
        float r;
        asm("div.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
    }
};

/* A cell's three states. */
template <typename T> struct small_cell {
    T M, I, D;
};

/* hk_cpu.h's HK_CELL, operation for operation: from the diagonal, the cell
 * above and the cell to the left. */
template <typename T>
__device__ __forceinline__ small_cell<T> small_step(T emit, T mm, T gm, T mi, T ii, T md, T dd, small_cell<T> dg,
                                                    small_cell<T> up, small_cell<T> left)
{
    typedef small_arith<T> A;
    small_cell<T> c;
    c.M = A::mul(emit, A::add(A::mul(mm, dg.M), A::mul(gm, A::add(dg.I, dg.D))));
    c.I = A::add(A::mul(mi, up.M), A::mul(ii, up.I));
    c.D = A::add(A::mul(md, left.M), A::mul(dd, left.D));
    return c;
}

template <typename T> __device__ __forceinline__ small_cell<T> shfl_up(small_cell<T> c)
{
    return { __shfl_up_sync(FULL_MASK, c.M, 1), __shfl_up_sync(FULL_MASK, c.I, 1), __shfl_up_sync(FULL_MASK, c.D, 1) };
}

/* One pair's sum of its last row, on every lane of the warp. Lane t holds
 * rows t*K .. t*K+K-1 and, at step s, the C columns from j0 = C(s - t) + 1:
 * the cells above its first row are lane t-1's last row at those columns,
 * computed the step before and shuffled down; the diagonal of the first is
 * what came down for column j0 - 1 the step before. Several columns a step
 * give the core C chains of dependent cells to overlap (column j0 + i's row
 * k needs column j0 + i - 1's rows k - 1 and k only): a warp alone on its
 * scheduler has nothing else to issue. Row -1 (M 0, I 0, D C/n) comes to
 * lane 0 at every step; column 0 is 0 in every row from 0 on, each lane's
 * state before it starts. Rows past the read have coefficients 0: they
 * hold 0s, and no row of the read reads them; columns past the haplotype
 * (its last step's) are computed but never read by a column of it. */
template <typename T, int K, int C, bool SUM_IN_ROW>
__device__ __forceinline__ T small_pair(const hk_small_row_t *rows, const uint8_t *rbase, const uint8_t *hmask,
                                        uint32_t rlen, uint32_t hlen, int lane)
{
    typedef small_arith<T> A;
    typedef small_cell<T> cell;
    T mm[K], gm[K], mi[K], ii[K], md[K], dd[K], match[K], mism[K];
    cell st[K];                                             /* each row's cell at the last column done */
    unsigned rm[K];                                         /* the haplotype masks each row matches */
#pragma unroll
    for (int k = 0; k < K; k++) {
        const uint32_t r = (uint32_t)lane * K + k;
        if (r < rlen) {
            /* hk_cpu_row_coeffs's doubles, rounded once to T as HK_ROW_COEFFS does */
            const hk_small_row_t w = rows[r];
            const double e = hk_err_tab[w.q], ei = hk_err_tab[w.ins], ed = hk_err_tab[w.del], eg = hk_err_tab[w.gcp];
            mm[k] = (T)__dsub_rn(1.0, __dadd_rn(ei, ed)); gm[k] = (T)__dsub_rn(1.0, eg);
            mi[k] = (T)ei; ii[k] = (T)eg; md[k] = (T)ed; dd[k] = (T)eg;
            match[k] = (T)__dsub_rn(1.0, e); mism[k] = (T)__ddiv_rn(e, 3.0);
            const unsigned code = rbase[r];
            rm[k] = code == HK_BASE_N ? 0x1fu : (1u << code) | (1u << HK_BASE_N);
        } else {
            mm[k] = gm[k] = mi[k] = ii[k] = md[k] = dd[k] = match[k] = mism[k] = 0;
            rm[k] = 0;
        }
        st[k] = { 0, 0, 0 };
    }
    const T init = A::div(A::scale, (T)hlen);
    const cell top = { 0, 0, init };                        /* row -1 */
    const int lanes = (int)((rlen + K - 1) / K);
    const int last_lane = (int)((rlen - 1) / K), last_k = (int)((rlen - 1) % K);
    cell dg = lane == 0 ? top : cell{ 0, 0, 0 };           /* the first row's diagonal of column j0 */
    cell b[C];                                              /* the last row's cells, handed down */
#pragma unroll
    for (int i = 0; i < C; i++) b[i] = { 0, 0, 0 };
    T sum = 0;
    const int steps = (int)(hlen + C - 1) / C + lanes - 1;
    for (int s = 0; s < steps; s++) {
        cell a[C], d[C];                                    /* above and diagonal of row k */
#pragma unroll
        for (int i = 0; i < C; i++) {
            a[i] = shfl_up(b[i]);
            if (lane == 0) a[i] = top;
        }
        const int j0 = C * (s - lane) + 1;
        if (lane < lanes && j0 >= 1 && j0 <= (int)hlen) {
            unsigned h[C];                                  /* past the haplotype: N's mask */
#pragma unroll
            for (int i = 0; i < C; i++) h[i] = j0 + i <= (int)hlen ? hmask[j0 - 1 + i] : 1u << HK_BASE_N;
            d[0] = dg;
#pragma unroll
            for (int i = 1; i < C; i++) d[i] = a[i - 1];
            const cell up_last = a[C - 1];
            T last[C];                                      /* the read's last row: M + I at each column */
#pragma unroll
            for (int k = 0; k < K; k++) {
                cell left = st[k];
#pragma unroll
                for (int i = 0; i < C; i++) {
                    const T e = h[i] & rm[k] ? match[k] : mism[k];
                    const cell c = small_step(e, mm[k], gm[k], mi[k], ii[k], md[k], dd[k], d[i], a[i], left);
                    if (SUM_IN_ROW && k == last_k && lane == last_lane && j0 + i <= (int)hlen)
                        sum = A::add(sum, A::add(c.M, c.I));
                    d[i] = left;                            /* row k+1's diagonal: row k, one column left */
                    a[i] = c;
                    left = c;
                }
                st[k] = left;
                if (!SUM_IN_ROW && k == last_k) {           /* the same k on every lane */
#pragma unroll
                    for (int i = 0; i < C; i++) last[i] = A::add(a[i].M, a[i].I);
                }
            }
            if (!SUM_IN_ROW && lane == last_lane) {         /* in column order, as the CPU sums */
#pragma unroll
                for (int i = 0; i < C; i++)
                    if (j0 + i <= (int)hlen) sum = A::add(sum, last[i]);
            }
            dg = up_last;
#pragma unroll
            for (int i = 0; i < C; i++) b[i] = a[i];
        }
    }
    return __shfl_sync(FULL_MASK, sum, last_lane);
}

/* One pair's scaled sum in T, the kernel's K chosen by the read's length
 * (warp-uniform). */
template <typename T>
__device__ __forceinline__ T small_sum(const hk_small_row_t *rows, const uint8_t *rbase, const uint8_t *hap,
                                       uint32_t rlen, uint32_t hlen, int lane)
{
    static_assert(HK_SMALL_MAX_K == 8, "one case per K");
    switch ((rlen + 31) / 32) {
    case 1: return small_pair<T, 1, SMALL_C(1), SMALL_SUM_IN_ROW(1)>(rows, rbase, hap, rlen, hlen, lane);
    case 2: return small_pair<T, 2, SMALL_C(2), SMALL_SUM_IN_ROW(2)>(rows, rbase, hap, rlen, hlen, lane);
    case 3: return small_pair<T, 3, SMALL_C(3), SMALL_SUM_IN_ROW(3)>(rows, rbase, hap, rlen, hlen, lane);
    case 4: return small_pair<T, 4, SMALL_C(4), SMALL_SUM_IN_ROW(4)>(rows, rbase, hap, rlen, hlen, lane);
    case 5: return small_pair<T, 5, SMALL_C(5), SMALL_SUM_IN_ROW(5)>(rows, rbase, hap, rlen, hlen, lane);
    case 6: return small_pair<T, 6, SMALL_C(6), SMALL_SUM_IN_ROW(6)>(rows, rbase, hap, rlen, hlen, lane);
    case 7: return small_pair<T, 7, SMALL_C(7), SMALL_SUM_IN_ROW(7)>(rows, rbase, hap, rlen, hlen, lane);
    default: return small_pair<T, HK_SMALL_MAX_K, SMALL_C(HK_SMALL_MAX_K), SMALL_SUM_IN_ROW(HK_SMALL_MAX_K)>(rows, rbase, hap, rlen, hlen, lane);
    }
}

/* Every warp writes its pair's sum and its precision straight into the
 * host's block (sums, in_float), and the last to finish raises the host's
 * flag: the host sees the results without a copy back or an event (about
 * 8 us less a call on an H200 host). The precision policy is the CPU's
 * (hk_model_score_pair): float first where hk_cpu_float_first says so, kept
 * where hk_cpu_float_kept does, else double. */
__global__ void __launch_bounds__(SMALL_WARPS * 32) small_kernel(const unsigned char *in, hk_small_layout_t lay,
                                                                   double *sums, uint8_t *in_float, unsigned *count,
                                                                   volatile unsigned *flag, unsigned seq)
{
    extern __shared__ uint8_t haps_smem[];
    const int w = (int)(threadIdx.x / 32), lane = (int)(threadIdx.x % 32);
    const uint32_t p = blockIdx.x * SMALL_WARPS + (uint32_t)w;
    if (p >= lay.n_pairs) return;                           /* the whole warp */
    const hk_small_pair_t pair = reinterpret_cast<const hk_small_pair_t *>(in + lay.pairs)[p];
    const hk_small_seq_t rd = reinterpret_cast<const hk_small_seq_t *>(in + lay.reads)[pair.read];
    const hk_small_seq_t hp = reinterpret_cast<const hk_small_seq_t *>(in + lay.haps)[pair.hap];
    /* the haplotype's bases in shared memory, as masks (1 << code): each
     * step reads C per lane */
    uint8_t *hap = haps_smem + (size_t)w * lay.max_hap;
    const uint8_t *hbase = in + lay.hbase + hp.at;
    for (uint32_t i = (uint32_t)lane; i < hp.len; i += 32) hap[i] = (uint8_t)(1u << hbase[i]);
    __syncwarp();
    const hk_small_row_t *rows = reinterpret_cast<const hk_small_row_t *>(in + lay.rows) + rd.at;
    const uint8_t *rbase = in + lay.rbase + rd.at;
    double s = 0;                                           /* no cell: the CPU's sum, 0 */
    bool kept = false;                                      /* s is float's */
    if (rd.len && hp.len) {                                 /* warp-uniform */
        const bool float_first = lay.precision == HK_PREC_FLOAT ||
                                 (lay.precision == HK_PREC_MIXED && rd.len <= HK_MIXED_FLOAT_MAX_READ &&
                                  hp.len <= HK_MIXED_FLOAT_MAX_HAP);
        if (float_first) {
            const float f = small_sum<float>(rows, rbase, hap, rd.len, hp.len, lane);
            kept = lay.precision == HK_PREC_FLOAT || (f >= FLT_MIN && f <= FLT_MAX && (double)f >= lay.float_threshold);
            s = f;
        }
        if (!kept) s = small_sum<double>(rows, rbase, hap, rd.len, hp.len, lane);
    }
    if (lane == 0) {
        sums[p] = s;
        in_float[p] = kept;
        __threadfence_system();                             /* the sum before the count */
        if (atomicAdd(count, 1u) == lay.n_pairs - 1) {      /* the last pair: every sum is out */
            *count = 0;
            __threadfence_system();
            *flag = seq;
        }
    }
}

cudaError_t hk_small_kernel_load(void)
{
    cudaFuncAttributes a;
    return cudaFuncGetAttributes(&a, small_kernel);
}

cudaError_t hk_launch_small(const unsigned char *d_in, const hk_small_layout_t *lay, double *sums, uint8_t *in_float,
                            unsigned *count, unsigned *flag, unsigned seq, cudaStream_t st)
{
    if (!lay->n_pairs) return cudaSuccess;
    const unsigned blocks = (lay->n_pairs + SMALL_WARPS - 1) / SMALL_WARPS;
    small_kernel<<<blocks, SMALL_WARPS * 32, (size_t)SMALL_WARPS * lay->max_hap, st>>>(d_in, *lay, sums, in_float,
                                                                                       count, flag, seq);
    return cudaGetLastError();
}
