/* hk_engine.cu - the CUDA engine behind hk_cuda.h: devices, chunks, streams.
 *
 * hk_cuda_score splits the batch's reads among the engine's devices by cells
 * (so that they finish together), and each device, in its own host thread,
 * cuts its share into chunks that fit its memory. A chunk is packed into a
 * pinned staging buffer (one block: work items, offsets, bases, qualities),
 * copied in with one transfer, scored by one launch per configuration, and its
 * results copied back; two slots on two streams let the packing and copies of
 * one chunk overlap the kernels of the other. Results land at their own
 * places in batch->lk, so the order is the input's whatever the split.
 */
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <thread>
#include <vector>

#include "hk_cuda.h"
#include "hk_cuda_internal.h"
#include "hk_engine_internal.h"

/* ---- errors ---- */

void hk_cu_seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int hk_cu_fail(cudaError_t e, const char *call, int dev, char *err, size_t errlen)
{
    hk_cu_seterr(err, errlen, "%s failed on CUDA device %d: %s", call, dev, cudaGetErrorString(e));
    if (e == cudaErrorMemoryAllocation) return HK_CUDA_ENOMEM;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice)
        return HK_CUDA_ENODEV;
    return HK_CUDA_ERUNTIME;
}

/* ---- devices ---- */

extern "C" int hk_cuda_device_count(int *n, char *err, size_t errlen)
{
    *n = 0;
    int c = 0;
    cudaError_t e = cudaGetDeviceCount(&c);
    if (e != cudaSuccess) {
        hk_cu_seterr(err, errlen, "no usable CUDA device: cudaGetDeviceCount: %s",
                     cudaGetErrorString(e));
        (void)cudaGetLastError();
        return HK_CUDA_ENODEV;
    }
    if (c == 0) {
        hk_cu_seterr(err, errlen, "no usable CUDA device: no GPU is present");
        return HK_CUDA_ENODEV;
    }
    *n = c;
    return HK_CUDA_OK;
}

extern "C" int hk_cuda_device_info(int ordinal, hk_cuda_device_t *info, char *err, size_t errlen)
{
    int n;
    int rc = hk_cuda_device_count(&n, err, errlen);
    if (rc) return rc;
    if (ordinal < 0 || ordinal >= n) {
        hk_cu_seterr(err, errlen, "no CUDA device %d (this host has %d)", ordinal, n);
        return HK_CUDA_ENODEV;
    }
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, ordinal);
    if (e != cudaSuccess) return hk_cu_fail(e, "cudaGetDeviceProperties", ordinal, err, errlen);
    memset(info, 0, sizeof *info);
    info->ordinal = ordinal;
    snprintf(info->name, sizeof info->name, "%s", p.name);
    info->total_mem = p.totalGlobalMem;
    info->cc_major = p.major;
    info->cc_minor = p.minor;
    info->sm_count = p.multiProcessorCount;
    return HK_CUDA_OK;
}

/* ---- engine ---- */

static void slot_free(hk_slot *s)
{
    if (s->h_in) cudaFreeHost(s->h_in);
    if (s->h_out) cudaFreeHost(s->h_out);
    if (s->d_in) cudaFree(s->d_in);
    if (s->d_nredo) cudaFree(s->d_nredo);   /* the base of the results block */
    else if (s->d_lk) cudaFree(s->d_lk);
    if (s->d_redo) cudaFree(s->d_redo);
    if (s->d_scratch) cudaFree(s->d_scratch);
    s->h_in = s->h_out = s->d_in = nullptr;
    s->d_lk = nullptr;
    s->d_redo = nullptr;
    s->d_nredo = nullptr;
    s->d_scratch = nullptr;
    s->scratch = hk_scratch{nullptr, 0, 0};
    s->in_cap = 0;
    s->pairs_cap = 0;
}

static void dev_free(hk_dev *d)
{
    if (cudaSetDevice(d->ord) != cudaSuccess) return;
    for (int k = 0; k < 2; k++) {
        slot_free(&d->slot[k]);
        if (d->slot[k].done) cudaEventDestroy(d->slot[k].done);
        if (d->st[k]) cudaStreamDestroy(d->st[k]);
    }
}

