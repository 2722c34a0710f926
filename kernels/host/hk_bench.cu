/* hk_bench.cu - kernel timing for `haplik bench` (see hk_cuda.h). */
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "hk_cuda_bench.h"
#include "hk_cuda_internal.h"
#include "hk_host_internal.h"
#include "hk_pdhmm_internal.h"

extern "C" int hk_cuda_configs(int gaps, int *p, int *k, int max)
{
    const bool cg = gaps == HK_GAPS_CONSTANT;
    const int n = cg ? HK_N_CGAP_CONFIGS : HK_N_FLOAT_CONFIGS;
    for (int c = 0; c < n && c < max; c++) {
        p[c] = cg ? hk_cgap_group(c) : hk_float_group(c);
        k[c] = (cg ? hk_cgap_rows(c) : hk_float_rows(c)) / p[c];
    }
    return n;
}

extern "C" int hk_cuda_double_configs(int *p, int *k, int max)
{
    for (int c = 0; c < HK_N_DOUBLE_CONFIGS && c < max; c++) {
        p[c] = hk_double_group(c);
        k[c] = hk_double_rows(c) / p[c];
    }
    return HK_N_DOUBLE_CONFIGS;
}

extern "C" int hk_cuda_pdhmm_configs(int *p, int *k, int max)
{
    for (int c = 0; c < HK_N_PDHMM_CONFIGS && c < max; c++) {
        p[c] = hk_pdhmm_group(c);
        k[c] = hk_pdhmm_rows(c) / p[c];
    }
    return HK_N_PDHMM_CONFIGS;
}

