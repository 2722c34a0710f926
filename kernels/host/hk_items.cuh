/* hk_items.cuh - a read's work items: the kernel (bin) each goes to and its
 * length bucket inside the bin. One definition for the host's packing
 * (hk_chunk.cu, the reference) and the GPU's (hk_gpack.cu), which run the
 * same per-read code over the same arrays of the batch. C++ only. */
#ifndef HK_ITEMS_CUH
#define HK_ITEMS_CUH

#include <cstdint>
#include "hk_cuda_internal.h"
#include "hk_host_internal.h"

/* Kernel families of the packing and launch code. */
enum { HK_FAM_FLOAT, HK_FAM_DOUBLE, HK_FAM_CGAP, HK_N_FAM };

/* Column buckets per bin: items sort by bin * HK_BUCKETS + bucket, the longest
 * first inside a bin, so that the groups of a warp finish together. */
#define HK_BUCKETS 64

/* The configuration of a read of length m: the first of the family's list
 * whose tile holds it, or -1 (the multi-tile kernel; for HK_FAM_CGAP, the
 * float family). A chain of compares made from hk_configs.h's lists. */
__host__ __device__ inline int hk_pick_config(uint32_t m, int fam)
{
    int c = 0;
#define HK_PICK_X(P, K) if (m <= (uint32_t)((P) * (K))) return c; c++;
#define HK_PICK_X3(P, K, C) HK_PICK_X(P, K)
    if (fam == HK_FAM_FLOAT) { HK_FLOAT_CONFIGS(HK_PICK_X3) }
    else if (fam == HK_FAM_DOUBLE) { HK_DOUBLE_CONFIGS(HK_PICK_X) }
    else { HK_CGAP_CONFIGS(HK_PICK_X3) }
#undef HK_PICK_X3
#undef HK_PICK_X
    return -1;
}

/* The arrays one chunk's items are made from, as the batch holds them (the
 * host: pointers into the batch; the GPU: their copies): offsets are the
 * batch's, indices are chunk-relative. */
struct hk_items_src {
    const uint64_t       *read_off;   /* n_reads + 1 */
    const uint64_t       *hap_off;    /* n_haps + 1 */
    const hk_read_gaps_t *gaps;       /* n_reads */
    const hk_region_t    *regions;    /* n_regions: the chunk's, from its first */
    uint32_t n_reads, n_haps, n_regions;
    uint64_t r0, h0, pair0;           /* the batch's numbers of the chunk's first read, hap, pair */
    uint32_t item_cols;               /* most columns per item (the planner's) */
    int      n_single, long_bin;      /* see hk_chunk */
    bool     dbl;                     /* the double family */
    bool     long_dbl;                /* mixed mode: long reads and haplotypes to long_bin */
    hk_read_gaps_t cgap;              /* the chunk's constant-gap set (hk_chunk::cgap) */
};

/* The source of chunk ch's items: its reads' offsets, its haplotypes'
 * offsets, its reads' gap summaries and its regions, where they are. */
inline hk_items_src hk_items_src_of(const hk_chunk &ch, const uint64_t *read_off, const uint64_t *hap_off,
                                    const hk_read_gaps_t *gaps, const hk_region_t *regions)
{
    hk_items_src x;
    x.read_off = read_off;
    x.hap_off = hap_off;
    x.gaps = gaps;
    x.regions = regions;
    x.n_reads = (uint32_t)(ch.r1 - ch.r0);
    x.n_haps = (uint32_t)(ch.h1 - ch.h0);
    x.n_regions = (uint32_t)(ch.reg1 - ch.reg0);
    x.r0 = ch.r0;
    x.h0 = ch.h0;
    x.pair0 = ch.pair0;
    x.item_cols = ch.item_cols;
    x.n_single = ch.n_single;
    x.long_bin = ch.long_bin;
    x.dbl = ch.precision == HK_PREC_DOUBLE;
    x.long_dbl = ch.precision == HK_PREC_MIXED;
    x.cgap = ch.cgap;
    return x;
}

