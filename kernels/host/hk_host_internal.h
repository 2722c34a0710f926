/* hk_host_internal.h - the engine's types, shared by hk_pipeline.cu and the
 * benchmark entry point (hk_bench.cu). C++ only. */
#ifndef HK_ENGINE_INTERNAL_H
#define HK_ENGINE_INTERNAL_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>
#include <cuda_runtime.h>
#include "hk_cuda_bench.h"
#include "hk_cuda_internal.h"

/* Bins of a chunk's work items, one kernel each: the family's single-tile
 * configurations [0, n_single), its multi-tile kernel (n_single), then, in
 * float and mixed mode, the constant-gap configurations (n_single + 1 + k),
 * and in mixed mode last the pairs with a read longer than
 * HK_MIXED_FLOAT_MAX_READ or a haplotype longer than HK_MIXED_FLOAT_MAX_HAP
 * (long_bin: the double multi-tile kernel). */
#define HK_CHUNK_BINS (HK_N_FLOAT_CONFIGS + HK_N_CGAP_CONFIGS + HK_N_DOUBLE_CONFIGS + 1)
static_assert(HK_N_FLOAT_CONFIGS + 1 + HK_N_CGAP_CONFIGS + 1 <= HK_CHUNK_BINS, "mixed mode's bins fit");

/* A chunk: reads [r0, r1) of regions [reg0, reg1), haps [h0, h1), results
 * lk[pair0 .. pair0 + n_pairs). Offsets are into the packed input block;
 * off_read[] are the read rows: bases, base qualities, then the gap rows
 * (ins, del, gcp), which are only there when a read of the chunk is not
 * constant (has_gap_rows). */
#define HK_CHUNK_COPIES 10    /* rows, haplotype bases, and for GPU packing the offsets, gaps, regions */
struct hk_chunk {
    size_t   reg0, reg1, r0, r1, h0, h1;
    uint64_t pair0, n_pairs, cells;
    int      n_single, n_bins;
    int      long_bin;        /* mixed mode: the long reads' bin, else -1 */
    uint32_t cfg_begin[HK_CHUNK_BINS];
    uint32_t cfg_end[HK_CHUNK_BINS];
    uint32_t n_items;
    uint32_t n_long;          /* pairs (items) in long_bin: scored in double at once */
    uint32_t n_degen;         /* pairs with an empty sequence (no item; -inf) */
    uint32_t item_cols;       /* the planner's cap on an item's columns, which packing keeps */
    int      precision;       /* HK_PREC_* it is packed for */
    bool     has_gap_rows;
    hk_read_gaps_t cgap;      /* the constant gap qualities whose coefficients the constant-gap
                               * kernels take as a parameter (hk_chunk_plan picks them;
                               * constant 0: none) */
    uint32_t cgap_foreign;    /* constant-gap configurations (bit per entry) with a read of
                               * another set: launched with each read's coefficients */
    bool     gpack;           /* staged for the GPU to pack (hk_gpack.cu): bins known once it has */
    bool     pd_cg;           /* PDHMM: reads of constant gaps go to the CG kernels (hk_plan_limits) */
    size_t   off_items;       /* the work items, binned */
    size_t   off_read_off, off_hap_off, off_gaps, off_read[5], off_hbase, off_hap_off2, off_hbase2, in_bytes;
    /* GPU packing only: the batch's offsets and regions as they are, and the
     * GPU's working space (see hk_gpack_layout) */
    size_t   off_raw_read_off, off_raw_hap_off, off_raw_regions, off_cnt, off_pads, off_keys, off_order,
             off_items_in, off_result;
    size_t   h2d_bytes;       /* what the host fills and copies: [0, h2d_bytes) of the block */
    uint32_t pad_haps;        /* haplotypes whose padded copy the GPU makes first (0: none) */
    /* rows copied to the GPU straight from the batch's pinned arrays (packed
     * with `direct`): n_copies (source, offset in the block, bytes), which
     * lie past h2d_bytes */
    struct { const void *src; size_t off, bytes; } copy[HK_CHUNK_COPIES];
    int      n_copies;
};

/* How large a chunk may grow. */
struct hk_plan_limits {
    size_t   in_bytes, min_in_bytes;
    uint64_t pairs, min_pairs, items, cells;
    uint32_t item_cols = HK_ITEM_COLS;   /* most haplotype columns per work item,
                                          * HK_ITEM_COLS_MIN..HK_ITEM_COLS */
    bool     cgap_set = true;            /* hk_cuda_opts_t's: the constant-gap kernels get a common set */
    bool     pd_cg = true;               /* and constant-gap PDHMM reads their own kernels */
};

