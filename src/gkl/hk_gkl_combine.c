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

/* One scorer context and what its leader keeps. */
typedef struct {
    void      *ctx;
    int        busy;         /* a leader is in the scorer with it */
    hk_batch_t merged;       /* its calls' batches as one (kept for its capacity) */
} lane_t;

struct hk_gkl_combine {
    hk_gkl_score_fn score;
    size_t          max_pairs;
    pthread_mutex_t lock;
    pthread_cond_t  wake;    /* a call ended: owners look at their job, one waiter may lead */
    job_t          *head, *tail;
    int             leading; /* leaders in the scorer, at most n_lanes */
    int             n_lanes;
    size_t          queued;  /* jobs in the queue */
    size_t          calls, batches, declined;
    lane_t          lane[HK_GKL_COMBINE_MAX_CTX];
};

hk_status_t hk_gkl_combine_open(hk_gkl_score_fn score, void *const *ctx, int n_ctx, size_t max_pairs,
                                hk_gkl_combine_t **out)
{
    *out = NULL;
    if (n_ctx < 1 || n_ctx > HK_GKL_COMBINE_MAX_CTX) return HK_E_INVAL;
    hk_gkl_combine_t *c = calloc(1, sizeof *c);
    if (!c) return HK_E_NOMEM;
    c->score = score;
    c->max_pairs = max_pairs ? max_pairs : 1;
    c->n_lanes = n_ctx;
    for (int i = 0; i < n_ctx; i++) {
        c->lane[i].ctx = ctx[i];
        hk_batch_init(&c->lane[i].merged);
        hk_batch_set_no_text(&c->lane[i].merged, 1);
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, NULL);
    *out = c;
    return HK_OK;
}

void hk_gkl_combine_close(hk_gkl_combine_t *c)
{
    if (!c) return;
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->wake);
    for (int i = 0; i < c->n_lanes; i++) hk_batch_free(&c->lane[i].merged);
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
    c->queued -= count;
    taken[count] = NULL;
    *n = count;
    return taken;
}

/* The taken batches as one: the engine scores a batch's regions in one
 * stream of chunks, but each batch of a call in chunks of its own (a GPU
 * round trip each), so many small batches go faster merged. 0, or -1 when
 * they are not merged (one batch, or no memory: scored as they are). */
static int merge(lane_t *l, job_t *const *taken, size_t n)
{
    if (n < 2) return -1;
    hk_batch_clear(&l->merged);
    for (size_t k = 0; k < n; k++)
        if (hk_batch_append_batch(&l->merged, taken[k]->b)) return -1;
    return 0;
}

/* Score the taken batches; which of them have their results in reported[]. */
static void score_taken(hk_gkl_combine_t *c, lane_t *l, job_t *const *taken, size_t n, unsigned char *reported)
{
    if (merge(l, taken, n) == 0) {
        hk_batch_t *one = &l->merged;
        if (c->score(l->ctx, &one, 1, NULL, NULL) != HK_OK) return;
        size_t at = 0;
        for (size_t k = 0; k < n; k++) {
            hk_batch_t *b = taken[k]->b;
            memcpy(b->lk, one->lk + at, b->n_pairs * sizeof *b->lk);
            at += b->n_pairs;
            reported[k] = 1;
        }
        return;
    }
    call_t call = { .b = malloc(n * sizeof *call.b), .reported = reported, .n = n };
    if (!call.b) return;
    for (size_t k = 0; k < n; k++) call.b[k] = taken[k]->b;
    /* a failed call leaves the batches from the failure on unreported */
    if (c->score(l->ctx, call.b, n, job_done, &call) == HK_OK) memset(reported, 1, n);
    free(call.b);
}

/* Lead one engine call on a free lane: the lock is held on entry and on
 * return. */
static void lead(hk_gkl_combine_t *c)
{
    lane_t *l = c->lane;
    while (l->busy) l++;   /* leading < n_lanes: one is free */
    size_t n = 0;
    job_t **taken = take_jobs(c, &n);
    if (!taken) {   /* no memory for the list: the oldest job fails alone */
        job_t *j = c->head;
        c->head = j->next;
        if (!c->head) c->tail = NULL;
        c->queued--;
        j->state = JOB_FAILED;
        return;
    }
    c->leading++;
    l->busy = 1;
    pthread_mutex_unlock(&c->lock);
    unsigned char *reported = calloc(n, 1);
    if (reported) score_taken(c, l, taken, n, reported);
    pthread_mutex_lock(&c->lock);
    for (size_t k = 0; k < n; k++) taken[k]->state = reported && reported[k] ? JOB_DONE : JOB_FAILED;
    free(reported);
    c->calls++;
    c->batches += n;
    c->leading--;
    l->busy = 0;
    free(taken);
    pthread_cond_broadcast(&c->wake);
}

hk_status_t hk_gkl_combine_score(hk_gkl_combine_t *c, hk_batch_t *b, size_t queue_max)
{
    job_t job = { .b = b, .state = JOB_PENDING, .next = NULL };
    pthread_mutex_lock(&c->lock);
    if (c->leading == c->n_lanes && c->queued >= queue_max) {   /* the caller scores b itself */
        c->declined++;
        pthread_mutex_unlock(&c->lock);
        return HK_E_NODEV;
    }
    c->queued++;
    if (c->tail) c->tail->next = &job;
    else c->head = &job;
    c->tail = &job;
    while (job.state == JOB_PENDING || job.state == JOB_TAKEN) {
        if (c->leading < c->n_lanes && job.state == JOB_PENDING) lead(c);
        else pthread_cond_wait(&c->wake, &c->lock);
    }
    /* jobs left behind (over max_pairs, or queued while every lane was
     * busy) and a lane free: a waiter takes the lead */
    if (c->head && c->leading < c->n_lanes) pthread_cond_broadcast(&c->wake);
    const int state = job.state;
    pthread_mutex_unlock(&c->lock);
    return state == JOB_DONE ? HK_OK : HK_E_RUNTIME;
}

size_t hk_gkl_combine_waiting(hk_gkl_combine_t *c)
{
    pthread_mutex_lock(&c->lock);
    const size_t n = c->queued;
    pthread_mutex_unlock(&c->lock);
    return n;
}

void hk_gkl_combine_counts(hk_gkl_combine_t *c, size_t *calls, size_t *batches, size_t *declined)
{
    pthread_mutex_lock(&c->lock);
    *calls = c->calls;
    *batches = c->batches;
    if (declined) *declined = c->declined;
    pthread_mutex_unlock(&c->lock);
}
