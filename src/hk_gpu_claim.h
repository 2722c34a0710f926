/* hk_gpu_claim.h - the GPUs a run uses, chosen before CUDA starts: with
 * engine.gpu_lock_dir set, the first free device of engine.devices (or of the
 * host) claimed by flock of DIR/gpu<N>.lock; and CUDA_VISIBLE_DEVICES narrowed
 * to those chosen. hk_engine_start opens the chosen GPUs and takes their lock.
 */
#ifndef HK_GPU_CLAIM_H
#define HK_GPU_CLAIM_H

#include <stddef.h>
#include "hk_config.h"

/* For a whole run (score, check), before hk_engine_start and before any other
 * thread starts (it may set the environment). The GPUs the run will use (a
 * list in engine.devices, or the one it claims in engine.gpu_lock_dir, which
 * may wait here) become the only ones CUDA sees (CUDA_VISIBLE_DEVICES, unless
 * the user or a scheduler set it, as c->opt says: hk_options_read): CUDA's start-up grows with the GPUs it
 * sees, used or not (docs/PERFORMANCE.md). CUDA contexts get 2 hardware
 * queues instead of the driver's 8. They are created and torn down faster; the GPU phase of a call on many small chunks is slower,
 * but a run's GPU is idle most of the time, and every workload measured ran
 * faster whole, the GPU-bound ones too (docs/PERFORMANCE.md). A
 * queue count the user set (CUDA_DEVICE_MAX_CONNECTIONS, c->opt) is left alone. */
void hk_engine_prepare_run(const hk_config_t *c);
/* Give back what hk_engine_prepare_run claimed and no engine took (the GPU
 * lock): for a run that stops before hk_engine_start. */
void hk_engine_unprepare_run(void);

/* The choice hk_engine_prepare_run made (CUDA builds). */
typedef struct {
    int narrowed;                  /* CUDA_VISIBLE_DEVICES set to phys[0..n) */
    int failed;                    /* claiming a GPU failed (logged): the run stops */
    int n, phys[HK_MAX_DEVICES];
    int lock_fd, locked;           /* the lock claimed, until the engine takes it */
} hk_gpu_chosen_t;
const hk_gpu_chosen_t *hk_gpu_claim_chosen(void);
/* The lock hk_engine_prepare_run claimed, if it holds one, becomes the
 * caller's (*fd, the ordinal in *locked), who closes it; else nothing. */
void hk_gpu_claim_take_lock(int *fd, int *locked);
/* Claim one device of `cand` through DIR/gpu<N>.lock; waits while all are
 * taken. Returns the ordinal and leaves the lock's fd in *fd, or -1 (logged). */
int hk_gpu_claim_lock(const char *dir, const int *cand, int n, int *fd);
/* The GPUs of this host (or container) by their device nodes, without
 * starting CUDA; 0 when there are none to be seen. */
int hk_gpu_claim_count_nodes(void);
/* Local time with milliseconds, for the GPU lock notices. */
const char *hk_gpu_claim_timestamp(char *buf, size_t n);

#endif
