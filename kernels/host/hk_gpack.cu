/* hk_gpack.cu - chunks packed by the GPU. The host stages a chunk: it lists
 * the batch's arrays as they are (rows, haplotype bases, read and haplotype
 * offsets, gap summaries, regions) for a copy (or, when they are not pinned,
 * copies them into the staging block), which is all its work per chunk. The
 * GPU then makes the chunk-relative offsets and the work items, sorts the
 * items by bin and length bucket (a stable CUB radix sort of their places:
 * the host reference's order exactly), writes -inf for the pairs of an empty sequence,
 * and sends back where each bin's items begin and end, which the host needs
 * to launch the chunk's kernels. The per-thread steps are host-and-device
 * functions: the packing tests run them on the host (hk_chunk_gpack_host),
 * the GPU test on the GPU, against the host's packing (hk_chunk_pack). */
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>
#include <cub/device/device_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include "hk_host_internal.h"
#include "hk_items.cuh"

/* What the GPU sends back: the items, the empty-sequence pairs, the bins. */
struct hk_gpack_result {
    uint32_t n_items, n_degen, cgap_foreign, pad;
    uint32_t begin[HK_CHUNK_BINS], end[HK_CHUNK_BINS];
};

#define HK_KEY_BITS 12                              /* a radix sort of two passes */
#define HK_KEY_NONE ((1u << HK_KEY_BITS) - 1)       /* the keys of the unused places: sorted last */
static_assert(HK_CHUNK_BINS * HK_BUCKETS <= HK_KEY_NONE, "keys fit HK_KEY_BITS");

/* The layout of a GPU-packed chunk's block (ch NULL: its size only). What
 * the host fills comes first ([0, h2d_end)): gap summaries, rows, haplotype
 * bases, the batch's offsets and regions; then what the GPU makes. Items
 * have room for one per pair (an item has a pair at least). */
size_t hk_gpack_layout(hk_chunk *ch, size_t nr, size_t nh, size_t nreg, size_t rp, size_t hp, uint64_t pairs,
                       bool gap_rows, size_t *h2d_end)
{
    size_t o = 0;
    auto put = [&o](size_t *off, size_t bytes) { if (off) *off = o; o += hk_align16(bytes); };
    hk_chunk dummy;
    hk_chunk *c = ch ? ch : &dummy;
    put(&c->off_gaps, nr * sizeof(hk_read_gaps_t));
    for (int k = 0; k < 5; k++) put(&c->off_read[k], k < 2 || gap_rows ? rp : 0);
    put(&c->off_hbase, hp);
    put(&c->off_raw_read_off, (nr + 1) * 8);
    put(&c->off_raw_hap_off, (nh + 1) * 8);
    put(&c->off_raw_regions, nreg * sizeof(hk_region_t));
    if (h2d_end) *h2d_end = o;
    put(&c->off_items, pairs * sizeof(hk_item));
    put(&c->off_read_off, (nr + 1) * 4);
    put(&c->off_hap_off, (nh + 1) * 4);
    put(&c->off_hap_off2, (nh + 1) * 4);
    put(&c->off_hbase2, hk_hap2_bytes(hp, nh));
    put(&c->off_cnt, 2 * (nr + 1) * 4);                  /* items per read, then their scan */
    put(&c->off_pads, 2 * (nh + 1) * 4);                 /* pad columns per haplotype, then their scan */
    put(&c->off_keys, 2 * pairs * 2);                    /* in and sorted */
    put(&c->off_order, 2 * pairs * 4);                   /* places in read order, then sorted */
    put(&c->off_items_in, pairs * sizeof(hk_item));
    put(&c->off_result, sizeof(hk_gpack_result));
    return o;
}

size_t hk_gpack_bytes(const hk_batch_t *b, size_t r0, size_t r1, size_t h0, size_t h1, size_t nreg, uint64_t pairs,
                      bool gap_rows)
{
    return hk_gpack_layout(nullptr, r1 - r0, h1 - h0, nreg, b->read_off[r1] - b->read_off[r0],
                           b->hap_off[h1] - b->hap_off[h0], pairs, gap_rows, nullptr);
}

