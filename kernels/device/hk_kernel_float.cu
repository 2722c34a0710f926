/* hk_kernel_float.cu - the float kernel family (scaled recurrence, C = 2^120):
 * one instantiation per entry of HK_FLOAT_CONFIGS, plus the multi-tile kernel
 * of the last entry; each entry's columns per step (hk_fwd_pair.cuh), the
 * multi-tile kernel two. */
#include "hk_launch.cuh"

typedef cudaError_t (*hk_float_fn)(const hk_chunk_dev *, const hk_item *, uint32_t, cudaStream_t);

static constexpr int float_p[] = { HK_FLOAT_CONFIGS(HK_CFG_P3) };
static constexpr int float_k[] = { HK_FLOAT_CONFIGS(HK_CFG_K3) };
#define HK_FLOAT_FN(P, K, C) hk_float_pair_launch<P, K, HK_CG_NONE, C>,
static const hk_float_fn float_fn[] = { HK_FLOAT_CONFIGS(HK_FLOAT_FN) };
static constexpr int LAST = HK_N_FLOAT_CONFIGS - 1;

int hk_float_rows(int cfg) { return float_p[cfg] * float_k[cfg]; }
int hk_float_group(int cfg) { return float_p[cfg]; }
size_t hk_float_scratch_col_bytes(void) { return 2 * sizeof(hk_cell3<float>); }

cudaError_t hk_launch_float(int cfg, const hk_chunk_dev *c, const hk_item *items,
                            uint32_t n_items, cudaStream_t st)
{
    if (cfg < 0 || cfg >= HK_N_FLOAT_CONFIGS) return cudaErrorInvalidValue;
    return float_fn[cfg](c, items, n_items, st);
}

cudaError_t hk_launch_float_multi(const hk_chunk_dev *c, const hk_item *items,
                                  uint32_t n_items, const hk_scratch *sc, cudaStream_t st)
{
    return hk_cols_launch<float, float_p[LAST], float_k[LAST], true, true>(
        c, items, n_items, nullptr, sc, st);
}
