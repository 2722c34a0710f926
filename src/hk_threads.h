/* hk_threads.h - run one function on several arguments at once (fork-join).
 *
 * The one way haplik spreads a batch's work over threads: reading,
 * scoring on the CPU and formatting the table all call hk_threads_run.
 */
#ifndef HK_THREADS_H
#define HK_THREADS_H

#include <stddef.h>

/* Call fn(args + k * size) for k in [0, n): k >= 1 in worker threads (kept
 * between calls, see hk_threads.c), k = 0 in
 * the caller; a call whose thread cannot be started runs in the caller too.
 * Every call runs, however large n: beyond the threads one call takes at
 * once (hk_threads.c), in rounds.
 * size 0 gives every call the same argument. Returns when all have returned. */
void hk_threads_run(void *(*fn)(void *), void *args, size_t size, int n);

/* fn(arg) on up to n threads, for a job whose calls take their work from
 * the job itself (a shared counter), so that one call alone can do it all:
 * a worker that has not begun when the caller's own call returns is given
 * nothing, and the caller does not wait for it. Waking a sleeping worker
 * can take longer than a small job (a HaplotypeCaller region); then the
 * caller does the job alone instead of waiting for the latest worker. */
void hk_threads_run_shared(void *(*fn)(void *), void *arg, int n);

/* From now on, idle workers and waiting callers spin (yielding) for ns
 * nanoseconds before they sleep; 0, the default, not at all. For callers
 * whose calls are short and close together (see hk_threads.c). */
void hk_threads_set_spin(long ns);

#endif