extern "C" hk_status_t hk_cuda_bench(hk_cuda_t *cu, hk_batch_t *b, int gaps, int config, int precision, int runs,
                             double *median_s, char *err, size_t errlen)
{
    *median_s = 0;
    const bool cg = gaps == HK_GAPS_CONSTANT, pd = b && b->pdhmm;
    const bool dbl = precision == HK_PREC_DOUBLE && !pd;   /* the double family, whatever the gaps */
    const int n_cfg = pd ? (cg ? HK_N_PDHMM_CG_CONFIGS : HK_N_PDHMM_CONFIGS) : dbl ? HK_N_DOUBLE_CONFIGS
                    : cg ? HK_N_CGAP_CONFIGS : HK_N_FLOAT_CONFIGS;
    if (!cu || !b || runs < 1 || (gaps != HK_GAPS_VARIED && !cg) || config < -1 || config >= n_cfg ||
        precision < HK_PREC_MIXED || precision > HK_PREC_DOUBLE) {
        hk_cu_seterr(err, errlen, "hk_cuda_bench: bad argument");
        return HK_E_INVAL;
    }
    const int rows = config < 0 ? 0 : pd ? (cg ? hk_pdhmm_cg_rows(config) : hk_pdhmm_rows(config))
                                    : dbl ? hk_double_rows(config) : cg ? hk_cgap_rows(config) : hk_float_rows(config);
    if (config >= 0 && b->max_read_len > (uint32_t)rows) {
        hk_cu_seterr(err, errlen, "hk_cuda_bench: reads of %u bases do not fit configuration %d (%d rows)",
                     b->max_read_len, config, rows);
        return HK_E_INVAL;
    }
    if (b->n_pairs == 0 || b->n_regions == 0) return HK_OK;
    hk_dev *d = &cu->dev[0];
    cudaError_t e = cudaSetDevice(d->ord);
    if (e != cudaSuccess) return hk_cu_fail(e, "cudaSetDevice", d->ord, err, errlen);
    const hk_status_t fits = hk_cuda_device_fits(d->ord, err, errlen);
    if (fits != HK_OK) return fits;

    /* the whole batch as one chunk */
    uint64_t items = 16;             /* the planner's bound on the work items */
    for (size_t g = 0; g < b->n_regions; g++) {
        const hk_region_t *rg = &b->regions[g];
        const uint64_t hcols = b->hap_off[rg->hap0 + rg->n_haps] - b->hap_off[rg->hap0];
        items += (uint64_t)rg->n_reads * (rg->n_haps + hcols / HK_ITEM_COLS + 1);
    }
    hk_plan_limits lim;
    lim.in_bytes = lim.min_in_bytes = 5 * (b->n_read_pos + 16 * b->n_reads) + (pd ? 8 : 2) * (b->n_hap_pos + 16 * b->n_haps) +
                                      (b->n_reads + b->n_haps) * 4 + items * sizeof(hk_item) + 4096;
    if (!pd)                           /* the planner's measure: room for GPU packing */
        lim.in_bytes = lim.min_in_bytes = std::max(lim.in_bytes, hk_gpack_bytes(b, 0, b->n_reads, 0, b->n_haps,
                                                                                b->n_regions, b->n_pairs, true));
    lim.pairs = lim.min_pairs = b->n_pairs;
    lim.items = items;
    lim.cells = ~0ull;
    lim.cgap_set = cu->opt.cgap_set != 0;
    lim.pd_cg = cu->opt.pd_cg != 0;
    hk_slot *s = &d->slot[0];
    hk_status_t rc = hk_slot_reserve(d, s, &lim, b->max_hap_len, err, errlen);
    if (rc) return rc;
    if (hk_chunk_plan(b, &lim, 0, 0, b->n_reads, &s->ch) || s->ch.r1 != b->n_reads) {
        hk_cu_seterr(err, errlen, "hk_cuda_bench: the batch does not fit CUDA device %d in one piece", d->ord);
        return HK_E_NOMEM;
    }
    if (pd) hk_pd_chunk_pack(b, &s->ch, s->h_in, &s->degen, nullptr);
    else hk_chunk_pack(b, &s->ch, precision, false, s->h_in, &s->degen, nullptr);
    hk_chunk *ch = &s->ch;
    if (config >= 0) {                 /* every item to the forced configuration */
        /* PDHMM: the packing put every read of the CG form in a CG bin */
        const bool pd_cg_reads = pd && ch->cfg_end[HK_PD_BIN_CG + HK_N_PDHMM_CG_CONFIGS - 1] == ch->n_items &&
                                 ch->cfg_begin[HK_PD_BIN_CG] == 0;
        if (cg && !dbl && (pd ? !pd_cg_reads : ch->has_gap_rows)) {
            hk_cu_seterr(err, errlen, "hk_cuda_bench: the constant-gap kernels need reads with constant gap qualities");
            return HK_E_INVAL;
        }
        const uint32_t n = ch->n_items;
        for (int c = 0; c < ch->n_bins; c++) ch->cfg_begin[c] = ch->cfg_end[c] = 0;
        ch->n_long = 0;
        ch->cfg_end[!cg || dbl ? config : pd ? HK_PD_BIN_CG + config : ch->n_single + 1 + config] = n;
    }
    cudaStream_t st = d->st[0];
    hk_chunk_dev c = hk_chunk_view(ch, s->d_in, s->d_lk, s->d_redo, s->d_nredo, precision, HK_FLOAT_THRESHOLD);
    const hk_pd_dev pc = hk_pd_chunk_view(ch, s->d_in, s->d_lk);
    cudaEvent_t ev0 = nullptr, ev1 = nullptr;
    std::vector<float> ms;
    hk_cu_calls calls;
    if (HK_CU(calls, cudaEventCreate, &ev0) && HK_CU(calls, cudaEventCreate, &ev1) &&
        HK_CU(calls, cudaMemcpyAsync, s->d_in, s->h_in, ch->h2d_bytes, cudaMemcpyHostToDevice, st)) {
        for (int r = -1; r < runs && calls.ok(); r++) {   /* run -1: warm-up */
            if (!HK_CU(calls, cudaEventRecord, ev0, st) || !HK_CU(calls, cudaMemsetAsync, s->d_nredo, 0, 4, st)) break;
            const hk_side *xs = cu->opt.one_stream ? nullptr : &s->side;
            float t = 0;
            if (!HK_CU_SELF(calls, pd ? hk_pd_chunk_launch(ch, &pc, reinterpret_cast<const hk_item *>(s->d_in), &s->scratch,
                                                        st, xs, &calls.what)
                                   : hk_chunk_launch(ch, &c, reinterpret_cast<const hk_item *>(s->d_in), &s->scratch, st,
                                                     xs, &calls.what)) ||
                !HK_CU(calls, cudaEventRecord, ev1, st) || !HK_CU(calls, cudaEventSynchronize, ev1) ||
                !HK_CU(calls, cudaEventElapsedTime, &t, ev0, ev1))
                break;
            if (r >= 0) ms.push_back(t);
        }
    }
    HK_CU(calls, cudaMemcpy, b->lk + ch->pair0, s->d_lk, ch->n_pairs * sizeof(double), cudaMemcpyDeviceToHost);
    if (ev0) cudaEventDestroy(ev0);
    if (ev1) cudaEventDestroy(ev1);
    if (!calls.ok()) return calls.fail(d->ord, err, errlen);
    std::sort(ms.begin(), ms.end());
    *median_s = ms[ms.size() / 2] * 1e-3;
    return HK_OK;
}

