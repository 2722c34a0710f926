/* hk_gkl_combine.c - see hk_gkl_combine.h. */
#include "hk_gkl_combine.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { JOB_PENDING = 0, JOB_TAKEN = 1, JOB_DONE = 2, JOB_FAILED = 3 };

/* One caller's batch, on the caller's stack while it waits. */
typedef struct job {
    hk_batch_t *b;
    int         state;
    struct job *next;        /* the queue, oldest first */
} job_t;

struct hk_gkl_combine {
    hk_gkl_score_fn score;
    void           *ctx;
    size_t          max_pairs;
    pthread_mutex_t lock;
    pthread_cond_t  wake;    /* a call ended: owners look at their job, one waiter may lead */
    job_t          *head, *tail;
    int             leading; /* a leader is in the scorer */
    size_t          calls, batches;
};

hk_gkl_combine_t *hk_gkl_combine_open(hk_gkl_score_fn score, void *ctx, size_t max_pairs)
{
    hk_gkl_combine_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->score = score;
    c->ctx = ctx;
    c->max_pairs = max_pairs ? max_pairs : 1;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, NULL);
    return c;
}

void hk_gkl_combine_close(hk_gkl_combine_t *c)
{
    if (!c) return;
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->wake);
    free(c);
}

/* The batches of one engine call and which of them the engine reported;
 * the leader's alone until it takes the lock again. */
typedef struct {
    hk_batch_t   **b;
    unsigned char *reported;
    size_t         n, next;   /* the engine reports in order: next is the one expected */
} call_t;

/* The engine reports each batch, in order, as soon as its results are final. */
static void job_done(hk_batch_t *b, void *arg)
{
    call_t *call = arg;
    for (size_t k = call->next; k < call->n; k++)
        if (call->b[k] == b) { call->reported[k] = 1; call->next = k + 1; return; }
}

/* Take pending jobs, oldest first, up to max_pairs (at least one), into a
 * NULL-terminated array; with the lock held. NULL without memory. */
static job_t **take_jobs(hk_gkl_combine_t *c, size_t *n)
{
    size_t count = 0, pairs = 0;
    for (job_t *j = c->head; j; j = j->next, count++) {
        if (count && pairs + j->b->n_pairs > c->max_pairs) break;
        pairs += j->b->n_pairs;
    }
    job_t **taken = malloc((count + 1) * sizeof *taken);
    if (!taken) return NULL;
    for (size_t k = 0; k < count; k++) {
        taken[k] = c->head;
        c->head = c->head->next;
        taken[k]->state = JOB_TAKEN;
    }
    if (!c->head) c->tail = NULL;
    taken[count] = NULL;
    *n = count;
    return taken;
}

/* Lead one engine call: the lock is held on entry and on return. */
static void lead(hk_gkl_combine_t *c)
{
    size_t n = 0;
    job_t **taken = take_jobs(c, &n);
    if (!taken) {   /* no memory for the list: the oldest job fails alone */
        job_t *j = c->head;
        c->head = j->next;
        if (!c->head) c->tail = NULL;
        j->state = JOB_FAILED;
        return;
    }
    c->leading = 1;
    pthread_mutex_unlock(&c->lock);
    call_t call = { .b = malloc(n * sizeof *call.b), .reported = calloc(n, 1), .n = n };
    if (call.b && call.reported) {
        for (size_t k = 0; k < n; k++) call.b[k] = taken[k]->b;
        /* a failed call leaves the batches from the failure on unreported */
        if (c->score(c->ctx, call.b, n, job_done, &call) == HK_OK) memset(call.reported, 1, n);
    }
    pthread_mutex_lock(&c->lock);
    for (size_t k = 0; k < n; k++)
        taken[k]->state = call.reported && call.reported[k] ? JOB_DONE : JOB_FAILED;
    free(call.b);
    free(call.reported);
    c->calls++;
    c->batches += n;
    c->leading = 0;
    free(taken);
    pthread_cond_broadcast(&c->wake);
}

hk_status_t hk_gkl_combine_score(hk_gkl_combine_t *c, hk_batch_t *b)
{
    job_t job = { .b = b, .state = JOB_PENDING, .next = NULL };
    pthread_mutex_lock(&c->lock);
    if (c->tail) c->tail->next = &job;
    else c->head = &job;
    c->tail = &job;
    while (job.state == JOB_PENDING || job.state == JOB_TAKEN) {
        if (!c->leading && job.state == JOB_PENDING) lead(c);
        else pthread_cond_wait(&c->wake, &c->lock);
    }
    /* a leader that left jobs behind (over max_pairs) hands the lead on */
    if (c->head && !c->leading) pthread_cond_broadcast(&c->wake);
    const int state = job.state;
    pthread_mutex_unlock(&c->lock);
    return state == JOB_DONE ? HK_OK : HK_E_RUNTIME;
}

int hk_gkl_combine_busy(hk_gkl_combine_t *c)
{
    pthread_mutex_lock(&c->lock);
    const int busy = c->leading || c->head;
    pthread_mutex_unlock(&c->lock);
    return busy;
}

size_t hk_gkl_combine_waiting(hk_gkl_combine_t *c)
{
    pthread_mutex_lock(&c->lock);
    size_t n = 0;
    for (const job_t *j = c->head; j; j = j->next) n++;
    pthread_mutex_unlock(&c->lock);
    return n;
}

void hk_gkl_combine_counts(hk_gkl_combine_t *c, size_t *calls, size_t *batches)
{
    pthread_mutex_lock(&c->lock);
    *calls = c->calls;
    *batches = c->batches;
    pthread_mutex_unlock(&c->lock);
}
