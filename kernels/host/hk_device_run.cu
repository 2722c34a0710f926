/* hk_device_run.cu - one device's part of an hk_cuda_score call: its shares
 * cut into chunks, planned, packed, copied in, launched and collected
 * through the device's slots (hk_dev_run). See hk_host_internal.h. */
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "hk_cuda_internal.h"
#include "hk_host_internal.h"
#include "hk_pdhmm_internal.h"

/* The region holding read r (regions without reads skipped). */
static size_t region_of_read(const hk_batch_t *b, size_t r)
{
    size_t lo = 0, hi = b->n_regions;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (b->regions[mid].read0 <= r) lo = mid; else hi = mid;
    }
    while (lo + 1 < b->n_regions && b->regions[lo].n_reads == 0) lo++;
    return lo;
}

/* What a device's shares need: totals, and the largest single read's needs. */
struct hk_extent {
    uint64_t cells = 0, pairs = 0, max_pairs_one = 1, max_items_one = 1;
    size_t in_total = 0, max_one = 0;
    uint32_t max_hap = 0;
};

/* Add share sh of batch b to x in O(1), from the batch's totals and maxima:
 * the cells are exact, pairs and input bytes the batch's in proportion to
 * the share's cells (they only shape the chunk limits), and one read's
 * needs bounded by the batch's longest read and largest region (walking the
 * regions delayed the first chunk). */
static void add_extent(const hk_batch_t *b, const hk_share &sh, hk_extent *x)
{
    const double frac = b->cells ? (double)sh.cells / (double)b->cells
                                  : (double)(sh.r1 - sh.r0) / (double)b->n_reads;
    const uint64_t rpos = b->read_off[b->n_reads], hpos = b->hap_off[b->n_haps];
    /* the input block's bytes: bases and 4 qualities per read position, the
     * read's offset and gap summary, its items, the haplotypes (twice: as
     * they are and padded to a multiple of HK_HAP_ALIGN) */
    const double in_bytes = 5.0 * rpos + (double)b->n_reads * (4 + sizeof(hk_read_gaps_t) + sizeof(hk_item)) +
                            (double)sizeof(hk_item) * b->n_pairs / 4 + (b->pdhmm ? 8.0 : 2.0) * hpos +
                            (8.0 + HK_HAP_ALIGN - 1) * b->n_haps;
    x->cells += sh.cells;
    x->pairs += (uint64_t)(frac * b->n_pairs) + 1;
    x->in_total += (size_t)(frac * in_bytes) + 1;
    x->max_hap = std::max(x->max_hap, b->max_hap_len);
    const uint64_t hcols = b->max_region_hap_cols, nh = b->max_region_haps;
    const size_t one = 5 * hk_align16(b->max_read_len) + 64 + 16 /* gaps */ + hk_align16(hcols) + 4 * nh + 16 +
                       hk_align16(hk_hap2_bytes(hcols, nh)) + 4 * nh + 16 +
                       sizeof(hk_item) * (nh + hcols / HK_ITEM_COLS_MIN + 1) + 64 +
                       (b->pdhmm ? 6 * hcols + 3 * nh + 64 : 0);   /* PDHMM: 4-byte code words, twice */
    x->max_one = std::max(x->max_one, one);
    x->max_pairs_one = std::max<uint64_t>(x->max_pairs_one, nh);
    x->max_items_one = std::max<uint64_t>(x->max_items_one, nh + hcols / HK_ITEM_COLS_MIN + 1);
}

unsigned hk_engine_threads(const hk_cuda_opts_t *opt)
{
    static_assert(HK_ENGINE_HOST_THREADS_MAX == 4, "HK_CUDA_HOST_THREADS's range in hk_knobs.h");
    const int k = opt->host_threads;
    return k > 0 ? (unsigned)k : (unsigned)HK_ENGINE_HOST_THREADS;
}

