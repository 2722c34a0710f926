/* hk_lines.c - see hk_lines.h.
 *
 * Blocks are 1 MB per thread (a pipe, FIFO or terminal: 256 KB, see
 * block_bytes), read one ahead of the scan. A plain regular file's next
 * block is read inside the fork-join, a share per thread (pread); a stream's
 * (gzip, BGZF, a pipe) inside it too, whole, by a job of its own (in order).
 */
#include "hk_lines.h"
#include "hk_piece_index.h"
#include "hk_log.h"
#include "hk_mem.h"
#include "hk_threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A stream is read this much at a time: a read that fails loses no more (the
 * error is reported at the line after the last whole line before it). */
#define READ_CHUNK         ((size_t)256 << 10)
/* Bytes read per block and thread: enough that starting the threads costs
 * little, little enough that a block is still in cache when it is set (1 MB
 * parsed faster than 2 MB, 512 KB about as fast, 256 KB slower:
 * docs/PERFORMANCE.md); and at most MAX_BLOCK in all, as a few blocks are
 * held at a time. */
#define BLOCK_PER_THREAD   ((size_t)1 << 20)
#define MAX_BLOCK          ((size_t)16 << 20)
/* A piece (or a share of the side job) smaller than this is not worth a thread. */
#define MIN_PIECE          ((size_t)64 << 10)
#define MAX_THREADS        64

/* What a step's task does (for HK_TRACE's times). */
enum { TASK_READ, TASK_SCAN, TASK_SIDE, TASK_KINDS };

/* How the input ended, once it has. */
enum { INPUT_MORE, INPUT_EOF, INPUT_READ_ERROR, INPUT_LONG_LINE };

/* A block of the input: the bytes after the whole lines of the block before
 * (an unfinished line, or the last line held back), then those read. */
typedef struct {
    char   *data;
    size_t  len, cap;
    size_t  room;          /* bytes to read into it after those carried over */
    size_t  lines_end;     /* data[0, lines_end) is whole lines; the rest goes on
                              into the next block */
    int     input_end;     /* INPUT_*: whether the input ended here, and how */
    size_t  end_line;      /* once scanned: index in lines after its last line */
} block_t;

typedef hk_lines_piece_t piece_t;

/* The step in flight: the side job, the scan of `scanning`, the read of `ahead`. */
typedef struct {
    pthread_t        thread;      /* runs the steps (started with the first) */
    int              started;
    pthread_mutex_t  lock;
    pthread_cond_t   cond;
    int              go, busy, quit;
    int              read_first;  /* the step reads `scanning` (the input's first block)
                                     before it scans it (hk_lines_prime) */
    int              side_left;   /* parts of the step whose side job is not done; -1
                                     until the step has counted its parts */
    hk_lines_side_fn side;
    void            *arg;
    size_t           side_bytes;
    hk_piece_scan_fn scan;        /* the format's pass, as it was when the step began */
    char             sep;         /* and its field separator */
    int              n_pieces;    /* of the block scanned, once done; -1: out of memory */
} stepper_t;

struct hk_lines {
    hk_source_t *src;
    int          nthreads;
    size_t       block_per_thread;   /* BLOCK_PER_THREAD unless HK_BLOCK_KB says */
    size_t       max_block;          /* MAX_BLOCK unless HK_MAX_BLOCK_MB says */
    hk_piece_scan_fn scan;
    char         sep;      /* the field separator of the format's records */
    void       (*free_state)(void *);
    hk_lines_first_fn first_fn;   /* see hk_lines_set_first */
    void        *first_arg;
    block_t    **held;     /* the blocks of the lines in the index, oldest first */
    size_t       n_held, m_held;
    block_t     *scanning; /* the block the step in flight scans, NULL if none */
    block_t     *ahead;    /* the block after it, read by that step (or before it) */
    stepper_t    step;
    block_t     *spare;    /* a block to reuse */
    int          input_end;   /* INPUT_*: of the last block scanned */
    hk_lines_index_t ix;   /* the index (first member: see hk_lines_index) */
    size_t       m_lines;
    /* The array the index was in before the last take, as it was: the side
     * job started after it reads there, so that a take never moves the lines
     * that job reads (it copied each line twice, in the walk's thread). */
    hk_line_t   *other;
    size_t       m_other;
    block_t    **retired;  /* blocks of lines in `other` only: freed at the next take */
    size_t       n_retired, m_retired;
    off_t        fd_pos;   /* a seekable source: where its next block starts */
    piece_t     *pieces;   /* the pieces a step scans into */
    int          n_pieces; /* allocated */
    /* The pieces of the step before: a take starts the next step first and
     * then copies these into the index, beside that step. */
    piece_t     *done;
    int          n_done;
    int          tracing;  /* HK_TRACE: time the steps' tasks */
    int          side_first;   /* HK_STEP_ORDER=side (hk_read_opts_t): a step's side parts before its scan */
    atomic_uint_least64_t task_ns[TASK_KINDS];   /* thread time in tasks, by kind */
    atomic_uint_least64_t steps;
    /* HK_TRACE: see hk_lines_fork_times (0: steps, 1: side jobs alone) */
    atomic_uint_least64_t fj_n[2], fj_wall_ns[2], fj_start_ns[2], fj_end_ns[2];
    uint64_t     idle_ns;
    uint64_t     rescanned;   /* lines split and scanned again (hk_lines_rescan) */
};

