/* hk_table.c - see hk_table.h: the core that every format shares (buffers,
 * threads, sink, output file); the formats are hk_table_json.c and
 * hk_table_tsv.c. */
#include "hk_table.h"
#include "hk_table_internal.h"
#include "hk_log.h"
#include "hk_mem.h"
#include "hk_outfile.h"
#include "hk_text.h"
#include "hk_threads.h"
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <htslib/bgzf.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Regions are formatted into text buffers, by several threads for large
 * batches (formatting numbers and copying sequences), and written in order
 * by an I/O thread of the table's own: a batch is formatted into one of two
 * sets of buffers while the other set is written (for 2^18 NA12878-like
 * pairs on an H100 host, about 3 ms of formatting and 5 ms of writing into
 * the page cache, which one thread does). */
#define MAX_FORMAT_THREADS 16
#define PAIRS_PER_THREAD   (1u << 14)   /* less work than this is not split */
#define N_SETS             2
#define COPY_FLUSH_BYTES   (4u << 20)   /* merge: text handed to the I/O thread at a time */

typedef hk_textbuf_t textbuf_t;

typedef struct {
    textbuf_t buf[MAX_FORMAT_THREADS];
    int       n;       /* buffers in use */
    int       pending; /* formatted, not yet written (under mu) */
} textset_t;

struct hk_table {
    hk_outfile_t *out;
    hk_outfile_t *meta;       /* the sidecar (a tsv table in a file), else NULL */
    FILE         *fp;
    BGZF         *bgzf;       /* the sink when compressing, else fp */
    const hk_table_format_t *fmt;
    hk_table_info_t info;
    textset_t     set[N_SETS];
    int           cur;        /* the set the next batch is formatted into */
    int           copying;    /* hk_table_copy fills set[cur].buf[0] */
    int           threads;
    uint64_t      index;      /* regions formatted */
    char         *header;          /* the header's members (start): a merged model is the input's, any length */
    int           started;    /* the header is written */
    int           stream;     /* flush after each batch: the output is a pipe or terminal */
    int           expected_set;   /* merge said whether a tsv has the expected columns */
    char          model[256], pd_model[128];   /* score: the header's model, by the input's */
    char         *model_as;   /* merge: the inputs' model (owned), for the lazy start */
    hk_status_t   failed;     /* the first failed write (under mu while the I/O thread runs) */
    pthread_t       io;
    int             io_up, io_stop;
    pthread_mutex_t mu;
    pthread_cond_t  cv;
};

/* A PDHMM dump is scored with that model (SPEC 1b): double, qualities as written. */
static void pd_model_json(char *buf, size_t n, const hk_model_t *m)
{
    char gcp[16] = "null";
    if (m->gcp >= 0) snprintf(gcp, sizeof gcp, "%d", m->gcp);
    snprintf(buf, n, "{\"name\": \"pdhmm\", \"precision\": \"double\", \"gcp\": %s}", gcp);
}

void hk_table_model_json(char *buf, size_t n, const hk_model_t *m)
{
    char gcp[16] = "null";
    if (m->gcp >= 0) snprintf(gcp, sizeof gcp, "%d", m->gcp);
    snprintf(buf, n, "{\"precision\": \"%s\", \"float_threshold\": %g, \"min_base_quality\": %d, "
             "\"gcp\": %s}", hk_config_choice_name(HK_KEY_MODEL_PRECISION, m->precision), m->float_threshold,
             m->min_base_quality, gcp);
}

/* Write a buffer to the file and empty it; -1 (logged) on failure. Called by
 * one thread at a time: the I/O thread while it runs, else the table's owner. */
/* The cause of a failed BGZF write. BGZF writes in a thread of its own,
 * whose errno this thread never sees (the errno here is stale: "Success",
 * or some earlier lookup's "No such file or directory"); as much again
 * written to the same file, a temporary one that is discarded anyway, meets
 * the same condition (a full disk, the file size limit, an I/O error).
 * 0 when it cannot be told: a stream is not written to for this. */
static int probe_cause(const hk_table_t *t)
{
    static const char block[1 << 16];
    if (hk_outfile_streams(t->out)) return 0;
    const int fd = fileno(t->fp);
    errno = 0;
    if (lseek(fd, 0, SEEK_END) < 0) return errno;
    return write(fd, block, sizeof block) < 0 ? errno : 0;
}

