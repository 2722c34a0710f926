/* hk_launch.cuh - thin __global__ wrapper and host launcher of one kernel
 * family (included once by each hk_kernel_*.cu, which instantiates it). */
#ifndef HK_LAUNCH_CUH
#define HK_LAUNCH_CUH

#include <cstdlib>
#include "hk_fwd.cuh"
#include "hk_fwd_pair.cuh"

/* Blocks of HK_BLOCK_THREADS per multiprocessor that the register allocation
 * must allow: 3 (168 registers) above 12 rows of floats per lane, else 4 (128
 * registers); the constant-gap kernels need fewer registers per row, 4 up to
 * 16 rows. HK_MIN_BLOCKS > 0 forces one value for all (a tuning knob, see
 * docs/PERFORMANCE.md). */
#ifndef HK_MIN_BLOCKS
#define HK_MIN_BLOCKS 0
#endif
template <typename T, int K, bool CGAP> constexpr int hk_min_blocks()
{
    return HK_MIN_BLOCKS > 0 ? HK_MIN_BLOCKS : (int)sizeof(T) * K > (CGAP ? 64 : 48) ? 3 : 4;
}

/* What both launchers do first: allow kernel fn smem bytes of dynamic shared
 * memory where that is above the default 48 KB, and size the grid for
 * n_items at `groups` items per block (the kernels stride over the rest). */
template <typename Kernel>
static cudaError_t hk_launch_shape(Kernel *fn, size_t smem, uint32_t n_items, int groups, unsigned *blocks)
{
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (e != cudaSuccess) return e;
    }
    const uint64_t b = ((uint64_t)n_items + groups - 1) / groups;
    *blocks = b > 0x7fffffffu ? 0x7fffffffu : (unsigned)b;
    return cudaSuccess;
}

/* A multi-tile launch's share of the scratch: at most as many blocks as
 * the scratch has rows for (groups per block each), and where they are. */
template <typename T>
static cudaError_t hk_multi_scratch(const hk_scratch *sc, unsigned groups, unsigned *blocks, hk_cell3<T> **scratch,
                                    size_t *cols)
{
    if (!sc || sc->groups < groups) return cudaErrorInvalidValue;
    if (*blocks > sc->groups / groups) *blocks = sc->groups / groups;
    *scratch = static_cast<hk_cell3<T> *>(sc->ptr);
    *cols = sc->cols;
    return cudaSuccess;
}

/* The pair kernels' (hk_fwd_pair.cuh) blocks per SM: as hk_min_blocks, but 2 (255
 * registers) for the multi-tile kernels and the double ones of 8 rows per
 * lane, which spill at 3 (ptxas); at 2 they ran faster (docs/PERFORMANCE.md). */
template <typename T, int K, int CG, bool MULTI> constexpr int hk_pair_min_blocks()
{
    return HK_MIN_BLOCKS > 0                    ? HK_MIN_BLOCKS
           : MULTI || (sizeof(T) == 8 && K >= 8) ? 2
                                                 : hk_min_blocks<T, K, CG != HK_CG_NONE>();
}

/* The kernels of NC columns per step (hk_fwd_pair.cuh): T float with the
 * scaled recurrence (SCALED) or double with the plain one; CG: the
 * coefficients (HK_CG_*: per row, or the constant-gap family's); MULTI: the multi-tile kernel. NC comes from the
 * float families' lists (hk_configs.h); the double and multi-tile kernels
 * take 2, their registers leave no room for more. */
template <typename T, int P, int K, bool SCALED, int CG, bool MULTI, int NC>
__global__ void __launch_bounds__(HK_BLOCK_THREADS, (hk_pair_min_blocks<T, K, CG, MULTI>()))
hk_pair_kernel(hk_chunk_dev c, const hk_item *items, uint32_t n_items,
               const uint32_t *n_items_dev, hk_cell3<T> *scratch, size_t scratch_cols)
{
    hk_fwd_pair<T, P, K, SCALED, CG, MULTI, NC>::body(c, items, n_items, n_items_dev, scratch, scratch_cols);
}

/* Host launcher. Multi-tile kernels need one scratch pair of rows per group
 * (hk_multi_scratch), which caps their grid; the kernels stride over the
 * items. */
template <typename T, int P, int K, bool SCALED, int CG, bool MULTI, int NC = 2>
cudaError_t hk_pair_launch(const hk_chunk_dev *c, const hk_item *items, uint32_t n_items,
                           const uint32_t *n_items_dev, const hk_scratch *sc, cudaStream_t st)
{
    typedef hk_fwd_pair<T, P, K, SCALED, CG, MULTI, NC> F;
    if (n_items == 0) return cudaSuccess;
    unsigned blocks;
    cudaError_t e = hk_launch_shape(hk_pair_kernel<T, P, K, SCALED, CG, MULTI, NC>, F::SMEM_BYTES, n_items,
                                    F::GROUPS, &blocks);
    if (e != cudaSuccess) return e;
    hk_cell3<T> *scratch = nullptr;
    size_t cols = 0;
    if (MULTI && (e = hk_multi_scratch(sc, F::GROUPS, &blocks, &scratch, &cols)) != cudaSuccess) return e;
    hk_pair_kernel<T, P, K, SCALED, CG, MULTI, NC><<<blocks, HK_BLOCK_THREADS, F::SMEM_BYTES, st>>>(
        *c, items, n_items, n_items_dev, scratch, cols);
    return cudaGetLastError();
}

/* A double or multi-tile kernel: two columns per step, the coefficients per row. */
template <typename T, int P, int K, bool SCALED, bool MULTI>
cudaError_t hk_cols_launch(const hk_chunk_dev *c, const hk_item *items, uint32_t n_items,
                           const uint32_t *n_items_dev, const hk_scratch *sc, cudaStream_t st)
{
    return hk_pair_launch<T, P, K, SCALED, HK_CG_NONE, MULTI>(c, items, n_items, n_items_dev, sc, st);
}

/* The single-tile float launchers of a family (one function type per
 * family table), NC columns per step. */
template <int P, int K, int CG, int NC = 2>
cudaError_t hk_float_pair_launch(const hk_chunk_dev *c, const hk_item *items, uint32_t n_items, cudaStream_t st)
{
    return hk_pair_launch<float, P, K, true, CG, false, NC>(c, items, n_items, nullptr, nullptr, st);
}

/* Configuration tables of a family list X: P and K of each entry (lists of
 * X(P, K), or X(P, K, C) with columns per step). */
#define HK_CFG_P(P, K) P,
#define HK_CFG_K(P, K) K,
#define HK_CFG_P3(P, K, C) P,
#define HK_CFG_K3(P, K, C) K,

#endif
