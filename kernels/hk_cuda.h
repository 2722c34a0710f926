/* hk_cuda.h - the C boundary around haplik's CUDA engine.
 *
 * Everything behind this header is CUDA C++ (the .cu files of kernels/); everything in
 * front of it is C11. Every fallible function returns an hk_status_t
 * (HK_OK, or the kind of failure, and then writes a one-line message naming
 * the CUDA call and the device into the caller's err buffer), which the
 * caller must check. Nothing here prints or exits.
 *
 * Batches come in the packed layout of src/hk_batch.h, in host memory. Results
 * go to the batch's lk[] (log10, the scale constant already removed), with the
 * precision policy of SPEC section 1:
 *   HK_PREC_MIXED  float with C = 2^120; a pair whose scaled float sum is below
 *                  float_threshold is recomputed in double with C = 2^1020;
 *   HK_PREC_FLOAT  float only (may give -inf: for measuring);
 *   HK_PREC_DOUBLE double only.
 * In mixed mode, a pair with a read longer than HK_MIXED_FLOAT_MAX_READ or a
 * haplotype longer than HK_MIXED_FLOAT_MAX_HAP goes straight to double, and a
 * float sum of 0 is recomputed whatever the threshold (see below). The number
 * of pairs recomputed in double (fallbacks and long pairs) is added to
 * batch->n_recomputed.
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
 * Timing and benchmark support (haplik bench, HK_TRACE) is in hk_cuda_bench.h.
 * The settings for tests and measurements (the HK_CUDA_* knobs of
 * src/hk_knobs.h) come as data, an hk_cuda_opts_t (src/hk_options.h) given
 * to hk_cuda_open: the engine reads no environment variable of haplik's.
 */
#ifndef HK_CUDA_H
#define HK_CUDA_H

#include <stddef.h>
#include "../src/hk_batch.h"
#include "../src/hk_options.h"   /* hk_cuda_opts_t */

#ifdef __cplusplus
extern "C" {
#endif

/* HK_PREC_* and HK_MIXED_FLOAT_MAX_READ / _HAP: src/hk_types.h (via hk_batch.h). */

/* Results: hk_status_t (src/hk_types.h): HK_OK; HK_E_NODEV, no usable device
 * (driver, none present, ordinal); HK_E_RUNTIME, a CUDA call failed;
 * HK_E_NOMEM, host or device allocation failed; HK_E_INVAL, a bad argument. */

typedef struct {
    int    ordinal;
    char   name[256];
    size_t total_mem;      /* bytes */
    int    cc_major, cc_minor;
    int    sm_count;
} hk_cuda_device_t;

/* Number of usable devices into *n; on failure *n = 0 and err says why
 * (e.g. "no CUDA driver", "no GPU"). */
HK_RESULT_USED hk_status_t hk_cuda_device_count(int *n, char *err, size_t errlen);
/* Properties of one device. */
HK_RESULT_USED hk_status_t hk_cuda_device_info(int ordinal, hk_cuda_device_t *info, char *err, size_t errlen);

/* What a device must have for this build's kernels, as asked of it. */
typedef struct {
    size_t smem_block_optin;   /* shared memory per block, opt-in (cudaDevAttrMaxSharedMemoryPerBlockOptin) */
    int    max_threads_block;  /* threads per block */
    int    warp_size;
} hk_cuda_limits_t;

/* Whether device `ordinal` can run every kernel form of this build: code
 * for its architecture, warps of 32, blocks of the kernels' size, and the
 * shared memory per block of the most demanding form (asked of the device,
 * not assumed from the architectures built for). HK_OK, or HK_E_NODEV with
 * err saying what falls short. Asked once per device and process; the
 * engine asks before a device scores. */
HK_RESULT_USED hk_status_t hk_cuda_device_fits(int ordinal, char *err, size_t errlen);
/* The same test against given limits (no device needed), and the most
 * shared memory per block any kernel form needs. */
HK_RESULT_USED hk_status_t hk_cuda_limits_check(const hk_cuda_limits_t *lim, char *err, size_t errlen);
size_t hk_cuda_smem_need(void);

/* An engine over a set of devices (ordinals[0..n_devices)), working as opt
 * says (copied; NULL: the defaults, hk_cuda_opts_init). */
typedef struct hk_cuda hk_cuda_t;

HK_RESULT_USED hk_status_t hk_cuda_open(const int *ordinals, int n_devices, const hk_cuda_opts_t *opt,
                                        hk_cuda_t **out, char *err, size_t errlen);
/* Other options (copied) from the next hk_cuda_score call on (not during
 * one; host_threads counts only before the first): for tests that compare
 * two ways of working on one engine. */
void hk_cuda_set_opts(hk_cuda_t *cu, const hk_cuda_opts_t *opt);
/* Called once per batch of an hk_cuda_score call, in the order of the batches,
 * as soon as every pair of that batch has its final result (so that the caller
 * can write it while the engine scores the rest); from one of the engine's
 * threads, never two at once. */
typedef void (*hk_cuda_done_fn)(hk_batch_t *batch, void *arg);

/* Score every pair of batches[0..n_batches) as one piece of work (the
 * devices' pipelines fill and drain once per call, not once per batch).
 * precision is an HK_PREC_* value. done may be NULL. On failure, the batches
 * not yet reported through done have no defined results. */
HK_RESULT_USED hk_status_t hk_cuda_score(hk_cuda_t *cu, hk_batch_t *const *batches, size_t n_batches,
                                         int precision, double float_threshold, hk_cuda_done_fn done, void *arg,
                                         char *err, size_t errlen);
/* Accepts NULL. */
void hk_cuda_close(hk_cuda_t *cu);
/* Destroy this process's CUDA context on each of ordinals[0..n) (call after
 * hk_cuda_close; errors are ignored): the driver's tear-down, about 0.1 s on
 * an H100, then happens here, where it can overlap other work, instead of at
 * exit. A later hk_cuda_open pays the context creation again. */
void hk_cuda_reset(const int *ordinals, int n);

#ifdef __cplusplus
}
#endif
#endif