void hk_chunk_stage(const hk_batch_t *b, hk_chunk *ch, int precision, bool direct, unsigned char *in)
{
    hk_chunk_bins(ch, precision);
    const size_t nr = ch->r1 - ch->r0, nh = ch->h1 - ch->h0, nreg = ch->reg1 - ch->reg0;
    const uint64_t rbase0 = b->read_off[ch->r0], hbase0 = b->hap_off[ch->h0];
    const size_t rp = b->read_off[ch->r1] - rbase0, hp = b->hap_off[ch->h1] - hbase0;
    size_t h2d_end;
    ch->in_bytes = hk_gpack_layout(ch, nr, nh, nreg, rp, hp, ch->n_pairs, ch->has_gap_rows, &h2d_end);
    ch->gpack = true;
    ch->pad_haps = (uint32_t)nh;
    ch->n_items = 0;
    ch->n_degen = 0;
    const struct { const void *src; size_t off, bytes; } parts[] = {
        { b->read_gaps + ch->r0, ch->off_gaps, nr * sizeof(hk_read_gaps_t) },
        { b->read_base + rbase0, ch->off_read[0], rp },
        { b->read_q + rbase0, ch->off_read[1], rp },
        { b->read_i + rbase0, ch->off_read[2], ch->has_gap_rows ? rp : 0 },
        { b->read_d + rbase0, ch->off_read[3], ch->has_gap_rows ? rp : 0 },
        { b->read_g + rbase0, ch->off_read[4], ch->has_gap_rows ? rp : 0 },
        { b->hap_base + hbase0, ch->off_hbase, hp },
        { b->read_off + ch->r0, ch->off_raw_read_off, (nr + 1) * 8 },
        { b->hap_off + ch->h0, ch->off_raw_hap_off, (nh + 1) * 8 },
        { b->regions + ch->reg0, ch->off_raw_regions, nreg * sizeof(hk_region_t) } };
    static_assert(sizeof parts / sizeof *parts <= HK_CHUNK_COPIES, "room for the copies");
    ch->n_copies = 0;
    for (const auto &p : parts) {
        if (!p.bytes) continue;
        if (direct) ch->copy[ch->n_copies++] = { p.src, p.off, p.bytes };
        else memcpy(in + p.off, p.src, p.bytes);
    }
    ch->h2d_bytes = direct ? 0 : h2d_end;
}

/* The device's (or the host test's) view of a staged block. */
struct hk_gpack_view {
    hk_items_src src;
    uint32_t *read_off, *hap_off, *hap_off2;   /* chunk-relative, what the kernels read */
    uint32_t *cnt, *first;                     /* items per read; its exclusive scan (n_reads + 1) */
    uint32_t *pads, *pads_before;              /* pad columns per haplotype; their exclusive scan (n_haps + 1) */
    uint16_t *keys_in, *keys_out;
    uint32_t *order_in, *order_out;            /* what the radix sort moves: places in items_in */
    hk_item  *items_in, *items_out;
    hk_gpack_result *res;
    double   *lk;
    uint32_t  cap;                             /* places for items: the chunk's pairs */
};

static hk_gpack_view gpack_view(const hk_chunk *ch, unsigned char *in, double *lk)
{
    hk_gpack_view v;
    v.src = hk_items_src_of(*ch, reinterpret_cast<const uint64_t *>(in + ch->off_raw_read_off),
                            reinterpret_cast<const uint64_t *>(in + ch->off_raw_hap_off),
                            reinterpret_cast<const hk_read_gaps_t *>(in + ch->off_gaps),
                            reinterpret_cast<const hk_region_t *>(in + ch->off_raw_regions));
    const hk_items_src &s = v.src;
    v.read_off = reinterpret_cast<uint32_t *>(in + ch->off_read_off);
    v.hap_off = reinterpret_cast<uint32_t *>(in + ch->off_hap_off);
    v.hap_off2 = reinterpret_cast<uint32_t *>(in + ch->off_hap_off2);
    v.cnt = reinterpret_cast<uint32_t *>(in + ch->off_cnt);
    v.first = v.cnt + s.n_reads + 1;
    v.pads = reinterpret_cast<uint32_t *>(in + ch->off_pads);
    v.pads_before = v.pads + s.n_haps + 1;
    v.keys_in = reinterpret_cast<uint16_t *>(in + ch->off_keys);
    v.keys_out = v.keys_in + ch->n_pairs;
    v.order_in = reinterpret_cast<uint32_t *>(in + ch->off_order);
    v.order_out = v.order_in + ch->n_pairs;
    v.items_in = reinterpret_cast<hk_item *>(in + ch->off_items_in);
    v.items_out = reinterpret_cast<hk_item *>(in + ch->off_items);
    v.res = reinterpret_cast<hk_gpack_result *>(in + ch->off_result);
    v.lk = lk;
    v.cap = (uint32_t)ch->n_pairs;
    return v;
}

/* ---- the steps, one index each (read, haplotype or item place) ---- */

