/* hk_chunk.cu - chunks of a batch: planning, packing into the pinned input
 * block, the device view, and the launches of one chunk's kernels (the first
 * of them, defined here, makes the haplotypes' padded copy from the packed
 * one, which the host then need not write or copy). See hk_host_internal.h. */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "hk_cuda.h"
#include "hk_cuda_internal.h"
#include "hk_host_internal.h"
#include "hk_items.cuh"
#include "hk_pdhmm_internal.h"

static int fam_configs(int fam)
{
    return fam == HK_FAM_FLOAT ? HK_N_FLOAT_CONFIGS : fam == HK_FAM_DOUBLE ? HK_N_DOUBLE_CONFIGS : HK_N_CGAP_CONFIGS;
}

static int fam_rows(int fam, int cfg)
{
    return fam == HK_FAM_FLOAT ? hk_float_rows(cfg) : fam == HK_FAM_DOUBLE ? hk_double_rows(cfg) : hk_cgap_rows(cfg);
}

/* Bytes of the input block of reads [r0, r1) of nreg regions, haps [h0, h1),
 * `pairs` pairs and at most `items` items, with gap rows or not: a PDHMM
 * chunk's own layout, or the GPU packing's (which has room for what the
 * host's packing puts there). */
static size_t chunk_data_bytes(const hk_batch_t *b, size_t r0, size_t r1, size_t h0, size_t h1, size_t nreg,
                               uint64_t pairs, uint64_t items, bool gap_rows)
{
    if (b->pdhmm) return hk_pd_chunk_data_bytes(b, r0, r1, h0, h1) + hk_align16(items * sizeof(hk_item));
    return hk_gpack_bytes(b, r0, r1, h0, h1, nreg, pairs, gap_rows);
}

/* The constant gap qualities of reads [r0, r1) whose coefficients the
 * constant-gap kernels take as a parameter (hk_chunk::cgap): the most
 * frequent among up to 32 reads spread over the range. A HaplotypeCaller
 * dump without indel recalibration has one set for every read; a launch
 * with a read of another set computes the same coefficients from each read,
 * a little slower (hk_chunk::cgap_foreign). off (hk_plan_limits::cgap_set
 * false: HK_CUDA_CGAP_SET=0, a test knob): no set. */
static hk_read_gaps_t chunk_cgap(const hk_batch_t *b, size_t r0, size_t r1, bool off)
{
    enum { SAMPLES = 32 };
    hk_read_gaps_t seen[SAMPLES];
    unsigned votes[SAMPLES] = { 0 }, n = 0, best = 0;
    const size_t len = r1 - r0, k_max = off ? 0 : std::min<size_t>(SAMPLES, len);
    for (size_t k = 0; k < k_max; k++) {
        const hk_read_gaps_t &g = b->read_gaps[r0 + k * len / k_max];
        if (!g.constant) continue;
        unsigned j = 0;
        while (j < n && !hk_cgap_match(g, seen[j])) j++;
        if (j == n) seen[n++] = g;
        if (++votes[j] > votes[best]) best = j;
    }
    hk_read_gaps_t none = {};
    return n ? seen[best] : none;
}

