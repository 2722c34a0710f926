/* hk_cuda.h - the C boundary around haplik's CUDA engine.
 *
 * Everything behind this header is CUDA C++ (the .cu files of kernels/); everything in
 * front of it is C11. Every function returns 0 on success and a negative
 * HK_CUDA_E* code on failure, and then writes a one-line message (naming the
 * CUDA call and the device) into the caller's err buffer. Nothing here prints
 * or exits.
 *
 * Batches come in the packed layout of src/hk_batch.h, in host memory. Results
 * go to the batch's lk[] (log10, the scale constant already removed), with the
 * precision policy of SPEC section 1:
 *   HK_PREC_MIXED  float with C = 2^120; a pair whose scaled float sum is below
 *                  float_threshold is recomputed in double with C = 2^1020;
 *   HK_PREC_FLOAT  float only (may give -inf: for measuring);
 *   HK_PREC_DOUBLE double only.
 * In mixed mode, a read longer than HK_MIXED_FLOAT_MAX_READ goes straight to
 * double (see below). The number of pairs recomputed in double (fallbacks
 * and long reads) is added to batch->n_recomputed.
 *
 * PDHMM batches (batch->pdhmm, SPEC 1b) are scored by kernels of their own
 * (kernels/hk_pdhmm.cuh), always in double with C = 2^1020 whatever the
 * precision, and recompute nothing.
 *
 * Pairs whose double sum underflows to 0 (below about log10 -631) come back
 * as -inf: the caller rescues them on the CPU (hk_model_rescue_pair, called
 * by src/hk_engine.c), which the GPU's double kernels leave to it because
 * such pairs are rare and the kernels' speed matters.
 *
 * Environment variables for tests and measurements only:
 * HK_CUDA_CHUNK_CELLS=N caps a chunk at about N cells (many small chunks),
 * HK_CUDA_SLOT_MB=N caps a chunk's input block at N MiB instead of the built-in
 * HK_SLOT_BYTES (0: no cap), and HK_CUDA_ONE_STREAM (set) launches a chunk's
 * configurations on one stream; HK_PD_COLUMNS=2 (or 1) runs the PDHMM kernels
 * of two (or one) haplotype columns per step (hk_pdhmm_pair.cuh; one by default);
 * HK_CUDA_COLUMNS=1 runs the double and multi-tile forward kernels of one column
 * per step (hk_fwd.cuh) instead of two (hk_fwd_pair.cuh).
 */
#ifndef HK_CUDA_H
#define HK_CUDA_H

#include <stddef.h>
#include "../src/hk_batch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* HK_PREC_* and HK_MIXED_FLOAT_MAX_READ: src/hk_types.h (via hk_batch.h). */

enum {
    HK_CUDA_OK = 0,
    HK_CUDA_ENODEV = -1,   /* no usable device (driver, none present, ordinal) */
    HK_CUDA_ERUNTIME = -2, /* a CUDA call failed */
    HK_CUDA_ENOMEM = -3,   /* host or device allocation failed */
    HK_CUDA_EINVAL = -4    /* bad argument */
};

typedef struct {
    int    ordinal;
    char   name[256];
    size_t total_mem;      /* bytes */
    int    cc_major, cc_minor;
    int    sm_count;
} hk_cuda_device_t;

/* Number of usable devices into *n; on failure *n = 0 and err says why
 * (e.g. "no CUDA driver", "no GPU"). */
int hk_cuda_device_count(int *n, char *err, size_t errlen);
/* Properties of one device. */
int hk_cuda_device_info(int ordinal, hk_cuda_device_t *info, char *err, size_t errlen);

/* An engine over a set of devices (ordinals[0..n_devices)). */
typedef struct hk_cuda hk_cuda_t;

int  hk_cuda_open(const int *ordinals, int n_devices, hk_cuda_t **out,
                  char *err, size_t errlen);
/* Where hk_cuda_open's time went, ms (HK_TRACE): per step, the slowest device's
 * (the devices are set up at once, one thread each).
 * The staging memory is faulted in beside the context creation and pinned
 * after hk_cuda_open has returned: pin is that thread's time. */
typedef struct {
    float count;      /* cudaGetDeviceCount (the driver's initialisation if first) */
    float context;    /* cudaSetDevice: creating the primary contexts */
    float props;      /* cudaGetDeviceProperties */
    float streams;    /* streams and events */
    float total;      /* the whole hk_cuda_open */
    float fill;       /* beside: faulting the staging memory in */
    float pin;        /* after: registering it with the driver (-1: not done yet) */
} hk_cuda_open_stats_t;
void hk_cuda_open_stats(const hk_cuda_t *cu, hk_cuda_open_stats_t *st);
/* Called once per batch of an hk_cuda_score call, in the order of the batches,
 * as soon as every pair of that batch has its final result (so that the caller
 * can write it while the engine scores the rest); from one of the engine's
 * threads, never two at once. */
typedef void (*hk_cuda_done_fn)(hk_batch_t *batch, void *arg);

/* Score every pair of batches[0..n_batches) as one piece of work (the
 * devices' pipelines fill and drain once per call, not once per batch).
 * precision is an HK_PREC_* value. done may be NULL. On failure, the batches
 * not yet reported through done have no defined results. */
int  hk_cuda_score(hk_cuda_t *cu, hk_batch_t *const *batches, size_t n_batches, int precision,
                   double float_threshold, hk_cuda_done_fn done, void *arg,
                   char *err, size_t errlen);
