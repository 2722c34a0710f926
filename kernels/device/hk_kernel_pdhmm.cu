/* hk_kernel_pdhmm.cu - the PDHMM kernel family (hk_pdhmm.cuh): one
 * single-tile kernel per entry of HK_PDHMM_CONFIGS and of
 * HK_PDHMM_CG_CONFIGS, and HK_PDHMM_MULTI's multi-tile kernel, with their
 * host launchers. Packing a PDHMM chunk is host/hk_pd_pack.cu's. See
 * hk_pdhmm_internal.h. */
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "hk_cuda_bench.h"
#include "hk_pdhmm.cuh"

/* ---- kernels: a single-tile kernel per HK_PDHMM_CONFIGS entry, and the
 * multi-tile kernel of HK_PDHMM_MULTI for reads longer than every tile ---- */

/* Blocks per multiprocessor the registers must allow: about 20 registers per
 * row plus 60 for the rest; 4 rows in 128 registers spill, so 3 blocks (168
 * registers) up to 4 rows, else 2 (255); the multi-tile kernels (scratch,
 * more state) 2 whatever K. SHC (the emission coefficients in shared memory,
 * about 13 registers per row): HK_PD_SHC_MINB blocks. */
#ifndef HK_PD_SHC_MINB
#define HK_PD_SHC_MINB 3
#endif
#ifndef HK_PD_SHC_MINB4
#define HK_PD_SHC_MINB4 4
#endif
/* CG (constant gaps), without limits (ptxas, sm_90): with SHC 166 registers
 * at 6 rows, 192-194 at 8, 224 at 10, 241 at 12; without, 202 at 6 and
 * 251-255 from 8 on. In 168 (3 blocks) the SHC form spills 12-32 bytes at 8
 * rows and 300 or more at 10; so 3 blocks up to 8 rows with SHC, else 2. */
#ifndef HK_PD_CG_MINB
#define HK_PD_CG_MINB 3
#endif
template <int K, bool MULTI, bool SHC, bool CG> constexpr int hk_pd_min_blocks()
{
    return CG ? (SHC && K <= 8 ? HK_PD_CG_MINB : 2)
              : SHC && !MULTI && K <= 4 ? HK_PD_SHC_MINB4 : SHC && !MULTI && K <= 6 ? HK_PD_SHC_MINB : K <= 4 && !MULTI ? 3 : 2;
}

template <int P, int K, bool MULTI, bool SAFE, bool SHC, bool CG>
__global__ void __launch_bounds__(HK_BLOCK_THREADS, (hk_pd_min_blocks<K, MULTI, SHC, CG>()))
hk_pd_kernel(hk_pd_dev c, const hk_item *items, uint32_t n_items, unsigned char *scratch, size_t stride)
{
    hk_pd_fwd<P, K, MULTI, SAFE, SHC, CG>::body(c, items, n_items, scratch, stride);
}

template <int P, int K, bool MULTI, bool SAFE, bool SHC, bool CG = false>
static cudaError_t hk_pd_launch_form(const hk_pd_dev *c, const hk_item *items, uint32_t n_items,
                                     const hk_scratch *sc, cudaStream_t st)
{
    typedef hk_pd_fwd<P, K, MULTI, SAFE, SHC, CG> F;
    if (n_items == 0) return cudaSuccess;
    auto fn = hk_pd_kernel<P, K, MULTI, SAFE, SHC, CG>;
    if (F::SMEM_BYTES > 48 * 1024) {    /* once per device (devices 0..63), not at every launch */
        static std::atomic<uint64_t> set_on{0};
        int dev = 0;
        cudaError_t e = cudaGetDevice(&dev);
        if (e != cudaSuccess) return e;
        const uint64_t bit = dev < 64 ? 1ull << dev : 0;
        if (!(set_on.load(std::memory_order_acquire) & bit)) {
            e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)F::SMEM_BYTES);
            if (e != cudaSuccess) return e;
            set_on.fetch_or(bit, std::memory_order_acq_rel);
        }
    }
    uint64_t blocks = ((uint64_t)n_items + F::GROUPS - 1) / F::GROUPS;
    if (blocks > 0x7fffffffu) blocks = 0x7fffffffu;
    unsigned char *scratch = nullptr;
    size_t stride = 0;
    if (MULTI) {                       /* one scratch row per group: the grid is capped */
        if (!sc || sc->groups < F::GROUPS) return cudaErrorInvalidValue;
        blocks = std::min<uint64_t>(blocks, sc->groups / F::GROUPS);
        scratch = static_cast<unsigned char *>(sc->ptr);
        stride = sc->cols * hk_double_scratch_col_bytes();
    }
    fn<<<(unsigned)blocks, HK_BLOCK_THREADS, F::SMEM_BYTES, st>>>(*c, items, n_items, scratch, stride);
    return cudaGetLastError();
}

