/* hk_small.cu - the small-call path's slots and its one round trip (see
 * hk_cuda_small.h). */
#include <atomic>
#include <new>
#include <sched.h>
#include "hk_cuda_internal.h"
#include "hk_host_internal.h"

/* The widest haplotype the kernel holds in shared memory (4 warps of a
 * block, one haplotype each, within the 48 KB a launch gets by default). */
#define SMALL_MAX_HAP 8192

struct hk_small_slot {
    std::atomic<int> taken{ 0 };
    int ord = 0;                        /* the GPU it is on */
    bool ready = false;                 /* stream and memory made (at open, or on first take) */
    bool broken = false;                /* they could not be made: not tried again */
    cudaStream_t st = nullptr;
    unsigned char *host = nullptr;      /* pinned and mapped: the input, and the sums the kernel writes */
    unsigned char *host_dev = nullptr;  /* the same, as the GPU addresses it */
    unsigned char *dev = nullptr;       /* the input's copy */
    unsigned *count = nullptr;          /* device: pairs done in the launch */
    unsigned *flag = nullptr, *flag_dev = nullptr;   /* pinned and mapped: the last launch done */
    unsigned seq = 0;
};

struct hk_cuda_small {
    int n = 0;
    size_t bytes = 0;
    hk_small_slot *slot = nullptr;
};

static size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

extern "C" int hk_small_layout(hk_small_layout_t *lay, int precision, double float_threshold, uint32_t n_pairs,
                               uint32_t n_reads, uint32_t n_haps, uint64_t rows, uint64_t hap_bases, uint32_t max_hap,
                               size_t slot_bytes)
{
    if (max_hap > SMALL_MAX_HAP || rows > UINT32_MAX || hap_bases > UINT32_MAX) return -1;
    lay->n_pairs = n_pairs;
    lay->n_reads = n_reads;
    lay->n_haps = n_haps;
    lay->max_hap = max_hap;
    size_t at = 0;
    lay->pairs = at; at = align8(at + (size_t)n_pairs * sizeof(hk_small_pair_t));
    lay->reads = at; at = align8(at + (size_t)n_reads * sizeof(hk_small_seq_t));
    lay->haps = at;  at = align8(at + (size_t)n_haps * sizeof(hk_small_seq_t));
    lay->rows = at;  at = align8(at + rows * sizeof(hk_small_row_t));
    lay->rbase = at; at = align8(at + rows);
    lay->hbase = at; at = align8(at + hap_bases);
    lay->bytes = at;
    lay->sums = at;  at += (size_t)n_pairs * sizeof(double);
    lay->in_float = at; at += n_pairs;
    lay->precision = precision;
    lay->float_threshold = float_threshold;
    return at <= slot_bytes ? 0 : -1;
}

static void free_slot(hk_small_slot *k)
{
    if (k->st) cudaStreamSynchronize(k->st);
    if (k->dev) cudaFree(k->dev);
    if (k->count) cudaFree(k->count);
    if (k->host) cudaFreeHost(k->host);
    if (k->flag) cudaFreeHost(k->flag);
    if (k->st) cudaStreamDestroy(k->st);
    (void)cudaGetLastError();
    k->st = nullptr;
    k->dev = k->host = k->host_dev = nullptr;
    k->count = k->flag = k->flag_dev = nullptr;
}

/* Make slot k's stream and memory: the first time it is taken (but for
 * each GPU's first, made at open), so that a process with few calling
 * threads pins only what they use. */
static bool make_slot(hk_cuda_small *s, hk_small_slot *k)
{
    const unsigned fl = cudaHostAllocPortable | cudaHostAllocMapped;
    if (cudaSetDevice(k->ord) != cudaSuccess ||
        cudaStreamCreateWithFlags(&k->st, cudaStreamNonBlocking) != cudaSuccess ||
        cudaHostAlloc(reinterpret_cast<void **>(&k->host), s->bytes, fl) != cudaSuccess ||
        cudaHostGetDevicePointer(reinterpret_cast<void **>(&k->host_dev), k->host, 0) != cudaSuccess ||
        cudaHostAlloc(reinterpret_cast<void **>(&k->flag), sizeof *k->flag, fl) != cudaSuccess ||
        cudaHostGetDevicePointer(reinterpret_cast<void **>(&k->flag_dev), k->flag, 0) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void **>(&k->dev), s->bytes) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void **>(&k->count), sizeof *k->count) != cudaSuccess ||
        cudaMemset(k->count, 0, sizeof *k->count) != cudaSuccess) {
        (void)cudaGetLastError();
        free_slot(k);
        return false;
    }
    *k->flag = 0;
    k->ready = true;
    return true;
}