/* Log a failed write; err: its cause, 0 if unknown. */
static void write_failed(const hk_table_t *t, int err)
{
    if (err) hk_log_error("%s: write failed: %s", hk_outfile_path(t->out), strerror(err));
    else hk_log_error("%s: write failed (the system gave no cause)", hk_outfile_path(t->out));
}

static hk_status_t flush_buf(const hk_table_t *t, textbuf_t *buf)
{
    hk_status_t rc = HK_OK;
    errno = 0;
    if (buf->failed) {
        hk_log_error("out of memory writing the table");
        rc = HK_E_NOMEM;
    } else if (buf->len && (t->bgzf ? bgzf_write(t->bgzf, buf->p, buf->len) != (ssize_t)buf->len
                                    : fwrite(buf->p, 1, buf->len, t->fp) != buf->len)) {
        write_failed(t, t->bgzf ? probe_cause(t) : errno);
        rc = HK_E_RUNTIME;
    }
    buf->len = 0;
    buf->failed = 0;
    return rc;
}

/* A streamed table: what is written so far goes out now. */
static hk_status_t flush_stream(const hk_table_t *t)
{
    if (!t->stream) return HK_OK;
    errno = 0;
    if (t->bgzf ? bgzf_flush(t->bgzf) != 0 : fflush(t->fp) != 0) {
        write_failed(t, t->bgzf ? probe_cause(t) : errno);
        return HK_E_RUNTIME;
    }
    return HK_OK;
}

static void *io_main(void *arg)
{
    hk_table_t *t = arg;
    int next = 0;
    hk_status_t failed = HK_OK;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        textset_t *s = &t->set[next];
        while (!s->pending && !t->io_stop) pthread_cond_wait(&t->cv, &t->mu);
        if (!s->pending) break;               /* stopped, and everything is written */
        pthread_mutex_unlock(&t->mu);
        for (int k = 0; k < s->n && !failed; k++) failed = flush_buf(t, &s->buf[k]);
        if (!failed) failed = flush_stream(t);
        for (int k = 0; k < s->n; k++) s->buf[k].len = 0;   /* after a failure: discarded */
        pthread_mutex_lock(&t->mu);
        s->pending = 0;
        if (!t->failed) t->failed = failed;
        pthread_cond_broadcast(&t->cv);
        next = (next + 1) % N_SETS;
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* Wait until set s is written; the first failed write's status, if any. */
static hk_status_t wait_written(hk_table_t *t, const textset_t *s)
{
    if (!t->io_up) return t->failed;
    pthread_mutex_lock(&t->mu);
    while (s->pending) pthread_cond_wait(&t->cv, &t->mu);
    const hk_status_t failed = t->failed;
    pthread_mutex_unlock(&t->mu);
    return failed;
}

/* Let the I/O thread write what is pending, then end it. */
static void io_stop(hk_table_t *t)
{
    if (!t->io_up) return;
    pthread_mutex_lock(&t->mu);
    t->io_stop = 1;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->io, NULL);
    t->io_up = 0;
}

static const hk_table_format_t *const formats[] = {
    [HK_OUT_JSON] = &hk_table_json, [HK_OUT_JSONL] = &hk_table_jsonl, [HK_OUT_TSV] = &hk_table_tsv,
};

const char *hk_table_format_name(int format)
{
    return format >= 0 && format < (int)(sizeof formats / sizeof *formats) ? formats[format]->name
                                                                          : "auto";
}