extern "C" int hk_cuda_open(const int *ordinals, int n_devices, hk_cuda_t **out,
                            char *err, size_t errlen)
{
    *out = nullptr;
    if (!ordinals || n_devices <= 0) {
        hk_cu_seterr(err, errlen, "hk_cuda_open: no device given");
        return HK_CUDA_EINVAL;
    }
    int n;
    int rc = hk_cuda_device_count(&n, err, errlen);
    if (rc) return rc;
    hk_cuda_t *cu = new (std::nothrow) hk_cuda_t();
    if (!cu) { hk_cu_seterr(err, errlen, "out of memory opening the CUDA engine"); return HK_CUDA_ENOMEM; }
    cu->dev.resize(n_devices);
    for (int i = 0; i < n_devices; i++) {
        hk_dev *d = &cu->dev[i];
        d->ord = ordinals[i];
        for (int j = 0; j < i; j++)
            if (ordinals[j] == d->ord) {
                hk_cu_seterr(err, errlen, "CUDA device %d is listed twice", d->ord);
                cu->dev.resize(i);
                hk_cuda_close(cu);
                return HK_CUDA_EINVAL;
            }
        if (d->ord < 0 || d->ord >= n) {
            hk_cu_seterr(err, errlen, "no CUDA device %d (this host has %d)", d->ord, n);
            cu->dev.resize(i);
            hk_cuda_close(cu);
            return HK_CUDA_ENODEV;
        }
        cudaError_t e;
        const char *what = "cudaSetDevice";
        if ((e = cudaSetDevice(d->ord)) == cudaSuccess &&
            (what = "cudaGetDeviceProperties", e = cudaGetDeviceProperties(&d->prop, d->ord)) == cudaSuccess) {
            for (int k = 0; k < 2 && e == cudaSuccess; k++) {
                what = "cudaStreamCreateWithFlags";
                e = cudaStreamCreateWithFlags(&d->st[k], cudaStreamNonBlocking);
                if (e == cudaSuccess) {
                    what = "cudaEventCreateWithFlags";
                    e = cudaEventCreateWithFlags(&d->slot[k].done, cudaEventDisableTiming);
                }
            }
        }
        if (e != cudaSuccess) {
            rc = hk_cu_fail(e, what, d->ord, err, errlen);
            cu->dev.resize(i + 1);
            hk_cuda_close(cu);
            return rc;
        }
    }
    *out = cu;
    return HK_CUDA_OK;
}

extern "C" void hk_cuda_close(hk_cuda_t *cu)
{
    if (!cu) return;
    for (auto &d : cu->dev) dev_free(&d);
    delete cu;
}

/* ---- chunks ---- */

static inline size_t align16(size_t x) { return (x + 15) & ~(size_t)15; }

/* The configuration of a read of length m: index in the family's list, or
 * -1 for the multi-tile kernel. */
static int pick_config(uint32_t m, bool dbl)
{
    const int n = dbl ? HK_N_DOUBLE_CONFIGS : HK_N_FLOAT_CONFIGS;
    for (int c = 0; c < n; c++)
        if (m <= (uint32_t)(dbl ? hk_double_rows(c) : hk_float_rows(c))) return c;
    return -1;
}


/* Bytes of the input block of reads [r0, r1) with haps [h0, h1), items excluded. */
static size_t chunk_data_bytes(const hk_batch_t *b, size_t r0, size_t r1, size_t h0, size_t h1)
{
    const size_t rp = b->read_off[r1] - b->read_off[r0];
    const size_t hp = b->hap_off[h1] - b->hap_off[h0];
    return align16((r1 - r0 + 1) * 4) + align16((h1 - h0 + 1) * 4) + 5 * align16(rp) + align16(hp);
}

