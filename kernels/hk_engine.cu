/* hk_engine.cu - the CUDA engine behind hk_cuda.h: devices, buffers, streams.
 *
 * hk_cuda_score splits the batch's reads among the engine's devices by cells
 * (so that they finish together), and each device, in its own host thread,
 * cuts its share into chunks that fit its memory (hk_chunk.cu plans and packs
 * them). A chunk's work items and offsets are packed into a pinned staging
 * block and copied in; its read rows and haplotype bases are copied straight
 * from the batch's arrays when they are pinned (hk_pinned.cu), else packed
 * too. It is scored by one launch per configuration and its results are
 * copied back. A few host threads each pack a chunk whole while the GPU runs
 * earlier ones: twice as many slots as threads, on as many streams. Results
 * land at their own places in batch->lk, so the order is the input's
 * whatever the split.
 */
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "hk_cuda.h"
#include "hk_cuda_internal.h"
#include "hk_engine_internal.h"
#include "hk_pdhmm_internal.h"

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

static double hk_now(void)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

extern "C" void hk_cuda_last_stats(const hk_cuda_t *cu, hk_cuda_stats_t *st)
{
    *st = cu->stats;
}

/* ---- engine ---- */

static void dev_free(hk_dev *d)
{
    if (cudaSetDevice(d->ord) != cudaSuccess) {
        hk_arena_free(&d->arena);
        return;
    }
    for (int k = 0; k < HK_SLOTS; k++) {
        hk_slot_free(&d->slot[k]);
        hk_side *xs = &d->slot[k].side;
        if (k == 0 && d->t0) cudaEventDestroy(d->t0);
        for (cudaEvent_t ev : { d->slot[k].done, d->slot[k].counted, d->slot[k].c0, d->slot[k].k0, d->slot[k].k1, xs->fork })
            if (ev) cudaEventDestroy(ev);
        for (int i = 0; i < HK_SIDE_STREAMS; i++) {
            if (xs->join[i]) cudaEventDestroy(xs->join[i]);
            if (xs->st[i]) cudaStreamDestroy(xs->st[i]);
        }
        if (d->st[k]) cudaStreamDestroy(d->st[k]);
        if (d->pst[k]) cudaStreamDestroy(d->pst[k]);
    }
    hk_arena_free(&d->arena);
}

/* The stager: fault the arenas in while the main thread creates the
 * contexts, then, once hk_cuda_open has returned (go), pin them. */
static void stage_arenas(hk_cuda_t *cu)
{
    const double t0 = hk_now();
    for (hk_dev &d : cu->dev) hk_arena_fill(&d.arena);
    const float fill = (float)((hk_now() - t0) * 1e3);
    int go;
    {
        std::unique_lock<std::mutex> lk(cu->mu);
        cu->open.fill = fill;
        cu->cv.wait(lk, [cu] { return cu->go != 0; });
        go = cu->go;
    }
    const double t1 = hk_now();
    for (hk_dev &d : cu->dev) {
        if (go > 0 && cudaSetDevice(d.ord) == cudaSuccess) hk_arena_register(&d.arena);
        else __atomic_store_n(&d.arena.settled, 1, __ATOMIC_RELEASE);
    }
    (void)cudaGetLastError();
    std::lock_guard<std::mutex> lk(cu->mu);
    cu->open.pin = go > 0 ? (float)((hk_now() - t1) * 1e3) : -1;
}

/* Let the stager go on (go 1) or give up (-1), once. */
static void stager_go(hk_cuda_t *cu, int go)
{
    {
        std::lock_guard<std::mutex> lk(cu->mu);
        if (!cu->go) cu->go = go;
    }
    cu->cv.notify_all();
}

/* Undo a partial hk_cuda_open whose devices [0, n_ready) were set up. */
static int open_failed(hk_cuda_t *cu, size_t n_ready, int rc)
{
    stager_go(cu, -1);
    if (cu->stager.joinable()) cu->stager.join();
    for (size_t i = n_ready; i < cu->dev.size(); i++) hk_arena_free(&cu->dev[i].arena);
    cu->dev.resize(n_ready);
    hk_cuda_close(cu);
    return rc;
}