int hk_chunk_plan(const hk_batch_t *b, const hk_plan_limits *lim, size_t reg, size_t r0,
                  size_t r_end, hk_chunk *ch)
{
    /* grow the chunk while it fits: whole regions at once, else read by read */
    memset(ch, 0, sizeof *ch);
    ch->pd_cg = lim->pd_cg;
    ch->item_cols = std::min(HK_ITEM_COLS, std::max(HK_ITEM_COLS_MIN, lim->item_cols));
    ch->reg0 = reg;
    ch->r0 = r0;
    size_t r = r0, g = reg;
    const size_t h0 = b->regions[reg].hap0;
    uint64_t pairs = 0, cells = 0, items = 0;
    bool full = false;
    bool varied = false;       /* a read of the chunk has gap rows: room for them (constant reads
                                * need two rows of five: chunks of twice the pairs) */
    while (r < r_end && !full) {
        const hk_region_t *rg = &b->regions[g];
        const size_t rend = (size_t)rg->read0 + rg->n_reads;
        if (r >= rend) { g++; continue; }
        const size_t e1 = std::min(r_end, rend), h1 = (size_t)rg->hap0 + rg->n_haps;
        const uint64_t hcols = b->hap_off[h1] - b->hap_off[rg->hap0];
        const uint64_t it1 = rg->n_haps + hcols / ch->item_cols + 1;  /* items of one read, at most */
        {
            const uint64_t n = e1 - r, it = items + n * it1, np = pairs + n * rg->n_haps;
            const uint64_t c = cells + (b->read_off[e1] - b->read_off[r]) * hcols;
            bool v = varied;
            for (size_t k = r; k < e1 && !v; k++) v = !b->read_gaps[k].constant;
            const size_t bytes = chunk_data_bytes(b, r0, e1, h0, h1, g + 1 - reg, np, it, v);
            if (bytes <= lim->in_bytes && np <= lim->pairs && it <= lim->items && c <= lim->cells) {
                items = it; pairs = np; cells = c; varied = v;
                ch->reg1 = g + 1;
                r = e1;
                continue;
            }
        }
        for (; r < e1; r++) {
            const uint32_t m = hk_batch_read_len(b, r);
            const uint64_t np = pairs + rg->n_haps;
            const bool v = varied || !b->read_gaps[r].constant;
            const size_t bytes = chunk_data_bytes(b, r0, r + 1, h0, h1, g + 1 - reg, np, items + it1, v);
            if (r > r0 && (bytes > lim->in_bytes || np > lim->pairs ||
                           cells >= lim->cells || items + it1 > lim->items)) {
                full = true;
                break;
            }
            if (bytes > lim->in_bytes || np > lim->pairs || items + it1 > lim->items) return -1;
            pairs = np;
            items += it1;
            cells += (uint64_t)m * hcols;
            varied = v;
            ch->reg1 = g + 1;
        }
    }
    ch->r1 = r;
    ch->h0 = h0;
    const hk_region_t *last = &b->regions[ch->reg1 - 1];
    ch->h1 = (size_t)last->hap0 + last->n_haps;
    const hk_region_t *first = &b->regions[reg];
    ch->pair0 = first->pair0 + (uint64_t)(r0 - first->read0) * first->n_haps;
    ch->n_pairs = pairs;
    ch->cells = cells;
    ch->has_gap_rows = varied;   /* what GPU packing copies (the host's packing finds it again) */
    ch->cgap = chunk_cgap(b, r0, r, !lim->cgap_set);
    return 0;
}

/* ---- host thread pool ---- */

hk_pool::hk_pool(unsigned workers)
{
    for (unsigned i = 0; i < workers; i++) {
        try { th_.emplace_back(&hk_pool::work, this); } catch (...) { break; }
    }
}

hk_pool::~hk_pool()
{
    {
        std::lock_guard<std::mutex> lk(mu_);
        stop_ = true;
    }
    go_.notify_all();
    for (auto &t : th_) t.join();
}

/* Spin until done() or HK_POOL_SPIN_US have passed; whether done() became true. */
template <typename F> static bool spin_until(F done)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(HK_POOL_SPIN_US);
    for (unsigned k = 0;; k++) {
        if (done()) return true;
        if ((k & 63) == 63 && std::chrono::steady_clock::now() >= until) return false;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");   /* the spin-wait hint, as pause is x86's */
#endif
    }
}

void hk_pool::work()
{
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
        if (!stop_ && gen_ == seen) {
            lk.unlock();
            spin_until([&] { return stop_.load(std::memory_order_relaxed) || gen_.load() != seen; });
            lk.lock();
            sleepers_++;
            go_.wait(lk, [&] { return stop_ || gen_ != seen; });
            sleepers_--;
        }
        if (stop_) return;
        seen = gen_;
        while (next_ < n_) {
            const unsigned i = next_++;
            lk.unlock();
            (*fn_)(i);
            lk.lock();
            if (--left_ == 0) done_.notify_all();
        }
    }
}

void hk_pool::run(unsigned n, const std::function<void(unsigned)> &fn)
{
    if (n <= 1 || th_.empty()) {
        for (unsigned i = 0; i < n; i++) fn(i);
        return;
    }
    std::unique_lock<std::mutex> lk(mu_);
    fn_ = &fn;
    n_ = n;
    next_ = 0;
    left_ = n;
    gen_++;                                 /* under mu_: a worker going to sleep sees it */
    if (sleepers_) go_.notify_all();
    while (next_ < n_) {
        const unsigned i = next_++;
        lk.unlock();
        fn(i);
        lk.lock();
        --left_;
    }
    if (left_) {
        lk.unlock();
        spin_until([&] { return left_.load() == 0; });
        lk.lock();
        done_.wait(lk, [&] { return left_ == 0; });
    }
    fn_ = nullptr;
}