int hk_chunk_plan(const hk_batch_t *b, const hk_plan_limits *lim, size_t reg, size_t r0,
                  size_t r_end, hk_chunk *ch)
{
    /* grow the chunk read by read while it fits */
    memset(ch, 0, sizeof *ch);
    ch->reg0 = reg;
    ch->r0 = r0;
    size_t r = r0, g = reg;
    uint64_t pairs = 0, cells = 0, items = 0;
    while (r < r_end) {
        const hk_region_t *rg = &b->regions[g];
        if (r >= (size_t)rg->read0 + rg->n_reads) { g++; continue; }
        const size_t h0 = b->regions[reg].hap0, h1 = (size_t)rg->hap0 + rg->n_haps;
        const uint32_t m = hk_batch_read_len(b, r);
        const uint64_t hcols = b->hap_off[h1] - b->hap_off[rg->hap0];
        const uint64_t it = rg->n_haps + hcols / HK_ITEM_COLS + 1;  /* upper bound */
        const size_t bytes = chunk_data_bytes(b, r0, r + 1, h0, h1) + align16((items + it) * sizeof(hk_item));
        const uint64_t np = pairs + rg->n_haps;
        if (r > r0 && (bytes > lim->in_bytes || np > lim->pairs ||
                       cells >= lim->cells || items + it > lim->items))
            break;
        if (bytes > lim->in_bytes || np > lim->pairs || items + it > lim->items) return -1;
        pairs = np;
        items += it;
        cells += (uint64_t)m * hcols;
        ch->reg1 = g + 1;
        r++;
    }
    ch->r1 = r;
    ch->h0 = b->regions[reg].hap0;
    const hk_region_t *last = &b->regions[ch->reg1 - 1];
    ch->h1 = (size_t)last->hap0 + last->n_haps;
    const hk_region_t *first = &b->regions[reg];
    ch->pair0 = first->pair0 + (uint64_t)(r0 - first->read0) * first->n_haps;
    ch->n_pairs = pairs;
    ch->cells = cells;
    return 0;
}

/* Pack chunk ch into the staging block `in` and describe it in ch.
 * dbl: double-precision configurations. */
void hk_chunk_pack(const hk_batch_t *b, hk_chunk *ch, bool dbl, unsigned char *in,
                   double *lk_out, uint64_t *degenerate)
{
    const int ncfg = (dbl ? HK_N_DOUBLE_CONFIGS : HK_N_FLOAT_CONFIGS) + 1; /* + multi */
    /* work items, binned by configuration and ordered by columns (longest
     * first) inside each bin, so that the groups of a warp finish together */
    static thread_local std::vector<hk_item> tmp;
    static thread_local std::vector<uint32_t> key;
    tmp.clear();
    key.clear();
    enum { NB = 64 };
    std::vector<uint32_t> count((size_t)ncfg * NB, 0);
    uint64_t degen = 0;
    size_t g = ch->reg0;
    for (size_t r = ch->r0; r < ch->r1; r++) {
        while (r >= (size_t)b->regions[g].read0 + b->regions[g].n_reads) g++;
        const hk_region_t *rg = &b->regions[g];
        const uint32_t m = hk_batch_read_len(b, r);
        const uint64_t out0 = rg->pair0 + (uint64_t)(r - rg->read0) * rg->n_haps - ch->pair0;
        int cfg = pick_config(m, dbl);
        if (cfg < 0) cfg = ncfg - 1;
        const bool multi = cfg == ncfg - 1;
        uint32_t h = 0;
        while (h < rg->n_haps) {
            hk_item it;
            it.read = (uint32_t)(r - ch->r0);
            it.hap = (uint32_t)(rg->hap0 + h - ch->h0);
            it.out = (uint32_t)(out0 + h);
            uint32_t nh = 0;
            uint64_t cols = 0;
            while (h + nh < rg->n_haps && nh < HK_MAX_ITEM_HAPS && (nh == 0 || !multi)) {
                const uint32_t n = hk_batch_hap_len(b, rg->hap0 + h + nh);
                if (nh > 0 && cols + n > HK_ITEM_COLS) break;
                if (n == 0 || m == 0) break;
                cols += n;
                nh++;
            }
            if (nh == 0) {          /* an empty sequence: no alignment, log10(0) */
                lk_out[out0 + h] = -INFINITY;
                degen++;
                h++;
                continue;
            }
            it.n_haps = nh;
            h += nh;
            uint32_t bucket = (uint32_t)std::min<uint64_t>(cols / 32, NB - 1);
            const uint32_t k = (uint32_t)cfg * NB + (NB - 1 - bucket);
            count[k]++;
            tmp.push_back(it);
            key.push_back(k);
        }
    }
    /* offsets of the bins; the item block comes first */
    std::vector<uint32_t> start(count.size() + 1, 0);
    for (size_t k = 0; k < count.size(); k++) start[k + 1] = start[k] + count[k];
    for (int c = 0; c < ncfg; c++) {
        ch->cfg_begin[c] = start[(size_t)c * NB];
        ch->cfg_end[c] = start[(size_t)(c + 1) * NB];
    }
    ch->n_cfg = ncfg;
    ch->n_items = (uint32_t)tmp.size();
    hk_item *items = reinterpret_cast<hk_item *>(in);
    for (size_t i = 0; i < tmp.size(); i++) items[start[key[i]]++] = tmp[i];
    *degenerate = degen;

    /* offsets and sequences */
    size_t o = align16(tmp.size() * sizeof(hk_item));
    const size_t nr = ch->r1 - ch->r0, nh = ch->h1 - ch->h0;
    uint32_t *ro = reinterpret_cast<uint32_t *>(in + o);
    const uint64_t rbase0 = b->read_off[ch->r0];
    for (size_t i = 0; i <= nr; i++) ro[i] = (uint32_t)(b->read_off[ch->r0 + i] - rbase0);
    ch->off_read_off = o;
    o += align16((nr + 1) * 4);
    uint32_t *ho = reinterpret_cast<uint32_t *>(in + o);
    const uint64_t hbase0 = b->hap_off[ch->h0];
    for (size_t i = 0; i <= nh; i++) ho[i] = (uint32_t)(b->hap_off[ch->h0 + i] - hbase0);
    ch->off_hap_off = o;
    o += align16((nh + 1) * 4);
    const size_t rp = b->read_off[ch->r1] - rbase0, hp = b->hap_off[ch->h1] - hbase0;
    const uint8_t *src[5] = { b->read_base, b->read_q, b->read_i, b->read_d, b->read_g };
    for (int k = 0; k < 5; k++) {
        ch->off_read[k] = o;
        memcpy(in + o, src[k] + rbase0, rp);
        o += align16(rp);
    }
    ch->off_hbase = o;
    uint8_t *hb = in + o;
    memcpy(hb, b->hap_base + hbase0, hp);
    for (size_t i = 0; i < nh; i++)
        if (ho[i] < ho[i + 1]) hb[ho[i]] |= 8;   /* first base of each haplotype */
    o += align16(hp);
    ch->in_bytes = o;
}