/* One device's part of an hk_cuda_score call: its shares scored as one
 * stream of chunks, so that the pipeline fills once per call, not once per
 * batch.
 *
 * Chunk j goes to slot j % HK_SLOTS and passes four steps, each in order:
 * planned (and staged, or packed) -> issued (copied in, and packed by the
 * GPU, on the slot's high-priority stream) -> launched (once the bins are
 * back) -> collected. The device's thread plans, issues one chunk at a
 * time, launches and collects; a chunk whose arrays are pinned is staged by
 * it (a list of copies), others (PDHMM, unpinned batches, a small call's)
 * are packed whole by the packing threads, or by this one when it has
 * nothing else to do. No thread waits for another's part of a chunk: on a
 * host whose cores are busy reading, packs split over many threads waited
 * for the slowest (docs/PERFORMANCE.md). */
struct hk_dev_run {
    hk_dev *d;
    hk_call *call;
    int precision;
    double thr, t_start, t_call;
    hk_cuda_stats_t *stats;
    char *err;
    size_t errlen;
    std::vector<hk_share> work;      /* the non-empty shares */
    hk_extent x;
    hk_plan_limits lim{};
    size_t wi = 0;                   /* the share being planned, its batch, region and read */
    hk_batch_t *b = nullptr;
    size_t reg = 0, r = 0;
    uint64_t share_redo = 0;         /* of the share being collected (collected in order) */
    hk_status_t rc = HK_OK;
    std::vector<std::pair<float, float>> busy;   /* each chunk's kernels, ms from d->t0 */
    /* tuning knobs (hk_cuda_opts_t, from hk_knobs.h); the defaults are the product */
    bool one_stream = call->opt->one_stream != 0;
    unsigned ramp = call->opt->ramp;
    unsigned item_cols = call->opt->item_cols;   /* 0: by the chunk's size */
    /* the GPU packs (the host stages: lists the batch's arrays for a copy),
     * but for a small call (set with the call's extent: pack_on_host) */
    bool host_pack = false;
    hk_workq *wq = nullptr;
    uint64_t n_planned = 0, n_issued = 0, n_launched = 0, n_collected = 0;

    hk_dev_run(hk_dev *d_, hk_call *call_, int precision_, double thr_, double t_start_, hk_cuda_stats_t *stats_,
               char *err_, size_t errlen_)
        : d(d_), call(call_), precision(precision_), thr(thr_), t_start(t_start_), t_call(0), stats(stats_),
          err(err_), errlen(errlen_) {}
    hk_slot *slot_of(uint64_t j) { return &d->slot[j % HK_SLOTS]; }
    /* the results of a pinned batch's chunk are copied into its lk[] by the
     * GPU: copying them there on the host ended each call later */
    bool results_direct(const hk_slot *s) const { return call->direct[s->bi] != 0; }
    bool all_done() const { return n_collected == n_planned && r >= work[wi].r1 && wi + 1 >= work.size(); }
    hk_status_t fail(cudaError_t e, const char *what) { return rc = hk_cu_fail(e, what, d->ord, err, errlen); }

    hk_status_t limits();
    void pack(hk_slot *s);
    bool collect();
    void trace_collected(hk_slot *s);
    bool plan();
    bool launch();
    bool issue();
    void wait_gpu();
    void finish();
};

/* Whether this device's part of the call is packed on the host: a call of
 * at most HK_HOST_PACK_MAX_BYTES of input is (a few tens of microseconds of
 * copying, against the GPU's packing and the round trip that brings its
 * bins back before the kernels can be launched: the GKL library's
 * region-sized launches, docs/PERFORMANCE.md), a larger one by the GPU
 * (the host's packing is serial before the first chunk). HK_CUDA_PACK
 * forces either. */
static bool pack_on_host(const hk_extent &x, const hk_cuda_opts_t *opt)
{
    const int k = opt->pack;
    return k == 2 || (k == 0 && x.in_total <= HK_HOST_PACK_MAX_BYTES);
}

/* The chunk limits: about 8 chunks per device for overlap, at least 1e9
 * cells each; a slot's input block at most slot_bytes (the arena's slice)
 * and 1/(2 HK_SLOTS) of free memory; room for the largest read. */