/* A fork-join pool: run(n, fn) calls fn(0..n-1), the caller taking part, and
 * returns when all are done; idle workers, and the caller waiting for them,
 * spin for HK_POOL_SPIN_US before they sleep. hk_chunk_pack can split one
 * chunk over it in parts; the engine no longer does (each chunk is packed
 * whole by one thread, hk_workq), but the packing tests and bench_pack
 * still check and time packing in parts. */
#define HK_POOL_SPIN_US 200
class hk_pool {
public:
    explicit hk_pool(unsigned workers);
    ~hk_pool();
    unsigned size() const { return (unsigned)th_.size() + 1; }
    size_t part_reads = 512;           /* reads per part of a chunk hk_chunk_pack splits (HK_CUDA_PACK_READS) */
    void run(unsigned n, const std::function<void(unsigned)> &fn);
private:
    void work();
    std::vector<std::thread> th_;
    std::mutex mu_;
    std::condition_variable go_, done_;
    const std::function<void(unsigned)> *fn_ = nullptr;
    unsigned n_ = 0, next_ = 0, sleepers_ = 0;
    std::atomic<unsigned> left_{0};    /* written under mu_; read while spinning */
    std::atomic<uint64_t> gen_{0};
    std::atomic<bool> stop_{false};
};

/* Host threads that run queued tasks (a device's chunk packs, each whole)
 * while the device's own thread plans, launches and collects chunks; that
 * thread runs a queued task itself (run_one) rather than wait idle. Tasks
 * start in the order they were queued. */
class hk_workq {
public:
    explicit hk_workq(unsigned workers);
    ~hk_workq();
    unsigned size() const { return (unsigned)th_.size() + 1; }
    void push(std::function<void()> fn);
    bool run_one();                    /* run the oldest queued task here; false: none queued */
    void wait_done(unsigned us);       /* until a task ends, or `us` microseconds */
    void drain();                      /* until no task is queued or running */
private:
    void work();
    void run(std::unique_lock<std::mutex> &lk);
    std::vector<std::thread> th_;
    std::mutex mu_;
    std::condition_variable go_, done_;
    std::deque<std::function<void()>> q_;
    unsigned running_ = 0;
    uint64_t ended_ = 0;
    bool stop_ = false;
};

/* Host threads of a device's engine: the device's thread and
 * HK_ENGINE_HOST_THREADS - 1 more, each packing a chunk whole (reading has the
 * other cores). hk_cuda_opts_t's host_threads (HK_CUDA_HOST_THREADS, 1..the
 * most, for measurements) sets another count. */
#define HK_ENGINE_HOST_THREADS 4
#define HK_ENGINE_HOST_THREADS_MAX 4
unsigned hk_engine_threads(const hk_cuda_opts_t *opt);

/* Side streams of a slot: its configurations' kernels run side by side. */
#define HK_SIDE_STREAMS 2
struct hk_side {
    cudaStream_t st[HK_SIDE_STREAMS];
    cudaEvent_t  fork, join[HK_SIDE_STREAMS];
};

/* Fork: the side streams (xs may be NULL: none) wait for what st has queued;
 * lane[0, *nl) becomes st and the side streams, to launch on in turn. */
static inline cudaError_t hk_side_fork(cudaStream_t st, const hk_side *xs, cudaStream_t *lane,
                                       int *nl, const char **what)
{
    cudaError_t e;
    lane[0] = st;
    *nl = 1;
    if (!xs) return cudaSuccess;
    *what = "cudaEventRecord";
    if ((e = cudaEventRecord(xs->fork, st)) != cudaSuccess) return e;
    *what = "cudaStreamWaitEvent";
    for (int i = 0; i < HK_SIDE_STREAMS; i++) {
        if ((e = cudaStreamWaitEvent(xs->st[i], xs->fork, 0)) != cudaSuccess) return e;
        lane[(*nl)++] = xs->st[i];
    }
    return cudaSuccess;
}

/* Join: st waits for everything launched on the side streams. */
static inline cudaError_t hk_side_join(cudaStream_t st, const hk_side *xs, const char **what)
{
    cudaError_t e;
    for (int i = 0; xs && i < HK_SIDE_STREAMS; i++) {
        *what = "cudaEventRecord";
        if ((e = cudaEventRecord(xs->join[i], xs->st[i])) != cudaSuccess) return e;
        *what = "cudaStreamWaitEvent";
        if ((e = cudaStreamWaitEvent(st, xs->join[i], 0)) != cudaSuccess) return e;
    }
    return cudaSuccess;
}

