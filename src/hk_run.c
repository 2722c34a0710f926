/* hk_run.c - see hk_run.h: the scoring run.
 *
 * Three stages overlap, each in its own thread, passing batches:
 *   read (parse the inputs) -> score (engine) -> write (table, check, progress).
 * A pool of NBATCH batches bounds memory. Start-up of the engine (CUDA's
 * driver and contexts: longer the more GPUs) overlaps with parsing: while it
 * lasts the pool may grow, up to an eighth of the host's memory, so that
 * reading runs ahead rather than waiting for the devices (docs/PERFORMANCE.md,
 * "start-up"); those extra batches are freed once written. The
 * scorer takes every batch queued when it is free in one engine call (those
 * that piled up during start-up, typically), and each batch goes on to the
 * writer as soon as its own results are final. Once the last batch is scored
 * the devices are released while the writer finishes.
 *
 * HK_TRACE=1 in the environment prints the stages' timeline at the end (for
 * performance work).
 */
#include "hk_run.h"
#include "hk_engine.h"
#include "hk_gpu_claim.h"
#include "hk_log.h"
#include "hk_outfile.h"
#include "hk_reader.h"
#include "hk_split.h"
#include "hk_table.h"
#include "hk_text.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NBATCH 8        /* the pool once the engine is open */
#define MAX_BATCHES 256 /* the most it grows to while the engine opens */
#define NTRACE 256

typedef struct {
    hk_batch_t *item[MAX_BATCHES + 1];
    int head, n;
} queue_t;

typedef struct {
    /* set up before the threads start */
    const hk_config_t *cfg;
    const hk_split_part_t *part;   /* --plan: the one input's part read in place, else NULL */
    char **inputs;
    int    n_inputs;
    char **shown;             /* the name the table gives each input: a shard's own
                                 "# source-input" name (hk_split.h, set as it is opened),
                                 else NULL: its name in inputs */
    const char **names;       /* the table's names: shown[i] or inputs[i] */
    size_t batch_pairs;
    int    parse_threads;     /* threads that read (scan and normalise) each batch */
    int    check;             /* compare with expected values */
    hk_table_t *table;        /* NULL: no table (check without -o) */
    hk_engine_t *engine;
    hk_batch_t *pool;         /* MAX_BATCHES slots; the first n_pool in use */
    int    n_pool;            /* (mu) batches made so far */
    int    max_pool;          /* (reader) how many may be made while the engine opens */
    int    engine_opening;    /* (mu) the engine is still being opened */

    /* the read stage's own */
    hk_reader_t *rd;          /* the input being walked */
    hk_reader_t *early;       /* the one after it, opened and primed once rd is all read */
    int    next_input;        /* index in inputs of the next to open */
    int    open_early;        /* open_next_early (HK_OPEN_EARLY=0: not, for measuring) */

    pthread_mutex_t mu;
    pthread_cond_t  cv;
    queue_t free_q, score_q, write_q;
    hk_status_t status;       /* the first failure, HK_OK if none */

    /* totals, written by the writer thread */
    uint64_t regions, pairs, cells, recomputed;
    /* check */
    uint64_t compared, over, no_expected;
    uint64_t expected_neg_inf;   /* pairs the dump gives as -Infinity (GATK's double underflowed) */
    double   max_diff;
    long     max_line;        /* input line of the worst pair's region */
    uint64_t max_region;
    uint32_t max_read, max_hap;
    /* busy seconds of each stage (they overlap) */
    double   t_open, t_read, t_score, t_write;
    /* progress */
    int      progress;
    double   t0, last_progress;
    /* HK_TRACE: events, ms since t0 */
    int      trace;
    double   read_end, read_end_cpu;   /* when reading ended; the process's CPU time by then */
    int      n_trace;
    long     trace_dropped;   /* events past NTRACE: counted, and said */
    double   trace_ms[NTRACE];
    const char *trace_what[NTRACE];
    long     trace_arg[NTRACE];
} run_t;


