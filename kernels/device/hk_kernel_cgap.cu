/* hk_kernel_cgap.cu - the float kernels for reads with constant gap
 * qualities (hk_read_gaps_t): two instantiations per entry of
 * HK_CGAP_CONFIGS, with the entry's columns per step: the body's
 * coefficients from the chunk's set (every read of the launch has it) or
 * from each read's.
 * Longer reads, double mode and recomputes use the general families, which
 * read such a read's gap qualities from its header. */
#include "hk_launch.cuh"

typedef cudaError_t (*hk_cgap_fn)(const hk_chunk_dev *, const hk_item *, uint32_t, cudaStream_t);

static constexpr int cgap_p[] = { HK_CGAP_CONFIGS(HK_CFG_P3) };
static constexpr int cgap_k[] = { HK_CGAP_CONFIGS(HK_CFG_K3) };
#define HK_CGAP_FN_READ(P, K, C) hk_float_pair_launch<P, K, HK_CG_READ, C>,
#define HK_CGAP_FN_CHUNK(P, K, C) hk_float_pair_launch<P, K, HK_CG_CHUNK, C>,
static const hk_cgap_fn cgap_fn[2][HK_N_CGAP_CONFIGS] = { { HK_CGAP_CONFIGS(HK_CGAP_FN_READ) },
                                                         { HK_CGAP_CONFIGS(HK_CGAP_FN_CHUNK) } };

int hk_cgap_rows(int cfg) { return cgap_p[cfg] * cgap_k[cfg]; }
int hk_cgap_group(int cfg) { return cgap_p[cfg]; }

cudaError_t hk_launch_float_cgap(int cfg, bool chunk_set, const hk_chunk_dev *c, const hk_item *items,
                                 uint32_t n_items, cudaStream_t st)
{
    if (cfg < 0 || cfg >= HK_N_CGAP_CONFIGS) return cudaErrorInvalidValue;
    return cgap_fn[chunk_set][cfg](c, items, n_items, st);
}