/* hk_read_opts_t's block_kb, max_block_mb (HK_BLOCK_KB, HK_MAX_BLOCK_MB):
 * other sizes, 0 keeps the built-in */
static size_t opt_bytes(int v, int shift, size_t built_in)
{
    return v ? (size_t)v << shift : built_in;
}

static void free_block(block_t *blk)
{
    if (blk) free(blk->data);
    free(blk);
}

hk_lines_t *hk_lines_open(hk_source_t *src, int nthreads, const hk_read_opts_t *opt)
{
    hk_lines_t *L = calloc(1, sizeof *L);
    if (!L) return NULL;
    hk_read_opts_t dflt;
    if (!opt) hk_read_opts_init(&dflt);
    if (!opt) opt = &dflt;
    L->src = src;
    L->block_per_thread = opt_bytes(opt->block_kb, 10, BLOCK_PER_THREAD);
    L->max_block = opt_bytes(opt->max_block_mb, 20, MAX_BLOCK);
    L->ix.line0 = 1;
    L->sep = ' ';
    L->tracing = hk_log_tracing();
    L->side_first = opt->side_first;
    hk_lines_set_threads(L, nthreads);
    return L;
}

void hk_lines_set_threads(hk_lines_t *L, int nthreads)
{
    L->nthreads = nthreads < 1 ? 1 : nthreads > MAX_THREADS ? MAX_THREADS : nthreads;
}

void hk_lines_set_first_line(hk_lines_t *L, long line) { L->ix.line0 = line; }

int hk_lines_set_scan(hk_lines_t *L, char sep, hk_piece_scan_fn scan, void (*free_state)(void *))
{
    const int changed = sep != L->sep || scan != L->scan;
    L->sep = sep;
    L->scan = scan;
    /* a piece keeps the state of the scans before (the formats' states are
     * one kind, or none): the last free function that frees one stays */
    if (free_state) L->free_state = free_state;
    return changed;
}

void hk_lines_set_first(hk_lines_t *L, hk_lines_first_fn fn, void *arg)
{
    L->first_fn = fn;
    L->first_arg = arg;
}

void hk_lines_close(hk_lines_t *L)
{
    if (!L) return;
    stepper_t *st = &L->step;
    if (st->started) {
        hk_lines_wait(L);
        pthread_mutex_lock(&st->lock);
        st->quit = 1;
        pthread_cond_broadcast(&st->cond);
        pthread_mutex_unlock(&st->lock);
        pthread_join(st->thread, NULL);
        pthread_mutex_destroy(&st->lock);
        pthread_cond_destroy(&st->cond);
    }
    free_block(L->scanning);
    for (size_t i = 0; i < L->n_held; i++) free_block(L->held[i]);
    free(L->held);
    free_block(L->ahead);
    free_block(L->spare);
    free(L->ix.lines);
    free(L->other);
    for (size_t i = 0; i < L->n_retired; i++) free_block(L->retired[i]);
    free(L->retired);
    for (int k = 0; k < L->n_pieces; k++) {
        free(L->pieces[k].lines);
        if (L->free_state) L->free_state(L->pieces[k].state);
    }
    free(L->pieces);
    for (int k = 0; k < L->n_done; k++) {
        free(L->done[k].lines);
        if (L->free_state) L->free_state(L->done[k].state);
    }
    free(L->done);
    free(L);
}

