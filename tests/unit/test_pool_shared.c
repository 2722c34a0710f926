/* test_pool_shared - hk_threads_run_shared: every item of a shared job is done
 * once, by the caller and the workers that began in time, from one calling
 * thread and from several at once (the pool's workers pass from one caller
 * to another); a worker given nothing (its job taken back) never touches the
 * job after the call returns; workers that begin in time do share the work.
 * A fault here may show as a hang (a caller waiting for a worker it lost). */
#include "hk_threads.h"
#include "tap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ITEMS 64

typedef struct {
    atomic_int next;
    atomic_int done[ITEMS];
    atomic_int returned;              /* set once hk_threads_run_shared returned */
    pthread_t  caller;
    atomic_int by_workers;            /* items done off the caller's thread */
    long       caller_delay_ns;       /* the caller's call waits this long first */
} job_t;

static atomic_int late;               /* calls that began after their run returned */

static void *work(void *arg)
{
    job_t *j = arg;
    if (atomic_load(&j->returned)) atomic_fetch_add(&late, 1);
    const int mine = pthread_equal(pthread_self(), j->caller);
    if (mine && j->caller_delay_ns) nanosleep(&(struct timespec){ 0, j->caller_delay_ns }, NULL);
    for (int k; (k = atomic_fetch_add(&j->next, 1)) < ITEMS;) {
        atomic_fetch_add(&j->done[k], 1);
        if (!mine) atomic_fetch_add(&j->by_workers, 1);
    }
    return NULL;
}

enum { CALLERS = 4, CALLER_RUNS = 5000 };
static atomic_int callers_wrong;

/* One of several threads calling at once: their runs share the pool's workers. */
static void *caller(void *arg)
{
    job_t *jobs = arg;
    for (int r = 0; r < CALLER_RUNS; r++) {
        job_t *j = &jobs[r];
        j->caller = pthread_self();
        hk_threads_run_shared(work, j, 1 + r % 4);
        atomic_store(&j->returned, 1);
        for (int k = 0; k < ITEMS; k++) callers_wrong += atomic_load(&j->done[k]) != 1;
    }
    return NULL;
}

int main(void)
{
    enum { RUNS = 20000 };
    /* the jobs stay allocated to the end: a late worker would still find its job */
    job_t *jobs = calloc(RUNS, sizeof *jobs);
    if (!jobs) return 2;
    int wrong = 0;
    for (int spin = 0; spin < 2; spin++) {
        hk_threads_set_spin(spin ? 200000L : 0);
        for (int r = spin * RUNS / 2; r < (spin + 1) * RUNS / 2; r++) {
            job_t *j = &jobs[r];
            j->caller = pthread_self();
            hk_threads_run_shared(work, j, 1 + r % 4);
            atomic_store(&j->returned, 1);
            for (int k = 0; k < ITEMS; k++) wrong += atomic_load(&j->done[k]) != 1;
        }
    }
    TAP_OK(wrong == 0, "%d runs on 1-4 threads, sleeping or spinning workers: every item done once (%d not)",
           RUNS, wrong);
    job_t *many = calloc((size_t)CALLERS * CALLER_RUNS, sizeof *many);
    pthread_t tid[CALLERS];
    if (!many) return 2;
    for (int spin = 0; spin < 2; spin++) {
        hk_threads_set_spin(spin ? 200000L : 0);
        memset(many, 0, (size_t)CALLERS * CALLER_RUNS * sizeof *many);
        for (int c = 0; c < CALLERS; c++) pthread_create(&tid[c], NULL, caller, many + (size_t)c * CALLER_RUNS);
        for (int c = 0; c < CALLERS; c++) pthread_join(tid[c], NULL);
    }
    TAP_OK(atomic_load(&callers_wrong) == 0, "%d threads calling at once, %d runs each, twice: every item done once "
           "(%d not)", CALLERS, CALLER_RUNS, atomic_load(&callers_wrong));
    nanosleep(&(struct timespec){ 0, 50000000L }, NULL);   /* time for a late worker to show */
    TAP_OK(atomic_load(&late) == 0, "no worker began a job after its run returned (%d did)", atomic_load(&late));
    /* a caller slow to begin: the workers, begun meanwhile, do the items */
    hk_threads_set_spin(0);
    job_t slow;
    memset(&slow, 0, sizeof slow);
    slow.caller = pthread_self();
    slow.caller_delay_ns = 20000000L;
    hk_threads_run_shared(work, &slow, 4);
    int once = 1;
    for (int k = 0; k < ITEMS; k++) once &= atomic_load(&slow.done[k]) == 1;
    TAP_OK(once && atomic_load(&slow.by_workers) == ITEMS, "workers that begin in time share the job "
           "(%d of %d items off the caller's thread)", atomic_load(&slow.by_workers), ITEMS);
    free(jobs);
    free(many);
    return TAP_DONE();
}