template <int P, int K, bool MULTI, bool SAFE = false>
static cudaError_t hk_pd_launch(const hk_pd_dev *c, const hk_item *items, uint32_t n_items,
                                const hk_scratch *sc, cudaStream_t st)
{
    return hk_pd_launch_form<P, K, MULTI, SAFE, hk_pd_shc_default<K, MULTI>()>(c, items, n_items, sc, st);
}

/* The constant-gap form (CG, hk_pdhmm.cuh), its emission coefficients in
 * shared memory (fewer registers: 3 blocks per SM up to 8 rows). */
template <int P, int K>
static cudaError_t hk_pd_cg_launch(const hk_pd_dev *c, const hk_item *items, uint32_t n_items,
                                   const hk_scratch *sc, cudaStream_t st)
{
    return hk_pd_launch_form<P, K, false, false, true, true>(c, items, n_items, sc, st);
}

typedef cudaError_t (*hk_pd_fn)(const hk_pd_dev *, const hk_item *, uint32_t, const hk_scratch *, cudaStream_t);
#define HK_PD_CFG_P(P, K) P,
#define HK_PD_CFG_K(P, K) K,
static constexpr int pd_p[] = { HK_PDHMM_CONFIGS(HK_PD_CFG_P) };
static constexpr int pd_k[] = { HK_PDHMM_CONFIGS(HK_PD_CFG_K) };
#define HK_PD_FN(P, K) hk_pd_launch<P, K, false>,
static const hk_pd_fn pd_fn[] = { HK_PDHMM_CONFIGS(HK_PD_FN) };
static constexpr int pd_cg_p[] = { HK_PDHMM_CG_CONFIGS(HK_PD_CFG_P) };
static constexpr int pd_cg_k[] = { HK_PDHMM_CG_CONFIGS(HK_PD_CFG_K) };
#define HK_PD_CG_FN(P, K) hk_pd_cg_launch<P, K>,
static const hk_pd_fn pd_cg_fn[] = { HK_PDHMM_CG_CONFIGS(HK_PD_CG_FN) };
#define HK_PD_MULTI_LAUNCH(P, K) safe ? hk_pd_launch<P, K, true, true>(c, items, n_items, sc, st) \
                                      : hk_pd_launch<P, K, true, false>(c, items, n_items, sc, st)

int hk_pdhmm_rows(int cfg) { return pd_p[cfg] * pd_k[cfg]; }
int hk_pdhmm_group(int cfg) { return pd_p[cfg]; }
int hk_pdhmm_cg_rows(int cfg) { return pd_cg_p[cfg] * pd_cg_k[cfg]; }

extern "C" int hk_cuda_pdhmm_cg_configs(int *p, int *k, int max)
{
    for (int c = 0; c < HK_N_PDHMM_CG_CONFIGS && c < max; c++) {
        p[c] = pd_cg_p[c];
        k[c] = pd_cg_k[c];
    }
    return HK_N_PDHMM_CG_CONFIGS;
}

cudaError_t hk_launch_pdhmm_cg(int cfg, const hk_pd_dev *c, const hk_item *items, uint32_t n_items, cudaStream_t st)
{
    if (cfg < 0 || cfg >= HK_N_PDHMM_CG_CONFIGS) return cudaErrorInvalidValue;
    return pd_cg_fn[cfg](c, items, n_items, nullptr, st);
}

cudaError_t hk_launch_pdhmm(int cfg, const hk_pd_dev *c, const hk_item *items, uint32_t n_items, cudaStream_t st)
{
    if (cfg < 0 || cfg >= HK_N_PDHMM_CONFIGS) return cudaErrorInvalidValue;
    return pd_fn[cfg](c, items, n_items, nullptr, st);
}

cudaError_t hk_launch_pdhmm_multi(const hk_pd_dev *c, const hk_item *items, uint32_t n_items,
                                  const hk_scratch *sc, bool safe, cudaStream_t st)
{
    return HK_PDHMM_MULTI(HK_PD_MULTI_LAUNCH);
}