/* The device view of a packed chunk at d_in. */
hk_chunk_dev hk_chunk_view(const hk_chunk *ch, unsigned char *d_in, double *d_lk,
                           hk_item *d_redo, uint32_t *d_nredo, int precision, double thr)
{
    hk_chunk_dev c;
    c.rbase = d_in + ch->off_read[0];
    c.rq = d_in + ch->off_read[1];
    c.ri = d_in + ch->off_read[2];
    c.rd = d_in + ch->off_read[3];
    c.rg = d_in + ch->off_read[4];
    c.read_off = reinterpret_cast<const uint32_t *>(d_in + ch->off_read_off);
    c.hbase = d_in + ch->off_hbase;
    c.hap_off = reinterpret_cast<const uint32_t *>(d_in + ch->off_hap_off);
    c.lk = d_lk;
    c.redo = d_redo;
    c.n_redo = d_nredo;
    c.threshold = thr;
    c.precision = precision;
    return c;
}

/* Launch every kernel of a chunk on stream st. */
cudaError_t hk_chunk_launch(const hk_chunk *ch, const hk_chunk_dev *c, const hk_item *d_items,
                            const hk_scratch *sc, cudaStream_t st, const char **what)
{
    cudaError_t e = cudaSuccess;
    const bool dbl = c->precision == HK_PREC_DOUBLE;
    const int nsingle = ch->n_cfg - 1;
    /* longest tiles first: they have the fewest groups and the longest runs */
    *what = "hk_cuda multi-tile kernel launch";
    {
        const uint32_t b0 = ch->cfg_begin[nsingle], n = ch->cfg_end[nsingle] - b0;
        if (n) e = dbl ? hk_launch_double_multi(c, d_items + b0, n, nullptr, sc, st)
                       : hk_launch_float_multi(c, d_items + b0, n, sc, st);
        if (e != cudaSuccess) return e;
    }
    *what = "hk_cuda kernel launch";
    for (int k = nsingle - 1; k >= 0; k--) {
        const uint32_t b0 = ch->cfg_begin[k], n = ch->cfg_end[k] - b0;
        if (!n) continue;
        e = dbl ? hk_launch_double(k, c, d_items + b0, n, st) : hk_launch_float(k, c, d_items + b0, n, st);
        if (e != cudaSuccess) return e;
    }
    if (c->precision == HK_PREC_MIXED && ch->n_pairs) {
        *what = "hk_cuda double recompute launch";
        e = hk_launch_double_multi(c, c->redo, (uint32_t)ch->n_pairs, c->n_redo, sc, st);
    }
    return e;
}