/* Chunks in flight per device: they are copied in and packed by the GPU well
 * ahead of their kernels, whose launch waits for the bins to come back. */
#define HK_SLOTS 8

/* Largest input block of a slot (pinned host and device memory), unless one
 * read with its haplotypes needs more; and most pairs of a slot's chunk. */
#define HK_SLOT_BYTES ((size_t)16 << 20)
#define HK_SLOT_PAIRS (HK_SLOT_BYTES / 32)
/* A call (one device's part) of at most this many input bytes is packed
 * on the host (hk_device_run.cu, pack_on_host). */
#define HK_HOST_PACK_MAX_BYTES ((size_t)256 << 10)

/* A device's pinned staging memory: HK_SLOTS slices of HK_ARENA_SLICE bytes,
 * the slots' input block then their results (the redo count's 16 bytes and
 * HK_SLOT_PAIRS doubles). A host thread maps and faults it in while the
 * device's context is being created, then, once hk_cuda_open has returned,
 * registers it with the driver slice by slice, so that neither is on the
 * way to the first launch: pinning pages that are already there costs a
 * fraction of what cudaHostAlloc's fresh pages cost, to take and to release
 * (docs/PERFORMANCE.md). Slot k waits for
 * slice k (hk_arena_slice); a slot that needs more (one huge region, or a
 * larger HK_CUDA_SLOT_MB), or whose slice could not be pinned, falls back
 * to cudaHostAlloc. pinned and settled are written by that thread and read
 * by the device's (__atomic). */
#define HK_ARENA_SLICE (HK_SLOT_BYTES + 16 + HK_SLOT_PAIRS * sizeof(double))
struct hk_arena {
    unsigned char *p;
    size_t         bytes;
    int            pinned;         /* slices [0, pinned) are registered */
    int            settled;        /* 1: no more will be */
};

/* One staging slot: pinned host and device buffers of one chunk in flight. */
struct hk_slot {
    unsigned char *h_in, *h_out;   /* pinned: packed input; results + redo count */
    unsigned char *d_in;
    double        *d_lk;
    hk_item       *d_redo;
    uint32_t      *d_nredo;
    void          *d_scratch;
    hk_scratch     scratch;
    void          *d_tmp;          /* CUB's working space for GPU packing */
    size_t         tmp_bytes;
    size_t         in_cap;
    uint64_t       pairs_cap;
    bool           in_arena;       /* h_in and h_out are the slot's slice of the device's arena */
    bool           busy;
    hk_chunk       ch;
    int            packed;         /* 1: ch is packed in h_in (__atomic: set by a packing thread) */
    hk_batch_t    *b;              /* the chunk's batch, number bi of the call */
    size_t         bi;
    bool           ends_share;     /* the last chunk of the device's share of that batch */
    std::vector<uint64_t> degen;   /* pairs of the chunk with an empty sequence */
    cudaEvent_t    c0, k0, k1;     /* copy in, kernels start, kernels end (timing) */
    cudaEvent_t    counted;        /* copied in (and packed by the GPU: the bins are back in h_in) */
    hk_side        side;
    unsigned       trace_ix;       /* chunk number, for the stats' trace */
    hk_cuda_chunk_trace_t trace;   /* its host times */
    cudaEvent_t    done;           /* kept by slot_free: must stay last */
};

struct hk_dev {
    int            ord;
    cudaDeviceProp prop;
    cudaStream_t   st[HK_SLOTS];   /* the slots' kernels and results */
    cudaStream_t   pst[HK_SLOTS];  /* their copies in and GPU packing, at the highest priority: the
                                    * packing kernels go ahead of other chunks' blocks */
    hk_slot        slot[HK_SLOTS];
    std::unique_ptr<hk_workq> wq;   /* the device's packing threads */
    hk_arena       arena;
    cudaEvent_t    t0;             /* start of the current hk_cuda_score (timing) */
};