/* Create device d's context, streams and events; its times in ms go to
 * ms[0..2] (context, properties, streams and events). HK_CUDA_OK or a code
 * with err filled. Devices are set up on threads of their own, at once: each
 * context costs about 0.1 s of driver work, which does not grow when several
 * are made together (docs/PERFORMANCE.md). */
static int dev_open(hk_dev *d, float ms[3], char *err, size_t errlen)
{
    cudaError_t e;
    const char *what = "cudaSetDevice";
    double t = hk_now();
    auto lap = [&t](float *out) { const double u = hk_now(); *out += (float)((u - t) * 1e3); t = u; };
    if ((e = cudaSetDevice(d->ord)) == cudaSuccess && (lap(&ms[0]), true) &&
        (what = "cudaGetDeviceProperties", e = cudaGetDeviceProperties(&d->prop, d->ord)) == cudaSuccess) {
        lap(&ms[1]);
        int least = 0, greatest = 0;   /* the packing streams get the highest priority */
        what = "cudaDeviceGetStreamPriorityRange";
        e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
        for (int k = 0; k < HK_SLOTS && e == cudaSuccess; k++) {
            what = "cudaStreamCreateWithFlags";
            e = cudaStreamCreateWithFlags(&d->st[k], cudaStreamNonBlocking);
            if (e == cudaSuccess) e = cudaStreamCreateWithPriority(&d->pst[k], cudaStreamNonBlocking, greatest);
            if (e == cudaSuccess) {
                what = "cudaEventCreateWithFlags";
                e = cudaEventCreateWithFlags(&d->slot[k].done, cudaEventDisableTiming);
                if (e == cudaSuccess) e = cudaEventCreateWithFlags(&d->slot[k].counted, cudaEventDisableTiming);
            }
            hk_side *xs = &d->slot[k].side;
            what = "cudaStreamCreateWithFlags";
            for (int i = 0; i < HK_SIDE_STREAMS && e == cudaSuccess; i++)
                e = cudaStreamCreateWithFlags(&xs->st[i], cudaStreamNonBlocking);
            what = "cudaEventCreateWithFlags";
            for (int i = 0; i < HK_SIDE_STREAMS && e == cudaSuccess; i++)
                e = cudaEventCreateWithFlags(&xs->join[i], cudaEventDisableTiming);
            if (e == cudaSuccess) e = cudaEventCreateWithFlags(&xs->fork, cudaEventDisableTiming);
            what = "cudaEventCreate";
            if (e == cudaSuccess && k == 0) e = cudaEventCreate(&d->t0);
            if (e == cudaSuccess) e = cudaEventCreate(&d->slot[k].c0);
            if (e == cudaSuccess) e = cudaEventCreate(&d->slot[k].k0);
            if (e == cudaSuccess) e = cudaEventCreate(&d->slot[k].k1);
        }
        lap(&ms[2]);
    }
    return e == cudaSuccess ? HK_CUDA_OK : hk_cu_fail(e, what, d->ord, err, errlen);
}

