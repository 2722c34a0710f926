/* hk_kernel_small.cu - the small-call kernel: a warp per pair, in the
 * precision policy of the CPU (see hk_cuda_small.h). */
#include <cfloat>
#include "hk_cuda_internal.h"

#define SMALL_WARPS 4                 /* warps (pairs) per block */
#define FULL_MASK 0xffffffffu

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
 * rows t*K .. t*K+K-1 and, at step s, columns j0 = 2(s - t) + 1 and j0 + 1:
 * the cells above its first row are lane t-1's last row at those columns,
 * computed the step before and shuffled down; the diagonal of the first is
 * what came down for column j0 - 1 the step before. Two columns a step
 * give the core two chains of dependent cells to overlap (column j0 + 1's
 * row k needs column j0's rows k - 1 and k only), where one column a step
 * left it waiting on one chain (a single warp on its scheduler: nothing
 * else to issue). Row -1 (M 0, I 0, D C/n) comes to lane 0 at every step;
 * column 0 is 0 in every row from 0 on, each lane's state before it
 * starts. Rows past the read have coefficients 0: they hold 0s, and no row
 * of the read reads them. */
template <typename T, int K>
__device__ __forceinline__ T small_pair(const hk_small_row_t *rows, const uint8_t *rbase, const uint8_t *hap,
                                        uint32_t rlen, uint32_t hlen, int lane)
{
    typedef small_arith<T> A;
    typedef small_cell<T> cell;
    T mm[K], gm[K], mi[K], ii[K], md[K], dd[K], match[K], mism[K];
    cell st[K];                                             /* each row's cell at the last column done */
    int code[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
        const uint32_t r = (uint32_t)lane * K + k;
        if (r < rlen) {
            const hk_small_row_t w = rows[r];      /* double, rounded once to T as HK_ROW_COEFFS does */
            mm[k] = (T)w.mm; gm[k] = (T)w.gm; mi[k] = (T)w.mi; ii[k] = (T)w.ii;
            md[k] = (T)w.md; dd[k] = (T)w.dd; match[k] = (T)w.match; mism[k] = (T)w.mism;
            code[k] = rbase[r];
        } else {
            mm[k] = gm[k] = mi[k] = ii[k] = md[k] = dd[k] = match[k] = mism[k] = 0;
            code[k] = 0;
        }
        st[k] = { 0, 0, 0 };
    }
    const T init = A::div(A::scale, (T)hlen);
    const cell top = { 0, 0, init };                        /* row -1 */
    const int lanes = (int)((rlen + K - 1) / K);
    const int last_lane = (int)((rlen - 1) / K), last_k = (int)((rlen - 1) % K);
    cell dg = lane == 0 ? top : cell{ 0, 0, 0 };           /* the first row's diagonal of column j0 */
    cell b0 = { 0, 0, 0 }, b1 = { 0, 0, 0 };               /* the last row's cells, handed down */
    T sum = 0;
    const int steps = (int)(hlen + 1) / 2 + lanes - 1;
    for (int s = 0; s < steps; s++) {
        cell up0 = shfl_up(b0), up1 = shfl_up(b1);
        if (lane == 0) up0 = up1 = top;
        const int j0 = 2 * (s - lane) + 1;
        if (lane < lanes && j0 >= 1 && j0 <= (int)hlen) {
            const bool two = j0 + 1 <= (int)hlen;           /* an odd haplotype's last step has one */
            const int h0 = hap[j0 - 1], h1 = two ? hap[j0] : HK_BASE_N;
            cell a0 = up0, a1 = up1, d0 = dg, d1 = up0;         /* above and diagonal of row k */
#pragma unroll
            for (int k = 0; k < K; k++) {
                const bool n = code[k] == HK_BASE_N;
                const T e0 = h0 == code[k] || h0 == HK_BASE_N || n ? match[k] : mism[k];
                const T e1 = h1 == code[k] || h1 == HK_BASE_N || n ? match[k] : mism[k];
                const cell c0 = small_step(e0, mm[k], gm[k], mi[k], ii[k], md[k], dd[k], d0, a0, st[k]);
                const cell c1 = small_step(e1, mm[k], gm[k], mi[k], ii[k], md[k], dd[k], d1, a1, c0);
                if (k == last_k && lane == last_lane) {
                    sum = A::add(sum, A::add(c0.M, c0.I));
                    if (two) sum = A::add(sum, A::add(c1.M, c1.I));
                }
                d0 = st[k];
                d1 = c0;
                a0 = c0;
                a1 = c1;
                st[k] = c1;
            }
            dg = up1;
            b0 = a0;
            b1 = a1;
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
    case 1: return small_pair<T, 1>(rows, rbase, hap, rlen, hlen, lane);
    case 2: return small_pair<T, 2>(rows, rbase, hap, rlen, hlen, lane);
    case 3: return small_pair<T, 3>(rows, rbase, hap, rlen, hlen, lane);
    case 4: return small_pair<T, 4>(rows, rbase, hap, rlen, hlen, lane);
    case 5: return small_pair<T, 5>(rows, rbase, hap, rlen, hlen, lane);
    case 6: return small_pair<T, 6>(rows, rbase, hap, rlen, hlen, lane);
    case 7: return small_pair<T, 7>(rows, rbase, hap, rlen, hlen, lane);
    default: return small_pair<T, HK_SMALL_MAX_K>(rows, rbase, hap, rlen, hlen, lane);
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
    /* the haplotype's codes in shared memory: each step reads one per lane */
    uint8_t *hap = haps_smem + (size_t)w * lay.max_hap;
    const uint8_t *hbase = in + lay.hbase + hp.at;
    for (uint32_t i = (uint32_t)lane; i < hp.len; i += 32) hap[i] = hbase[i];
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
