/* hk_kernel_small.cu - the small-call kernel: a warp per pair, in double
 * (see hk_cuda_small.h). */
#include "hk_cuda_internal.h"

#define SMALL_WARPS 4                 /* warps (pairs) per block */
#define FULL_MASK 0xffffffffu

/* A cell's three states. */
struct small_cell {
    double M, I, D;
};

/* hk_cpu.h's HK_CELL, operation for operation: from the diagonal, the cell
 * above and the cell to the left. */
__device__ __forceinline__ small_cell small_step(double emit, double mm, double gm, double mi, double ii, double md,
                                                 double dd, small_cell dg, small_cell up, small_cell left)
{
    small_cell c;
    c.M = __dmul_rn(emit, __dadd_rn(__dmul_rn(mm, dg.M), __dmul_rn(gm, __dadd_rn(dg.I, dg.D))));
    c.I = __dadd_rn(__dmul_rn(mi, up.M), __dmul_rn(ii, up.I));
    c.D = __dadd_rn(__dmul_rn(md, left.M), __dmul_rn(dd, left.D));
    return c;
}

__device__ __forceinline__ small_cell shfl_up(small_cell c)
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
template <int K>
__device__ __forceinline__ double small_pair(const hk_small_row_t *rows, const uint8_t *rbase, const uint8_t *hap,
                                             uint32_t rlen, uint32_t hlen, int lane)
{
    double mm[K], gm[K], mi[K], ii[K], md[K], dd[K], match[K], mism[K];
    small_cell st[K];                                       /* each row's cell at the last column done */
    int code[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
        const uint32_t r = (uint32_t)lane * K + k;
        if (r < rlen) {
            const hk_small_row_t w = rows[r];
            mm[k] = w.mm; gm[k] = w.gm; mi[k] = w.mi; ii[k] = w.ii;
            md[k] = w.md; dd[k] = w.dd; match[k] = w.match; mism[k] = w.mism;
            code[k] = rbase[r];
        } else {
            mm[k] = gm[k] = mi[k] = ii[k] = md[k] = dd[k] = match[k] = mism[k] = 0;
            code[k] = 0;
        }
        st[k] = { 0, 0, 0 };
    }
    const double init = __ddiv_rn(HK_SCALE_D, (double)hlen);
    const small_cell top = { 0, 0, init };                  /* row -1 */
    const int lanes = (int)((rlen + K - 1) / K);
    const int last_lane = (int)((rlen - 1) / K), last_k = (int)((rlen - 1) % K);
    small_cell dg = lane == 0 ? top : small_cell{ 0, 0, 0 };   /* the first row's diagonal of column j0 */
    small_cell b0 = { 0, 0, 0 }, b1 = { 0, 0, 0 };         /* the last row's cells, handed down */
    double sum = 0;
    const int steps = (int)(hlen + 1) / 2 + lanes - 1;
    for (int s = 0; s < steps; s++) {
        small_cell up0 = shfl_up(b0), up1 = shfl_up(b1);
        if (lane == 0) up0 = up1 = top;
        const int j0 = 2 * (s - lane) + 1;
        if (lane < lanes && j0 >= 1 && j0 <= (int)hlen) {
            const bool two = j0 + 1 <= (int)hlen;           /* an odd haplotype's last step has one */
            const int h0 = hap[j0 - 1], h1 = two ? hap[j0] : HK_BASE_N;
            small_cell a0 = up0, a1 = up1, d0 = dg, d1 = up0;   /* above and diagonal of row k */
#pragma unroll
            for (int k = 0; k < K; k++) {
                const bool n = code[k] == HK_BASE_N;
                const double e0 = h0 == code[k] || h0 == HK_BASE_N || n ? match[k] : mism[k];
                const double e1 = h1 == code[k] || h1 == HK_BASE_N || n ? match[k] : mism[k];
                const small_cell c0 = small_step(e0, mm[k], gm[k], mi[k], ii[k], md[k], dd[k], d0, a0, st[k]);
                const small_cell c1 = small_step(e1, mm[k], gm[k], mi[k], ii[k], md[k], dd[k], d1, a1, c0);
                if (k == last_k && lane == last_lane) {
                    sum = __dadd_rn(sum, __dadd_rn(c0.M, c0.I));
                    if (two) sum = __dadd_rn(sum, __dadd_rn(c1.M, c1.I));
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

/* Every warp writes its pair's sum straight into the host's block (sums),
 * and the last to finish raises the host's flag: the host sees the results
 * without a copy back or an event (about 8 us less a call on an H200 host). */
__global__ void __launch_bounds__(SMALL_WARPS * 32) small_kernel(const unsigned char *in, hk_small_layout_t lay,
                                                                   double *sums, unsigned *count,
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
    if (rd.len && hp.len) switch ((rd.len + 31) / 32) {     /* warp-uniform */
    case 1: s = small_pair<1>(rows, rbase, hap, rd.len, hp.len, lane); break;
    case 2: s = small_pair<2>(rows, rbase, hap, rd.len, hp.len, lane); break;
    case 3: s = small_pair<3>(rows, rbase, hap, rd.len, hp.len, lane); break;
    case 4: s = small_pair<4>(rows, rbase, hap, rd.len, hp.len, lane); break;
    case 5: s = small_pair<5>(rows, rbase, hap, rd.len, hp.len, lane); break;
    case 6: s = small_pair<6>(rows, rbase, hap, rd.len, hp.len, lane); break;
    case 7: s = small_pair<7>(rows, rbase, hap, rd.len, hp.len, lane); break;
    default: s = small_pair<HK_SMALL_MAX_K>(rows, rbase, hap, rd.len, hp.len, lane); break;
    }
    static_assert(HK_SMALL_MAX_K == 8, "one case per K");
    if (lane == 0) {
        sums[p] = s;
        __threadfence_system();                             /* the sum before the count */
        if (atomicAdd(count, 1u) == lay.n_pairs - 1) {      /* the last pair: every sum is out */
            *count = 0;
            __threadfence_system();
            *flag = seq;
        }
    }
}

cudaError_t hk_launch_small(const unsigned char *d_in, const hk_small_layout_t *lay, double *sums, unsigned *count,
                            unsigned *flag, unsigned seq, cudaStream_t st)
{
    if (!lay->n_pairs) return cudaSuccess;
    const unsigned blocks = (lay->n_pairs + SMALL_WARPS - 1) / SMALL_WARPS;
    small_kernel<<<blocks, SMALL_WARPS * 32, (size_t)SMALL_WARPS * lay->max_hap, st>>>(d_in, *lay, sums, count,
                                                                                       flag, seq);
    return cudaGetLastError();
}
