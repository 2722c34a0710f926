/* hk_pipeline.cu - the CUDA engine behind hk_cuda.h: devices, buffers, streams.
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
#include "hk_host_internal.h"
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

hk_status_t hk_cu_fail(cudaError_t e, const char *call, int dev, char *err, size_t errlen)
{
    hk_cu_seterr(err, errlen, "%s failed on CUDA device %d: %s", call, dev, cudaGetErrorString(e));
    if (e == cudaErrorMemoryAllocation) return HK_E_NOMEM;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice)
        return HK_E_NODEV;
    return HK_E_RUNTIME;
}

/* ---- devices ---- */

extern "C" hk_status_t hk_cuda_device_count(int *n, char *err, size_t errlen)
{
    *n = 0;
    int c = 0;
    cudaError_t e = cudaGetDeviceCount(&c);
    if (e != cudaSuccess) {
        hk_cu_seterr(err, errlen, "no usable CUDA device: cudaGetDeviceCount: %s",
                     cudaGetErrorString(e));
        (void)cudaGetLastError();
        return HK_E_NODEV;
    }
    if (c == 0) {
        hk_cu_seterr(err, errlen, "no usable CUDA device: no GPU is present");
        return HK_E_NODEV;
    }
    *n = c;
    return HK_OK;
}

