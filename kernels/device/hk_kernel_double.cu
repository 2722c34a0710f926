/* hk_kernel_double.cu - the double kernel family (plain recurrence,
 * C = 2^1020): double mode, and the mixed-mode recomputes, whose list the
 * float kernels fill on the device. One instantiation per entry of
 * HK_DOUBLE_CONFIGS, plus the multi-tile kernel of the last entry; two
 * columns per step (hk_fwd_pair.cuh). */
#include "hk_launch.cuh"

typedef cudaError_t (*hk_double_fn)(const hk_chunk_dev *, const hk_item *, uint32_t,
                                    const uint32_t *, const hk_scratch *, cudaStream_t);

static constexpr int double_p[] = { HK_DOUBLE_CONFIGS(HK_CFG_P) };
static constexpr int double_k[] = { HK_DOUBLE_CONFIGS(HK_CFG_K) };
#define HK_DOUBLE_FN(P, K) hk_cols_launch<double, P, K, false, false>,
static const hk_double_fn double_fn[] = { HK_DOUBLE_CONFIGS(HK_DOUBLE_FN) };
static constexpr int LAST = HK_N_DOUBLE_CONFIGS - 1;

int hk_double_rows(int cfg) { return double_p[cfg] * double_k[cfg]; }
int hk_double_group(int cfg) { return double_p[cfg]; }
size_t hk_double_scratch_col_bytes(void) { return 2 * sizeof(hk_cell3<double>); }

cudaError_t hk_launch_double(int cfg, const hk_chunk_dev *c, const hk_item *items,
                             uint32_t n_items, cudaStream_t st)
{
    if (cfg < 0 || cfg >= HK_N_DOUBLE_CONFIGS) return cudaErrorInvalidValue;
    return double_fn[cfg](c, items, n_items, nullptr, nullptr, st);
}

cudaError_t hk_launch_double_multi(const hk_chunk_dev *c, const hk_item *items,
                                   uint32_t n_items, const uint32_t *n_items_dev,
                                   const hk_scratch *sc, cudaStream_t st)
{
    return hk_cols_launch<double, double_p[LAST], double_k[LAST], false, true>(
        c, items, n_items, n_items_dev, sc, st);
}