struct hk_cuda {
    hk_cuda_opts_t      opt;       /* hk_cuda_open's */
    std::vector<hk_dev> dev;
    hk_cuda_stats_t     stats;     /* of the last hk_cuda_score */
    hk_cuda_open_stats_t open;     /* of hk_cuda_open; fill and pin written by stager */
    std::thread         stager;    /* faults the arenas in, then pins them */
    std::mutex          mu;
    std::condition_variable cv;
    int                 go = 0;    /* under mu: 1 the contexts exist, pin; -1 give up */
    /* the batches' arrays registered with the driver (hk_pipeline.cu, pin_batch):
     * address -> its batch, bytes, whether registering worked */
    struct pinned { hk_batch_t *b; size_t bytes; bool ok; };
    std::mutex          pin_mu;
    std::unordered_map<const void *, pinned> pins;
    std::unordered_set<const hk_batch_t *> seen;   /* batches scored before (pinned from their second call) */
};

/* Slice k of d's arena once it is pinned (waiting while it may still be),
 * or NULL: the slot pins its own memory. */
unsigned char *hk_arena_slice(hk_dev *d, int k);
/* hk_pinned.cu: an arena mapped and faulted in (the stager, beside context
 * creation; on failure the slots use cudaHostAlloc), then registered slice
 * by slice, and released (after the stager is joined). */
void hk_arena_fill(hk_arena *a);
void hk_arena_register(hk_arena *a);
void hk_arena_free(hk_arena *a);
/* Whether batch b's rows can go to the GPU straight from its arrays
 * (registering them now if need be); let go of every array at close. */
bool hk_pin_batch(hk_cuda_t *cu, hk_batch_t *b);
void hk_unpin_all(hk_cuda_t *cu);

static inline size_t hk_align16(size_t x) { return (x + 15) & ~(size_t)15; }

/* Run fn(0..n-1) on the pool (or here, in order, when there is none). */
template <typename F> static inline void hk_par_run(hk_pool *pool, unsigned n, F fn)
{
    if (!pool || n <= 1) { for (unsigned i = 0; i < n; i++) fn(i); return; }
    pool->run(n, std::function<void(unsigned)>(fn));
}

void hk_cu_seterr(char *err, size_t errlen, const char *fmt, ...);
hk_status_t hk_cu_fail(cudaError_t e, const char *call, int dev, char *err, size_t errlen);

/* CUDA calls made in turn until one fails, which is kept with its name for
 * the message (hk_cu_fail: "NAME failed on CUDA device D: why"):
 *     hk_cu_calls cu;
 *     if (HK_CU(cu, cudaMemsetAsync, p, 0, 4, st) && HK_CU(cu, cudaEventRecord, ev, st)) ...
 *     return cu.ok() ? HK_OK : cu.fail(dev, err, errlen);
 * HK_CU(cu, fn, args...) calls fn(args...) unless a call of cu has failed,
 * and names it "fn"; HK_CU_AS(cu, name, expr) evaluates expr (a
 * cudaError_t: a launch, a function making several calls) the same way,
 * named name; HK_CU_SELF(cu, expr) for an expr given &cu.what, which names
 * its own failing call. Each is whether every call of cu so far succeeded. */
struct hk_cu_calls {
    cudaError_t e = cudaSuccess;
    const char *what = nullptr;   /* the call that failed */
    bool ok() const { return e == cudaSuccess; }
    bool note(cudaError_t r, const char *call)
    {
        if (r != cudaSuccess) { e = r; what = call; }
        return ok();
    }
    bool note_self(cudaError_t r) { e = r; return ok(); }
    hk_status_t fail(int dev, char *err, size_t errlen) const { return hk_cu_fail(e, what, dev, err, errlen); }
};
#define HK_CU_AS(cu, name, expr) ((cu).ok() && (cu).note((expr), (name)))
#define HK_CU(cu, fn, ...) HK_CU_AS(cu, #fn, fn(__VA_ARGS__))
#define HK_CU_SELF(cu, expr) ((cu).ok() && (cu).note_self(expr))
int  hk_chunk_plan(const hk_batch_t *b, const hk_plan_limits *lim, size_t reg, size_t r0,
                   size_t r_end, hk_chunk *ch);
/* Bins of chunk ch for precision (n_single, n_bins, long_bin, precision). */
void hk_chunk_bins(hk_chunk *ch, int precision);
/* The host's packing (the reference, and HK_CUDA_PACK=host): everything in
 * the block, items binned. */
void hk_chunk_pack(const hk_batch_t *b, hk_chunk *ch, int precision, bool direct, unsigned char *in,
                   std::vector<uint64_t> *degenerate, hk_pool *pool);
