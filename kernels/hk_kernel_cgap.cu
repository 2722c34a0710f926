/* hk_kernel_cgap.cu - the float kernels for reads with constant gap
 * qualities (hk_read_gaps_t): one instantiation per entry of HK_CGAP_CONFIGS,
 * with the entry's columns per step.
 * Longer reads, double mode and recomputes use the general families, which
 * read such a read's gap qualities from its header. */
#include "hk_launch.cuh"

typedef cudaError_t (*hk_cgap_fn)(const hk_chunk_dev *, const hk_item *, uint32_t, cudaStream_t);

static constexpr int cgap_p[] = { HK_CGAP_CONFIGS(HK_CFG_P3) };
static constexpr int cgap_k[] = { HK_CGAP_CONFIGS(HK_CFG_K3) };
#define HK_CGAP_FN(P, K, C) hk_float_pair_launch<P, K, true, C>,
static const hk_cgap_fn cgap_fn[] = { HK_CGAP_CONFIGS(HK_CGAP_FN) };

int hk_cgap_rows(int cfg) { return cgap_p[cfg] * cgap_k[cfg]; }
int hk_cgap_group(int cfg) { return cgap_p[cfg]; }

cudaError_t hk_launch_float_cgap(int cfg, const hk_chunk_dev *c, const hk_item *items,
                                 uint32_t n_items, cudaStream_t st)
{
    if (cfg < 0 || cfg >= HK_N_CGAP_CONFIGS) return cudaErrorInvalidValue;
    return cgap_fn[cfg](c, items, n_items, st);
}