hk_status_t hk_dev_run::limits()
{
    size_t free_b = 0, total_b = 0;
    cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
    if (e != cudaSuccess) return fail(e, "cudaMemGetInfo");
    size_t slot_bytes = HK_SLOT_BYTES;
    if (call->opt->slot_mb >= 0) {        /* a tuning knob: another cap, 0 = none */
        const long long mb = call->opt->slot_mb;
        slot_bytes = mb ? (size_t)mb << 20 : SIZE_MAX;
    }
    lim.cells = std::max<uint64_t>(x.cells / 8 + 1, 1000000000ull);
    lim.min_in_bytes = x.max_one;
    lim.min_pairs = x.max_pairs_one;
    lim.in_bytes = std::max<size_t>(x.max_one, std::min<size_t>({ x.in_total / 3 + (1u << 20), free_b / (2 * HK_SLOTS),
                                                                  slot_bytes }));
    lim.pairs = std::max<uint64_t>(x.max_pairs_one, std::min<uint64_t>({ x.pairs / 3 + 1024, free_b / 64,
                                                                         slot_bytes / (HK_SLOT_BYTES / HK_SLOT_PAIRS) }));
    lim.items = std::max<uint64_t>(x.max_items_one, lim.pairs + (x.in_total >> 8) + 1024);
    if (call->opt->chunk_cells) lim.cells = call->opt->chunk_cells;   /* tests */
    lim.cgap_set = call->opt->cgap_set != 0;
    lim.pd_cg = call->opt->pd_cg != 0;
    if (lim.pairs > 0xffffffffull / 2) lim.pairs = 0xffffffffull / 2;
    return HK_OK;
}

/* Pack (or stage) slot s's planned chunk; on any thread. */
void hk_dev_run::pack(hk_slot *s)
{
    const double tp = hk_now();
    if (s->b->pdhmm) hk_pd_chunk_pack(s->b, &s->ch, s->h_in, &s->degen, nullptr);
    else if (host_pack) hk_chunk_pack(s->b, &s->ch, precision, call->direct[s->bi], s->h_in, &s->degen, nullptr);
    else {                                            /* the GPU writes -inf for these */
        s->degen.clear();
        hk_chunk_stage(s->b, &s->ch, precision, call->direct[s->bi], s->h_in);
    }
    s->trace.pack = (float)((hk_now() - tp) * 1e3);
    __atomic_store_n(&s->packed, 1, __ATOMIC_RELEASE);
}

/* Slot s's chunk is done: its GPU times into the stats and the trace. */
void hk_dev_run::trace_collected(hk_slot *s)
{
    float ms_h2d = 0, ms_k0 = 0, ms_k1 = 0;
    if (cudaEventElapsedTime(&ms_h2d, s->c0, s->k0) == cudaSuccess) stats->h2d_s += ms_h2d * 1e-3;
    if (cudaEventElapsedTime(&ms_k0, d->t0, s->k0) == cudaSuccess &&
        cudaEventElapsedTime(&ms_k1, d->t0, s->k1) == cudaSuccess)
        busy.push_back({ ms_k0, ms_k1 });
    float ms_span = 0;
    if (cudaEventElapsedTime(&ms_span, d->t0, s->k1) == cudaSuccess)
        stats->gpu_span_s = std::max(stats->gpu_span_s, ms_span * 1e-3);
    if (s->trace_ix < HK_CUDA_TRACE_CHUNKS) {
        hk_cuda_chunk_trace_t *tr = &stats->trace[s->trace_ix];
        *tr = s->trace;
        tr->collected = (float)((hk_now() - t_call) * 1e3);
        if (cudaEventElapsedTime(&tr->gpu_copy_in, d->t0, s->c0) != cudaSuccess) tr->gpu_copy_in = -1;
        if (cudaEventElapsedTime(&tr->gpu_kernels, d->t0, s->k0) != cudaSuccess) tr->gpu_kernels = -1;
        tr->gpu_done = ms_span;
        stats->n_trace = std::max(stats->n_trace, s->trace_ix + 1);
    }
    (void)cudaGetLastError();
}