hk_workq::hk_workq(unsigned workers)
{
    for (unsigned i = 0; i < workers; i++) {
        try { th_.emplace_back(&hk_workq::work, this); } catch (...) { break; }
    }
}

hk_workq::~hk_workq()
{
    {
        std::lock_guard<std::mutex> lk(mu_);
        stop_ = true;
    }
    go_.notify_all();
    for (auto &t : th_) t.join();
}

void hk_workq::push(std::function<void()> fn)
{
    {
        std::lock_guard<std::mutex> lk(mu_);
        q_.push_back(std::move(fn));
    }
    go_.notify_one();
}

/* Run the oldest task (lk held, a task queued), and count it ended. */
void hk_workq::run(std::unique_lock<std::mutex> &lk)
{
    std::function<void()> fn = std::move(q_.front());
    q_.pop_front();
    running_++;
    lk.unlock();
    fn();
    lk.lock();
    running_--;
    ended_++;
    done_.notify_all();
}

void hk_workq::work()
{
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
        go_.wait(lk, [&] { return stop_ || !q_.empty(); });
        if (q_.empty()) return;         /* stop_, nothing left */
        run(lk);
    }
}

bool hk_workq::run_one()
{
    std::unique_lock<std::mutex> lk(mu_);
    if (q_.empty()) return false;
    run(lk);
    return true;
}

void hk_workq::wait_done(unsigned us)
{
    std::unique_lock<std::mutex> lk(mu_);
    const uint64_t seen = ended_;
    done_.wait_for(lk, std::chrono::microseconds(us), [&] { return ended_ != seen; });
}

void hk_workq::drain()
{
    std::unique_lock<std::mutex> lk(mu_);
    done_.wait(lk, [&] { return q_.empty() && running_ == 0; });
}

/* Parts to pack a chunk of nr reads in: one per 512 reads, so that chunks
 * of few reads with many haplotypes each (many items per read) still use
 * the pool (2048 reads a part left `haplik bench`'s 72-base workload on 3
 * threads: packing took about a third less time with 512, docs/PERFORMANCE.md).
 * The pool's part_reads (HK_CUDA_PACK_READS, a tuning knob) sets another count. */
static unsigned pack_parts(size_t nr, const hk_pool *pool)
{
    if (!pool) return 1;
    const size_t per = std::max<size_t>(pool->part_reads, 1);
    return (unsigned)std::min<size_t>(nr / per + 1, pool->size());
}

/* Call emit(item, key) for every work item of reads [ra, rb) of chunk ch,
 * in read order; the pairs of empty sequences go to *degen, and reads with
 * gap rows are counted in *n_varied, and the constant-gap configurations
 * that get a read of another set than the chunk's go to *foreign (each
 * when not NULL). The per-read code
 * is the GPU packing's (hk_items.cuh). */
template <typename F>
static void walk_items(const hk_batch_t *b, const hk_chunk *ch, size_t ra, size_t rb,
                       std::vector<uint64_t> *degen, size_t *n_varied, uint32_t *foreign, F &&emit)
{
    const hk_items_src x = hk_items_src_of(*ch, b->read_off + ch->r0, b->hap_off + ch->h0, b->read_gaps + ch->r0,
                                           b->regions + ch->reg0);
    size_t varied = 0;
    uint32_t other = 0;
    uint32_t g = hk_items_region(x, (uint32_t)(ra - ch->r0));
    for (uint32_t i = (uint32_t)(ra - ch->r0); i < (uint32_t)(rb - ch->r0); i++) {
        while (g + 1 < x.n_regions && x.regions[g + 1].read0 <= x.r0 + i) g++;
        varied += hk_read_items(x, g, i, emit, [&](uint32_t out) { if (degen) degen->push_back(out); },
                                foreign ? &other : nullptr);
    }
    if (n_varied) *n_varied = varied;
    if (foreign) *foreign = other;
}