extern "C" int hk_cuda_open(const int *ordinals, int n_devices, hk_cuda_t **out,
                            char *err, size_t errlen)
{
    *out = nullptr;
    if (!ordinals || n_devices <= 0) {
        hk_cu_seterr(err, errlen, "hk_cuda_open: no device given");
        return HK_CUDA_EINVAL;
    }
    const double t_open = hk_now();
    int n;
    int rc = hk_cuda_device_count(&n, err, errlen);
    if (rc) return rc;
    for (int i = 0; i < n_devices; i++) {
        for (int j = 0; j < i; j++)
            if (ordinals[j] == ordinals[i]) {
                hk_cu_seterr(err, errlen, "CUDA device %d is listed twice", ordinals[i]);
                return HK_CUDA_EINVAL;
            }
        if (ordinals[i] < 0 || ordinals[i] >= n) {
            hk_cu_seterr(err, errlen, "no CUDA device %d (this host has %d)", ordinals[i], n);
            return HK_CUDA_ENODEV;
        }
    }
    hk_cuda_t *cu = new (std::nothrow) hk_cuda_t();
    if (!cu) { hk_cu_seterr(err, errlen, "out of memory opening the CUDA engine"); return HK_CUDA_ENOMEM; }
    cu->open.count = (float)((hk_now() - t_open) * 1e3);
    cu->open.pin = -1;
    cu->dev.resize(n_devices);
    for (int i = 0; i < n_devices; i++) cu->dev[i].ord = ordinals[i];
    /* the staging arenas are faulted in while the contexts are created (~0.1 s each) */
    try {
        cu->stager = std::thread(stage_arenas, cu);
    } catch (...) {                  /* no thread: no arenas, the slots pin their own memory */
        for (hk_dev &d : cu->dev) d.arena.settled = 1;
    }
    /* one thread per device beyond the first (this one sets up device 0);
     * a device whose thread cannot be had is set up here after */
    std::vector<int> res(n_devices, HK_CUDA_OK);
    std::vector<std::array<float, 3>> ms(n_devices, std::array<float, 3>{ 0, 0, 0 });
    std::vector<std::array<char, 256>> errs(n_devices);
    std::vector<std::thread> th(n_devices);
    for (int i = 1; i < n_devices; i++) {
        try {
            th[i] = std::thread([&, i] { res[i] = dev_open(&cu->dev[i], ms[i].data(), errs[i].data(), errs[i].size()); });
        } catch (...) {
        }
    }
    res[0] = dev_open(&cu->dev[0], ms[0].data(), errs[0].data(), errs[0].size());
    for (int i = 1; i < n_devices; i++) {
        if (th[i].joinable()) th[i].join();
        else res[i] = dev_open(&cu->dev[i], ms[i].data(), errs[i].data(), errs[i].size());
    }
    for (int i = 0; i < n_devices; i++) {   /* the slowest device's times: the wait */
        cu->open.context = std::max(cu->open.context, ms[i][0]);
        cu->open.props = std::max(cu->open.props, ms[i][1]);
        cu->open.streams = std::max(cu->open.streams, ms[i][2]);
    }
    for (int i = 0; i < n_devices; i++)
        if (res[i] != HK_CUDA_OK) {
            hk_cu_seterr(err, errlen, "%s", errs[i].data());
            return open_failed(cu, (size_t)n_devices, res[i]);
        }
    stager_go(cu, 1);                /* pinning goes on beside the caller */
    cu->open.total = (float)((hk_now() - t_open) * 1e3);
    *out = cu;
    return HK_CUDA_OK;
}

extern "C" void hk_cuda_open_stats(const hk_cuda_t *cu, hk_cuda_open_stats_t *st)
{
    std::lock_guard<std::mutex> lk(const_cast<hk_cuda_t *>(cu)->mu);
    *st = cu->open;
}

extern "C" void hk_cuda_close(hk_cuda_t *cu)
{
    if (!cu) return;
    stager_go(cu, -1);               /* pins nothing more if it has not started */
    if (cu->stager.joinable()) cu->stager.join();
    for (auto &d : cu->dev) dev_free(&d);
    hk_unpin_all(cu);
    delete cu;
}

extern "C" void hk_cuda_reset(const int *ordinals, int n)
{
    for (int i = 0; i < n; i++)
        if (cudaSetDevice(ordinals[i]) == cudaSuccess) (void)cudaDeviceReset();
    (void)cudaGetLastError();
}

/* ---- scoring ---- */

/* One hk_cuda_score call, shared by the devices' threads: which batches are
 * complete, and reporting them to the caller in order. */
struct hk_call {
    hk_batch_t *const *b;
    size_t n;
    hk_cuda_done_fn done;
    void *arg;
    std::vector<std::atomic<int>> left;        /* devices still scoring each batch */
    std::vector<std::atomic<uint64_t>> redo;   /* pairs recomputed in double */
    std::mutex mu;
    std::vector<char> finished;
    std::vector<char> direct;                  /* batch i's arrays are pinned: rows go to the GPU, results
                                                  come back, without a copy on the host */
    size_t next = 0;                           /* first batch not yet reported */