/* Collect finished chunks, oldest first: their results into the batches. */
bool hk_dev_run::collect()
{
    bool progress = false;
    while (n_collected < n_launched) {
        hk_slot *s = slot_of(n_collected);
        cudaError_t e = cudaEventQuery(s->done);
        if (e == cudaErrorNotReady) { (void)cudaGetLastError(); break; }
        if (e != cudaSuccess) { fail(e, "cudaEventQuery"); break; }
        trace_collected(s);
        const double t1 = hk_now();
        double *dst = s->b->lk + s->ch.pair0;
        if (!results_direct(s)) memcpy(dst, s->h_out + 16, s->ch.n_pairs * sizeof(double));
        for (uint64_t p : s->degen) dst[p] = -INFINITY;
        uint32_t nredo;
        memcpy(&nredo, s->h_out, 4);
        /* PDHMM is double only: nothing is recomputed */
        share_redo += precision == HK_PREC_MIXED && !s->b->pdhmm ? nredo + s->ch.n_degen + s->ch.n_long : 0;
        s->busy = false;
        if (s->ends_share) {
            call->share_done(s->bi, share_redo);
            share_redo = 0;
        }
        stats->unpack_s += hk_now() - t1;
        n_collected++;
        progress = true;
    }
    return progress;
}

/* Plan chunks into free slots, and pack them or queue their packing. */
bool hk_dev_run::plan()
{
    bool progress = false;
    while (n_planned - n_collected < HK_SLOTS) {
        if (r >= work[wi].r1 && wi + 1 < work.size()) {   /* on to the next share */
            wi++;
            b = call->b[work[wi].bi];
            r = work[wi].r0;
            reg = region_of_read(b, r);
        }
        if (r >= work[wi].r1) break;
        hk_slot *s = slot_of(n_planned);
        /* each slot is sized when first needed, so that pinning the later
         * slots' memory overlaps the GPU's work on the first chunks */
        const double t_reserve = hk_now();
        if ((rc = hk_slot_reserve(d, s, &lim, x.max_hap, err, errlen))) break;
        s->trace.reserve = (float)((hk_now() - t_reserve) * 1e3);
        lim.items = std::min<uint64_t>(lim.items, lim.in_bytes / sizeof(hk_item));
        while (reg < b->n_regions && r >= (size_t)b->regions[reg].read0 + b->regions[reg].n_reads) reg++;
        /* the first `ramp` chunks are smaller (..., 1/4, 1/2), so that the
         * GPU starts early; making the last ones smaller too was measured
         * no better */
        hk_plan_limits lk = lim;
        if (n_planned < ramp) lk.cells = std::max<uint64_t>(lim.cells >> (ramp - n_planned), 1);
        /* a small chunk lasts as long as its longest item, however few its
         * cells: shorter items there; long ones in large chunks, where each
         * item's pipeline fill costs throughput */
        lk.item_cols = item_cols ? item_cols : lk.cells < 500000000ull ? 256 : lk.cells < 2000000000ull ? 512 : 1024;
        if (hk_chunk_plan(b, &lk, reg, r, work[wi].r1, &s->ch)) {
            hk_cu_seterr(err, errlen, "a read with its haplotypes does not fit CUDA device %d's memory", d->ord);
            rc = HK_E_NOMEM;
            break;
        }
        r = s->ch.r1;
        reg = s->ch.reg1 - 1;
        s->b = b;
        s->bi = work[wi].bi;
        s->ends_share = r >= work[wi].r1;
        s->trace_ix = (unsigned)std::min<uint64_t>(n_planned, UINT_MAX);
        s->packed = 0;
        stats->chunks++;
        /* staging a chunk whose arrays are pinned is a few copies listed: here */
        const bool listed = !b->pdhmm && !host_pack && call->direct[s->bi];
        if (wq && n_planned > 0 && !listed) wq->push([this, s] { pack(s); });
        else pack(s);                                 /* the first: here, at once */
        n_planned++;
        progress = true;
        /* the first is launched before the others are planned; a chunk
         * staged here, before the next is planned */
        if (n_planned == 1 || listed) break;
    }
    return progress;
}

/* Launch the kernels of copied chunks, in order, once their bins are known,
 * and the copies of their results. */