extern "C" hk_status_t hk_cuda_small_open(const int *ordinals, int n_ordinals, int n_slots, size_t slot_bytes,
                                          hk_cuda_small_t **out, char *err, size_t errlen)
{
    *out = nullptr;
    if (n_ordinals < 1 || n_slots < n_ordinals || slot_bytes < 4096) {
        hk_cu_seterr(err, errlen, "hk_cuda_small_open: bad argument");
        return HK_E_INVAL;
    }
    hk_cuda_small *s = new (std::nothrow) hk_cuda_small;
    hk_small_slot *slots = s ? new (std::nothrow) hk_small_slot[n_slots] : nullptr;
    if (!slots) {
        delete s;
        hk_cu_seterr(err, errlen, "out of memory");
        return HK_E_NOMEM;
    }
    s->n = n_slots;
    s->bytes = slot_bytes;
    s->slot = slots;
    /* slot k on GPU k mod n: threads that keep to their own slot spread
     * over the GPUs. Each GPU's first slot, and the kernel's module, are
     * made now, not in the first call (lazy module loading costs a first
     * launch milliseconds). */
    for (int k = 0; k < n_slots; k++) slots[k].ord = ordinals[k % n_ordinals];
    for (int k = 0; k < n_ordinals; k++) {
        cudaError_t e = cudaSetDevice(slots[k].ord);
        if (e == cudaSuccess) e = hk_small_kernel_load();
        if (e == cudaSuccess && !make_slot(s, &slots[k])) e = cudaErrorMemoryAllocation;
        if (e != cudaSuccess) {
            const int ord = slots[k].ord;
            hk_cuda_small_close(s);
            return hk_cu_fail(e, "preparing the small-call path", ord, err, errlen);
        }
    }
    *out = s;
    return HK_OK;
}

extern "C" void *hk_cuda_small_take(hk_cuda_small_t *s, int *slot)
{
    /* each thread starts where it last found one: its own, while the
     * threads are no more than the slots */
    static thread_local unsigned hint;
    for (int i = 0; i < s->n; i++) {
        const int k = (int)((hint + (unsigned)i) % (unsigned)s->n);
        hk_small_slot *sl = &s->slot[k];
        if (sl->taken.load(std::memory_order_relaxed) || sl->taken.exchange(1, std::memory_order_acquire)) continue;
        if (sl->broken || (!sl->ready && !make_slot(s, sl))) {   /* no memory for it: as if taken */
            sl->broken = true;
            sl->taken.store(0, std::memory_order_release);
            continue;
        }
        hint = (unsigned)k;
        *slot = k;
        return sl->host;
    }
    return nullptr;
}

extern "C" hk_status_t hk_cuda_small_run(hk_cuda_small_t *s, int slot, const hk_small_layout_t *lay, char *err,
                                         size_t errlen)
{
    hk_small_slot *k = &s->slot[slot];
    hk_cu_calls cu;
    HK_CU(cu, cudaSetDevice, k->ord);
    HK_CU(cu, cudaMemcpyAsync, k->dev, k->host, lay->bytes, cudaMemcpyHostToDevice, k->st);
    const unsigned seq = ++k->seq ? k->seq : ++k->seq;   /* never 0, the flag's first value */
    HK_CU_AS(cu, "the small-call kernel",
             hk_launch_small(k->dev, lay, reinterpret_cast<double *>(k->host_dev + lay->sums),
                             k->host_dev + lay->in_float, k->count, k->flag_dev, seq, k->st));
    /* a region's round trip lasts tens of microseconds: poll the flag (no
     * runtime call), as a sleeping thread would wake later than that; now
     * and then ask the stream, so that a failed launch is not waited for */
    for (unsigned turn = 1; cu.ok(); turn++) {
        if (__atomic_load_n(k->flag, __ATOMIC_ACQUIRE) == seq) return HK_OK;
        if (turn % 256 == 0) {
            const cudaError_t q = cudaStreamQuery(k->st);
            if (q == cudaSuccess && __atomic_load_n(k->flag, __ATOMIC_ACQUIRE) != seq) {
                hk_cu_seterr(err, errlen, "the small-call kernel ended on CUDA device %d without its results", k->ord);
                return HK_E_RUNTIME;
            }
            if (q != cudaErrorNotReady) HK_CU_AS(cu, "cudaStreamQuery", q);
        }
        sched_yield();
    }
    (void)cudaGetLastError();
    return cu.fail(k->ord, err, errlen);
}

extern "C" void hk_cuda_small_give(hk_cuda_small_t *s, int slot)
{
    s->slot[slot].taken.store(0, std::memory_order_release);
}

extern "C" void hk_cuda_small_close(hk_cuda_small_t *s)
{
    if (!s) return;
    for (int i = 0; i < s->n; i++)
        if (s->slot[i].ready && cudaSetDevice(s->slot[i].ord) == cudaSuccess) free_slot(&s->slot[i]);
    (void)cudaGetLastError();
    delete[] s->slot;
    delete s;
}
