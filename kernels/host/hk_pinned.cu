/* hk_pinned.cu - host memory the driver has pinned for the engine: each
 * device's staging arena (the slots' packed blocks and results) and the
 * batches' own arrays, from which read rows and haplotype bases are copied
 * to the GPU. Host code only; see hk_host_internal.h. */
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <sys/mman.h>
#include <unistd.h>

#include "hk_host_internal.h"

/* ---- the staging arenas ---- */

/* Map and fault in a staging arena (the stager thread, while the context
 * is being created); on failure the slots fall back to cudaHostAlloc. */
void hk_arena_fill(hk_arena *a)
{
    const size_t bytes = HK_SLOTS * HK_ARENA_SLICE;
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    (void)madvise(p, bytes, MADV_HUGEPAGE);      /* fewer faults where the kernel allows it */
    const long page = sysconf(_SC_PAGESIZE);
    for (size_t o = 0; o < bytes; o += page > 0 ? (size_t)page : 4096) static_cast<volatile char *>(p)[o] = 0;
    a->p = static_cast<unsigned char *>(p);
    a->bytes = bytes;
}

/* Pin a filled arena for the current device, slice by slice in slot order,
 * so that slot 0 can use its slice while the others are being pinned; the
 * slices that fail stay unpinned (their slots use cudaHostAlloc). */
void hk_arena_register(hk_arena *a)
{
    for (int k = 0; a->p && k < (int)(a->bytes / HK_ARENA_SLICE); k++) {
        if (cudaHostRegister(a->p + (size_t)k * HK_ARENA_SLICE, HK_ARENA_SLICE, cudaHostRegisterDefault) != cudaSuccess) {
            (void)cudaGetLastError();
            break;
        }
        __atomic_store_n(&a->pinned, k + 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&a->settled, 1, __ATOMIC_RELEASE);
}

/* After the stager has been joined. */
void hk_arena_free(hk_arena *a)
{
    for (int k = 0; k < a->pinned; k++) cudaHostUnregister(a->p + (size_t)k * HK_ARENA_SLICE);
    if (a->p) munmap(a->p, a->bytes);
    *a = hk_arena{ nullptr, 0, 0, 1 };
}

unsigned char *hk_arena_slice(hk_dev *d, int k)
{
    hk_arena *a = &d->arena;
    /* only the first chunks of a run can come here before the stager is
     * done (a few ms of pinning at most): poll */
    while (!__atomic_load_n(&a->settled, __ATOMIC_ACQUIRE) && __atomic_load_n(&a->pinned, __ATOMIC_ACQUIRE) <= k)
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    return __atomic_load_n(&a->pinned, __ATOMIC_ACQUIRE) > k ? a->p + (size_t)k * HK_ARENA_SLICE : nullptr;
}

/* ---- the batches' arrays ---- */

/* The read rows and haplotype bases of a batch are copied to the GPU from
 * where the reader put them, once their arrays are registered with the
 * driver, and so are the offsets, gap summaries and regions that the GPU
 * packs a chunk from (hk_gpack.cu), and the results come back straight into
 * the batch's lk[]: the host's work per chunk is then a list of copies
 * (packing a chunk on one thread is mostly copying rows, then its items).
 * Registering costs more than packing once, and is serial before the call's
 * first chunk (docs/PERFORMANCE.md). So a batch's arrays are
 * registered the second time it is scored (`score` reuses a pool of batches,
 * so its long runs pin each array once), and let go when the batch moves or
 * frees it (hk_batch_t's on_release) or when the engine closes; the first
 * time, its chunks are packed on the host. HK_CUDA_PIN=0 (tests,
 * measurements) packs every row always. */
static void unpin_locked(hk_cuda_t *cu, const void *p)
{
    auto it = cu->pins.find(p);
    if (it == cu->pins.end()) return;
    if (it->second.ok) (void)cudaHostUnregister(const_cast<void *>(p));
    (void)cudaGetLastError();
    cu->pins.erase(it);
}

static void on_batch_release(void *ctx, const void *array)
{
    hk_cuda_t *cu = static_cast<hk_cuda_t *>(ctx);
    std::lock_guard<std::mutex> lk(cu->pin_mu);
    unpin_locked(cu, array);
}

/* Whether batch b's rows can go to the GPU straight from its arrays
 * (registering them now if need be). */
bool hk_pin_batch(hk_cuda_t *cu, hk_batch_t *b)
{
    if (!cu->opt.pin || b->pdhmm || !b->n_reads) return false;
    if (b->on_release && (b->on_release != on_batch_release || b->release_ctx != cu)) return false;   /* another's */
    const struct { const void *p; size_t bytes; } arrays[] = {
        { b->read_base, b->m_read_pos }, { b->read_q, b->m_read_pos }, { b->read_i, b->m_read_pos },
        { b->read_d, b->m_read_pos }, { b->read_g, b->m_read_pos }, { b->hap_base, b->m_hap_pos },
        /* what the GPU packs from (hk_gpack.cu) */
        { b->read_off, b->m_reads * sizeof *b->read_off }, { b->read_gaps, b->m_reads * sizeof *b->read_gaps },
        { b->hap_off, b->m_haps * sizeof *b->hap_off }, { b->regions, b->m_regions * sizeof *b->regions },
        /* where the results are copied back to, straight from the GPU */
        { b->lk, b->m_pairs * sizeof *b->lk } };
    std::lock_guard<std::mutex> lk(cu->pin_mu);
    if (cu->seen.insert(b).second) return false;   /* first time: packed on the host */
    b->on_release = on_batch_release;
    b->release_ctx = cu;
    bool all = true;
    for (const auto &a : arrays) {
        if (!a.p || !a.bytes) { all = false; continue; }
        auto it = cu->pins.find(a.p);
        if (it != cu->pins.end() && it->second.bytes != a.bytes) {   /* the same address, another array */
            unpin_locked(cu, a.p);
            it = cu->pins.end();
        }
        if (it == cu->pins.end()) {
            const bool ok = cudaHostRegister(const_cast<void *>(a.p), a.bytes, cudaHostRegisterPortable) == cudaSuccess;
            (void)cudaGetLastError();   /* one that fails (a page shared with another array) is packed */
            it = cu->pins.emplace(a.p, hk_cuda::pinned{ b, a.bytes, ok }).first;
        }
        all &= it->second.ok;
    }
    return all;
}

/* Let go of every array, and of the batches' hooks. */
void hk_unpin_all(hk_cuda_t *cu)
{
    std::lock_guard<std::mutex> lk(cu->pin_mu);
    for (auto &kv : cu->pins) {
        if (kv.second.ok) (void)cudaHostUnregister(const_cast<void *>(kv.first));
        if (kv.second.b->on_release == on_batch_release && kv.second.b->release_ctx == cu)
            kv.second.b->on_release = nullptr, kv.second.b->release_ctx = nullptr;
    }
    (void)cudaGetLastError();
    cu->pins.clear();
    cu->seen.clear();
}
