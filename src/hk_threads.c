/* hk_threads.c - see hk_threads.h.
 *
 * Threads are kept between calls: a fork-join per 16 MB block of input used
 * to start and join up to 63 threads each time (about 20 us each, in the
 * calling thread, on the reader's critical path). Finished workers wait on
 * an idle list; a call takes as many as it needs (starting more when none is
 * idle), so calls from several threads at once (reader, scorer, writer) each
 * get their own. */
#include "hk_threads.h"

#include <pthread.h>
#include <stdlib.h>

#define MAX_THREADS 256

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t  done;
    int             left;      /* jobs given to workers and not finished */
} group_t;

typedef struct worker {
    pthread_mutex_t lock;
    pthread_cond_t  wake;
    void         *(*fn)(void *);
    void           *arg;       /* the job, NULL while idle */
    group_t        *group;
    struct worker  *next;      /* on the idle list */
} worker_t;

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static worker_t *idle;

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    pthread_setname_np(pthread_self(), "hk-worker");
    for (;;) {
        pthread_mutex_lock(&w->lock);
        while (!w->fn) pthread_cond_wait(&w->wake, &w->lock);
        void *(*fn)(void *) = w->fn;
        void *job = w->arg;
        group_t *g = w->group;
        pthread_mutex_unlock(&w->lock);
        fn(job);
        pthread_mutex_lock(&w->lock);
        w->fn = NULL;
        pthread_mutex_unlock(&w->lock);
        pthread_mutex_lock(&idle_lock);   /* idle again before the caller hears */
        w->next = idle;
        idle = w;
        pthread_mutex_unlock(&idle_lock);
        pthread_mutex_lock(&g->lock);
        if (--g->left == 0) pthread_cond_signal(&g->done);
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

void hk_threads_run(void *(*fn)(void *), void *args, size_t size, int n)
{
    char *arg = args;
    group_t g = { .left = 0 };
    pthread_mutex_init(&g.lock, NULL);
    pthread_cond_init(&g.done, NULL);
    if (n > MAX_THREADS) n = MAX_THREADS;
    int given = 1;
    for (; given < n; given++) {
        worker_t *w = take_worker();
        if (!w) break;
        pthread_mutex_lock(&g.lock);
        g.left++;
        pthread_mutex_unlock(&g.lock);
        pthread_mutex_lock(&w->lock);
        w->arg = arg + (size_t)given * size;
        w->group = &g;
        w->fn = fn;
        pthread_cond_signal(&w->wake);
        pthread_mutex_unlock(&w->lock);
    }
    for (int k = given; k < n; k++) fn(arg + (size_t)k * size);   /* no thread: here */
    fn(arg);
    pthread_mutex_lock(&g.lock);
    while (g.left > 0) pthread_cond_wait(&g.done, &g.lock);
    pthread_mutex_unlock(&g.lock);
    pthread_mutex_destroy(&g.lock);
    pthread_cond_destroy(&g.done);
}