    hk_call(hk_batch_t *const *b_, size_t n_, int n_dev, hk_cuda_done_fn fn, void *a)
        : b(b_), n(n_), done(fn), arg(a), left(n_), redo(n_), finished(n_, 0), direct(n_, 0)
    {
        for (size_t i = 0; i < n; i++) { left[i] = n_dev; redo[i] = 0; }
    }
    /* A device is done with its share of batch i. */
    void share_done(size_t i, uint64_t recomputed)
    {
        redo[i] += recomputed;
        if (--left[i] > 0) return;
        std::lock_guard<std::mutex> g(mu);
        b[i]->n_recomputed += redo[i];
        finished[i] = 1;
        for (; next < n && finished[next]; next++)
            if (done) done(b[next], arg);
    }
};

/* A device's share of one batch: reads [r0, r1) of batch bi, their cells. */
struct hk_share {
    size_t bi, r0, r1;
    uint64_t cells;
};

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
 * regions cost up to 0.6 ms before the first chunk). */
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

unsigned hk_engine_threads()
{
    static const unsigned n = [] {
        const char *v = getenv("HK_CUDA_HOST_THREADS");
        const int k = v ? atoi(v) : 0;
        return k >= 1 && k <= HK_ENGINE_HOST_THREADS_MAX ? (unsigned)k : (unsigned)HK_ENGINE_HOST_THREADS;
    }();
    return n;
}

/* Score the device's shares (one per batch of the call, in batch order) as
 * one stream of chunks: the pipeline fills once per call, not once per batch. */