/* The region of the chunk's read i. */
__host__ __device__ inline uint32_t hk_items_region(const hk_items_src &x, uint32_t i)
{
    uint32_t lo = 0, hi = x.n_regions;
    const uint64_t r = x.r0 + i;
    while (hi - lo > 1) {
        const uint32_t mid = (lo + hi) / 2;
        if (x.regions[mid].read0 <= r) lo = mid; else hi = mid;
    }
    return lo;
}

/* Call emit(item, key) for every work item of the chunk's read i (region g),
 * in haplotype order, and degen(out) for each of its pairs with an empty
 * sequence (no item: its result is log10(0) = -inf). Items are runs of
 * consecutive haplotypes of at most HK_MAX_ITEM_HAPS and item_cols columns
 * (one each for the multi-tile kernel). Returns whether the read has gap rows
 * (is not constant). When the read goes to the constant-gap kernels with a
 * set other than the chunk's, its configuration's bit is set in *foreign
 * (hk_chunk::cgap_foreign; when foreign is not NULL). The host's packing passes host lambdas: nvcc need not check them here. */
static_assert(HK_N_CGAP_CONFIGS <= 32, "a bit per constant-gap configuration (hk_chunk::cgap_foreign)");
#pragma nv_exec_check_disable
template <typename Emit, typename Degen>
__host__ __device__ inline bool hk_read_items(const hk_items_src &x, uint32_t g, uint32_t i, Emit &&emit,
                                              Degen &&degen, uint32_t *foreign = nullptr)
{
    const hk_region_t &rg = x.regions[g];
    const uint32_t m = (uint32_t)(x.read_off[i + 1] - x.read_off[i]);
    const uint32_t out0 = (uint32_t)(rg.pair0 + (x.r0 + i - rg.read0) * rg.n_haps - x.pair0);
    if (m == 0) {                                  /* no alignment */
        for (uint32_t h = 0; h < rg.n_haps; h++) degen(out0 + h);
        return false;
    }
    const bool constant = x.gaps[i].constant;
    const bool to_double = x.long_dbl && m > HK_MIXED_FLOAT_MAX_READ;
    const int cg = x.dbl || to_double || !constant ? -1 : hk_pick_config(m, HK_FAM_CGAP);
    if (foreign && cg >= 0 && !hk_cgap_match(x.gaps[i], x.cgap)) *foreign |= 1u << cg;
    const int cfg = to_double ? -1 : hk_pick_config(m, x.dbl ? HK_FAM_DOUBLE : HK_FAM_FLOAT);
    const bool multi = cg < 0 && cfg < 0;
    const uint32_t bin = (uint32_t)(to_double ? x.long_bin : cg >= 0 ? x.n_single + 1 + cg : multi ? x.n_single : cfg);
    const uint64_t *hoff = x.hap_off + (rg.hap0 - x.h0);
    hk_item it;
    it.read = i;
    for (uint32_t h = 0; h < rg.n_haps;) {
        uint32_t nhp = 0;
        uint64_t cols = 0;
        bool long_hap = false;                     /* mixed mode: a pair to double at once */
        while (h + nhp < rg.n_haps && nhp < HK_MAX_ITEM_HAPS && (nhp == 0 || !multi)) {
            const uint64_t n = hoff[h + nhp + 1] - hoff[h + nhp];
            if (n == 0 || (nhp > 0 && cols + n > x.item_cols)) break;
            if (x.long_dbl && !to_double && n > HK_MIXED_FLOAT_MAX_HAP) {   /* alone, in long_bin */
                if (nhp == 0) { cols = n; nhp = 1; long_hap = true; }
                break;
            }
            cols += n;
            nhp++;
        }
        if (nhp == 0) {                            /* an empty haplotype */
            degen(out0 + h);
            h++;
            continue;
        }
        it.hap = (uint32_t)(rg.hap0 + h - x.h0);
        it.out = out0 + h;
        it.n_haps = nhp;
        const uint64_t b = cols / 32 < HK_BUCKETS - 1 ? cols / 32 : HK_BUCKETS - 1;
        emit(it, (long_hap ? (uint32_t)x.long_bin : bin) * HK_BUCKETS + (HK_BUCKETS - 1 - (uint32_t)b));
        h += nhp;
    }
    return !constant;
}

#endif
