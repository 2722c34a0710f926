/* hk_slot.cu - a slot's buffers: the pinned host block it is staged or
 * packed in (its slice of the device's arena, or its own), the device block,
 * results, recompute list, multi-tile scratch and CUB's working space.
 * Host code only; see hk_host_internal.h. */
#include <algorithm>
#include <cstdlib>

#include "hk_host_internal.h"

void hk_slot_free(hk_slot *s)
{
    if (!s->in_arena) {
        if (s->h_in) cudaFreeHost(s->h_in);
        if (s->h_out) cudaFreeHost(s->h_out);
    }
    s->in_arena = false;
    if (s->d_in) cudaFree(s->d_in);
    if (s->d_nredo) cudaFree(s->d_nredo);   /* the base of the results block */
    else if (s->d_lk) cudaFree(s->d_lk);
    if (s->d_redo) cudaFree(s->d_redo);
    if (s->d_scratch) cudaFree(s->d_scratch);
    if (s->d_tmp) cudaFree(s->d_tmp);
    s->h_in = s->h_out = s->d_in = nullptr;
    s->d_tmp = nullptr;
    s->tmp_bytes = 0;
    s->d_lk = nullptr;
    s->d_redo = nullptr;
    s->d_nredo = nullptr;
    s->d_scratch = nullptr;
    s->scratch = hk_scratch{nullptr, 0, 0};
    s->in_cap = 0;
    s->pairs_cap = 0;
}

static size_t hk_pow2_at_least(size_t n)
{
    size_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

/* Give slot s room for lim (and scratch for hap length max_hap); on an
 * allocation failure, halve the limits (down to what one read needs). */
hk_status_t hk_slot_reserve(hk_dev *d, hk_slot *s, hk_plan_limits *lim, uint32_t max_hap,
                    char *err, size_t errlen)
{
    const size_t col_bytes = std::max(hk_float_scratch_col_bytes(), hk_double_scratch_col_bytes());
    const size_t cols = ((size_t)max_hap + HK_HAP_ALIGN + 511) & ~(size_t)511;   /* padded; rounded: fewer re-allocations */
    /* scratch: enough groups to fill the GPU with multi-tile work, within 1/8 of memory */
    size_t groups = (size_t)d->prop.multiProcessorCount * 16;
    const size_t sc_budget = d->prop.totalGlobalMem / 8;
    while (groups > 4 && groups * cols * col_bytes > sc_budget) groups /= 2;
    groups &= ~(size_t)3;
    if (groups < 4) groups = 4;
    for (;;) {
        if (s->in_cap >= lim->in_bytes && s->pairs_cap >= lim->pairs &&
            s->scratch.cols >= cols && s->scratch.groups >= groups)
            return HK_OK;
        hk_slot_free(s);
        /* capacities rounded up to powers of two: batches of varying size
         * would otherwise re-pin and re-allocate on every new largest one */
        const size_t in_cap = hk_pow2_at_least(lim->in_bytes);
        const size_t pairs_cap = hk_pow2_at_least(lim->pairs);
        const size_t lk_bytes = hk_align16(pairs_cap * sizeof(double));
        unsigned char *slice = in_cap <= HK_SLOT_BYTES && pairs_cap <= HK_SLOT_PAIRS
                             ? hk_arena_slice(d, (int)(s - d->slot)) : nullptr;
        if (slice) {
            s->h_in = slice;
            s->h_out = slice + HK_SLOT_BYTES;
            s->in_arena = true;
        }
        hk_cu_calls cu;
        s->tmp_bytes = hk_gpack_tmp_bytes(pairs_cap);
        if (HK_CU(cu, cudaMalloc, &s->d_in, in_cap) && HK_CU(cu, cudaMalloc, &s->d_lk, 16 + lk_bytes) &&
            HK_CU(cu, cudaMalloc, &s->d_redo, pairs_cap * sizeof(hk_item)) &&
            HK_CU(cu, cudaMalloc, &s->d_scratch, groups * cols * col_bytes) &&
            HK_CU(cu, cudaMalloc, &s->d_tmp, s->tmp_bytes) &&
            (s->in_arena || (HK_CU(cu, cudaHostAlloc, &s->h_in, in_cap, cudaHostAllocDefault) &&
                             HK_CU(cu, cudaHostAlloc, &s->h_out, 16 + lk_bytes, cudaHostAllocDefault)))) {
            s->in_cap = in_cap;
            s->pairs_cap = pairs_cap;
            /* [redo count, 16 bytes][results]: one copy brings both back */
            s->d_nredo = reinterpret_cast<uint32_t *>(s->d_lk);
            s->d_lk = reinterpret_cast<double *>(reinterpret_cast<char *>(s->d_lk) + 16);
            s->scratch.ptr = s->d_scratch;
            s->scratch.cols = cols;
            s->scratch.groups = (uint32_t)groups;
            return HK_OK;
        }
        (void)cudaGetLastError();
        hk_slot_free(s);
        if (cu.e != cudaErrorMemoryAllocation) return cu.fail(d->ord, err, errlen);
        /* shrink and try again */
        if (lim->in_bytes <= lim->min_in_bytes && lim->pairs <= lim->min_pairs && groups <= 4)
            return cu.fail(d->ord, err, errlen);
        lim->in_bytes = std::max(lim->min_in_bytes, lim->in_bytes / 2);
        lim->pairs = std::max(lim->min_pairs, lim->pairs / 2);
        lim->items = std::max<uint64_t>(lim->min_pairs, lim->items / 2);
        if (groups > 4) groups = std::max<size_t>(4, (groups / 2) & ~(size_t)3);
    }
}