void hk_lines_rescan(hk_lines_t *L, size_t from)
{
    if (from >= L->ix.n_lines) return;
    L->rescanned += L->ix.n_lines - from;
    for (size_t i = from; i < L->ix.n_lines; i++) {
        hk_line_t *x = &L->ix.lines[i];
        x->piece_back = (uint32_t)(i - from);
        if (x->kind == HK_LINE_TEXT) hk_lines_split_fields(x, x->text, L->sep);
    }
    if (!L->scan) return;
    void *state = NULL;
    L->scan(L->ix.lines + from, L->ix.n_lines - from, &state);
    if (L->free_state) L->free_state(state);
}

const hk_lines_index_t *hk_lines_index(const hk_lines_t *L) { return &L->ix; }

void hk_lines_times(const hk_lines_t *L, double *read, double *scan, double *side, long *steps)
{
    *read = 1e-9 * (double)atomic_load(&L->task_ns[TASK_READ]);
    *scan = 1e-9 * (double)atomic_load(&L->task_ns[TASK_SCAN]);
    *side = 1e-9 * (double)atomic_load(&L->task_ns[TASK_SIDE]);
    *steps = (long)atomic_load(&L->steps);
}

void hk_lines_fork_times(const hk_lines_t *L, int kind, long *n, double *wall, double *start,
                         double *end, double *idle)
{
    *n = (long)atomic_load(&L->fj_n[kind]);
    *wall = 1e-9 * (double)atomic_load(&L->fj_wall_ns[kind]);
    *start = 1e-9 * (double)atomic_load(&L->fj_start_ns[kind]);
    *end = 1e-9 * (double)atomic_load(&L->fj_end_ns[kind]);
    *idle = 1e-9 * (double)L->idle_ns;
}
uint64_t hk_lines_rescanned(const hk_lines_t *L) { return L->rescanned; }
int hk_lines_ended(const hk_lines_t *L) { return L->input_end != INPUT_MORE; }

/* Threads worth starting for this many bytes. */
static int threads_for(const hk_lines_t *L, size_t bytes)
{
    /* the walk runs beside a step: with 4 threads or more, it keeps one */
    const int most = L->nthreads >= 4 ? L->nthreads - 1 : L->nthreads;
    const size_t n = bytes / MIN_PIECE;
    return n < 1 ? 1 : n < (size_t)most ? (int)n : most;
}

/* ---- reading blocks, one ahead of the scan ---- */

/* A stream's writer may hold it open with nothing more to send for a while
 * (a producer waiting on haplik's output, or between records): what came
 * before must then be scored and written, not held back until a large block
 * fills. So a stream is read a chunk per block. */
static size_t block_bytes(const hk_lines_t *L)
{
    if (hk_source_streaming(L->src)) return READ_CHUNK;
    const size_t n = L->block_per_thread * (size_t)L->nthreads;
    return n < L->max_block ? n : L->max_block;
}

/* Where the whole lines of blk end, its bytes read: after its last line end;
 * at the end of the input, at its end; and before its last line when more
 * follows a block that ends with a line end (held back: only what follows
 * tells whether it is the input's last, where a missing BGZF end-of-file
 * marker is reported). A last line already longer than any valid one ends
 * the input: it is refused before it is read whole. */
static void end_block(block_t *blk)
{
    const char *nl = memrchr(blk->data, '\n', blk->len);
    const size_t last = nl ? (size_t)(nl + 1 - blk->data) : 0;   /* start of the last line */
    if (blk->len - last > HK_MAX_LINE_LEN) blk->input_end = INPUT_LONG_LINE;
    blk->lines_end = blk->input_end == INPUT_EOF ? blk->len : last;
    if (blk->input_end == INPUT_MORE && last == blk->len && last > 0) {
        nl = memrchr(blk->data, '\n', last - 1);
        blk->lines_end = nl ? (size_t)(nl + 1 - blk->data) : 0;
    }
}

/* Read a block of a stream into blk, after the bytes carried over into it. */
static void read_stream(hk_lines_t *L, block_t *blk)
{
    const size_t goal = blk->len + blk->room;
    blk->input_end = INPUT_MORE;
    while (blk->len < goal) {   /* a chunk at a time: a failed read loses no more */
        const size_t ask = goal - blk->len < READ_CHUNK ? goal - blk->len : READ_CHUNK;
        const ssize_t got = hk_source_read(L->src, blk->data + blk->len, ask);
        if (got <= 0) {
            blk->input_end = got < 0 ? INPUT_READ_ERROR : INPUT_EOF;
            break;
        }
        blk->len += (size_t)got;
    }
    end_block(blk);
}

/* The block after prev (NULL for the first) with the bytes after prev's
 * whole lines carried over, room for a block more, not read yet. */