void hk_chunk_bins(hk_chunk *ch, int precision)
{
    const bool dbl = precision == HK_PREC_DOUBLE, long_dbl = precision == HK_PREC_MIXED;
    ch->precision = precision;
    ch->n_single = fam_configs(dbl ? HK_FAM_DOUBLE : HK_FAM_FLOAT);
    ch->n_bins = ch->n_single + 1 + (dbl ? 0 : HK_N_CGAP_CONFIGS) + long_dbl;   /* see HK_CHUNK_BINS */
    ch->long_bin = long_dbl ? ch->n_bins - 1 : -1;
}

/* Pack chunk ch into the staging block `in` and describe it in ch: work
 * items first (binned by kernel and by length), then offsets, gap summaries
 * and rows; of the haplotypes' padded copy only the offsets (the GPU makes
 * it, and marks each haplotype's first base). [0, ch->h2d_bytes) is what the
 * host fills: with `direct` (the batch's arrays are pinned) the read rows and
 * haplotype bases are not packed but listed in ch->copy, to be copied to the
 * GPU from the batch. Reads are split among a few host threads, which count their
 * items by key, then write them straight to their places. precision
 * (HK_PREC_*) picks the families: double, or float with, in mixed mode, the
 * long reads' bin. Degenerate pairs (an empty sequence) get no item: their
 * chunk-relative indices go to *degenerate (their result is log10(0) = -inf). */