extern "C" hk_status_t hk_cuda_device_info(int ordinal, hk_cuda_device_t *info, char *err, size_t errlen)
{
    int n;
    hk_status_t rc = hk_cuda_device_count(&n, err, errlen);
    if (rc) return rc;
    if (ordinal < 0 || ordinal >= n) {
        hk_cu_seterr(err, errlen, "no CUDA device %d (this host has %d)", ordinal, n);
        return HK_E_NODEV;
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
    return HK_OK;
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
static hk_status_t open_failed(hk_cuda_t *cu, size_t n_ready, hk_status_t rc)
{
    stager_go(cu, -1);
    if (cu->stager.joinable()) cu->stager.join();
    for (size_t i = n_ready; i < cu->dev.size(); i++) hk_arena_free(&cu->dev[i].arena);
    cu->dev.resize(n_ready);
    hk_cuda_close(cu);
    return rc;
}

/* Create device d's context, streams and events; its times in ms go to
 * ms[0..2] (context, properties, streams and events). HK_OK or a code with
 * err filled. Devices are set up on threads of their own, at once: a
 * context's driver work does not grow when several are made together
 * (docs/PERFORMANCE.md). */
static hk_status_t dev_open(hk_dev *d, float ms[3], char *err, size_t errlen)
{
    hk_cu_calls cu;   /* each call below is made only while those before it succeeded */
    double t = hk_now();
    auto lap = [&t](float *out) { const double u = hk_now(); *out += (float)((u - t) * 1e3); t = u; };
    if (HK_CU(cu, cudaSetDevice, d->ord) && (lap(&ms[0]), true) &&
        HK_CU(cu, cudaGetDeviceProperties, &d->prop, d->ord)) {
        lap(&ms[1]);
        int least = 0, greatest = 0;   /* the packing streams get the highest priority */
        HK_CU(cu, cudaDeviceGetStreamPriorityRange, &least, &greatest);
        for (int k = 0; k < HK_SLOTS && cu.ok(); k++) {
            HK_CU(cu, cudaStreamCreateWithFlags, &d->st[k], cudaStreamNonBlocking);
            HK_CU(cu, cudaStreamCreateWithPriority, &d->pst[k], cudaStreamNonBlocking, greatest);
            HK_CU(cu, cudaEventCreateWithFlags, &d->slot[k].done, cudaEventDisableTiming);
            HK_CU(cu, cudaEventCreateWithFlags, &d->slot[k].counted, cudaEventDisableTiming);
            hk_side *xs = &d->slot[k].side;
            for (int i = 0; i < HK_SIDE_STREAMS; i++) HK_CU(cu, cudaStreamCreateWithFlags, &xs->st[i], cudaStreamNonBlocking);
            for (int i = 0; i < HK_SIDE_STREAMS; i++) HK_CU(cu, cudaEventCreateWithFlags, &xs->join[i], cudaEventDisableTiming);
            HK_CU(cu, cudaEventCreateWithFlags, &xs->fork, cudaEventDisableTiming);
            if (k == 0) HK_CU(cu, cudaEventCreate, &d->t0);
            HK_CU(cu, cudaEventCreate, &d->slot[k].c0);
            HK_CU(cu, cudaEventCreate, &d->slot[k].k0);
            HK_CU(cu, cudaEventCreate, &d->slot[k].k1);
        }
        lap(&ms[2]);
    }
    return cu.ok() ? HK_OK : cu.fail(d->ord, err, errlen);
}

extern "C" void hk_cuda_set_opts(hk_cuda_t *cu, const hk_cuda_opts_t *opt) { cu->opt = *opt; }

extern "C" hk_status_t hk_cuda_open(const int *ordinals, int n_devices, const hk_cuda_opts_t *opt,
                                    hk_cuda_t **out, char *err, size_t errlen)
{
    *out = nullptr;
    if (!ordinals || n_devices <= 0) {
        hk_cu_seterr(err, errlen, "hk_cuda_open: no device given");
        return HK_E_INVAL;
    }
    const double t_open = hk_now();
    int n;
    hk_status_t rc = hk_cuda_device_count(&n, err, errlen);
    if (rc) return rc;
    for (int i = 0; i < n_devices; i++) {
        for (int j = 0; j < i; j++)
            if (ordinals[j] == ordinals[i]) {
                hk_cu_seterr(err, errlen, "CUDA device %d is listed twice", ordinals[i]);
                return HK_E_INVAL;
            }
        if (ordinals[i] < 0 || ordinals[i] >= n) {
            hk_cu_seterr(err, errlen, "no CUDA device %d (this host has %d)", ordinals[i], n);
            return HK_E_NODEV;
        }
    }
    hk_cuda_t *cu = new (std::nothrow) hk_cuda_t();
    if (!cu) { hk_cu_seterr(err, errlen, "out of memory opening the CUDA engine"); return HK_E_NOMEM; }
    if (opt) cu->opt = *opt;
    else hk_cuda_opts_init(&cu->opt);
    cu->open.count = (float)((hk_now() - t_open) * 1e3);
    cu->open.pin = -1;
    cu->dev.resize(n_devices);
    for (int i = 0; i < n_devices; i++) cu->dev[i].ord = ordinals[i];
    /* the staging arenas are faulted in while the contexts are created */
    try {
        cu->stager = std::thread(stage_arenas, cu);
    } catch (...) {                  /* no thread: no arenas, the slots pin their own memory */
        for (hk_dev &d : cu->dev) d.arena.settled = 1;
    }
    /* one thread per device beyond the first (this one sets up device 0);
     * a device whose thread cannot be had is set up here after */
    std::vector<hk_status_t> res(n_devices, HK_OK);
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
        if (res[i] != HK_OK) {
            hk_cu_seterr(err, errlen, "%s", errs[i].data());
            return open_failed(cu, (size_t)n_devices, res[i]);
        }
    stager_go(cu, 1);                /* pinning goes on beside the caller */
    cu->open.total = (float)((hk_now() - t_open) * 1e3);
    *out = cu;
    return HK_OK;
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

extern "C" hk_status_t hk_cuda_score(hk_cuda_t *cu, hk_batch_t *const *batches, size_t n_batches, int precision,
                             double float_threshold, hk_cuda_done_fn done, void *arg,
                             char *err, size_t errlen)
{
    bool bad = !cu || (!batches && n_batches) || precision < HK_PREC_MIXED || precision > HK_PREC_DOUBLE;
    for (size_t i = 0; !bad && i < n_batches; i++) bad = !batches[i];
    if (bad) {
        hk_cu_seterr(err, errlen, "hk_cuda_score: bad argument");
        return HK_E_INVAL;
    }
    const double t_start = hk_now();
    const size_t nd = cu->dev.size();
    hk_call call(batches, n_batches, (int)nd, &cu->opt, done, arg);
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
    std::vector<hk_status_t> rcs(nd, HK_OK);
    std::vector<std::vector<char>> errs(nd, std::vector<char>(512, 0));
    if (nd == 1) {
        rcs[0] = hk_score_on_device(&cu->dev[0], &call, shares[0], precision, float_threshold,
                                 t_start, &st[0], errs[0].data(), 512);
    } else {
        std::vector<std::thread> th;
        for (size_t i = 0; i < nd; i++)
            th.emplace_back([&, i] {
                rcs[i] = hk_score_on_device(&cu->dev[i], &call, shares[i], precision,
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
    return HK_OK;
}