static block_t *new_block(hk_lines_t *L, const block_t *prev)
{
    const size_t carry = prev ? prev->len - prev->lines_end : 0;
    const size_t need = carry + block_bytes(L) + 1;   /* + 1: a last line's terminating NUL */
    block_t *blk = L->spare ? L->spare : calloc(1, sizeof *blk);
    L->spare = NULL;
    if (!blk) return NULL;
    if (blk->cap < need) {   /* a spare block's bytes are not needed: no realloc copying them */
        const size_t cap = need + need / 8;   /* room for a longer carry next time */
        char *x = hk_mem_realloc(NULL, cap);
        if (!x) {
            free_block(blk);
            return NULL;
        }
        free(blk->data);
        blk->data = x;
        blk->cap = cap;
    }
    if (carry) memcpy(blk->data, prev->data + prev->lines_end, carry);
    blk->len = carry;
    blk->room = block_bytes(L);
    return blk;
}

/* ---- one step: side job, scan of a block, read of the next ----
 * A step runs in a thread of its own (the stepper), as one fork-join over
 * the workers, while the caller walks the lines of the block before: the
 * walk is the one sequential part, and this way the others run beside it. */

/* A step's work as tasks that its threads take in turn (an atomic counter):
 * a stream's next block (read whole), then the side job's parts, the
 * pieces to scan, the shares of a plain file's next block to read. With
 * fixed shares a fork-join waited for its slowest thread, which the
 * process's other threads (the walk, the writer, the scorer) slowed down:
 * on a 16-core host only 9-10 cores were busy while reading. The side job
 * gets several parts per thread, so that the tasks end together. */
#define SIDE_PER_THREAD 4
#define READ_PER_THREAD 2

typedef struct {
    hk_lines_t       *L;
    hk_lines_side_fn  side;
    void             *side_arg;
    hk_piece_scan_fn  scan;
    char              sep;
    int               async;      /* a step of the stepper (it counts side parts done) */
    block_t          *stream;     /* a stream's next block, to read whole, or NULL */
    int               n_side, n_scan, n_read;
    block_t          *next;       /* a plain file's next block, to read in n_read shares, or NULL */
    int               inflating;  /* next's bytes planned by the source, inflated in n_read parts */
    size_t            read_bytes;
    ssize_t           read_got[MAX_THREADS * READ_PER_THREAD];
    atomic_int        task;       /* the next task to take */
    double            t0;         /* HK_TRACE: when the fork-join began */
    atomic_uint_least64_t first_ns, out_ns;   /* its threads' first task and running out, summed */
} step_ctx_t;

static void share(size_t total, int k, int n, size_t *lo, size_t *hi)
{
    *lo = total * (size_t)k / (size_t)n;
    *hi = total * (size_t)(k + 1) / (size_t)n;
}

/* Run task i; returns its kind (TASK_*). The largest tasks first (a
 * stream's read, the pieces to scan), so that the step ends on small ones:
 * side parts, then a plain file's read shares (HK_STEP_ORDER=side: the side
 * parts first, as before, for measuring). */
static int do_task(step_ctx_t *c, int i)
{
    if (c->stream && i-- == 0) {
        read_stream(c->L, c->stream);
        return TASK_READ;
    }
    if (!c->L->side_first && i < c->n_scan + c->n_side)   /* scan, then side */
        i = i < c->n_scan ? i + c->n_side : i - c->n_scan;
    if (i < c->n_side) {
        c->side(c->side_arg, i, c->n_side);
        if (c->async) {   /* the caller may be waiting for the side job alone */
            stepper_t *st = &c->L->step;
            pthread_mutex_lock(&st->lock);
            if (--st->side_left == 0) pthread_cond_broadcast(&st->cond);
            pthread_mutex_unlock(&st->lock);
        }
        return TASK_SIDE;
    }
    if ((i -= c->n_side) < c->n_scan) {
        hk_piece_index_lines(&c->L->pieces[i], c->scan, c->sep);
        return TASK_SCAN;
    }
    i -= c->n_scan;
    if (c->inflating) {
        hk_source_inflate(c->L->src, c->next->data + c->next->len, i, c->n_read);
        return TASK_READ;
    }
    size_t lo, hi;
    share(c->read_bytes, i, c->n_read, &lo, &hi);
    c->read_got[i] = hk_source_pread(c->L->src, c->next->data + c->next->len + lo, hi - lo,
                                     c->L->fd_pos + (off_t)lo);
    return TASK_READ;
}