void hk_chunk_pack(const hk_batch_t *b, hk_chunk *ch, int precision, bool direct, unsigned char *in,
                   std::vector<uint64_t> *degenerate, hk_pool *pool)
{
    hk_chunk_bins(ch, precision);
    ch->gpack = false;
    const int nbins = ch->n_bins;
    const size_t nkeys = (size_t)nbins * HK_BUCKETS;
    const size_t nr = ch->r1 - ch->r0, nh = ch->h1 - ch->h0;
    const unsigned nt = pack_parts(nr, pool);
    struct part {
        std::vector<uint32_t> count;                 /* items per key, then where the next goes */
        std::vector<uint64_t> degen;
        size_t n_items, n_varied;
        uint32_t foreign;                            /* see hk_chunk::cgap_foreign */
        size_t pads;                                 /* pad columns of the part's haplotypes */
    };
    /* kept from chunk to chunk (no allocations); a reference, so that the
     * pool's threads see this thread's copy, not their own */
    static thread_local std::vector<part> parts_tl;
    std::vector<part> &parts = parts_tl;
    if (parts.size() < nt) parts.resize(nt);
    const uint64_t rbase0 = b->read_off[ch->r0], hbase0 = b->hap_off[ch->h0];
    const size_t rp = b->read_off[ch->r1] - rbase0, hp = b->hap_off[ch->h1] - hbase0;

    /* pass 1: items per key, per thread */
    hk_par_run(pool, nt, [&](unsigned t) {
        part &pt = parts[t];
        pt.count.assign(nkeys, 0);
        pt.degen.clear();
        pt.n_items = 0;
        uint32_t *count = pt.count.data();
        walk_items(b, ch, ch->r0 + nr * t / nt, ch->r0 + nr * (t + 1) / nt, &pt.degen, &pt.n_varied, &pt.foreign,
                   [&](const hk_item &, uint32_t k) { count[k]++; pt.n_items++; });
        pt.pads = 0;
        for (size_t i = ch->h0 + nh * t / nt; i < ch->h0 + nh * (t + 1) / nt; i++)
            pt.pads += hk_hap_pads(b->hap_off[i + 1] - b->hap_off[i]);
    });

    /* offsets of the blocks */
    size_t n_items = 0, n_varied = 0;
    ch->cgap_foreign = 0;
    for (unsigned t = 0; t < nt; t++) {
        n_items += parts[t].n_items;
        n_varied += parts[t].n_varied;
        ch->cgap_foreign |= parts[t].foreign;
    }
    ch->off_items = 0;
    size_t o = hk_align16(n_items * sizeof(hk_item));
    ch->off_read_off = o;
    o += hk_align16((nr + 1) * 4);
    ch->off_hap_off = o;
    o += hk_align16((nh + 1) * 4);
    ch->off_gaps = o;
    o += hk_align16(nr * sizeof(hk_read_gaps_t));
    ch->off_hap_off2 = o;
    o += hk_align16((nh + 1) * 4);
    ch->h2d_bytes = o;                 /* direct: the host fills only what comes before */
    ch->has_gap_rows = n_varied > 0;   /* else no gap rows: less to pack and copy */
    for (int k = 0; k < 5; k++) { ch->off_read[k] = o; if (k < 2 || ch->has_gap_rows) o += hk_align16(rp); }
    ch->off_hbase = o;
    o += hk_align16(hp);
    if (!direct) ch->h2d_bytes = o;
    ch->off_hbase2 = o;                /* last: the GPU fills it (hk_launch_pad_haps) */
    o += hk_align16(hk_hap2_bytes(hp, nh));
    ch->in_bytes = o;
    ch->pad_haps = (uint32_t)nh;
    ch->n_copies = 0;
    const uint8_t *src[5] = { b->read_base, b->read_q, b->read_i, b->read_d, b->read_g };
    if (direct) {                      /* the rows go straight from the batch */
        for (int k = 0; k < (ch->has_gap_rows ? 5 : 2); k++)
            ch->copy[ch->n_copies++] = { src[k] + rbase0, ch->off_read[k], rp };
        ch->copy[ch->n_copies++] = { b->hap_base + hbase0, ch->off_hbase, hp };
    }

    /* where each thread's items of each key go */
    std::vector<uint32_t> start(nkeys + 1, 0);
    for (size_t k = 0; k < nkeys; k++) {
        uint32_t c = 0;
        for (unsigned t = 0; t < nt; t++) c += parts[t].count[k];
        start[k + 1] = start[k] + c;
    }
    for (int c = 0; c < nbins; c++) {
        ch->cfg_begin[c] = start[(size_t)c * HK_BUCKETS];
        ch->cfg_end[c] = start[(size_t)(c + 1) * HK_BUCKETS];
    }
    ch->n_items = (uint32_t)n_items;
    ch->n_long = ch->long_bin >= 0 ? ch->cfg_end[ch->long_bin] - ch->cfg_begin[ch->long_bin] : 0;
    for (size_t k = 0; k < nkeys; k++) {                /* counts become positions */
        uint32_t next = start[k];
        for (unsigned t = 0; t < nt; t++) {
            const uint32_t c = parts[t].count[k];
            parts[t].count[k] = next;
            next += c;
        }
    }
    degenerate->clear();
    for (unsigned t = 0; t < nt; t++)
        degenerate->insert(degenerate->end(), parts[t].degen.begin(), parts[t].degen.end());
    ch->n_degen = (uint32_t)degenerate->size();

    /* pass 2: items to their places, sequences */
    hk_item *items = reinterpret_cast<hk_item *>(in);
    uint32_t *ro = reinterpret_cast<uint32_t *>(in + ch->off_read_off);
    uint32_t *ho = reinterpret_cast<uint32_t *>(in + ch->off_hap_off);
    uint8_t *hb = in + ch->off_hbase;
    uint32_t *ho2 = reinterpret_cast<uint32_t *>(in + ch->off_hap_off2);
    for (size_t t = 0, pads = 0; t < nt; t++) {          /* pad columns before each part's */
        const size_t c = parts[t].pads;
        parts[t].pads = pads;
        pads += c;
    }
    hk_par_run(pool, nt, [&](unsigned t) {
        uint32_t *pos = parts[t].count.data();
        walk_items(b, ch, ch->r0 + nr * t / nt, ch->r0 + nr * (t + 1) / nt, nullptr, nullptr, nullptr,
                   [&](const hk_item &it, uint32_t k) { items[pos[k]++] = it; });
        const size_t ra = nr * t / nt, rb = nr * (t + 1) / nt + (t + 1 == nt);
        for (size_t i = ra; i < rb; i++) ro[i] = (uint32_t)(b->read_off[ch->r0 + i] - rbase0);
        const size_t pa = b->read_off[ch->r0 + nr * t / nt] - rbase0;
        const size_t pb = b->read_off[ch->r0 + nr * (t + 1) / nt] - rbase0;
        if (!direct)
            for (int k = 0; k < 2; k++) memcpy(in + ch->off_read[k] + pa, src[k] + rbase0 + pa, pb - pa);
        const size_t g0 = ch->r0 + nr * t / nt, g1 = ch->r0 + nr * (t + 1) / nt;
        memcpy(in + ch->off_gaps + (g0 - ch->r0) * sizeof(hk_read_gaps_t), b->read_gaps + g0,
               (g1 - g0) * sizeof(hk_read_gaps_t));
        if (ch->has_gap_rows && !direct)          /* rows of the reads that are not constant, by runs */
            for (size_t r = g0; r < g1;) {
                if (b->read_gaps[r].constant) { r++; continue; }
                size_t e = r + 1;
                while (e < g1 && !b->read_gaps[e].constant) e++;
                const size_t qa = b->read_off[r] - rbase0, qb = b->read_off[e] - rbase0;
                for (int k = 2; k < 5; k++) memcpy(in + ch->off_read[k] + qa, src[k] + rbase0 + qa, qb - qa);
                r = e;
            }
        const size_t ha = nh * t / nt, hb_ = nh * (t + 1) / nt;
        for (size_t i = ha; i < hb_ + (t + 1 == nt); i++) ho[i] = (uint32_t)(b->hap_off[ch->h0 + i] - hbase0);
        const size_t qa = b->hap_off[ch->h0 + ha] - hbase0, qb = b->hap_off[ch->h0 + hb_] - hbase0;
        if (!direct) memcpy(hb + qa, b->hap_base + hbase0 + qa, qb - qa);
        /* where the padded copy puts each haplotype (the GPU copies it there):
         * HK_HAP_PAD up to a multiple of HK_HAP_ALIGN after its last base */
        size_t x2 = qa + parts[t].pads;
        for (size_t i = ha; i < hb_; i++) {
            ho2[i] = (uint32_t)x2;
            const size_t n = b->hap_off[ch->h0 + i + 1] - b->hap_off[ch->h0 + i];
            x2 += n + hk_hap_pads(n);
        }
        if (t + 1 == nt) ho2[nh] = (uint32_t)x2;
    });
}

