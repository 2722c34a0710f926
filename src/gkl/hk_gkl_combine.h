/* hk_gkl_combine.h - calls from many threads gathered into shared engine calls.
 *
 * HaplotypeCaller scores one active region per call: a hundred to a few
 * hundred pairs, far too little to fill a GPU. hk_engine_score already scores
 * an array of batches as one piece of work, so concurrent callers combine:
 * each enqueues its batch and waits; a caller that finds a scorer context
 * (an engine) free becomes its leader, takes every batch pending (up to a
 * number of pairs), scores them in one hk_engine_score call (merged into one
 * batch of the leader's: the engine gives each batch chunks of its own) and
 * wakes their owners; batches enqueued meanwhile go together in the next
 * leader's call. Each context is only ever called by one thread at a time.
 * With several contexts (engines on one GPU, each with its own streams),
 * one group's launch need not wait for the other's to end: a small launch
 * lasts as long as its kernels' latency, not the GPU's throughput.
 *
 * The scorer is a function with hk_engine_score's contract (the library
 * passes the engine's; the unit test also a scorer that holds its first call
 * until every other caller waits, to see the gathering happen).
 * Ownership: the combiner borrows the scorer's contexts (the caller closes
 * them after hk_gkl_combine_close); a batch stays its caller's.
 */
#ifndef HK_GKL_COMBINE_H
#define HK_GKL_COMBINE_H

#include <stddef.h>
#include "hk_engine.h"

typedef struct hk_gkl_combine hk_gkl_combine_t;

/* As hk_engine_score, with ctx for the engine: HK_OK when every batch was
 * reported, else the failure. */
typedef hk_status_t (*hk_gkl_score_fn)(void *ctx, hk_batch_t *const *b, size_t n,
                                       hk_engine_done_fn done, void *arg);

/* The most scorer contexts a combiner takes. */
#define HK_GKL_COMBINE_MAX_CTX 4

/* A combiner in *out of n_ctx contexts (1 to HK_GKL_COMBINE_MAX_CTX), each
 * led by one caller at a time; max_pairs bounds one combined call (a
 * caller's batch is never split: a batch over the bound is scored alone).
 * HK_OK; else *out is NULL and the status is HK_E_NOMEM, or HK_E_INVAL for
 * a bad n_ctx. Logs nothing. */
HK_RESULT_USED hk_status_t hk_gkl_combine_open(hk_gkl_score_fn score, void *const *ctx, int n_ctx, size_t max_pairs,
                                               hk_gkl_combine_t **out);
/* Score b (its lk[]) together with whatever other threads submit meanwhile;
 * returns when b's results are final. HK_OK; HK_E_NODEV, at once, when
 * every context is busy and queue_max callers already wait (SIZE_MAX: b
 * always waits; the caller then scores b itself, for a small batch sooner
 * on its own core than after a whole launch); HK_E_RUNTIME when the engine
 * failed before b was reported (logged once by the engine; b has no
 * results). */
HK_RESULT_USED hk_status_t hk_gkl_combine_score(hk_gkl_combine_t *c, hk_batch_t *b, size_t queue_max);
/* Callers waiting whose batch no call has taken yet. */
size_t hk_gkl_combine_waiting(hk_gkl_combine_t *c);
/* Engine calls made, batches scored and calls declined so far (for tests
 * and the trace; declined may be NULL). */
void hk_gkl_combine_counts(hk_gkl_combine_t *c, size_t *calls, size_t *batches, size_t *declined);
/* No call may be in progress. Accepts NULL. */
void hk_gkl_combine_close(hk_gkl_combine_t *c);

#endif