static int ends_with(const char *s, const char *tail)
{
    const size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

/* The format a name's extension says, or -1. */
static int format_of_name(const char *path)
{
    if (!path || !strcmp(path, "-")) return -1;
    size_t n = strlen(path);
    if (n > 3 && !strcmp(path + n - 3, ".gz")) n -= 3;
    for (int f = 0; f < (int)(sizeof formats / sizeof *formats); f++) {
        const size_t k = strlen(formats[f]->name);
        if (n > k + 1 && path[n - k - 1] == '.' && !strncmp(path + n - k, formats[f]->name, k))
            return f;
    }
    return -1;
}

hk_status_t hk_table_pick_format(const char *path, int format, int *picked)
{
    const int by_name = format_of_name(path);
    if (format != HK_OUT_AUTO && by_name >= 0 && by_name != format) {
        hk_log_error("%s: the name says %s but the output format is %s (--output-format or "
                     "output.format): rename the output or drop the format", path,
                     formats[by_name]->name, formats[format]->name);
        return HK_E_INPUT;
    }
    *picked = format != HK_OUT_AUTO ? format : by_name >= 0 ? by_name : HK_OUT_JSON;
    return HK_OK;
}

/* Write what comes before the first region, with this model (before
 * anything is handed to the I/O thread). */
static hk_status_t start(hk_table_t *t, const char *model_json)
{
    t->started = 1;
    /* merge of tables older than the decimals member: unknown */
    char decimals[16] = "null";
    if (t->info.decimals >= 0) snprintf(decimals, sizeof decimals, "%d", t->info.decimals);
    if (asprintf(&t->header, "\"format\": \"haplik-likelihoods\", \"format_version\": 1, "
                 "\"producer\": {\"name\": \"haplik\", \"version\": \"%s\"}, \"model\": %s, "
                 "\"decimals\": %s", PACKAGE_VERSION, model_json, decimals) < 0) {
        t->header = NULL;
        hk_log_error("out of memory");
        return HK_E_NOMEM;
    }
    t->info.header = t->header;
    textbuf_t *head = &t->set[t->cur].buf[0];
    head->len = 0;
    if (t->fmt->open(&t->info, head)) return HK_E_NOMEM;   /* a format's open fails only for memory */
    return flush_buf(t, head);
}

hk_status_t hk_table_sidecar_name(const char *path, int format, char **name)
{
    struct stat st;
    *name = NULL;
    if (!path || !strcmp(path, "-") || format < 0 ||
        format >= (int)(sizeof formats / sizeof *formats) || !formats[format]->sidecar ||
        (stat(path, &st) == 0 && !S_ISREG(st.st_mode)))
        return HK_OK;
    const size_t n = strlen(path) + sizeof HK_TABLE_SIDECAR_SUFFIX;
    if (!(*name = malloc(n))) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    snprintf(*name, n, "%s%s", path, HK_TABLE_SIDECAR_SUFFIX);
    return HK_OK;
}

/* The sidecar of a table in a file whose format keeps header and summary
 * apart from its rows: beside it, put in place with it. HK_OK or the
 * failure (logged). */
static hk_status_t open_sidecar(hk_table_t *t, const char *path)
{
    if (!t->fmt->sidecar || !hk_outfile_renamed(t->out)) return HK_OK;
    const size_t n = strlen(path) + sizeof HK_TABLE_SIDECAR_SUFFIX;
    char *meta = malloc(n);
    if (!meta) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    snprintf(meta, n, "%s%s", path, HK_TABLE_SIDECAR_SUFFIX);
    const hk_status_t st = hk_outfile_open(meta, &t->meta);
    free(meta);
    return st;
}

hk_status_t hk_table_open_as(const char *path, int format, int compression, int decimals,
                             const char *model_json, int threads, hk_table_t **out)
{
    *out = NULL;
    hk_table_t *t = calloc(1, sizeof *t);
    if (!t) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    hk_status_t st;
    if ((format == HK_OUT_AUTO && (st = hk_table_pick_format(path, format, &format))) ||
        (st = hk_outfile_open(path, &t->out))) {
        hk_table_abort(t);
        return st;
    }
    t->fp = hk_outfile_fp(t->out);
    t->stream = hk_outfile_streams(t->out);
    t->fmt = formats[format];
    if ((st = open_sidecar(t, path))) { hk_table_abort(t); return st; }
    t->threads = threads > 0 ? threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (t->threads < 1) t->threads = 1;
    if (t->threads > MAX_FORMAT_THREADS) t->threads = MAX_FORMAT_THREADS;
    if (compression == HK_COMPRESS_BGZF ||
        (compression == HK_COMPRESS_AUTO && path && ends_with(path, ".gz"))) {
        /* BGZF onto the outfile's own (temporary or spooled) file, so that
         * the all-or-none discipline holds: bgzf closes its duplicate */
        const int fd = dup(fileno(t->fp));
        if (fd < 0 || !(t->bgzf = bgzf_dopen(fd, "w"))) {
            hk_log_error("%s: cannot start BGZF compression: %s", hk_outfile_path(t->out),
                         strerror(errno));
            if (fd >= 0) close(fd);
            hk_table_abort(t);
            return HK_E_RUNTIME;
        }
        if (t->threads > 1) (void)bgzf_mt(t->bgzf, t->threads, 256);
    }
    t->info.decimals = decimals;
    t->info.sequences = 1;
    /* started by the first row or the end: a tsv's columns depend on the rows */
    if (model_json && !(t->model_as = strdup(model_json))) {
        hk_log_error("out of memory");
        hk_table_abort(t);
        return HK_E_NOMEM;
    }
    t->io_up = pthread_create(&t->io, NULL, io_main, t) == 0;   /* else written in place */
    *out = t;
    return HK_OK;
}

hk_status_t hk_table_open(const char *path, const hk_config_t *c, const char *const *inputs,
                          int n_inputs, hk_table_t **out)
{
    /* the header waits for the first batch, which says which model scored it */
    /* HK_TABLE_THREADS: for measuring how the writer and the reader share the cores */
    const hk_status_t st = hk_table_open_as(path, c->output_format, c->compression, c->decimals, NULL,
                                            c->opt.table_threads > 0 ? c->opt.table_threads : c->threads, out);
    if (st) return st;
    hk_table_t *t = *out;
    t->info.sequences = c->sequences;
    t->info.inputs = inputs;
    t->info.n_inputs = n_inputs;
    hk_table_model_json(t->model, sizeof t->model, &c->model);
    pd_model_json(t->pd_model, sizeof t->pd_model, &c->model);
    return HK_OK;
}

/* Hand set s (n buffers) to the I/O thread, or write it here without one. */
static hk_status_t submit(hk_table_t *t, textset_t *s, int n)
{
    s->n = n;
    if (!t->io_up) {
        for (int k = 0; k < n && !t->failed; k++) t->failed = flush_buf(t, &s->buf[k]);
        if (!t->failed) t->failed = flush_stream(t);
        return t->failed;
    }
    pthread_mutex_lock(&t->mu);
    s->pending = 1;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    t->cur = (t->cur + 1) % N_SETS;
    return HK_OK;
}

typedef struct {
    const hk_table_t *t;
    textbuf_t        *buf;
    const hk_batch_t *b;
    size_t            r0, r1;      /* regions [r0, r1) */
    uint64_t          index0;      /* table index of region r0 */
} format_job_t;

static void *format_slice(void *arg)
{
    format_job_t *j = arg;
    for (size_t ri = j->r0; ri < j->r1; ri++)
        if (j->t->fmt->region(&j->t->info, j->buf, j->b, ri, j->index0 + (ri - j->r0))) {
            j->buf->failed = 1;   /* reported when the buffer is written */
            break;
        }
    return NULL;
}

hk_status_t hk_table_write(hk_table_t *t, const hk_batch_t *b)
{
    textset_t *set = &t->set[t->cur];
    hk_status_t rc = wait_written(t, set);
    if (rc) return rc;
    if (!t->started) {
        if (b->n_pairs && b->expected) t->info.expected = !isnan(b->expected[0]);
        if ((rc = start(t, b->pdhmm ? t->pd_model : t->model))) return rc;
    }
    int n = (int)(b->n_pairs / PAIRS_PER_THREAD);
    if (n > t->threads) n = t->threads;
    if (n > (int)b->n_regions) n = (int)b->n_regions;
    if (n < 1) n = 1;
    /* slices of about equal pairs, whole regions each */
    format_job_t job[MAX_FORMAT_THREADS];
    size_t ri = 0;
    for (int k = 0; k < n; k++) {
        const uint64_t end_pair = b->n_pairs * (uint64_t)(k + 1) / (uint64_t)n;
        job[k] = (format_job_t){ .t = t, .buf = &set->buf[k], .b = b, .r0 = ri,
                                 .index0 = t->index + ri };
        while (ri < b->n_regions && (k == n - 1 || b->regions[ri].pair0 < end_pair)) ri++;
        job[k].r1 = ri;
    }
    hk_threads_run(format_slice, job, sizeof *job, n);
    t->index += b->n_regions;
    return submit(t, set, n);
}

void hk_table_set_expected(hk_table_t *t, int expected)
{
    t->info.expected = expected;
    t->expected_set = 1;
}

hk_status_t hk_table_copy(hk_table_t *t, uint64_t index, const char *rest, size_t len)
{
    textset_t *set = &t->set[t->cur];
    hk_status_t rc;
    if (!t->copying) {
        if ((rc = wait_written(t, set))) return rc;
        t->copying = 1;
    }
    if (!t->started) {
        if (!t->expected_set && t->fmt->sidecar) t->info.expected = hk_table_tsv_expected_row(rest, len);
        if ((rc = start(t, t->model_as ? t->model_as : t->model))) return rc;
    }
    textbuf_t *buf = &set->buf[0];
    /* a format's copy fails only for memory; write failures are logged where they happen */
    if (t->fmt->copy(&t->info, buf, index, rest, len)) {
        hk_log_error("out of memory writing the table");
        return HK_E_NOMEM;
    }
    if (index + 1 > t->index) t->index = index + 1;
    if (buf->len < COPY_FLUSH_BYTES) return HK_OK;
    t->copying = 0;
    return submit(t, set, 1);
}

/* The summary object's JSON text into buf. */
static int put_summary(textbuf_t *buf, const hk_summary_t *s)
{
    char line[512];
    snprintf(line, sizeof line, "{\"regions\": %llu, \"pairs\": %llu, \"cells\": %llu, "
             "\"double_recomputed\": %llu, \"backend\": ", (unsigned long long)s->regions,
             (unsigned long long)s->pairs, (unsigned long long)s->cells,
             (unsigned long long)s->double_recomputed);
    int rc = hk_textbuf_puts(buf, line);
    rc |= hk_textbuf_put_json_string(buf, s->backend, strlen(s->backend));
    rc |= hk_textbuf_puts(buf, ", \"devices\": [");
    for (int i = 0; i < s->n_devices; i++) {
        if (i) rc |= hk_textbuf_puts(buf, ", ");
        rc |= hk_textbuf_put_json_string(buf, s->devices[i], strlen(s->devices[i]));
    }
    rc |= hk_textbuf_puts(buf, "], \"device_ordinals\": [");
    for (int i = 0; i < s->n_ordinals; i++) {
        snprintf(line, sizeof line, "%s%d", i ? ", " : "", s->ordinals[i]);
        rc |= hk_textbuf_puts(buf, line);
    }
    snprintf(line, sizeof line, "], \"seconds\": %.3f", s->seconds);
    rc |= hk_textbuf_puts(buf, line);
    if (s->parts) rc |= hk_textbuf_puts(buf, ", \"parts\": ") || hk_textbuf_puts(buf, s->parts);
    return rc | hk_textbuf_puts(buf, "}");
}

hk_status_t hk_table_finish(hk_table_t *t, const hk_summary_t *s)
{
    hk_status_t rc;
    if (t->copying) {   /* what merge copied last */
        t->copying = 0;
        if ((rc = submit(t, &t->set[t->cur], 1))) { hk_table_abort(t); return rc; }
    }
    io_stop(t);
    if (!t->started && (rc = start(t, t->model_as ? t->model_as : t->model))) {
        hk_table_abort(t);
        return rc;
    }
    textbuf_t summary = { 0 }, *buf = &t->set[0].buf[0];
    buf->len = 0;
    rc = t->failed;
    if (!rc && (put_summary(&summary, s) || summary.failed || hk_textbuf_put(&summary, "", 1) ||
                t->fmt->summary(&t->info, buf, summary.p, t->index)))
        rc = HK_E_NOMEM;
    if (!rc) rc = flush_buf(t, buf);
    if (!rc && t->bgzf) {
        errno = 0;
        if (bgzf_close(t->bgzf) != 0) rc = HK_E_RUNTIME;
        t->bgzf = NULL;
        if (rc) write_failed(t, probe_cause(t));
    }
    if (!rc && t->meta) {   /* the sidecar: header and summary */
        textbuf_t side = { 0 };
        FILE *fp = hk_outfile_fp(t->meta);
        errno = 0;
        if (t->fmt->sidecar(&t->info, &side, summary.p) || side.failed) {
            hk_log_error("out of memory writing the table");
            rc = HK_E_NOMEM;
        } else if (fwrite(side.p, 1, side.len, fp) != side.len) {
            hk_log_error("%s: write failed: %s", hk_outfile_path(t->meta), strerror(errno));
            rc = HK_E_RUNTIME;
        }
        free(side.p);
    }
    free(summary.p);
    if (rc) { hk_table_abort(t); return rc; }
    hk_outfile_t *out[2] = { t->out, t->meta };
    t->out = t->meta = NULL;
    hk_table_abort(t);
    return hk_outfile_commit_all(out, out[1] ? 2 : 1);
}

void hk_table_abort(hk_table_t *t)
{
    if (!t) return;
    io_stop(t);
    if (t->bgzf) bgzf_close(t->bgzf);
    hk_outfile_abort(t->out);
    hk_outfile_abort(t->meta);
    free(t->model_as);
    free(t->header);
    for (int i = 0; i < N_SETS; i++)
        for (int k = 0; k < MAX_FORMAT_THREADS; k++) free(t->set[i].buf[k].p);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