/* With HK_TRACE, each kind of task's thread time is summed (hk_lines_times):
 * what the steps' threads were busy with, against the time they ran. */
static void run_task(step_ctx_t *c, int i)
{
    if (!c->L->tracing) {
        (void)do_task(c, i);
        return;
    }
    const double t0 = hk_log_now();
    const int kind = do_task(c, i);
    atomic_fetch_add(&c->L->task_ns[kind], (uint_least64_t)(1e9 * (hk_log_now() - t0)));
}

static uint_least64_t ns_since(double t0) { return (uint_least64_t)(1e9 * (hk_log_now() - t0)); }

static void *step_worker(void *arg)
{
    step_ctx_t *c = arg;
    const int n = (c->stream != NULL) + c->n_side + c->n_scan + c->n_read;
    if (c->L->tracing) atomic_fetch_add(&c->first_ns, ns_since(c->t0));
    for (int i; (i = atomic_fetch_add(&c->task, 1)) < n;) run_task(c, i);
    if (c->L->tracing) atomic_fetch_add(&c->out_ns, ns_since(c->t0));
    return NULL;
}

/* The shares of a plain file's block read: it ends at the first short one. */
static void end_shares(hk_lines_t *L, block_t *blk, const step_ctx_t *c)
{
    size_t len = 0;
    blk->input_end = INPUT_MORE;
    for (int k = 0; k < c->n_read && blk->input_end == INPUT_MORE; k++) {
        if (c->read_got[k] < 0) {
            blk->input_end = INPUT_READ_ERROR;
            break;
        }
        size_t lo, hi;
        share(c->read_bytes, k, c->n_read, &lo, &hi);
        len += (size_t)c->read_got[k];
        if ((size_t)c->read_got[k] < hi - lo) blk->input_end = INPUT_EOF;
    }
    blk->len += len;
    L->fd_pos += (off_t)len;
    end_block(blk);
}

/* The parts of a block inflated (hk_source_plan, which ended with plan_end):
 * up to the first bad block, then a read error. */
static void end_inflated(hk_lines_t *L, block_t *blk, int plan_end)
{
    int bad;
    blk->len += hk_source_planned(L->src, &bad);
    blk->input_end = bad || plan_end < 0 ? INPUT_READ_ERROR : plan_end > 0 ? INPUT_EOF : INPUT_MORE;
    end_block(blk);
}

/* One fork-join: run the side job; scan the whole lines of blk (unless NULL)
 * into L->pieces; read next (unless NULL), a plain file's block after blk, in
 * shares; read stream (unless NULL), a stream's block after blk, whole.
 * Returns the number of pieces, or -1 when memory ran out. */
static int run_step(hk_lines_t *L, block_t *blk, block_t *next, block_t *stream, hk_lines_side_fn side,
                    void *arg, size_t side_bytes, hk_piece_scan_fn scan, char sep, int async)
{
    const size_t scan_bytes = blk ? blk->lines_end : 0, read_bytes = next ? next->room : 0;
    const int nt = threads_for(L, side_bytes + scan_bytes + read_bytes);
    const int inflating = next && hk_source_blocks(L->src);
    int plan_end = 0;
    if (inflating) (void)hk_source_plan(L->src, next->room, &plan_end);   /* in order, here */
    step_ctx_t c = { .L = L, .side = side, .side_arg = arg, .scan = scan, .sep = sep, .async = async,
                     .stream = stream, .next = next, .inflating = inflating, .read_bytes = read_bytes };
    c.n_side = side ? nt * SIDE_PER_THREAD : 0;
    if (c.n_side > HK_LINES_MAX_PARTS) c.n_side = HK_LINES_MAX_PARTS;
    c.n_scan = blk ? nt : 0;
    c.n_read = next ? nt * READ_PER_THREAD : 0;
    atomic_init(&c.task, 0);
    if (async) {
        pthread_mutex_lock(&L->step.lock);
        L->step.side_left = c.n_side;
        pthread_mutex_unlock(&L->step.lock);
    }
    if (blk && nt > L->n_pieces) {
        piece_t *x = realloc(L->pieces, (size_t)nt * sizeof *x);
        if (!x) return -1;
        memset(x + L->n_pieces, 0, (size_t)(nt - L->n_pieces) * sizeof *x);
        L->pieces = x;
        L->n_pieces = nt;
    }
    size_t at = 0;
    for (int t = 0; t < c.n_scan; t++) {
        /* pieces cut after the first line end past an even share */
        size_t cut = t + 1 == nt ? scan_bytes : scan_bytes / (size_t)nt * (size_t)(t + 1);
        if (cut < at) cut = at;
        if (cut < scan_bytes) {
            const char *nl = memchr(blk->data + cut, '\n', scan_bytes - cut);
            cut = nl ? (size_t)(nl + 1 - blk->data) : scan_bytes;
        }
        L->pieces[t].buf = blk->data;
        L->pieces[t].lo = at;
        L->pieces[t].hi = at = cut;
    }
    /* a stream's block is read by one more thread: the others keep the work */
    if (blk || next || side || stream) {
        const int nw = nt + (stream != NULL), k = !async;
        c.t0 = L->tracing ? hk_log_now() : 0;
        hk_threads_run(step_worker, &c, 0, nw);
        atomic_fetch_add(&L->steps, 1);
        if (L->tracing) {
            const uint_least64_t wall = ns_since(c.t0);
            atomic_fetch_add(&L->fj_n[k], 1);
            atomic_fetch_add(&L->fj_wall_ns[k], wall);
            atomic_fetch_add(&L->fj_start_ns[k], atomic_load(&c.first_ns));
            atomic_fetch_add(&L->fj_end_ns[k], (uint_least64_t)nw * wall - atomic_load(&c.out_ns));
        }
    }
    if (next && inflating) end_inflated(L, next, plan_end);
    else if (next) end_shares(L, next, &c);
    return blk ? nt : 0;
}