/* hk_gpack.cu: packing by the GPU. hk_chunk_stage lays out the block and lists
 * the batch's arrays for a copy (direct) or copies them into `in`;
 * hk_chunk_gpack (stream st) makes the rest on the GPU and sends the bins
 * back to h_in, which hk_chunk_gpack_done reads into ch once st has got
 * there; hk_chunk_gpack_host does what the GPU does, on the host (tests).
 * hk_gpack_bytes: the block's size (the planner's measure for every
 * non-PDHMM chunk); hk_gpack_tmp_bytes: CUB's working space. */
size_t hk_gpack_layout(hk_chunk *ch, size_t nr, size_t nh, size_t nreg, size_t rp, size_t hp, uint64_t pairs,
                       bool gap_rows, size_t *h2d_end);
size_t hk_gpack_bytes(const hk_batch_t *b, size_t r0, size_t r1, size_t h0, size_t h1, size_t nreg, uint64_t pairs,
                      bool gap_rows);
size_t hk_gpack_tmp_bytes(uint64_t pairs);
void hk_chunk_stage(const hk_batch_t *b, hk_chunk *ch, int precision, bool direct, unsigned char *in);
cudaError_t hk_chunk_gpack(const hk_chunk *ch, unsigned char *d_in, double *d_lk, void *d_tmp, size_t tmp_bytes,
                           unsigned char *h_in, cudaStream_t st, const char **what);
void hk_chunk_gpack_host(const hk_chunk *ch, unsigned char *in, double *lk);
void hk_chunk_gpack_done(hk_chunk *ch, const unsigned char *h_in);
/* What the chunk's first kernel does on the GPU, done on the host (tests). */
void hk_chunk_pad_host(const hk_chunk *ch, unsigned char *in);
hk_chunk_dev hk_chunk_view(const hk_chunk *ch, unsigned char *d_in, double *d_lk,
                           hk_item *d_redo, uint32_t *d_nredo, int precision, double thr);
/* The copies of ch->copy (rows straight from the batch) on stream st. */
cudaError_t hk_chunk_copy_rows(const hk_chunk *ch, unsigned char *d_in, cudaStream_t st);
/* Whether the current device has code for the engine's kernels
 * (cudaFuncGetAttributes of one of them; hk_dev_limits.cu). */
cudaError_t hk_pad_kernel_image(void);
cudaError_t hk_chunk_launch(const hk_chunk *ch, const hk_chunk_dev *c, const hk_item *d_items,
                            const hk_scratch *sc, cudaStream_t st, const hk_side *xs,
                            const char **what);
/* hk_slot.cu: give slot s room for lim (and scratch for haplotypes of
 * max_hap), halving the limits on an allocation failure; free its buffers. */
HK_RESULT_USED hk_status_t hk_slot_reserve(hk_dev *d, hk_slot *s, hk_plan_limits *lim, uint32_t max_hap,
                     char *err, size_t errlen);
void hk_slot_free(hk_slot *s);

/* The host's monotonic clock, seconds. */
static inline double hk_now(void)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* One hk_cuda_score call, shared by the devices' threads: which batches are
 * complete, and reporting them to the caller in order. */
struct hk_call {
    hk_batch_t *const *b;
    size_t n;
    const hk_cuda_opts_t *opt;                 /* the engine's */
    hk_cuda_done_fn done;
    void *arg;
    std::vector<std::atomic<int>> left;        /* devices still scoring each batch */
    std::vector<std::atomic<uint64_t>> redo;   /* pairs recomputed in double */
    std::mutex mu;
    std::vector<char> finished;
    std::vector<char> direct;                  /* batch i's arrays are pinned: rows go to the GPU, results
                                                  come back, without a copy on the host */
    size_t next = 0;                           /* first batch not yet reported */

    hk_call(hk_batch_t *const *b_, size_t n_, int n_dev, const hk_cuda_opts_t *opt_, hk_cuda_done_fn fn, void *a)
        : b(b_), n(n_), opt(opt_), done(fn), arg(a), left(n_), redo(n_), finished(n_, 0), direct(n_, 0)
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

/* hk_device_run.cu: score device d's shares of call (one per batch of the
 * call, in batch order) as one stream of chunks; HK_OK, or a failure with
 * err filled. */
HK_RESULT_USED hk_status_t hk_score_on_device(hk_dev *d, hk_call *call, const std::vector<hk_share> &shares, int precision, double thr,
                       double t_start, hk_cuda_stats_t *stats, char *err, size_t errlen);

#endif
