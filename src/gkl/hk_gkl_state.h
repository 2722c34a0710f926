/* hk_gkl_state.h - what every Pair-HMM object of the JNI library shares: the
 * settings, the GPU engine and its combiner, counted by reference.
 *
 * GKL's initNative is static (no object), so its two arguments are global,
 * as in GKL: the last call's useDouble and maxThreads apply to every object.
 * Each initNative takes a reference and each doneNative gives one back; a
 * scoring call holds one for its duration, so that one object's end never
 * tears down what another still uses. The last reference closes the engine;
 * a later initNative opens it again.
 */
#ifndef HK_GKL_STATE_H
#define HK_GKL_STATE_H

#include <stddef.h>
#include "hk_batch.h"
#include "hk_config.h"

/* Where a call goes where a GPU is usable (engine.backend auto or cuda).
 * First the small-call path (kernels/hk_cuda_small.h): a call whose reads
 * are at most HK_SMALL_MAX_READ bases and that fits a slot's 1 MB, with a
 * slot free, makes one round trip of its own, in double. A region of 17
 * pairs took about 0.1 ms there against 0.2 on a core, and 16 Java threads
 * scored 2.8M pairs/s against 1.1-1.2M on the CPU alone
 * (docs/PERFORMANCE.md). Other calls take the engine's path: a
 * large call, at least this many cells per CPU thread it would otherwise
 * get (about 1.5 ms of one core's vector pass), goes to the GPU and waits
 * for a free engine, gathered with the calls that wait with it. A
 * region-sized call goes to the GPU only when an engine is free at once;
 * else its own thread scores it on the CPU. Such a launch lasts about
 * 0.1 ms, bound by its kernels' latency, so waiting out another launch
 * first took as long as the CPU pass (docs/PERFORMANCE.md, "haplik inside
 * HaplotypeCaller"). */
#define HK_GKL_GPU_MIN_CELLS_PER_THREAD ((uint64_t)1 << 22)

/* GPU engines the combiner leads calls on (HK_GKL_ENGINES in a tuning build
 * chooses another count): each has its own streams and staging memory
 * (160 MB pinned), so one call is launched while another's kernels run. */
#define HK_GKL_GPU_ENGINES 2

/* A call on the CPU gets one thread per this many cells (about 10 us of one
 * core's vector pass), up to maxThreads: a smaller share costs more to hand
 * to a pool thread than it saves. With the pool's threads awake between
 * calls (HK_GKL_POOL_SPIN_NS) this is 8 times smaller than with sleeping
 * ones: 1 Java thread, maxThreads 2, on a 2-core host, NA12878-like calls
 * 104-122k pairs/s against 90-110k, the bundled dump's 0.93-1.15M against
 * 0.71-0.86M (docs/PERFORMANCE.md). */
#define HK_GKL_CPU_MIN_CELLS_PER_THREAD ((uint64_t)1 << 15)

/* Slots of the GPU's small-call path (kernels/hk_cuda_small.h): calls from
 * this many threads at once each get a round trip of their own; a call that
 * finds none free is scored on the CPU (the same bits). Each holds 1 MB
 * pinned and 1 MB on its GPU, made when first used: a process pins for the
 * threads it has, and more Java threads than GPU slots no longer push calls
 * onto the slower CPU (64 Java threads scored 1.45M pairs/s on 32 slots
 * where 16 scored 3.66M). */
#define HK_GKL_SMALL_SLOTS 256

/* How long the CPU pool's threads stay awake for the next call (hk_threads.h):
 * waking a sleeping thread took as long as scoring a region (0.09-0.14 ms). */
#define HK_GKL_POOL_SPIN_NS 200000L

/* Take a reference for an initNative, creating the state on the first:
 * reads the file named by HAPLIK_GKL_CONFIG (if set) and opens the engine.
 * Returns HK_OK, or the failure with the reason in why (the config, the
 * requested GPU, memory; also logged). */
HK_RESULT_USED hk_status_t hk_gkl_init(int use_double, int max_threads, char *why, size_t whylen);
/* Give back an initNative's reference (doneNative). More gives than takes
 * are ignored. */
void hk_gkl_done(void);

/* For one scoring call: a reference while the state exists (0), or -1 when
 * no initNative holds one. The caller gives it back with hk_gkl_leave. */
int hk_gkl_enter(void) __attribute__((warn_unused_result));
void hk_gkl_leave(void);

/* The rules a call's sequences enter its batch with (between enter and leave). */
hk_seq_rules_t hk_gkl_seq_rules(void);
/* Score b (one or more regions) by the rules above: the GPU through the
 * combiner when usable and worth it, else the CPU on maxThreads threads, or
 * on the calling thread alone with one_thread (GKL's IntelPairHmm). A
 * GPU that fails is given up with one warning and the batch scored on the
 * CPU. HK_OK, or the CPU's failure (memory, threads; logged). */
HK_RESULT_USED hk_status_t hk_gkl_score(hk_batch_t *b, int one_thread);

/* With HK_TRACE set: a JNI call took total_s seconds in all (its batch's
 * scoring included); the state reports the share of the JNI layer as it
 * closes. */
void hk_gkl_note_call(double total_s);
/* Whether HK_TRACE was set when the state opened. */
int hk_gkl_tracing(void);

/* Free a batch that hk_gkl_score scored, at any time (a Java thread's exit):
 * the GPU engine may hold its arrays pinned, and lets go of them here, or
 * did so already as it closed. */
void hk_gkl_batch_free(hk_batch_t *b);

#endif