/* The input's first block: read on all threads, a plain file's in shares,
 * a stream's here; then the block after it, to be read by the step. */
HK_RESULT_USED static hk_status_t read_first_block(hk_lines_t *L)
{
    block_t *first = L->scanning;
    if (!hk_source_seekable(L->src) && !hk_source_blocks(L->src)) read_stream(L, first);
    else (void)run_step(L, NULL, first, NULL, NULL, NULL, 0, NULL, ' ', 0);
    if (L->first_fn) {   /* the scan the step runs, as the first lines say */
        L->first_fn(L, first->data, first->lines_end, L->first_arg);
        L->step.scan = L->scan;
        L->step.sep = L->sep;
    }
    return first->input_end == INPUT_MORE && !(L->ahead = new_block(L, first)) ? HK_E_NOMEM : HK_OK;
}

/* The step in flight, in the stepper thread: the next block is read during
 * the fork-join, a plain file's a share per thread, a stream's by one more. */
static int do_step(hk_lines_t *L)
{
    stepper_t *st = &L->step;
    const int seekable = hk_source_seekable(L->src) || hk_source_blocks(L->src);   /* read in parts */
    if (st->read_first) {
        st->read_first = 0;
        if (read_first_block(L)) return -1;
    }
    return run_step(L, L->scanning, seekable ? L->ahead : NULL, seekable ? NULL : L->ahead, st->side,
                    st->arg, st->side_bytes, st->scan, st->sep, 1);
}

static void *stepper_main(void *arg)
{
    hk_lines_t *L = arg;
    stepper_t *st = &L->step;
    pthread_setname_np(pthread_self(), "hk-lines");   /* for top -H and perf --comm */
    pthread_mutex_lock(&st->lock);
    for (double t_done = 0;; t_done = L->tracing ? hk_log_now() : 0) {
        while (!st->go && !st->quit) pthread_cond_wait(&st->cond, &st->lock);
        if (st->quit) break;
        if (t_done > 0) L->idle_ns += ns_since(t_done);   /* waiting for the walk's take */
        st->go = 0;
        pthread_mutex_unlock(&st->lock);
        const int np = do_step(L);
        pthread_mutex_lock(&st->lock);
        st->n_pieces = np;
        st->busy = 0;
        pthread_cond_broadcast(&st->cond);
    }
    pthread_mutex_unlock(&st->lock);
    return NULL;
}

void hk_lines_wait(hk_lines_t *L)
{
    stepper_t *st = &L->step;
    if (!st->started) return;
    pthread_mutex_lock(&st->lock);
    while (st->busy) pthread_cond_wait(&st->cond, &st->lock);
    pthread_mutex_unlock(&st->lock);
}

/* Start the step set up in L and st: the scan of L->scanning (read unless
 * st->read_first), the read of L->ahead, and the side job. */
