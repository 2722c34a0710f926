/* hk_kernel_small.cu - the small-call kernel: a warp per pair, in double
 * (see hk_cuda_small.h). */
#include "hk_cuda_internal.h"

#define SMALL_WARPS 4                 /* warps (pairs) per block */
#define FULL_MASK 0xffffffffu

/* One pair's sum of its last row, on every lane of the warp. Lane t holds
 * rows t*K .. t*K+K-1 and, at step s, column j = s - t + 1: the cell above
 * its first row is lane t-1's last row at column j, computed the step
 * before and shuffled down; the diagonal is what came down the step before
 * that. Row -1 (M 0, I 0, D C/n) comes to lane 0 at every step; column 0
 * is 0 in every row from 0 on, each lane's state before it starts. Rows
 * past the read have coefficients 0: they hold 0s, and no row of the read
 * reads them. */
template <int K>
__device__ __forceinline__ double small_pair(const hk_small_row_t *rows, const uint8_t *rbase, const uint8_t *hap,
                                             uint32_t rlen, uint32_t hlen, int lane)
{
    double mm[K], gm[K], mi[K], ii[K], md[K], dd[K], match[K], mism[K], M[K], I[K], D[K];
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
        M[k] = I[k] = D[k] = 0;
    }
    const double init = __ddiv_rn(HK_SCALE_D, (double)hlen);
    const int lanes = (int)((rlen + K - 1) / K);
    const int last_lane = (int)((rlen - 1) / K), last_k = (int)((rlen - 1) % K);
    double dgM = 0, dgI = 0, dgD = lane == 0 ? init : 0;   /* the diagonal of the first row */
    double bM = 0, bI = 0, bD = 0;                          /* the last row's cells, handed down */
    double sum = 0;
    const int steps = (int)hlen + lanes - 1;
    for (int s = 0; s < steps; s++) {
        double upM = __shfl_up_sync(FULL_MASK, bM, 1), upI = __shfl_up_sync(FULL_MASK, bI, 1);
        double upD = __shfl_up_sync(FULL_MASK, bD, 1);
        if (lane == 0) { upM = 0; upI = 0; upD = init; }
        const int j = s - lane + 1;
        if (lane < lanes && j >= 1 && j <= (int)hlen) {
            const int h = hap[j - 1];
            double aM = upM, aI = upI;                      /* the cell above */
            double qM = dgM, qI = dgI, qD = dgD;            /* the diagonal */
#pragma unroll
            for (int k = 0; k < K; k++) {
                const bool is_match = h == code[k] || h == HK_BASE_N || code[k] == HK_BASE_N;
                const double emit = is_match ? match[k] : mism[k];
                const double oM = M[k], oI = I[k], oD = D[k];
                /* hk_cpu.h's HK_CELL, operation for operation */
                const double nM = __dmul_rn(emit, __dadd_rn(__dmul_rn(mm[k], qM), __dmul_rn(gm[k], __dadd_rn(qI, qD))));
                const double nI = __dadd_rn(__dmul_rn(mi[k], aM), __dmul_rn(ii[k], aI));
                const double nD = __dadd_rn(__dmul_rn(md[k], oM), __dmul_rn(dd[k], oD));
                M[k] = nM; I[k] = nI; D[k] = nD;
                aM = nM; aI = nI;
                qM = oM; qI = oI; qD = oD;
                if (k == last_k && lane == last_lane) sum = __dadd_rn(sum, __dadd_rn(nM, nI));
            }
            dgM = upM; dgI = upI; dgD = upD;
            bM = M[K - 1]; bI = I[K - 1]; bD = D[K - 1];
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