static int score_on_device(hk_dev *d, hk_call *call, const std::vector<hk_share> &shares,
                           int precision, double thr, double t_start, hk_cuda_stats_t *stats,
                           char *err, size_t errlen)
{
    cudaError_t e = cudaSetDevice(d->ord);
    if (e != cudaSuccess) return hk_cu_fail(e, "cudaSetDevice", d->ord, err, errlen);
    std::vector<hk_share> work;      /* the non-empty shares; the empty ones are done now */
    hk_extent x;
    for (const hk_share &sh : shares) {
        if (sh.r0 >= sh.r1) { call->share_done(sh.bi, 0); continue; }
        work.push_back(sh);
        add_extent(call->b[sh.bi], sh, &x);
    }
    if (work.empty()) return HK_CUDA_OK;
    if (!d->wq) {                    /* packing threads (none when they cannot start: this one packs) */
        try { d->wq.reset(new hk_workq(hk_engine_threads() - 1)); } catch (...) { d->wq.reset(); }
    }

    /* limits: about 8 chunks per device for overlap, at least 1e9 cells each;
     * a slot's input block at most slot_bytes (the arena's slice) and
     * 1/(2 HK_SLOTS) of free memory; room for the largest read */
    size_t free_b = 0, total_b = 0;
    e = cudaMemGetInfo(&free_b, &total_b);
    if (e != cudaSuccess) return hk_cu_fail(e, "cudaMemGetInfo", d->ord, err, errlen);
    size_t slot_bytes = HK_SLOT_BYTES;
    if (const char *v = getenv("HK_CUDA_SLOT_MB")) {   /* measurements: another cap, 0 = none */
        char *end;
        unsigned long long mb = strtoull(v, &end, 10);
        if (end != v && !*end) slot_bytes = mb ? (size_t)mb << 20 : SIZE_MAX;
    }
    hk_plan_limits lim;
    lim.cells = std::max<uint64_t>(x.cells / 8 + 1, 1000000000ull);
    lim.min_in_bytes = x.max_one;
    lim.min_pairs = x.max_pairs_one;
    lim.in_bytes = std::max<size_t>(x.max_one, std::min<size_t>({ x.in_total / 3 + (1u << 20), free_b / (2 * HK_SLOTS),
                                                                  slot_bytes }));
    lim.pairs = std::max<uint64_t>(x.max_pairs_one, std::min<uint64_t>({ x.pairs / 3 + 1024, free_b / 64,
                                                                         slot_bytes / (HK_SLOT_BYTES / HK_SLOT_PAIRS) }));
    lim.items = std::max<uint64_t>(x.max_items_one, lim.pairs + (x.in_total >> 8) + 1024);
    if (const char *v = getenv("HK_CUDA_CHUNK_CELLS")) {   /* testing: force small chunks */
        char *end;
        unsigned long long c = strtoull(v, &end, 10);
        if (end != v && !*end && c > 0) lim.cells = c;
    }
    if (lim.pairs > 0xffffffffull / 2) lim.pairs = 0xffffffffull / 2;

    size_t wi = 0;                   /* the share being planned, its region and read */
    hk_batch_t *b = call->b[work[0].bi];
    size_t reg = region_of_read(b, work[0].r0), r = work[0].r0;
    uint64_t share_redo = 0;         /* of the share being collected (collected in order) */
    int rc = HK_CUDA_OK;
    const double t_call = hk_now();
    std::vector<std::pair<float, float>> busy;   /* each chunk's kernels, ms from d->t0 */
    const bool one_stream = getenv("HK_CUDA_ONE_STREAM") != nullptr;   /* for measurements */
    static const unsigned ramp = [] { const char *v = getenv("HK_CUDA_RAMP"); return v ? (unsigned)atoi(v) % 8 : 4u; }();
    unsigned item_cols = 0;          /* 0: by the chunk's size; HK_CUDA_ITEM_COLS (measurements) forces one */
    if (const char *v = getenv("HK_CUDA_ITEM_COLS")) item_cols = (unsigned)atoi(v);
    /* the GPU packs (the host stages: lists the batch's arrays for a copy)
     * unless HK_CUDA_PACK=host (measurements) */
    static const bool host_pack = [] { const char *v = getenv("HK_CUDA_PACK"); return v && !strcmp(v, "host"); }();
    hk_workq *wq = d->wq.get();
    const unsigned n_slots = HK_SLOTS;
    /* Chunk j goes to slot j % n_slots and passes four steps, each in order:
     * planned (and staged, or packed) -> issued (copied in, and packed by the
     * GPU, on the slot's high-priority stream) -> launched (once the bins are
     * back) -> collected. The device's thread plans, issues one chunk at a
     * time, launches and collects; a chunk whose arrays are pinned is staged
     * by it (a list of copies), others (PDHMM, unpinned batches, HK_CUDA_PACK=host)
     * are packed whole by the packing threads, or by this one when it has
     * nothing else to do. No thread waits for another's part of a chunk: on
     * a host whose cores are busy reading, packs split over 16 threads waited
     * for the slowest, 0.35-5.9 ms a chunk (issue 15). */
    uint64_t n_planned = 0, n_issued = 0, n_launched = 0, n_collected = 0;
    auto slot_of = [&](uint64_t j) { return &d->slot[j % n_slots]; };
    /* the results of a pinned batch's chunk are copied into its lk[] by the
     * GPU; copying them there on the host (7 GB/s) ended each call 0.3-1 ms
     * after its last kernel (H100 traces, issue 15) */
    auto results_direct = [&](const hk_slot *s) { return (bool)call->direct[s->bi]; };
    auto pack = [&, precision](hk_slot *s) {
        const double tp = hk_now();
        if (s->b->pdhmm) hk_pd_chunk_pack(s->b, &s->ch, s->h_in, &s->degen, nullptr);
        else if (host_pack) hk_chunk_pack(s->b, &s->ch, precision, call->direct[s->bi], s->h_in, &s->degen, nullptr);
        else {                                        /* the GPU writes -inf for these */
            s->degen.clear();
            hk_chunk_stage(s->b, &s->ch, precision, call->direct[s->bi], s->h_in);
        }
        s->trace.pack = (float)((hk_now() - tp) * 1e3);
        __atomic_store_n(&s->packed, 1, __ATOMIC_RELEASE);
    };
    for (;;) {
        bool progress = false;
        while (n_collected < n_launched) {            /* collect finished chunks, oldest first */
            hk_slot *s = slot_of(n_collected);
            e = cudaEventQuery(s->done);
            if (e == cudaErrorNotReady) { (void)cudaGetLastError(); break; }
            if (e != cudaSuccess) { rc = hk_cu_fail(e, "cudaEventQuery", d->ord, err, errlen); break; }
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
        if (rc) break;

        while (n_planned - n_collected < n_slots) {   /* plan into free slots */
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
             * no better. HK_CUDA_RAMP (measurements) sets another count. */
            hk_plan_limits lk = lim;
            if (n_planned < ramp) lk.cells = std::max<uint64_t>(lim.cells >> (ramp - n_planned), 1);
            /* a small chunk lasts as long as its longest item (~0.5 ms at 1024
             * columns), however few its cells: shorter items there; long ones in
             * large chunks, where each item's pipeline fill costs throughput */
            lk.item_cols = item_cols ? item_cols : lk.cells < 500000000ull ? 256 : lk.cells < 2000000000ull ? 512 : 1024;
            if (hk_chunk_plan(b, &lk, reg, r, work[wi].r1, &s->ch)) {
                hk_cu_seterr(err, errlen, "a read with its haplotypes does not fit CUDA device %d's memory", d->ord);
                rc = HK_CUDA_ENOMEM;
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
            if (wq && n_planned > 0 && !listed) wq->push([&pack, s] { pack(s); });
            else pack(s);                             /* the first: here, at once */
            n_planned++;
            progress = true;
            /* the first is launched before the others are planned; a chunk
             * staged here, before the next is planned */
            if (n_planned == 1 || listed) break;
        }
        if (rc) break;

        /* launch the kernels of copied chunks, in order, once their bins are known */
        while (n_launched < n_issued) {
            hk_slot *s = slot_of(n_launched);
            if (s->ch.gpack) {
                e = cudaEventQuery(s->counted);
                if (e == cudaErrorNotReady) { (void)cudaGetLastError(); break; }
                if (e != cudaSuccess) { rc = hk_cu_fail(e, "cudaEventQuery", d->ord, err, errlen); break; }
                hk_chunk_gpack_done(&s->ch, s->h_in);
            }
            const double te = hk_now();
            cudaStream_t st = d->st[n_launched % n_slots];
            hk_chunk_dev c = hk_chunk_view(&s->ch, s->d_in, s->d_lk, s->d_redo, s->d_nredo, precision, thr);
            const hk_pd_dev pc = hk_pd_chunk_view(&s->ch, s->d_in, s->d_lk);
            const hk_item *items = reinterpret_cast<const hk_item *>(s->d_in + s->ch.off_items);
            const char *what;
            if ((what = "cudaStreamWaitEvent", e = cudaStreamWaitEvent(st, s->counted, 0)) != cudaSuccess ||
                (e = s->b->pdhmm ? hk_pd_chunk_launch(&s->ch, &pc, items, &s->scratch, st, one_stream ? nullptr : &s->side, &what)
                                 : hk_chunk_launch(&s->ch, &c, items, &s->scratch, st, one_stream ? nullptr : &s->side,
                                                   &what)) != cudaSuccess ||
                (what = "cudaEventRecord", e = cudaEventRecord(s->k1, st)) != cudaSuccess ||
                (what = "cudaMemcpyAsync",
                 e = cudaMemcpyAsync(s->h_out, s->d_nredo, results_direct(s) ? 16 : 16 + s->ch.n_pairs * sizeof(double),
                                     cudaMemcpyDeviceToHost, st)) != cudaSuccess ||
                (results_direct(s) && (e = cudaMemcpyAsync(s->b->lk + s->ch.pair0, s->d_lk, s->ch.n_pairs * sizeof(double),
                                                           cudaMemcpyDeviceToHost, st)) != cudaSuccess) ||
                (what = "cudaEventRecord", e = cudaEventRecord(s->done, st)) != cudaSuccess) {
                rc = hk_cu_fail(e, what, d->ord, err, errlen);
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
        if (rc) break;

        /* copy the next packed chunk in, and have the GPU pack it if it is staged;
         * one at a time, so that launching and collecting never wait behind
         * a row of these (0.15 ms each on an H100 host); on the slot's
         * high-priority stream, its kernels wait for it */
        if (n_issued < n_planned && __atomic_load_n(&slot_of(n_issued)->packed, __ATOMIC_ACQUIRE)) {
            hk_slot *s = slot_of(n_issued);
            const double te = hk_now();
            stats->pack_s += s->trace.pack * 1e-3;
            cudaStream_t st = d->pst[n_issued % n_slots];
            const char *what;
            if ((what = "cudaEventRecord", e = n_issued == 0 ? cudaEventRecord(d->t0, st) : cudaSuccess) != cudaSuccess ||
                (e = cudaEventRecord(s->c0, st)) != cudaSuccess ||
                (what = "cudaMemcpyAsync", e = s->ch.h2d_bytes ? cudaMemcpyAsync(s->d_in, s->h_in, s->ch.h2d_bytes,
                                                                                cudaMemcpyHostToDevice, st) : cudaSuccess) != cudaSuccess ||
                (e = hk_chunk_copy_rows(&s->ch, s->d_in, st)) != cudaSuccess ||
                (what = "cudaMemsetAsync", e = cudaMemsetAsync(s->d_nredo, 0, 4, st)) != cudaSuccess ||
                (what = "cudaEventRecord", e = cudaEventRecord(s->k0, st)) != cudaSuccess ||
                (s->ch.gpack && (e = hk_chunk_gpack(&s->ch, s->d_in, s->d_lk, s->d_tmp, s->tmp_bytes, s->h_in, st,
                                                    &what)) != cudaSuccess) ||
                (what = "cudaEventRecord", e = cudaEventRecord(s->counted, st)) != cudaSuccess) {
                rc = hk_cu_fail(e, what, d->ord, err, errlen);
                break;
            }
            s->trace.enqueue = (float)((hk_now() - te) * 1e3);
            s->trace.issued = (float)((te - t_call) * 1e3);
            n_issued++;
            continue;
        }

        if (n_collected == n_planned && r >= work[wi].r1 && wi + 1 >= work.size()) break;   /* all done */
        if (progress) continue;
        if (wq && wq->run_one()) continue;            /* pack a queued chunk here */
        if (wq && n_issued < n_planned) {             /* the next is being packed */
            wq->wait_done(50);
            continue;
        }
        /* all on the GPU: wait for the next chunk's bins or the oldest chunk's
         * end, whichever comes first (waiting on one held back the other:
         * a slot freed meanwhile went unplanned, 1-2 ms in H100 traces) */
        const double t0 = hk_now();
        for (;;) {
            if (n_launched < n_issued && cudaEventQuery(slot_of(n_launched)->counted) != cudaErrorNotReady) break;
            if (n_collected < n_launched && cudaEventQuery(slot_of(n_collected)->done) != cudaErrorNotReady) break;
            std::this_thread::yield();                /* a sleep lasts 50 us or more: too long */
        }
        (void)cudaGetLastError();                     /* errors are reported where the events are used */
        stats->wait_s += hk_now() - t0;
    }
    if (wq) wq->drain();                              /* no pack runs on once this returns */
    std::sort(busy.begin(), busy.end());       /* kernel_s: the union of the chunks' kernels */
    float covered = 0;
    for (const auto &iv : busy) {
        const float a = std::max(iv.first, covered);
        if (iv.second > a) stats->kernel_s += (iv.second - a) * 1e-3;
        covered = std::max(covered, iv.second);
    }
    stats->dev_done[0] = (float)((hk_now() - t_start) * 1e3);
    stats->dev_span[0] = (float)(stats->gpu_span_s * 1e3);
    if (rc) {                        /* leave nothing in flight */
        for (int k = 0; k < HK_SLOTS; k++) { cudaStreamSynchronize(d->st[k]); d->slot[k].busy = false; }
        (void)cudaGetLastError();
    }
    return rc;
}

/* Cut batch b's reads among nd devices by cells: device i gets reads
 * [cut[i], cut[i+1]), cells[i+1] - cells[i] cells. Region by region; only
 * the regions where a cut falls are walked read by read. */
static void split_by_cells(const hk_batch_t *b, size_t nd, std::vector<size_t> &cut, std::vector<uint64_t> &cells)
{
    cut.assign(nd + 1, b->n_reads);
    cells.assign(nd + 1, b->cells);
    cut[0] = 0;
    cells[0] = 0;
    const double per = (double)b->cells / nd;
    uint64_t acc = 0;
    size_t dv = 1;
    for (size_t g = 0; g < b->n_regions && dv < nd; g++) {
        const hk_region_t *rg = &b->regions[g];
        if (acc + rg->cells < per * dv) {
            acc += rg->cells;
            continue;
        }
        const uint64_t hcols = b->hap_off[rg->hap0 + rg->n_haps] - b->hap_off[rg->hap0];
        for (uint32_t i = 0; i < rg->n_reads && dv < nd; i++) {
            acc += (uint64_t)hk_batch_read_len(b, rg->read0 + i) * hcols;
            while (dv < nd && acc >= per * dv) {
                cut[dv] = rg->read0 + i + 1;
                cells[dv++] = acc;
            }
        }
    }
}

extern "C" int hk_cuda_score(hk_cuda_t *cu, hk_batch_t *const *batches, size_t n_batches, int precision,
                             double float_threshold, hk_cuda_done_fn done, void *arg,
                             char *err, size_t errlen)
{
    bool bad = !cu || (!batches && n_batches) || precision < HK_PREC_MIXED || precision > HK_PREC_DOUBLE;
    for (size_t i = 0; !bad && i < n_batches; i++) bad = !batches[i];
    if (bad) {
        hk_cu_seterr(err, errlen, "hk_cuda_score: bad argument");
        return HK_CUDA_EINVAL;
    }
    const double t_start = hk_now();
    const size_t nd = cu->dev.size();
    hk_call call(batches, n_batches, (int)nd, done, arg);
    for (size_t bi = 0; bi < n_batches; bi++) call.direct[bi] = hk_pin_batch(cu, batches[bi]);
    const double pin_s = hk_now() - t_start;
    /* each batch split among the devices by cells, so that they finish each
     * batch together and batches complete one after the other */
    std::vector<std::vector<hk_share>> shares(nd);
    std::vector<size_t> cut;
    std::vector<uint64_t> cells;
    for (size_t bi = 0; bi < n_batches; bi++) {
        const hk_batch_t *b = batches[bi];
        if (b->n_pairs == 0) {
            cut.assign(nd + 1, 0);
            cells.assign(nd + 1, 0);
        } else {
            split_by_cells(b, nd, cut, cells);
        }
        for (size_t i = 0; i < nd; i++)
            shares[i].push_back(hk_share{ bi, cut[i], cut[i + 1], cells[i + 1] - cells[i] });
    }
    std::vector<hk_cuda_stats_t> st(nd, hk_cuda_stats_t());
    std::vector<int> rcs(nd, 0);
    std::vector<std::vector<char>> errs(nd, std::vector<char>(512, 0));
    if (nd == 1) {
        rcs[0] = score_on_device(&cu->dev[0], &call, shares[0], precision, float_threshold,
                                 t_start, &st[0], errs[0].data(), 512);
    } else {
        std::vector<std::thread> th;
        for (size_t i = 0; i < nd; i++)
            th.emplace_back([&, i] {
                rcs[i] = score_on_device(&cu->dev[i], &call, shares[i], precision,
                                         float_threshold, t_start, &st[i], errs[i].data(), 512);
            });
        for (auto &t : th) t.join();
    }
    for (size_t i = 0; i < nd; i++)
        if (rcs[i]) {
            hk_cu_seterr(err, errlen, "%s", errs[i].data());
            return rcs[i];
        }
    cu->stats = hk_cuda_stats_t();
    for (size_t i = 0; i < nd; i++) {
        cu->stats.pack_s += st[i].pack_s;
        cu->stats.wait_s += st[i].wait_s;
        cu->stats.unpack_s += st[i].unpack_s;
        cu->stats.kernel_s += st[i].kernel_s;
        cu->stats.h2d_s += st[i].h2d_s;
        cu->stats.gpu_span_s = std::max(cu->stats.gpu_span_s, st[i].gpu_span_s);
        if (i == 0) {
            cu->stats.n_trace = st[0].n_trace;
            memcpy(cu->stats.trace, st[0].trace, sizeof st[0].trace);
        }
        cu->stats.chunks += st[i].chunks;
        if (i < HK_CUDA_TRACE_DEVICES) {
            cu->stats.n_dev_trace = (unsigned)i + 1;
            cu->stats.dev_first[i] = st[i].dev_first[0];
            cu->stats.dev_done[i] = st[i].dev_done[0];
            cu->stats.dev_span[i] = st[i].dev_span[0];
        }
    }
    cu->stats.total_s = hk_now() - t_start;
    cu->stats.pin_s = pin_s;
    return HK_CUDA_OK;
}