/* The padded copy of the haplotypes: a warp per haplotype. */
__global__ void hk_pad_haps_kernel(hk_chunk_dev c, uint32_t n_haps)
{
    const uint32_t h = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (h < n_haps) hk_pad_hap(c.hbase, c.hap_off, c.hbase2, c.hap_off2, h, threadIdx.x % 32, 32);
}

cudaError_t hk_launch_pad_haps(const hk_chunk_dev *c, uint32_t n_haps, cudaStream_t st)
{
    if (!n_haps) return cudaSuccess;
    const unsigned per_block = 8;                      /* warps */
    hk_pad_haps_kernel<<<(n_haps + per_block - 1) / per_block, 32 * per_block, 0, st>>>(*c, n_haps);
    return cudaGetLastError();
}

cudaError_t hk_pad_kernel_image(void)
{
    cudaFuncAttributes a;
    return cudaFuncGetAttributes(&a, hk_pad_haps_kernel);
}

void hk_chunk_pad_host(const hk_chunk *ch, unsigned char *in)
{
    const uint32_t *ho = reinterpret_cast<const uint32_t *>(in + ch->off_hap_off);
    const uint32_t *ho2 = reinterpret_cast<const uint32_t *>(in + ch->off_hap_off2);
    for (uint32_t h = 0; h < ch->pad_haps; h++) hk_pad_hap(in + ch->off_hbase, ho, in + ch->off_hbase2, ho2, h, 0, 1);
}

/* err(q) on the host, for the kernels' parameters: the device table's values
 * (src/hk_err_values.inc) */
static const double err_of_q[256] = {
#include "hk_err_values.inc"
};

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
    c.gaps = reinterpret_cast<const hk_read_gaps_t *>(d_in + ch->off_gaps);
    c.read_off = reinterpret_cast<const uint32_t *>(d_in + ch->off_read_off);
    c.hbase = d_in + ch->off_hbase;
    c.hap_off = reinterpret_cast<const uint32_t *>(d_in + ch->off_hap_off);
    c.hbase2 = d_in + ch->off_hbase2;
    c.hap_off2 = reinterpret_cast<const uint32_t *>(d_in + ch->off_hap_off2);
    c.lk = d_lk;
    c.redo = d_redo;
    c.n_redo = d_nredo;
    c.threshold = thr;
    c.precision = precision;
    const hk_read_gaps_t &g = ch->cgap;
    c.cgap_set = g;
    c.cgap = hk_cgap_body(err_of_q[g.ins], err_of_q[g.del], err_of_q[g.gcp]);
    return c;
}