static void trace(run_t *r, const char *what, long arg)
{
    if (!r->trace) return;
    const double t = hk_log_now();
    pthread_mutex_lock(&r->mu);
    if (r->n_trace < NTRACE) {
        r->trace_ms[r->n_trace] = (t - r->t0) * 1e3;
        r->trace_what[r->n_trace] = what;
        r->trace_arg[r->n_trace++] = arg;
    } else {
        r->trace_dropped++;
    }
    pthread_mutex_unlock(&r->mu);
}

static void q_push(run_t *r, queue_t *q, hk_batch_t *b)
{
    pthread_mutex_lock(&r->mu);
    q->item[(q->head + q->n++) % (MAX_BATCHES + 1)] = b;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* The oldest item of a non-empty queue (r->mu held). */
static hk_batch_t *q_take(queue_t *q)
{
    hk_batch_t *b = q->item[q->head];
    q->head = (q->head + 1) % (MAX_BATCHES + 1);
    q->n--;
    return b;
}

/* Pop a batch; NULL is the end-of-stream marker. Returns 0, or -1 when the
 * run failed and the stage must stop. */
static int q_pop(run_t *r, queue_t *q, hk_batch_t **b)
{
    pthread_mutex_lock(&r->mu);
    while (q->n == 0 && !r->status) pthread_cond_wait(&r->cv, &r->mu);
    if (r->status) { pthread_mutex_unlock(&r->mu); return -1; }
    *b = q_take(q);
    pthread_mutex_unlock(&r->mu);
    return 0;
}

/* Pop every queued batch (at least one; waits) up to and including the
 * end-of-stream marker, which sets *end instead of being returned. Returns the
 * count, or -1 when the run failed. */
static int q_pop_all(run_t *r, queue_t *q, hk_batch_t **out, int *end)
{
    int n = 0;
    pthread_mutex_lock(&r->mu);
    while (q->n == 0 && !r->status) pthread_cond_wait(&r->cv, &r->mu);
    if (r->status) { pthread_mutex_unlock(&r->mu); return -1; }
    *end = 0;
    while (q->n > 0 && !*end) {
        hk_batch_t *b = q_take(q);
        if (b) out[n++] = b; else *end = 1;
    }
    pthread_mutex_unlock(&r->mu);
    return n;
}

static void fail(run_t *r, hk_status_t status)
{
    pthread_mutex_lock(&r->mu);
    if (!r->status) r->status = status;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static hk_batch_t *new_batch(run_t *r)   /* r->mu held */
{
    hk_batch_t *b = &r->pool[r->n_pool++];
    hk_batch_init(b);
    /* a table without sequences needs no copy of their text */
    hk_batch_set_no_text(b, !r->cfg->sequences && !r->check);
    return b;
}

/* A free batch for the reader: a new one while the engine is still opening
 * and the pool may grow, else the next one given back (waits). 0, or -1 when
 * the run failed. */
static int take_free(run_t *r, hk_batch_t **b)
{
    pthread_mutex_lock(&r->mu);
    while (r->free_q.n == 0 && !r->status) {
        if (r->engine_opening && r->n_pool < r->max_pool) {
            *b = new_batch(r);
            pthread_mutex_unlock(&r->mu);
            return 0;
        }
        pthread_cond_wait(&r->cv, &r->mu);
    }
    if (r->status) { pthread_mutex_unlock(&r->mu); return -1; }
    *b = q_take(&r->free_q);
    pthread_mutex_unlock(&r->mu);
    return 0;
}

/* How many batches like this full one an eighth of the host's memory holds. */
static int pool_limit(const hk_batch_t *full)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const size_t bytes = hk_batch_bytes(full);
    if (pages <= 0 || page <= 0 || !bytes) return NBATCH;
    const double n = (double)pages * (double)page / 8.0 / (double)bytes;
    return n >= MAX_BATCHES ? MAX_BATCHES : n <= NBATCH ? NBATCH : (int)n;
}

/* A batch read in full: on to the scorer. */
static void batch_read(run_t *r, hk_batch_t *b)
{
    trace(r, "read batch, pairs", (long)b->n_pairs);
    q_push(r, &r->score_q, b);
}

/* The reader's report that a full batch is set (hk_reader_set_ready). */
static void batch_ready(hk_batch_t *b, void *arg) { batch_read(arg, b); }

/* The name a regular file's first line, or second after a '#' header, gives
 * it, "# source-input NAME" (a shard that `haplik split` cut), unescaped;
 * NULL when it has none (or is no regular file: a pipe cannot be read twice). */
static char *source_input(const char *path)
{
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode)) return NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char head[4096];
    const size_t n = fread(head, 1, sizeof head - 1, fp);
    fclose(fp);
    head[n] = '\0';
    const size_t tag = strlen(HK_SPLIT_SOURCE_TAG);
    const char *line = head, *end = memchr(head, '\n', n);
    if (end && head[0] == '#' && strncmp(head, HK_SPLIT_SOURCE_TAG, tag)) {
        line = end + 1;
        end = memchr(line, '\n', n - (size_t)(line - head));
    }
    if (!end || strncmp(line, HK_SPLIT_SOURCE_TAG, tag)) return NULL;
    if (end[-1] == '\r') end--;   /* a Windows line end */
    return hk_text_unescape(line + tag, (size_t)(end - line) - tag);
}

