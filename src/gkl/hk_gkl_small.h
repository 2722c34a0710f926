/* hk_gkl_small.h - a library call scored on the GPU's small-call path
 * (kernels/hk_cuda_small.h): the batch packed into a free slot, one round
 * trip, the sums turned into log10 likelihoods. In the model's precision
 * policy: a pair's value is the CPU's (hk_model_score_batch), bit for bit.
 * Built with CUDA only.
 */
#ifndef HK_GKL_SMALL_H
#define HK_GKL_SMALL_H

#include <stddef.h>
#include "hk_batch.h"
#include "hk_cuda_small.h"
#include "hk_model.h"

/* Bytes of one slot: a HaplotypeCaller region of a few hundred pairs takes
 * a few hundred KB; larger calls go to the engine. */
#define HK_GKL_SMALL_SLOT_BYTES ((size_t)1 << 20)

/* Seconds a scored call spent packing, in its round trip and unpacking
 * (HK_TRACE). */
typedef struct {
    double pack_s, trip_s, unpack_s;
} hk_gkl_small_times_t;

/* Whether b fits the path: not a PDHMM batch, reads of at most
 * HK_SMALL_MAX_READ bases, no more than a slot holds. */
int hk_gkl_small_fits(const hk_batch_t *b);

/* Score b's pairs into b->lk in m's precision (b->n_recomputed as the CPU
 * counts it). HK_OK; HK_E_NODEV at once when b does not
 * fit (a read longer than HK_SMALL_MAX_READ, a PDHMM batch, more than a
 * slot) or every slot is taken: the caller scores it another way; HK_E_NOMEM
 * (rescuing a pair beyond GATK's double range) or HK_E_RUNTIME (a CUDA call
 * failed), with err filled. times: NULL, or where the call's times go. */
HK_RESULT_USED hk_status_t hk_gkl_small_score(hk_cuda_small_t *s, hk_batch_t *b, const hk_model_t *m,
                                              hk_gkl_small_times_t *times, char *err, size_t errlen);

/* Make n slots ready (their streams and pinned memory, made when a slot is
 * first taken): at initNative, so that a Java thread's first call does not
 * pay for them. Slots that cannot be made are left to the calls to meet. */
void hk_gkl_small_warm(hk_cuda_small_t *s, int n);

#endif
