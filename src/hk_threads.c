/* hk_threads.c - see hk_threads.h.
 *
 * Threads are kept between calls: a fork-join per 16 MB block of input used
 * to start and join up to 63 threads each time (about 20 us each, in the
 * calling thread, on the reader's critical path). Finished workers wait on
 * an idle list; a call takes as many as it needs (starting more when none is
 * idle), so calls from several threads at once (reader, scorer, writer) each
 * get their own.
 *
 * Where a process asks (hk_threads_set_spin), a worker that finishes looks
 * for its next job for that long before it sleeps, and so does a caller for
 * its workers' ends: waking a sleeping thread took 0.09-0.14 ms on a GPU
 * host's VM, as long as a whole HaplotypeCaller region on one core, so the
 * GKL library's regions spread over maxThreads threads were no faster than
 * on one. The spin yields the core at every turn. `score` does not ask: its
 * reading workers spinning before they sleep measured slower, its process
 * having more runnable threads than cores (docs/PERFORMANCE.md). */
#include "hk_threads.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS 256   /* workers one call takes at once; more calls run in rounds */

static atomic_long spin_ns;   /* hk_threads_set_spin */

void hk_threads_set_spin(long ns) { atomic_store(&spin_ns, ns > 0 ? ns : 0); }

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t  done;
    atomic_int      left;      /* jobs given to workers and not finished */
    int             sleeping;  /* the caller waits on done (under lock) */
} group_t;

typedef void *(*job_fn)(void *);

typedef struct worker {
    pthread_mutex_t lock;
    pthread_cond_t  wake;
    _Atomic(job_fn) fn;        /* the job's function, NULL while idle */
    void           *arg;
    /* the group of the job given, set last; the worker claims the job by
     * swapping in NULL, and a caller takes it back (hk_threads_run_shared)
     * the same way: the one that swaps first has it. Another caller's job
     * has another group, so a caller never takes back a job not its own. */
    _Atomic(group_t *) owner;
    int             sleeping;  /* waits on wake (under lock) */
    struct worker  *next;      /* on the idle list */
} worker_t;

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static worker_t *idle;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Whether done(arg) became true within the spin time, yielding the core at
 * each turn. */
static int spin_until(int (*done)(void *), void *arg)
{
    const long ns = atomic_load_explicit(&spin_ns, memory_order_relaxed);
    if (ns == 0) return done(arg);
    const double end = now_ns() + (double)ns;
    for (unsigned turn = 0;; turn++) {
        if (done(arg)) return 1;
        if ((turn & 15) == 15 && now_ns() > end) return 0;
        sched_yield();
    }
}

static int has_job(void *w) { return atomic_load_explicit(&((worker_t *)w)->fn, memory_order_acquire) != NULL; }
static int all_done(void *g) { return atomic_load_explicit(&((group_t *)g)->left, memory_order_acquire) == 0; }

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    pthread_setname_np(pthread_self(), "hk-worker");
    for (;;) {
        if (!spin_until(has_job, w)) {
            pthread_mutex_lock(&w->lock);
            w->sleeping = 1;
            while (!has_job(w)) pthread_cond_wait(&w->wake, &w->lock);
            w->sleeping = 0;
            pthread_mutex_unlock(&w->lock);
        }
        /* claimed, unless the caller took the job back meanwhile (it puts
         * this worker on the idle list again: wait for the next job) */
        group_t *g = atomic_load_explicit(&w->owner, memory_order_acquire);
        if (!g || !atomic_compare_exchange_strong_explicit(&w->owner, &g, NULL, memory_order_acquire,
                                                           memory_order_relaxed))
            continue;
        const job_fn fn = atomic_load_explicit(&w->fn, memory_order_relaxed);
        void *job = w->arg;
        fn(job);
        atomic_store_explicit(&w->fn, NULL, memory_order_relaxed);
        pthread_mutex_lock(&idle_lock);   /* idle again before the caller hears */
        w->next = idle;
        idle = w;
        pthread_mutex_unlock(&idle_lock);
        /* under the lock: the caller may free g as soon as it sees left == 0,
         * and takes the lock once before it does */
        pthread_mutex_lock(&g->lock);
        if (atomic_fetch_sub_explicit(&g->left, 1, memory_order_release) == 1 && g->sleeping)
            pthread_cond_signal(&g->done);
        pthread_mutex_unlock(&g->lock);
    }
    return NULL;
}