/* ---- buffers ---- */

/* Give slot s room for lim (and scratch for hap length max_hap); on an
 * allocation failure, halve the limits (down to what one read needs). */
int hk_slot_reserve(hk_dev *d, hk_slot *s, hk_plan_limits *lim, uint32_t max_hap,
                    char *err, size_t errlen)
{
    const size_t col_bytes = std::max(hk_float_scratch_col_bytes(), hk_double_scratch_col_bytes());
    const size_t cols = (size_t)max_hap + 1;
    /* scratch: enough groups to fill the GPU with multi-tile work, within 1/8 of memory */
    size_t groups = (size_t)d->prop.multiProcessorCount * 16;
    const size_t sc_budget = d->prop.totalGlobalMem / 8;
    while (groups > 4 && groups * cols * col_bytes > sc_budget) groups /= 2;
    groups &= ~(size_t)3;
    if (groups < 4) groups = 4;
    for (;;) {
        const size_t lk_bytes = align16(lim->pairs * sizeof(double));
        if (s->in_cap >= lim->in_bytes && s->pairs_cap >= lim->pairs &&
            s->scratch.cols >= cols && s->scratch.groups >= groups)
            return HK_CUDA_OK;
        slot_free(s);
        cudaError_t e;
        const char *what = "cudaMalloc";
        if ((e = cudaMalloc(&s->d_in, lim->in_bytes)) == cudaSuccess &&
            (e = cudaMalloc(&s->d_lk, 16 + lk_bytes)) == cudaSuccess &&
            (e = cudaMalloc(&s->d_redo, lim->pairs * sizeof(hk_item))) == cudaSuccess &&
            (e = cudaMalloc(&s->d_scratch, groups * cols * col_bytes)) == cudaSuccess &&
            (what = "cudaHostAlloc", e = cudaHostAlloc(&s->h_in, lim->in_bytes, cudaHostAllocDefault)) == cudaSuccess &&
            (e = cudaHostAlloc(&s->h_out, 16 + lk_bytes, cudaHostAllocDefault)) == cudaSuccess) {
            s->in_cap = lim->in_bytes;
            s->pairs_cap = lim->pairs;
            /* [redo count, 16 bytes][results]: one copy brings both back */
            s->d_nredo = reinterpret_cast<uint32_t *>(s->d_lk);
            s->d_lk = reinterpret_cast<double *>(reinterpret_cast<char *>(s->d_lk) + 16);
            s->scratch.ptr = s->d_scratch;
            s->scratch.cols = cols;
            s->scratch.groups = (uint32_t)groups;
            return HK_CUDA_OK;
        }
        (void)cudaGetLastError();
        slot_free(s);
        if (e != cudaErrorMemoryAllocation) return hk_cu_fail(e, what, d->ord, err, errlen);
        /* shrink and try again */
        if (lim->in_bytes <= lim->min_in_bytes && lim->pairs <= lim->min_pairs && groups <= 4)
            return hk_cu_fail(e, what, d->ord, err, errlen);
        lim->in_bytes = std::max(lim->min_in_bytes, lim->in_bytes / 2);
        lim->pairs = std::max(lim->min_pairs, lim->pairs / 2);
        lim->items = std::max<uint64_t>(lim->min_pairs, lim->items / 2);
        if (groups > 4) groups = std::max<size_t>(4, (groups / 2) & ~(size_t)3);
    }
}

/* ---- scoring ---- */