/* Accepts NULL. */
void hk_cuda_close(hk_cuda_t *cu);
/* Destroy this process's CUDA context on each of ordinals[0..n) (call after
 * hk_cuda_close; errors are ignored): the driver's tear-down, about 0.1 s on
 * an H100, then happens here, where it can overlap other work, instead of at
 * exit. A later hk_cuda_open pays the context creation again. */
void hk_cuda_reset(const int *ordinals, int n);

/* One chunk of the last hk_cuda_score call, in ms. GPU times count from the
 * first chunk's copy in; host times from the start of the call. */
#define HK_CUDA_TRACE_CHUNKS 32
#define HK_CUDA_TRACE_DEVICES 8
typedef struct {
    float gpu_copy_in, gpu_kernels, gpu_done;  /* GPU: copy in starts, kernels start, kernels end */
    float issued;                              /* host: copied in (and packed by the GPU) from */
    float handed;                              /* host: its kernels launched */
    float collected;                           /* host: its results taken */
    float reserve, pack, enqueue;              /* host: sizing its slot (allocating and pinning),
                                                * packing, enqueueing (a kernel's first launch
                                                * loads its module) */
} hk_cuda_chunk_trace_t;

/* Where the wall time of the last hk_cuda_score went (host side, summed
 * over the devices' threads). */
typedef struct {
    double   total_s;   /* the whole call */
    double   pin_s;     /* registering the batches' arrays with the driver (once per array) */
    double   pack_s;    /* planning and packing chunks into pinned buffers */
    double   wait_s;    /* waiting for a device to finish a chunk */
    double   unpack_s;  /* copying results into the batch */
    double   kernel_s;  /* GPU: time with a kernel of the call running (the union of the
                         * chunks' first kernel start to last kernel end: chunks in flight
                         * together overlap, and their sum once read 15.4 ms of "kernels"
                         * for a 5.9 ms span), summed over the devices */
    double   h2d_s;     /* GPU: sum over chunks of the copies in */
    double   gpu_span_s; /* GPU: first copy in to the end of the last kernels (largest over devices) */
    unsigned chunks;
    /* the first device's first HK_CUDA_TRACE_CHUNKS chunks */
    unsigned n_trace;
    hk_cuda_chunk_trace_t trace[HK_CUDA_TRACE_CHUNKS];
    /* the first HK_CUDA_TRACE_DEVICES devices, ms: when each was handed its
     * first chunk and when its share was done (host, from the call's start),
     * and its GPU span (first copy in to the end of its last kernels) */
    unsigned n_dev_trace;
    float    dev_first[HK_CUDA_TRACE_DEVICES], dev_done[HK_CUDA_TRACE_DEVICES],
             dev_span[HK_CUDA_TRACE_DEVICES];
} hk_cuda_stats_t;
void hk_cuda_last_stats(const hk_cuda_t *cu, hk_cuda_stats_t *st);

/* ---- benchmark support (haplik bench) ---- */

/* The float path's kernel families: reads whose gap qualities vary along
 * the read (base quality recalibration's per-base indel qualities), and reads
 * whose gap qualities are the same on every position but the last
 * (HaplotypeCaller's usual "IIII...IN"), which have kernels of their own. */
enum { HK_GAPS_VARIED = 0, HK_GAPS_CONSTANT = 1 };

/* The float kernel configurations of family `gaps` (HK_GAPS_*): P (lanes
 * per pair) and K (read rows per lane) of each, in dispatch order, into
 * p[0..max) and k[0..max). Returns how many there are. Works without a GPU. */
int hk_cuda_configs(int gaps, int *p, int *k, int max);

/* The double kernel configurations (HK_DOUBLE_CONFIGS: double mode), as
 * hk_cuda_configs. */
int hk_cuda_double_configs(int *p, int *k, int max);

/* The PDHMM kernel configurations (HK_PDHMM_CONFIGS), as hk_cuda_configs. */
int hk_cuda_pdhmm_configs(int *p, int *k, int max);
int hk_cuda_pdhmm_cg_configs(int *p, int *k, int max);   /* PDHMM, constant gaps */

/* Time the kernels alone on batch b, on the engine's first device: b is
 * packed and copied once, then scored `runs` times (after one warm-up run),
 * each timed with CUDA events; *median_s is the median. config >= 0 forces
 * configuration `config` of float family `gaps` for every pair (every read
 * must fit its tile, and for HK_GAPS_CONSTANT have constant gap qualities),
 * with precision HK_PREC_DOUBLE of hk_cuda_double_configs whatever `gaps`;
 * -1 dispatches as hk_cuda_score does. A PDHMM batch (b->pdhmm) runs the PDHMM kernels whatever the
 * precision, config then indexing hk_cuda_pdhmm_configs, or with gaps
 * HK_GAPS_CONSTANT hk_cuda_pdhmm_cg_configs (every read of the CG form).
 * The batch's lk[] receives the last run's results. The batch must fit
 * the device in one piece. */
int hk_cuda_bench(hk_cuda_t *cu, hk_batch_t *b, int gaps, int config, int precision, int runs,
                  double *median_s, char *err, size_t errlen);

/* Time each runtime call that hk_cuda_score makes, alone and repeated, on
 * the engine's first device (its first streams): up to max of them, their
 * names into names[] and mean microseconds into us[]; returns how many. */
int hk_cuda_api_costs(hk_cuda_t *cu, const char **names, double *us, int max);

#ifdef __cplusplus
}
#endif
#endif