/* An idle worker, or a new one; NULL when none can be started. */
static worker_t *take_worker(void)
{
    pthread_mutex_lock(&idle_lock);
    worker_t *w = idle;
    if (w) idle = w->next;
    pthread_mutex_unlock(&idle_lock);
    if (w) return w;
    if (!(w = calloc(1, sizeof *w))) return NULL;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    atomic_init(&w->fn, NULL);
    atomic_init(&w->owner, NULL);
    pthread_attr_t attr;
    pthread_t tid;
    int ok = pthread_attr_init(&attr) == 0;
    ok = ok && pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
         pthread_create(&tid, &attr, worker_main, w) == 0;
    pthread_attr_destroy(&attr);
    if (ok) return w;
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    free(w);
    return NULL;
}

/* hk_threads_run for n <= MAX_THREADS; shared: the calls share arg, and a
 * worker that has not begun when the caller's own call returns is given
 * nothing. */
static void run_group(void *(*fn)(void *), char *arg, size_t size, int n, int shared)
{
    worker_t *gave[MAX_THREADS];
    group_t g = { .sleeping = 0 };
    atomic_init(&g.left, 0);
    pthread_mutex_init(&g.lock, NULL);
    pthread_cond_init(&g.done, NULL);
    int given = 1;
    for (; given < n; given++) {
        worker_t *w = take_worker();
        if (!w) break;
        atomic_fetch_add_explicit(&g.left, 1, memory_order_relaxed);
        gave[given] = w;
        pthread_mutex_lock(&w->lock);
        w->arg = arg + (size_t)given * size;
        atomic_store_explicit(&w->fn, fn, memory_order_relaxed);
        atomic_store_explicit(&w->owner, &g, memory_order_release);
        if (w->sleeping) pthread_cond_signal(&w->wake);
        pthread_mutex_unlock(&w->lock);
    }
    for (int k = given; k < n; k++) fn(arg + (size_t)k * size);   /* no thread: here */
    fn(arg);
    for (int k = 1; shared && k < given; k++) {
        group_t *mine = &g;
        if (!atomic_compare_exchange_strong_explicit(&gave[k]->owner, &mine, NULL, memory_order_acq_rel,
                                                     memory_order_relaxed))
            continue;   /* claimed: waited for below */
        atomic_store_explicit(&gave[k]->fn, NULL, memory_order_relaxed);
        pthread_mutex_lock(&idle_lock);
        gave[k]->next = idle;
        idle = gave[k];
        pthread_mutex_unlock(&idle_lock);
        atomic_fetch_sub_explicit(&g.left, 1, memory_order_relaxed);
    }
    if (given > 1 && !spin_until(all_done, &g)) {
        pthread_mutex_lock(&g.lock);
        g.sleeping = 1;
        while (!all_done(&g)) pthread_cond_wait(&g.done, &g.lock);
        pthread_mutex_unlock(&g.lock);
    }
    pthread_mutex_lock(&g.lock);   /* the last worker has let go of g */
    pthread_mutex_unlock(&g.lock);
    pthread_mutex_destroy(&g.lock);
    pthread_cond_destroy(&g.done);
}

void hk_threads_run(void *(*fn)(void *), void *args, size_t size, int n)
{
    /* every call runs: past MAX_THREADS at once, in rounds of at most that many */
    for (int k = 0; k < n; k += MAX_THREADS)
        run_group(fn, (char *)args + (size_t)k * size, size, n - k < MAX_THREADS ? n - k : MAX_THREADS, 0);
}

void hk_threads_run_shared(void *(*fn)(void *), void *arg, int n)
{
    /* one round: the calls share the job, which the caller's alone can finish */
    run_group(fn, arg, 0, n < MAX_THREADS ? n : MAX_THREADS, 1);
}