/* Score reads [r0, r1) of b on device d. */
static int score_on_device(hk_dev *d, hk_batch_t *b, size_t r0, size_t r1, int precision,
                           double thr, uint64_t *recomputed, char *err, size_t errlen)
{
    cudaError_t e = cudaSetDevice(d->ord);
    if (e != cudaSuccess) return hk_cu_fail(e, "cudaSetDevice", d->ord, err, errlen);
    if (r0 >= r1) return HK_CUDA_OK;

    /* limits: about 6 chunks per device for overlap, at least 1e9 cells each;
     * at most 1/4 of free memory per slot; and room for the largest read */
    size_t free_b = 0, total_b = 0;
    e = cudaMemGetInfo(&free_b, &total_b);
    if (e != cudaSuccess) return hk_cu_fail(e, "cudaMemGetInfo", d->ord, err, errlen);
    uint64_t cells = 0, pairs = 0;
    size_t in_total = 0, reg_first = 0;
    {
        size_t lo = 0, hi = b->n_regions;   /* region of read r0 */
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (b->regions[mid].read0 <= r0) lo = mid; else hi = mid;
        }
        while (lo + 1 < b->n_regions && b->regions[lo].n_reads == 0) lo++;
        reg_first = lo;
    }
    size_t max_one = 0;
    uint64_t max_pairs_one = 1;
    for (size_t g = reg_first, r = r0; r < r1; g++) {
        const hk_region_t *rg = &b->regions[g];
        if (rg->n_reads == 0) continue;
        const size_t e1 = std::min<size_t>(r1, (size_t)rg->read0 + rg->n_reads);
        const uint64_t hcols = b->hap_off[rg->hap0 + rg->n_haps] - b->hap_off[rg->hap0];
        for (; r < e1; r++) {
            const uint64_t m = hk_batch_read_len(b, r);
            cells += m * hcols;
            pairs += rg->n_haps;
            in_total += 5 * m + 4 + sizeof(hk_item) * (rg->n_haps / 4 + 1);
            const size_t one = chunk_data_bytes(b, r, r + 1, rg->hap0, (size_t)rg->hap0 + rg->n_haps) +
                               sizeof(hk_item) * (rg->n_haps + hcols / HK_ITEM_COLS + 1) + 64;
            if (one > max_one) max_one = one;
            if (rg->n_haps > max_pairs_one) max_pairs_one = rg->n_haps;
        }
        in_total += hcols + 4 * rg->n_haps;
    }
    hk_plan_limits lim;
    lim.cells = std::max<uint64_t>(cells / 6 + 1, 1000000000ull);
    lim.min_in_bytes = max_one;
    lim.min_pairs = max_pairs_one;
    lim.in_bytes = std::max<size_t>(max_one, std::min<size_t>(in_total / 3 + (1u << 20), free_b / 4));
    lim.pairs = std::max<uint64_t>(max_pairs_one, std::min<uint64_t>(pairs / 3 + 1024, free_b / 64));
    lim.items = lim.pairs + (in_total >> 8) + 1024;
    if (const char *v = getenv("HK_CUDA_CHUNK_CELLS")) {   /* testing: force small chunks */
        char *end;
        unsigned long long c = strtoull(v, &end, 10);
        if (end != v && !*end && c > 0) lim.cells = c;
    }
    if (lim.pairs > 0xffffffffull / 2) lim.pairs = 0xffffffffull / 2;
    for (int k = 0; k < 2; k++) {
        int rc = hk_slot_reserve(d, &d->slot[k], &lim, b->max_hap_len, err, errlen);
        if (rc) return rc;
    }
    lim.items = std::min<uint64_t>(lim.items, lim.in_bytes / sizeof(hk_item));

    size_t reg = reg_first, r = r0;
    int rc = HK_CUDA_OK;
    for (unsigned k = 0;; k++) {
        hk_slot *s = &d->slot[k & 1];
        if (s->busy) {              /* collect the chunk this slot held */
            e = cudaEventSynchronize(s->done);
            if (e != cudaSuccess) { rc = hk_cu_fail(e, "cudaEventSynchronize", d->ord, err, errlen); break; }
            const double *lk = reinterpret_cast<const double *>(s->h_out + 16);
            uint32_t nredo;
            memcpy(&nredo, s->h_out, 4);
            memcpy(b->lk + s->ch.pair0, lk, s->ch.n_pairs * sizeof(double));
            for (uint64_t i = 0; i < s->ch.n_pairs; i++)     /* degenerate pairs */
                if (s->degen && std::isinf(s->lk_host[i])) b->lk[s->ch.pair0 + i] = -INFINITY;
            *recomputed += (precision == HK_PREC_MIXED ? nredo : 0) +
                           (precision == HK_PREC_MIXED ? s->degen : 0);
            s->busy = false;
        }
        if (r >= r1) {
            if (!d->slot[(k + 1) & 1].busy) break;
            continue;
        }
        while (reg < b->n_regions && r >= (size_t)b->regions[reg].read0 + b->regions[reg].n_reads) reg++;
        if (hk_chunk_plan(b, &lim, reg, r, r1, &s->ch)) {
            hk_cu_seterr(err, errlen, "a read with its haplotypes does not fit CUDA device %d's memory", d->ord);
            rc = HK_CUDA_ENOMEM;
            break;
        }
        s->lk_host.clear();
        s->lk_host.resize(s->ch.n_pairs, 0.0);
        hk_chunk_pack(b, &s->ch, precision == HK_PREC_DOUBLE, s->h_in, s->lk_host.data(), &s->degen);
        r = s->ch.r1;
        reg = s->ch.reg1 - 1;
        cudaStream_t st = d->st[k & 1];
        hk_chunk_dev c = hk_chunk_view(&s->ch, s->d_in, s->d_lk, s->d_redo, s->d_nredo, precision, thr);
        const char *what = "cudaMemcpyAsync";
        if ((e = cudaMemcpyAsync(s->d_in, s->h_in, s->ch.in_bytes, cudaMemcpyHostToDevice, st)) != cudaSuccess ||
            (what = "cudaMemsetAsync", e = cudaMemsetAsync(s->d_nredo, 0, 4, st)) != cudaSuccess ||
            (e = hk_chunk_launch(&s->ch, &c, reinterpret_cast<const hk_item *>(s->d_in), &s->scratch, st, &what)) != cudaSuccess ||
            (what = "cudaMemcpyAsync", e = cudaMemcpyAsync(s->h_out, s->d_nredo, 16 + s->ch.n_pairs * sizeof(double),
                                                   cudaMemcpyDeviceToHost, st)) != cudaSuccess ||
            (what = "cudaEventRecord", e = cudaEventRecord(s->done, st)) != cudaSuccess) {
            rc = hk_cu_fail(e, what, d->ord, err, errlen);
            break;
        }
        s->busy = true;
    }
    if (rc) {                        /* leave nothing in flight */
        for (int k = 0; k < 2; k++) { cudaStreamSynchronize(d->st[k]); d->slot[k].busy = false; }
        (void)cudaGetLastError();
    }
    return rc;
}