HK_RESULT_USED static hk_status_t start_step(hk_lines_t *L, hk_lines_side_fn side, void *arg, size_t side_bytes)
{
    stepper_t *st = &L->step;
    st->n_pieces = 0;
    if (!L->scanning && !side) return HK_OK;
    if (!st->started) {
        pthread_mutex_init(&st->lock, NULL);
        pthread_cond_init(&st->cond, NULL);
        if (pthread_create(&st->thread, NULL, stepper_main, L)) {
            pthread_mutex_destroy(&st->lock);
            pthread_cond_destroy(&st->cond);
            return HK_E_NOMEM;
        }
        st->started = 1;
    }
    pthread_mutex_lock(&st->lock);
    st->side = side;
    st->arg = arg;
    st->side_bytes = side_bytes;
    st->scan = L->scan;
    st->sep = L->sep;
    st->go = st->busy = 1;
    st->side_left = -1;
    pthread_cond_broadcast(&st->cond);
    pthread_mutex_unlock(&st->lock);
    return HK_OK;
}

/* Hand the stepper the scan of L->ahead (read already), the read of the
 * block after it, and the side job. No step may be in flight. */
HK_RESULT_USED static hk_status_t launch(hk_lines_t *L, hk_lines_side_fn side, void *arg, size_t side_bytes)
{
    L->scanning = L->ahead;
    L->ahead = NULL;
    if (L->scanning && L->scanning->input_end == INPUT_MORE && !(L->ahead = new_block(L, L->scanning)))
        return HK_E_NOMEM;
    return start_step(L, side, arg, side_bytes);
}

hk_status_t hk_lines_prime(hk_lines_t *L)
{
    if (L->step.started || L->scanning || L->ahead || L->n_held || L->input_end != INPUT_MORE)
        return HK_OK;   /* begun already */
    if (!(L->scanning = new_block(L, NULL))) return HK_E_NOMEM;
    L->step.read_first = 1;
    if (start_step(L, NULL, NULL, 0)) {
        L->step.read_first = 0;
        return HK_E_NOMEM;
    }
    return HK_OK;
}

void hk_lines_wait_side(hk_lines_t *L)
{
    stepper_t *st = &L->step;
    if (!st->started) return;
    pthread_mutex_lock(&st->lock);
    while (st->busy && st->side_left != 0) pthread_cond_wait(&st->cond, &st->lock);
    pthread_mutex_unlock(&st->lock);
}

void hk_lines_run_side(hk_lines_t *L, hk_lines_side_fn side, void *arg, size_t side_bytes)
{
    /* a side job alone touches no block or piece: it may run beside a scan */
    (void)run_step(L, NULL, NULL, NULL, side, arg, side_bytes, NULL, ' ', 0);
}

/* Room in the index for n more lines. */
HK_RESULT_USED static hk_status_t room_for_lines(hk_lines_t *L, size_t n)
{
    if (L->ix.n_lines + n <= L->m_lines) return HK_OK;
    size_t m = L->m_lines ? L->m_lines : 4096;
    while (m < L->ix.n_lines + n) m *= 2;
    hk_line_t *x = hk_mem_realloc(L->ix.lines, m * sizeof *x);
    if (!x) return HK_E_NOMEM;
    L->ix.lines = x;
    L->m_lines = m;
    return HK_OK;
}

/* Lines in the np pieces scanned by the step before; -1 when one ran out of memory. */
static ptrdiff_t piece_lines(const hk_lines_t *L, int np)
{
    size_t total = 0;
    for (int k = 0; k < np; k++) {
        if (L->done[k].oom) return -1;
        total += L->done[k].n;
    }
    return (ptrdiff_t)total;
}

/* Append the lines of those pieces to the index (room made). */
static void append_lines(hk_lines_t *L, int np)
{
    for (int k = 0; k < np; k++) {
        if (!L->done[k].n) continue;
        memcpy(L->ix.lines + L->ix.n_lines, L->done[k].lines, L->done[k].n * sizeof *L->ix.lines);
        L->ix.n_lines += L->done[k].n;
    }
}

/* A line for an error found where the input ends, reported when walked. */
HK_RESULT_USED static hk_status_t add_error_line(hk_lines_t *L, int kind)
{
    if (room_for_lines(L, 1)) return HK_E_NOMEM;
    L->ix.lines[L->ix.n_lines++] = (hk_line_t){ .kind = (uint8_t)kind };
    return HK_OK;
}

/* Blocks retired at the last take: no side job reads them any more. */
static void free_retired(hk_lines_t *L)
{
    for (size_t i = 0; i < L->n_retired; i++) {
        if (L->spare) free_block(L->retired[i]);
        else L->spare = L->retired[i];
    }
    L->n_retired = 0;
}