bool hk_dev_run::launch()
{
    bool progress = false;
    while (n_launched < n_issued) {
        hk_slot *s = slot_of(n_launched);
        cudaError_t e;
        if (s->ch.gpack) {
            e = cudaEventQuery(s->counted);
            if (e == cudaErrorNotReady) { (void)cudaGetLastError(); break; }
            if (e != cudaSuccess) { fail(e, "cudaEventQuery"); break; }
            hk_chunk_gpack_done(&s->ch, s->h_in);
        }
        const double te = hk_now();
        cudaStream_t st = d->st[n_launched % HK_SLOTS];
        hk_chunk_dev c = hk_chunk_view(&s->ch, s->d_in, s->d_lk, s->d_redo, s->d_nredo, precision, thr);
        const hk_pd_dev pc = hk_pd_chunk_view(&s->ch, s->d_in, s->d_lk);
        const hk_item *items = reinterpret_cast<const hk_item *>(s->d_in + s->ch.off_items);
        const hk_side *xs = one_stream ? nullptr : &s->side;
        hk_cu_calls cu;
        if (!(HK_CU(cu, cudaStreamWaitEvent, st, s->counted, 0) &&
              HK_CU_SELF(cu, s->b->pdhmm ? hk_pd_chunk_launch(&s->ch, &pc, items, &s->scratch, st, xs, &cu.what)
                                         : hk_chunk_launch(&s->ch, &c, items, &s->scratch, st, xs, &cu.what)) &&
              HK_CU(cu, cudaEventRecord, s->k1, st) &&
              HK_CU(cu, cudaMemcpyAsync, s->h_out, s->d_nredo,
                    results_direct(s) ? 16 : 16 + s->ch.n_pairs * sizeof(double), cudaMemcpyDeviceToHost, st) &&
              (!results_direct(s) || HK_CU(cu, cudaMemcpyAsync, s->b->lk + s->ch.pair0, s->d_lk,
                                           s->ch.n_pairs * sizeof(double), cudaMemcpyDeviceToHost, st)) &&
              HK_CU(cu, cudaEventRecord, s->done, st))) {
            fail(cu.e, cu.what);
            break;
        }
        s->busy = true;
        const double th = hk_now();
        s->trace.enqueue += (float)((th - te) * 1e3);
        s->trace.handed = (float)((th - t_call) * 1e3);
        if (n_launched == 0) stats->dev_first[0] = (float)((th - t_start) * 1e3);
        n_launched++;
        progress = true;
    }
    return progress;
}

/* Copy the next packed chunk in, and have the GPU pack it if it is staged;
 * one at a time, so that launching and collecting never wait behind a row
 * of these; on the slot's high-priority stream, its kernels wait for it.
 * Whether one was issued. */
bool hk_dev_run::issue()
{
    if (n_issued >= n_planned || !__atomic_load_n(&slot_of(n_issued)->packed, __ATOMIC_ACQUIRE)) return false;
    hk_slot *s = slot_of(n_issued);
    const double te = hk_now();
    stats->pack_s += s->trace.pack * 1e-3;
    cudaStream_t st = d->pst[n_issued % HK_SLOTS];
    hk_cu_calls cu;
    if (!((n_issued != 0 || HK_CU(cu, cudaEventRecord, d->t0, st)) &&
          HK_CU(cu, cudaEventRecord, s->c0, st) &&
          (!s->ch.h2d_bytes || HK_CU(cu, cudaMemcpyAsync, s->d_in, s->h_in, s->ch.h2d_bytes, cudaMemcpyHostToDevice, st)) &&
          HK_CU_AS(cu, "cudaMemcpyAsync", hk_chunk_copy_rows(&s->ch, s->d_in, st)) &&
          HK_CU(cu, cudaMemsetAsync, s->d_nredo, 0, 4, st) &&
          HK_CU(cu, cudaEventRecord, s->k0, st) &&
          (!s->ch.gpack || HK_CU_SELF(cu, hk_chunk_gpack(&s->ch, s->d_in, s->d_lk, s->d_tmp, s->tmp_bytes, s->h_in,
                                                         st, &cu.what))) &&
          HK_CU(cu, cudaEventRecord, s->counted, st))) {
        fail(cu.e, cu.what);
        return false;
    }
    s->trace.enqueue = (float)((hk_now() - te) * 1e3);
    s->trace.issued = (float)((te - t_call) * 1e3);
    n_issued++;
    return true;
}

