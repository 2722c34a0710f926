/* hk_engine.h - the scoring backend chosen for a run (CPU or CUDA).
 *
 * hk_engine_start resolves engine.backend: `cuda` must get a GPU (else
 * HK_E_NODEV, exit status 3), `auto` takes one when usable and otherwise
 * falls back to the CPU with a notice, `cpu` never touches CUDA. The GPUs it opens are those
 * hk_engine_prepare_run chose (hk_gpu_claim.h); it holds a GPU's lock until
 * the engine is released (or the process exits).
 */
#ifndef HK_ENGINE_H
#define HK_ENGINE_H

#include <stddef.h>
#include "hk_batch.h"
#include "hk_config.h"

typedef struct hk_engine hk_engine_t;

/* The engine for c into *out (c must outlive it: the engine works as c->opt
 * says, its start-up delayed by c->opt.open_delay_ms for tests): HK_OK, or
 * a failure (logged; HK_E_NODEV: `cuda` without a usable GPU) and *out NULL. */
HK_RESULT_USED hk_status_t hk_engine_start(const hk_config_t *c, hk_engine_t **out);
/* Called for each batch of an hk_engine_score call, in order, as soon as its
 * results are final; possibly from another thread, never two at once. */
typedef void (*hk_engine_done_fn)(hk_batch_t *b, void *arg);
/* Score every pair of b[0..n) as one piece of work (a GPU's pipeline fills
 * once per call), reporting each batch through done. HK_OK, or a failure
 * (logged; a device's: batches not yet reported have no results). */
HK_RESULT_USED hk_status_t hk_engine_score(hk_engine_t *e, hk_batch_t *const *b, size_t n,
                                           hk_engine_done_fn done, void *arg);
/* No more scoring: give the devices back now (GPU memory, the CUDA contexts,
 * the GPU lock) rather than at exit, so that the driver's tear-down overlaps
 * with writing the table. Names and ordinals stay for the summary. */
void hk_engine_release(hk_engine_t *e);
/* "cpu" or "cuda". */
const char *hk_engine_backend(const hk_engine_t *e);
/* Names of the devices in use (the CPU's model name for the CPU). */
int hk_engine_devices(const hk_engine_t *e, const char *const **names);
/* The GPUs in use as the host numbers them (none for the CPU): the ordinals
 * of engine.devices and of the GPU locks, whatever CUDA_VISIBLE_DEVICES
 * hk_engine_prepare_run set. */
int hk_engine_ordinals(const hk_engine_t *e, const int **ordinals);
/* Pairs per batch: engine.max_batch_pairs, or the default (known before the
 * engine is open, so that reading starts while the GPU is being set up). */
size_t hk_engine_batch_pairs(const hk_config_t *c);
/* Another engine of this process scores on e's GPUs at the same time: e's
 * release frees its own streams and memory but leaves the devices' CUDA
 * contexts, which are the process's, to the last engine (one not marked). */
void hk_engine_share_contexts(hk_engine_t *e);
/* Accepts NULL. */
void hk_engine_close(hk_engine_t *e);

/* For `haplik devices`: print the usable GPUs, or why there is none, to fp.
 * Returns the number of usable GPUs. */
int hk_engine_list_devices(FILE *fp);

#endif