/* Move the index to the other array without its entries before keep, with
 * room for `more` after them; the blocks that held no other line retire.
 * The array left keeps its lines as they were. */
HK_RESULT_USED static hk_status_t drop_lines(hk_lines_t *L, size_t keep, size_t more)
{
    const size_t n = L->ix.n_lines - keep;
    if (L->m_other < n + more) {
        size_t m = L->m_other ? L->m_other : 4096;
        while (m < n + more) m *= 2;
        hk_line_t *x = hk_mem_realloc(NULL, m * sizeof *x);   /* nothing in it to keep */
        if (!x) return HK_E_NOMEM;
        free(L->other);
        L->other = x;
        L->m_other = m;
    }
    if (n) memcpy(L->other, L->ix.lines + keep, n * sizeof *L->other);
    hk_line_t *const was = L->ix.lines;
    const size_t m_was = L->m_lines;
    L->ix.lines = L->other;
    L->m_lines = L->m_other;
    L->other = was;
    L->m_other = m_was;
    L->ix.n_lines = n;
    L->ix.line0 += (long)keep;
    size_t k = 0;
    for (; k < L->n_held && L->held[k]->end_line <= keep; k++) {
        if (L->n_retired == L->m_retired) {
            const size_t m = L->m_retired ? 2 * L->m_retired : 16;
            block_t **x = realloc(L->retired, m * sizeof *x);
            if (!x) return HK_E_NOMEM;
            L->retired = x;
            L->m_retired = m;
        }
        L->retired[L->n_retired++] = L->held[k];
    }
    if (k) memmove(L->held, L->held + k, (L->n_held - k) * sizeof *L->held);
    L->n_held -= k;
    for (size_t i = 0; i < L->n_held; i++) L->held[i]->end_line -= keep;
    return HK_OK;
}

hk_status_t hk_lines_take(hk_lines_t *L, size_t keep, hk_lines_side_fn side, void *arg, size_t side_bytes)
{
    if (hk_lines_prime(L)) return HK_E_NOMEM;   /* the first take, unless primed */
    hk_lines_wait(L);
    free_retired(L);   /* the side job that read them is done */
    block_t *blk = L->scanning;
    L->scanning = NULL;
    const hk_piece_scan_fn scanned_with = L->step.scan;
    const char split_with = L->step.sep;
    const int np = L->step.n_pieces;
    /* the next step first: it scans into the other pieces, and its side job
     * reads the index as it is, which the rest of the take leaves alone */
    piece_t *const p = L->done;
    const int n = L->n_done;
    L->done = L->pieces;
    L->n_done = L->n_pieces;
    L->pieces = p;
    L->n_pieces = n;
    if (launch(L, side, arg, side_bytes)) {
        free_block(blk);
        return HK_E_NOMEM;
    }
    const ptrdiff_t more = blk && np > 0 ? piece_lines(L, np) : 0;
    /* + 1: a line for an error where the input ends */
    if (drop_lines(L, keep, more < 0 ? 1 : (size_t)more + 1)) {
        free_block(blk);
        return HK_E_NOMEM;
    }
    if (!blk) return HK_OK;
    if (L->n_held == L->m_held) {
        const size_t m = L->m_held ? 2 * L->m_held : 16;
        block_t **x = realloc(L->held, m * sizeof *x);
        if (!x) {
            free_block(blk);
            return HK_E_NOMEM;
        }
        L->held = x;
        L->m_held = m;
    }
    L->held[L->n_held++] = blk;
    L->input_end = blk->input_end;
    if (np < 0 || more < 0) return HK_E_NOMEM;
    const size_t first = L->ix.n_lines;
    append_lines(L, np);
    blk->end_line = L->ix.n_lines;
    /* scanned before the format was known: its pass now */
    if (scanned_with != L->scan || split_with != L->sep) hk_lines_rescan(L, first);
    switch (blk->input_end) {
    case INPUT_READ_ERROR: return add_error_line(L, HK_LINE_READ_ERROR);
    case INPUT_LONG_LINE:  return add_error_line(L, HK_LINE_TOO_LONG);
    case INPUT_EOF:
        if (!hk_source_unterminated(L->src)) break;
        if (L->ix.n_lines == first) return add_error_line(L, HK_LINE_NO_EOF_MARKER);
        L->ix.lines[L->ix.n_lines - 1].kind = HK_LINE_NO_EOF_MARKER;
    }
    return HK_OK;
}