/* All on the GPU: wait for the next chunk's bins or the oldest chunk's end,
 * whichever comes first (waiting on one held back the other: a slot freed
 * meanwhile went unplanned). */
void hk_dev_run::wait_gpu()
{
    const double t0 = hk_now();
    for (;;) {
        if (n_launched < n_issued && cudaEventQuery(slot_of(n_launched)->counted) != cudaErrorNotReady) break;
        if (n_collected < n_launched && cudaEventQuery(slot_of(n_collected)->done) != cudaErrorNotReady) break;
        std::this_thread::yield();                    /* a sleep lasts 50 us or more: too long */
    }
    (void)cudaGetLastError();                         /* errors are reported where the events are used */
    stats->wait_s += hk_now() - t0;
}

/* After the loop: no pack runs on, the device's times into the stats, and
 * nothing left in flight after an error. */
void hk_dev_run::finish()
{
    if (wq) wq->drain();
    std::sort(busy.begin(), busy.end());              /* kernel_s: the union of the chunks' kernels */
    float covered = 0;
    for (const auto &iv : busy) {
        const float a = std::max(iv.first, covered);
        if (iv.second > a) stats->kernel_s += (iv.second - a) * 1e-3;
        covered = std::max(covered, iv.second);
    }
    stats->dev_done[0] = (float)((hk_now() - t_start) * 1e3);
    stats->dev_span[0] = (float)(stats->gpu_span_s * 1e3);
    if (rc) {
        for (int k = 0; k < HK_SLOTS; k++) { cudaStreamSynchronize(d->st[k]); d->slot[k].busy = false; }
        (void)cudaGetLastError();
    }
}

hk_status_t hk_score_on_device(hk_dev *d, hk_call *call, const std::vector<hk_share> &shares,
                           int precision, double thr, double t_start, hk_cuda_stats_t *stats,
                           char *err, size_t errlen)
{
    cudaError_t e = cudaSetDevice(d->ord);
    if (e != cudaSuccess) return hk_cu_fail(e, "cudaSetDevice", d->ord, err, errlen);
    hk_status_t fits = hk_cuda_device_fits(d->ord, err, errlen);   /* no launch it cannot run */
    if (fits != HK_OK) return fits;
    hk_dev_run run(d, call, precision, thr, t_start, stats, err, errlen);
    for (const hk_share &sh : shares) {              /* the empty shares are done now */
        if (sh.r0 >= sh.r1) { call->share_done(sh.bi, 0); continue; }
        run.work.push_back(sh);
        add_extent(call->b[sh.bi], sh, &run.x);
    }
    if (run.work.empty()) return HK_OK;
    run.host_pack = pack_on_host(run.x, call->opt);
    if (!d->wq) {                    /* packing threads (none when they cannot start: this one packs) */
        try { d->wq.reset(new hk_workq(hk_engine_threads(call->opt) - 1)); } catch (...) { d->wq.reset(); }
    }
    if (run.limits()) return run.rc;
    run.b = call->b[run.work[0].bi];
    run.r = run.work[0].r0;
    run.reg = region_of_read(run.b, run.r);
    run.t_call = hk_now();
    run.wq = d->wq.get();
    for (;;) {
        bool progress = run.collect();
        if (run.rc) break;
        progress |= run.plan();
        if (run.rc) break;
        progress |= run.launch();
        if (run.rc) break;
        if (run.issue()) continue;
        if (run.rc) break;
        if (run.all_done()) break;
        if (progress) continue;
        if (run.wq && run.wq->run_one()) continue;    /* pack a queued chunk here */
        if (run.wq && run.n_issued < run.n_planned) {  /* the next is being packed */
            run.wq->wait_done(50);
            continue;
        }
        run.wait_gpu();
    }
    run.finish();
    return run.rc;
}