/* The reader of path in *rd: HK_OK, or the failure (logged; *rd NULL). */
static hk_status_t open_input(run_t *r, const char *path, hk_reader_t **rd)
{
    int format = hk_reader_parse_format(r->cfg->input_format);
    if (r->part && format == HK_FMT_AUTO) format = r->part->format;   /* as the whole file read */
    hk_status_t st = hk_reader_open(path, format, hk_model_seq_rules(&r->cfg->model), &r->cfg->opt.read, rd);
    if (st) return st;
    if (r->part && (st = hk_reader_set_range(*rd, r->part->start, r->part->end, r->part->first_line,
                                             r->part->region))) {
        hk_reader_close(*rd);
        *rd = NULL;
        return st;
    }
    hk_reader_set_threads(*rd, r->parse_threads);
    return HK_OK;
}

/* The input walked has all been read: open the next one and read its first
 * block beside the walk of the last, rather than after it (a serial read
 * and scan per input; many small inputs were each one block). A regular
 * file only: opening a FIFO would wait for its writer. Errors here are
 * muted; the input is opened again in turn, which reports them in order. */
static void open_next_early(void *arg)
{
    run_t *r = arg;
    const char *path = r->inputs[r->next_input];
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode)) return;
    hk_log_mute_errors(1);
    if (r->next_input < 32) trace(r, "input opened early", r->next_input);   /* room for the rest */
    if (open_input(r, path, &r->early) == HK_OK && hk_reader_prime(r->early)) {
        hk_reader_close(r->early);
        r->early = NULL;
    }
    hk_log_mute_errors(0);
}