/* ---- the runtime calls a scoring call makes, each timed alone ---- */

/* Nothing: its launch and its attribute stand for any kernel's. */
__global__ void hk_probe_kernel(int *p)
{
    if (p) *p = 0;
}

extern "C" int hk_cuda_api_costs(hk_cuda_t *cu, const char **names, double *us, int max)
{
    if (!cu || cu->dev.empty()) return 0;
    hk_dev *d = &cu->dev[0];
    if (cudaSetDevice(d->ord) != cudaSuccess) return 0;
    cudaStream_t st = d->st[0], st2 = d->slot[0].side.st[0];
    cudaEvent_t ev = d->slot[0].side.fork, evt = d->slot[0].c0;
    void *dbuf = nullptr, *hbuf = nullptr;
    if (cudaMalloc(&dbuf, 1 << 20) != cudaSuccess || cudaHostAlloc(&hbuf, 1 << 20, cudaHostAllocDefault) != cudaSuccess) {
        if (dbuf) cudaFree(dbuf);
        (void)cudaGetLastError();
        return 0;
    }
    int n = 0;
    const int reps = 200;
    auto time_it = [&](const char *name, int r, auto fn) {
        if (n >= max) return;
        const double t0 = hk_now();
        for (int i = 0; i < r; i++) fn();
        us[n] = (hk_now() - t0) * 1e6 / r;
        names[n++] = name;
    };
    size_t fr, tot;
    cudaDeviceProp p;
    int dev;
    time_it("first launch of a kernel (lazy module load) + sync", 1, [&] {
        hk_probe_kernel<<<1, 32, 0, st>>>(nullptr); cudaStreamSynchronize(st); });
    time_it("launch + cudaStreamSynchronize (round trip)", reps, [&] {
        hk_probe_kernel<<<1, 32, 0, st>>>(nullptr); cudaStreamSynchronize(st); });
    time_it("kernel launch (enqueue only)", reps, [&] { hk_probe_kernel<<<1, 32, 0, st>>>(nullptr); });
    cudaStreamSynchronize(st);
    time_it("cudaFuncSetAttribute (max dynamic shared memory)", reps, [&] {
        cudaFuncSetAttribute(hk_probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024); });
    time_it("cudaGetDevice", reps, [&] { cudaGetDevice(&dev); });
    time_it("cudaSetDevice", reps, [&] { cudaSetDevice(d->ord); });
    time_it("cudaMemGetInfo", reps, [&] { cudaMemGetInfo(&fr, &tot); });
    time_it("cudaGetDeviceProperties", 20, [&] { cudaGetDeviceProperties(&p, d->ord); });
    time_it("cudaEventRecord (no timing)", reps, [&] { cudaEventRecord(ev, st); });
    time_it("cudaEventRecord (timing)", reps, [&] { cudaEventRecord(evt, st); });
    time_it("cudaStreamWaitEvent", reps, [&] { cudaStreamWaitEvent(st2, ev, 0); });
    time_it("cudaMemsetAsync 4 bytes", reps, [&] { cudaMemsetAsync(dbuf, 0, 4, st); });
    time_it("cudaMemcpyAsync 64 KB in, pinned", reps, [&] { cudaMemcpyAsync(dbuf, hbuf, 65536, cudaMemcpyHostToDevice, st); });
    cudaStreamSynchronize(st);
    cudaStreamSynchronize(st2);
    time_it("cudaMemcpyAsync 16 B out + cudaEventSynchronize (round trip)", reps, [&] {
        cudaMemcpyAsync(hbuf, dbuf, 16, cudaMemcpyDeviceToHost, st); cudaEventRecord(ev, st); cudaEventSynchronize(ev); });
    time_it("cudaEventCreate + cudaEventDestroy", reps, [&] {
        cudaEvent_t e; if (cudaEventCreate(&e) == cudaSuccess) cudaEventDestroy(e); });
    time_it("cudaStreamCreateWithFlags + cudaStreamDestroy", 50, [&] {
        cudaStream_t s; if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess) cudaStreamDestroy(s); });
    time_it("cudaHostAlloc + cudaFreeHost 16 MB", 3, [&] {
        void *h; if (cudaHostAlloc(&h, 16 << 20, cudaHostAllocDefault) == cudaSuccess) cudaFreeHost(h); });
    cudaDeviceSynchronize();
    cudaFree(dbuf);
    cudaFreeHost(hbuf);
    (void)cudaGetLastError();
    return n;
}