/* chunk-relative offsets; pad columns; items per read; the result zeroed */
__host__ __device__ static inline void step_count(const hk_gpack_view &v, uint32_t i)
{
    const hk_items_src &s = v.src;
    if (i < sizeof *v.res / 4) reinterpret_cast<uint32_t *>(v.res)[i] = 0;
    if (i <= s.n_haps) {
        v.hap_off[i] = (uint32_t)(s.hap_off[i] - s.hap_off[0]);
        v.pads[i] = i < s.n_haps ? hk_hap_pads(s.hap_off[i + 1] - s.hap_off[i]) : 0;
    }
    if (i > s.n_reads) return;
    v.read_off[i] = (uint32_t)(s.read_off[i] - s.read_off[0]);
    uint32_t n = 0;
    if (i < s.n_reads)
        hk_read_items(s, hk_items_region(s, i), i, [&](const hk_item &, uint32_t) { n++; }, [](uint32_t) {});
    v.cnt[i] = n;
}

/* a read's items and keys at their places in read order (the places left
 * over get keys that sort last); where the padded copy puts each haplotype
 * (HK_HAP_PAD up to a multiple of HK_HAP_ALIGN after its last base: the
 * pads before it shift it) */
__host__ __device__ static inline void step_emit(const hk_gpack_view &v, uint32_t i)
{
    const hk_items_src &s = v.src;
    const uint32_t total = v.first[s.n_reads];
    if (i < s.n_reads) {
        uint32_t pos = v.first[i], degen = 0, foreign = 0;
        hk_read_items(s, hk_items_region(s, i), i,
                      [&](const hk_item &it, uint32_t key) { v.keys_in[pos] = (uint16_t)key; v.items_in[pos++] = it; },
                      [&](uint32_t out) { v.lk[out] = -INFINITY; degen++; }, &foreign);
#ifdef __CUDA_ARCH__
        if (degen) atomicAdd(&v.res->n_degen, degen);
        if (foreign) atomicOr(&v.res->cgap_foreign, foreign);
#else
        v.res->n_degen += degen;
        v.res->cgap_foreign |= foreign;
#endif
    }
    if (i < v.cap) v.order_in[i] = i;
    if (i >= total && i < v.cap) v.keys_in[i] = HK_KEY_NONE;
    if (i <= s.n_haps) v.hap_off2[i] = v.hap_off[i] + v.pads_before[i];
}

/* the items in sorted order; where each bin's items begin and end */
__host__ __device__ static inline void step_bounds(const hk_gpack_view &v, uint32_t i)
{
    const uint32_t total = v.first[v.src.n_reads];
    if (i == 0) v.res->n_items = total;
    if (i >= total) return;
    v.items_out[i] = v.items_in[v.order_out[i]];
    const uint32_t bin = v.keys_out[i] / HK_BUCKETS;
    if (i == 0 || v.keys_out[i - 1] / HK_BUCKETS != bin) v.res->begin[bin] = i;
    if (i + 1 == total || v.keys_out[i + 1] / HK_BUCKETS != bin) v.res->end[bin] = i + 1;
}

enum { STEP_COUNT, STEP_EMIT, STEP_BOUNDS };

/* Small blocks: the chunks' forward kernels hold most of every SM until they
 * end, and a packing kernel's block starts only where one fits. */
#define GPACK_THREADS 128

template <int STEP> __global__ void __launch_bounds__(GPACK_THREADS) gpack_kernel(hk_gpack_view v, uint32_t n)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (STEP == STEP_COUNT) step_count(v, i);
    else if (STEP == STEP_EMIT) step_emit(v, i);
    else step_bounds(v, i);
}

template <int STEP> static cudaError_t run_step(const hk_gpack_view &v, uint32_t n, cudaStream_t st)
{
    gpack_kernel<STEP><<<(n + GPACK_THREADS - 1) / GPACK_THREADS, GPACK_THREADS, 0, st>>>(v, n);
    return cudaGetLastError();
}

/* Both exclusive scans, one block each (a chunk has some 10^4 reads: one
 * launch costs the host less than CUB's two per scan); a small block, for
 * the same reason as GPACK_THREADS. */