extern "C" int hk_cuda_score(hk_cuda_t *cu, hk_batch_t *batch, int precision,
                             double float_threshold, char *err, size_t errlen)
{
    if (!cu || !batch || precision < HK_PREC_MIXED || precision > HK_PREC_DOUBLE) {
        hk_cu_seterr(err, errlen, "hk_cuda_score: bad argument");
        return HK_CUDA_EINVAL;
    }
    if (batch->n_reads == 0 || batch->n_pairs == 0) return HK_CUDA_OK;
    const size_t nd = cu->dev.size();
    /* split the reads among the devices by cells */
    std::vector<size_t> cut(nd + 1, batch->n_reads);
    cut[0] = 0;
    if (nd > 1) {
        const double per = (double)batch->cells / nd;
        uint64_t acc = 0;
        size_t dv = 1;
        for (size_t g = 0; g < batch->n_regions && dv < nd; g++) {
            const hk_region_t *rg = &batch->regions[g];
            const uint64_t hcols = batch->hap_off[rg->hap0 + rg->n_haps] - batch->hap_off[rg->hap0];
            for (uint32_t i = 0; i < rg->n_reads && dv < nd; i++) {
                acc += (uint64_t)hk_batch_read_len(batch, rg->read0 + i) * hcols;
                while (dv < nd && acc >= per * dv) cut[dv++] = rg->read0 + i + 1;
            }
        }
    }
    std::vector<uint64_t> rec(nd, 0);
    std::vector<int> rcs(nd, 0);
    std::vector<std::vector<char>> errs(nd, std::vector<char>(512, 0));
    if (nd == 1) {
        rcs[0] = score_on_device(&cu->dev[0], batch, 0, batch->n_reads, precision, float_threshold,
                                 &rec[0], errs[0].data(), 512);
    } else {
        std::vector<std::thread> th;
        for (size_t i = 0; i < nd; i++)
            th.emplace_back([&, i] {
                rcs[i] = score_on_device(&cu->dev[i], batch, cut[i], cut[i + 1], precision,
                                         float_threshold, &rec[i], errs[i].data(), 512);
            });
        for (auto &t : th) t.join();
    }
    for (size_t i = 0; i < nd; i++)
        if (rcs[i]) {
            hk_cu_seterr(err, errlen, "%s", errs[i].data());
            return rcs[i];
        }
    for (size_t i = 0; i < nd; i++) batch->n_recomputed += rec[i];
    return HK_CUDA_OK;
}
