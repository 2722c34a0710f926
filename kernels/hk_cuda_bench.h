/* hk_cuda_bench.h - timing the CUDA engine: where a call's time went
 * (HK_TRACE, tests/gpu/time_gpu), and the kernels alone (haplik bench,
 * tests/bench). The same C boundary and error codes as hk_cuda.h.
 */
#ifndef HK_CUDA_BENCH_H
#define HK_CUDA_BENCH_H

#include "hk_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

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
                         * together overlap, so their sum would count some time twice),
                         * summed over the devices */
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
HK_RESULT_USED hk_status_t hk_cuda_bench(hk_cuda_t *cu, hk_batch_t *b, int gaps, int config, int precision,
                                         int runs, double *median_s, char *err, size_t errlen);

/* Time each runtime call that hk_cuda_score makes, alone and repeated, on
 * the engine's first device (its first streams): up to max of them, their
 * names into names[] and mean microseconds into us[]; returns how many. */
int hk_cuda_api_costs(hk_cuda_t *cu, const char **names, double *us, int max);

#ifdef __cplusplus
}
#endif
#endif