static void *read_stage(void *arg)
{
    run_t *r = arg;
    hk_batch_t *b = NULL;
    int pdhmm = -1;                 /* the run's model, once the first input's format is known */
    hk_batch_caps_t caps = { 0 };   /* of the first full batch */
    r->open_early = r->cfg->opt.open_early;
    for (;;) {
        if (!b) {
            if (take_free(r, &b) < 0) goto out;
            hk_batch_clear(b);
            /* a fresh batch: take its page faults on all cores now rather than
             * one by one in this thread while it fills (a third of reading) */
            if (caps.read_pos && hk_batch_prefault(b, &caps, r->parse_threads)) {
                hk_log_error("out of memory");
                fail(r, HK_E_NOMEM);
                goto out;
            }
        }
        if (!r->rd) {
            if (r->next_input == r->n_inputs) break;
            hk_status_t opened = HK_OK;
            if (r->early) r->rd = r->early;
            else opened = open_input(r, r->inputs[r->next_input], &r->rd);
            /* before any of its regions is read, so before the writer names them */
            if (r->rd && (r->shown[r->next_input] = source_input(r->inputs[r->next_input])))
                r->names[r->next_input] = r->shown[r->next_input];
            if (r->next_input < 32) trace(r, r->early ? "input switched, opened early" : "input opened", r->next_input);
            r->early = NULL;
            r->next_input++;
            if (!r->rd) { fail(r, opened); goto out; }
            hk_reader_expect_pdhmm(r->rd, pdhmm);
            /* a full batch goes on from batch_ready, its last sequences set
             * beside the walk of the next one */
            hk_reader_set_ready(r->rd, batch_ready, r);
            if (r->open_early && r->next_input < r->n_inputs) hk_reader_set_all_read(r->rd, open_next_early, r);
        }
        const double t0 = hk_log_now();
        b->input = (uint32_t)(r->next_input - 1);   /* regions begun now are this input's */
        size_t got;
        const hk_status_t st = hk_reader_next(r->rd, b, r->batch_pairs, &got);
        r->t_read += hk_log_now() - t0;
        if (st) { fail(r, st); goto out; }
        if (got == 0) {
            hk_reader_close(r->rd);
            r->rd = NULL;
            continue;
        }
        pdhmm = b->pdhmm;
        if (b->n_pairs >= r->batch_pairs) {
            /* its arrays grow no more, though its last sequences may still be set */
            if (!caps.read_pos) {
                caps = hk_batch_caps(b);
                r->max_pool = pool_limit(b);
            }
            b = NULL;   /* batch_ready has it, or will */
        }
    }
    if (b && b->n_regions) batch_read(r, b);
    if (r->trace) {   /* the yardstick: cores busy while reading */
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        r->read_end_cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                          (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
        r->read_end = hk_log_now();
    }
    q_push(r, &r->score_q, NULL);
out:
    hk_reader_close(r->rd);
    hk_reader_close(r->early);
    r->rd = r->early = NULL;
    return NULL;
}

static void check_batch(run_t *r, const hk_batch_t *b)
{
    for (size_t ri = 0; ri < b->n_regions; ri++) {
        const hk_region_t *rg = &b->regions[ri];
        for (uint64_t i = 0; i < (uint64_t)rg->n_reads * rg->n_haps; i++) {
            const double want = b->expected[rg->pair0 + i], got = b->lk[rg->pair0 + i];
            if (isnan(want)) { r->no_expected++; continue; }
            /* GATK prints -Infinity where its double underflows; haplik prints
             * the true value (SPEC 1): nothing to compare */
            if (isinf(want) && want < 0) { r->expected_neg_inf++; continue; }
            double d = (want == got) ? 0.0 : fabs(got - want);
            if (isnan(d)) d = INFINITY;
            r->compared++;
            if (d > r->cfg->tolerance) r->over++;
            if (d > r->max_diff || r->compared == 1) {
                r->max_diff = d;
                r->max_line = rg->line;
                r->max_region = r->regions + ri;
                r->max_read = (uint32_t)(i / rg->n_haps);
                r->max_hap = (uint32_t)(i % rg->n_haps);
            }
        }
    }
}

/* Through hk_log, which drops it once an error is printed. */
static void show_progress(run_t *r, int final)
{
    const double t = hk_log_now();
    if (!final && t - r->last_progress < 0.5) return;
    r->last_progress = t;
    hk_log_progress("%llu regions, %llu pairs, %.2f GCUPS", (unsigned long long)r->regions,
                    (unsigned long long)r->pairs, (double)r->cells / (t - r->t0) / 1e9);
    if (final) hk_log_progress_end();
}

static void *write_stage(void *arg)
{
    run_t *r = arg;
    hk_batch_t *b;
    for (;;) {
        if (q_pop(r, &r->write_q, &b) < 0) return NULL;
        if (!b) {
            /* every batch is written and the reader is done: give their memory
             * back now, while the devices are being released, not after */
            pthread_mutex_lock(&r->mu);
            const int n = r->n_pool;
            pthread_mutex_unlock(&r->mu);
            for (int i = 0; i < n; i++) hk_batch_free(&r->pool[i]);
            trace(r, "batches freed", n);
            return NULL;
        }
        const double t0 = hk_log_now();
        const hk_status_t st = r->table ? hk_table_write(r->table, b) : HK_OK;
        if (st) { fail(r, st); return NULL; }
        r->t_write += hk_log_now() - t0;
        trace(r, "wrote batch, pairs", (long)b->n_pairs);
        if (r->check) check_batch(r, b);
        r->regions += b->n_regions;
        r->pairs += b->n_pairs;
        r->cells += b->cells;
        r->recomputed += b->n_recomputed;
        if (r->progress) show_progress(r, 0);
        /* a batch beyond the pool's NBATCH was read ahead during start-up:
         * its memory goes back now rather than being read into again (the
         * CUDA engine pins a batch's arrays when it comes back, which costs
         * more, the more GPUs, than packing it once on the host) */
        if (b - r->pool >= NBATCH) hk_batch_free(b);
        else q_push(r, &r->free_q, b);
    }
}

/* The engine's report that a batch is scored: on to the writer. */
static void batch_scored(hk_batch_t *b, void *arg)
{
    run_t *r = arg;
    trace(r, "scored batch, pairs", (long)b->n_pairs);
    q_push(r, &r->write_q, b);
}

/* A failure of scoring: the run's (exit status 3), whatever the layer
 * below called it. */
static hk_status_t run_fault(hk_status_t st) { return hk_status_exit(st) == 3 ? st : HK_E_RUNTIME; }

/* Run the three stages (read, score, write); returns the first failure, or HK_OK. */
static hk_status_t run(run_t *r, const char *output)
{
    hk_batch_t *pool = calloc(MAX_BATCHES, sizeof *pool);
    pthread_t reader, writer;
    int reader_up = 0, writer_up = 0;
    const hk_config_t *c = r->cfg;

    if (!pool) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    r->t0 = hk_log_now();
    r->trace = hk_log_tracing();
    hk_engine_prepare_run(c);   /* no other thread yet */
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->pool = pool;
    for (int i = 0; i < NBATCH; i++) r->free_q.item[i] = new_batch(r);
    r->free_q.n = NBATCH;
    r->max_pool = NBATCH;   /* until a full batch shows their size */
    r->engine_opening = 1;
    r->progress = !hk_log_quiet() && isatty(STDERR_FILENO);
    r->parse_threads = c->threads > 0 ? c->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    /* Scoring on the CPU takes every core for far longer than reading the
     * next batch does: a quarter of them read it, rather than all of them
     * competing with the scorer (16 of each cost it 1-2x of 16 threads' 13x). */
    if (c->backend == HK_BACKEND_CPU && r->parse_threads > 4) r->parse_threads /= 4;
    r->batch_pairs = hk_engine_batch_pairs(c);
    int rc = pthread_create(&reader, NULL, read_stage, r);
    if (rc) {   /* its one line; the GPU claimed is given back, the rest freed at join */
        hk_log_error("cannot start a thread: %s", strerror(rc));
        hk_engine_unprepare_run();
        fail(r, HK_E_RUNTIME);
        goto join;
    }
    reader_up = 1;
    const double t_open = hk_log_now();
    hk_status_t status = hk_engine_start(c, &r->engine);
    r->t_open = hk_log_now() - t_open;
    pthread_mutex_lock(&r->mu);
    r->engine_opening = 0;
    const int read_ahead = r->n_pool - NBATCH;
    pthread_mutex_unlock(&r->mu);
    trace(r, "engine open, batches read ahead", read_ahead);
    if (!r->engine) { fail(r, status); goto join; }
    if (output || !r->check) {
        if ((status = hk_table_open(output, c, r->names, r->n_inputs, &r->table))) { fail(r, status); goto join; }
    }
    if ((rc = pthread_create(&writer, NULL, write_stage, r))) {
        hk_log_error("cannot start a thread: %s", strerror(rc));
        fail(r, HK_E_RUNTIME);
        goto join;
    }
    writer_up = 1;
    for (;;) {
        hk_batch_t *b[MAX_BATCHES];
        int end, n = q_pop_all(r, &r->score_q, b, &end);
        if (n < 0) break;
        const double t0 = hk_log_now();
        trace(r, "scoring batches", n);
        const hk_status_t st = n ? hk_engine_score(r->engine, b, (size_t)n, batch_scored, r) : HK_OK;
        if (st) { fail(r, run_fault(st)); break; }
        r->t_score += hk_log_now() - t0;
        if (end) {
            q_push(r, &r->write_q, NULL);
            hk_engine_release(r->engine);   /* while the writer finishes */
            trace(r, "devices released", 0);
            break;
        }
    }
join:
    if (reader_up) pthread_join(reader, NULL);
    if (writer_up) pthread_join(writer, NULL);
    status = r->status;
    if (!status && r->progress) show_progress(r, 1);
    if (!status && r->table) {
        const char *const *names;
        hk_summary_t s = {
            .regions = r->regions, .pairs = r->pairs, .cells = r->cells,
            .double_recomputed = r->recomputed, .backend = hk_engine_backend(r->engine),
            .seconds = hk_log_now() - r->t0,
        };
        s.n_devices = hk_engine_devices(r->engine, &names);
        s.devices = names;
        s.n_ordinals = hk_engine_ordinals(r->engine, &s.ordinals);
        status = hk_table_finish(r->table, &s);
        r->table = NULL;
    }
    trace(r, "table finished", 0);
    if (!status)
        hk_log_notice("%llu pairs, %.3g cells in %.3f s; busy: start-up %.3f s, reading %.3f s, "
                      "scoring %.3f s (%s), writing %.3f s", (unsigned long long)r->pairs,
                      (double)r->cells, hk_log_now() - r->t0, r->t_open, r->t_read, r->t_score,
                      hk_engine_backend(r->engine), r->t_write);
    hk_table_abort(r->table);
    hk_engine_close(r->engine);
    for (int i = 0; i < r->n_pool; i++) hk_batch_free(&pool[i]);   /* after a failure */
    free(pool);
    trace(r, "engine closed", 0);
    for (int i = 0; i < r->n_trace; i++)
        fprintf(stderr, "haplik: trace %8.1f ms  %s %ld\n", r->trace_ms[i], r->trace_what[i], r->trace_arg[i]);
    if (r->trace_dropped)
        fprintf(stderr, "haplik: trace (%ld later events not kept: the first %d are)\n", r->trace_dropped, NTRACE);
    if (r->trace) {   /* where the process's own start and exit stand (against a shell's clock) */
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        const double epoch = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
        fprintf(stderr, "haplik: trace run began at epoch %.4f, ended at %.4f\n", epoch - (hk_log_now() - r->t0), epoch);
        if (r->read_end > r->t0)
            fprintf(stderr, "haplik: trace reading ended at %.1f ms with %.3f s of the process's CPU time: "
                    "%.1f cores busy while reading\n", (r->read_end - r->t0) * 1e3, r->read_end_cpu,
                    r->read_end_cpu / (r->read_end - r->t0));
    }
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    return status;
}

hk_status_t hk_run(const hk_config_t *c, char **inputs, int n_inputs, const hk_split_part_t *part,
                   const char *output, int check, hk_run_stats_t *stats)
{
    run_t r = { .cfg = c, .part = part, .inputs = inputs, .n_inputs = n_inputs, .check = check };
    r.shown = calloc((size_t)n_inputs + 1, sizeof *r.shown);
    r.names = calloc((size_t)n_inputs + 1, sizeof *r.names);
    if (!r.shown || !r.names) {
        free(r.shown);
        free(r.names);
        *stats = (hk_run_stats_t){ 0 };
        hk_log_error("out of memory");
        return HK_E_NOMEM;
    }
    for (int i = 0; i < n_inputs; i++) r.names[i] = inputs[i];
    const hk_status_t status = run(&r, output);
    for (int i = 0; i < n_inputs; i++) free(r.shown[i]);
    free(r.shown);
    free(r.names);
    *stats = (hk_run_stats_t){
        .regions = r.regions, .pairs = r.pairs, .compared = r.compared, .over = r.over,
        .no_expected = r.no_expected, .expected_neg_inf = r.expected_neg_inf,
        .max_diff = r.max_diff, .max_line = r.max_line, .max_region = r.max_region,
        .max_read = r.max_read, .max_hap = r.max_hap,
    };
    return status;
}