#define SCAN_THREADS 256
#define SCAN_ITEMS 16
__global__ void __launch_bounds__(SCAN_THREADS) gpack_scan_kernel(hk_gpack_view v)
{
    typedef cub::BlockScan<uint32_t, SCAN_THREADS> scan_t;
    __shared__ typename scan_t::TempStorage tmp;
    const uint32_t *in = blockIdx.x ? v.pads : v.cnt;
    uint32_t *out = blockIdx.x ? v.pads_before : v.first;
    const uint32_t n = blockIdx.x ? v.src.n_haps + 1 : v.src.n_reads + 1;
    uint32_t carry = 0;
    for (uint32_t base = 0; base < n; base += SCAN_THREADS * SCAN_ITEMS) {
        uint32_t x[SCAN_ITEMS], total;
        const uint32_t i0 = base + threadIdx.x * SCAN_ITEMS;
        for (int k = 0; k < SCAN_ITEMS; k++) x[k] = i0 + k < n ? in[i0 + k] : 0;
        scan_t(tmp).ExclusiveSum(x, x, total);
        for (int k = 0; k < SCAN_ITEMS; k++)
            if (i0 + k < n) out[i0 + k] = x[k] + carry;
        carry += total;
        __syncthreads();                               /* tmp is used again */
    }
}

static uint32_t n_steps(const hk_gpack_view &v)
{
    return std::max({ v.src.n_reads + 1, v.src.n_haps + 1, v.cap, (uint32_t)(sizeof *v.res / 4) });
}

size_t hk_gpack_tmp_bytes(uint64_t pairs)
{
    size_t a = 0;
    (void)cub::DeviceRadixSort::SortPairs(nullptr, a, (const uint16_t *)nullptr, (uint16_t *)nullptr,
                                          (const uint32_t *)nullptr, (uint32_t *)nullptr,
                                          (int)std::min<uint64_t>(pairs, INT_MAX), 0, HK_KEY_BITS);
    return a;
}

cudaError_t hk_chunk_gpack(const hk_chunk *ch, unsigned char *d_in, double *d_lk, void *d_tmp, size_t tmp_bytes,
                           unsigned char *h_in, cudaStream_t st, const char **what)
{
    const hk_gpack_view v = gpack_view(ch, d_in, d_lk);
    const uint32_t n = n_steps(v);
    size_t t;
    cudaError_t e;
    *what = "hk_cuda packing";
    if ((e = run_step<STEP_COUNT>(v, n, st)) != cudaSuccess ||
        (gpack_scan_kernel<<<2, SCAN_THREADS, 0, st>>>(v), e = cudaGetLastError()) != cudaSuccess ||
        (e = run_step<STEP_EMIT>(v, n, st)) != cudaSuccess ||
        (t = tmp_bytes, e = cub::DeviceRadixSort::SortPairs(d_tmp, t, v.keys_in, v.keys_out, v.order_in, v.order_out,
                                                            (int)v.cap, 0, HK_KEY_BITS, st)) != cudaSuccess ||
        (e = run_step<STEP_BOUNDS>(v, n, st)) != cudaSuccess)
        return e;
    *what = "cudaMemcpyAsync";
    return cudaMemcpyAsync(h_in + ch->off_result, v.res, sizeof *v.res, cudaMemcpyDeviceToHost, st);
}

void hk_chunk_gpack_host(const hk_chunk *ch, unsigned char *in, double *lk)
{
    const hk_gpack_view v = gpack_view(ch, in, lk);
    const uint32_t n = n_steps(v);
    for (uint32_t i = 0; i < n; i++) step_count(v, i);
    std::exclusive_scan(v.cnt, v.cnt + v.src.n_reads + 1, v.first, 0u);
    std::exclusive_scan(v.pads, v.pads + v.src.n_haps + 1, v.pads_before, 0u);
    for (uint32_t i = 0; i < n; i++) step_emit(v, i);
    std::vector<uint32_t> ix(v.cap);                       /* the radix sort: stable, by key */
    std::iota(ix.begin(), ix.end(), 0u);
    std::stable_sort(ix.begin(), ix.end(), [&](uint32_t a, uint32_t b) { return v.keys_in[a] < v.keys_in[b]; });
    for (uint32_t k = 0; k < v.cap; k++) { v.keys_out[k] = v.keys_in[ix[k]]; v.order_out[k] = v.order_in[ix[k]]; }
    for (uint32_t i = 0; i < n; i++) step_bounds(v, i);
}

void hk_chunk_gpack_done(hk_chunk *ch, const unsigned char *h_in)
{
    const hk_gpack_result *r = reinterpret_cast<const hk_gpack_result *>(h_in + ch->off_result);
    ch->n_items = r->n_items;
    ch->n_degen = r->n_degen;
    ch->cgap_foreign = r->cgap_foreign;
    for (int k = 0; k < ch->n_bins; k++) { ch->cfg_begin[k] = r->begin[k]; ch->cfg_end[k] = r->end[k]; }
    ch->n_long = ch->long_bin >= 0 ? ch->cfg_end[ch->long_bin] - ch->cfg_begin[ch->long_bin] : 0;
}