/* The rows of chunk ch that go straight from its batch. */
cudaError_t hk_chunk_copy_rows(const hk_chunk *ch, unsigned char *d_in, cudaStream_t st)
{
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < ch->n_copies && e == cudaSuccess; i++)
        if (ch->copy[i].bytes)
            e = cudaMemcpyAsync(d_in + ch->copy[i].off, ch->copy[i].src, ch->copy[i].bytes, cudaMemcpyHostToDevice, st);
    return e;
}

/* Launch every kernel of a chunk on stream st; with xs, the configurations
 * are spread over st and xs's side streams, so that one launch's last wave
 * overlaps the others (mixed mode's recompute waits for all of them). */
cudaError_t hk_chunk_launch(const hk_chunk *ch, const hk_chunk_dev *c, const hk_item *d_items,
                            const hk_scratch *sc, cudaStream_t st, const hk_side *xs,
                            const char **what)
{
    cudaError_t e = cudaSuccess;
    const bool dbl = c->precision == HK_PREC_DOUBLE;
    const int nsingle = ch->n_single;
    cudaStream_t lane[1 + HK_SIDE_STREAMS];
    int nl = 0;
    *what = "hk_cuda haplotype padding launch";
    if ((e = hk_launch_pad_haps(c, ch->pad_haps, st)) != cudaSuccess) return e;
    if ((e = hk_side_fork(st, xs, lane, &nl, what)) != cudaSuccess) return e;
    /* longest tiles first: they have the fewest groups and the longest runs;
     * the multi-tile kernels share the scratch, so they all run on st */
    *what = "hk_cuda multi-tile kernel launch";
    int li = 0;
    {
        const uint32_t b0 = ch->cfg_begin[nsingle], n = ch->cfg_end[nsingle] - b0;
        if (n) {
            e = dbl ? hk_launch_double_multi(c, d_items + b0, n, nullptr, sc, st)
                    : hk_launch_float_multi(c, d_items + b0, n, sc, st);
            li = 1;
        }
        if (e != cudaSuccess) return e;
    }
    if (ch->long_bin >= 0 && ch->n_long) {   /* mixed mode's long reads: double at once */
        e = hk_launch_double_multi(c, d_items + ch->cfg_begin[ch->long_bin], ch->n_long, nullptr, sc, st);
        li = 1;
        if (e != cudaSuccess) return e;
    }
    int order[HK_CHUNK_BINS], rows[HK_CHUNK_BINS], no = 0;
    for (int k = 0; k < ch->n_bins; k++) {
        if (k == nsingle || k == ch->long_bin || ch->cfg_end[k] == ch->cfg_begin[k]) continue;
        rows[k] = k < nsingle ? fam_rows(dbl ? HK_FAM_DOUBLE : HK_FAM_FLOAT, k) : hk_cgap_rows(k - nsingle - 1);
        order[no++] = k;
    }
    std::stable_sort(order, order + no, [&](int a, int b) { return rows[a] > rows[b]; });
    *what = "hk_cuda kernel launch";
    for (int i = 0; i < no; i++) {
        const int k = order[i];
        const uint32_t b0 = ch->cfg_begin[k], n = ch->cfg_end[k] - b0;
        cudaStream_t s = lane[li++ % nl];
        const int cg = k - nsingle - 1;
        e = k > nsingle ? hk_launch_float_cgap(cg, !(ch->cgap_foreign >> cg & 1), c, d_items + b0, n, s)
            : dbl ? hk_launch_double(k, c, d_items + b0, n, s) : hk_launch_float(k, c, d_items + b0, n, s);
        if (e != cudaSuccess) return e;
    }
    if ((e = hk_side_join(st, xs, what)) != cudaSuccess) return e;
    if (c->precision == HK_PREC_MIXED && ch->n_pairs) {
        *what = "hk_cuda double recompute launch";
        e = hk_launch_double_multi(c, c->redo, (uint32_t)ch->n_pairs, c->n_redo, sc, st);
    }
    return e;
}

