/* hk_table.c - see hk_table.h. */
#include "hk_table.h"
#include "hk_log.h"
#include "hk_numfmt.h"
#include "hk_outfile.h"
#include "hk_text.h"
#include "hk_threads.h"
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

/* Regions are formatted into text buffers, by several threads for large
 * batches (formatting numbers and copying sequences), and written in order
 * by an I/O thread of the table's own: a batch is formatted into one of two
 * sets of buffers while the other set is written (for 2^18 NA12878-like
 * pairs on an H100 host, about 3 ms of formatting and 5 ms of writing into
 * the page cache, which one thread does). */
#define MAX_FORMAT_THREADS 16
#define PAIRS_PER_THREAD   (1u << 14)   /* less work than this is not split */
#define N_SETS             2

typedef struct {
    char  *p;
    size_t len, cap;
    int    failed;     /* out of memory */
} textbuf_t;

typedef struct {
    textbuf_t buf[MAX_FORMAT_THREADS];
    int       n;       /* buffers in use */
    int       pending; /* formatted, not yet written (under mu) */
} textset_t;

struct hk_table {
    hk_outfile_t *out;
    FILE         *fp;
    textset_t     set[N_SETS];
    int           cur;        /* the set the next batch is formatted into */
    int           threads;
    int           format, decimals, sequences;
    uint64_t      index;      /* regions formatted */
    char          model[256];
    int           failed;     /* a write failed (under mu while the I/O thread runs) */
    pthread_t       io;
    int             io_up, io_stop;
    pthread_mutex_t mu;
    pthread_cond_t  cv;
};

void hk_table_model_json(char *buf, size_t n, const hk_model_t *m)
{
    char gcp[16] = "null";
    if (m->gcp >= 0) snprintf(gcp, sizeof gcp, "%d", m->gcp);
    snprintf(buf, n, "{\"precision\": \"%s\", \"float_threshold\": %g, \"min_base_quality\": %d, "
             "\"gcp\": %s}", hk_config_choice_name(HK_KEY_MODEL_PRECISION, m->precision), m->float_threshold,
             m->min_base_quality, gcp);
}

/* Room for n more bytes; NULL when memory ran out (then buf->failed). */
static char *room(textbuf_t *buf, size_t n)
{
    if (buf->len + n > buf->cap) {
        size_t cap = buf->cap ? buf->cap : (1u << 16);
        while (cap < buf->len + n) cap *= 2;
        char *p = realloc(buf->p, cap);
        if (!p) { buf->failed = 1; return NULL; }
        buf->p = p;
        buf->cap = cap;
    }
    return buf->p + buf->len;
}

static int put(textbuf_t *buf, const char *s, size_t n)
{
    char *p = room(buf, n);
    if (!p) return -1;
    memcpy(p, s, n);
    buf->len += n;
    return 0;
}

static int puts_(textbuf_t *buf, const char *s) { return put(buf, s, strlen(s)); }

/* Write a buffer to the file and empty it; -1 (logged) on failure. Called by
 * one thread at a time: the I/O thread while it runs, else the table's owner. */
static int flush_buf(const hk_table_t *t, textbuf_t *buf)
{
    int rc = 0;
    if (buf->failed) {
        hk_log_error("out of memory writing the table");
        rc = -1;
    } else if (buf->len && fwrite(buf->p, 1, buf->len, t->fp) != buf->len) {
        hk_log_error("%s: write failed: %s", hk_outfile_path(t->out), strerror(errno));
        rc = -1;
    }
    buf->len = 0;
    buf->failed = 0;
    return rc;
}

static void *io_main(void *arg)
{
    hk_table_t *t = arg;
    int next = 0, failed = 0;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        textset_t *s = &t->set[next];
        while (!s->pending && !t->io_stop) pthread_cond_wait(&t->cv, &t->mu);
        if (!s->pending) break;               /* stopped, and everything is written */
        pthread_mutex_unlock(&t->mu);
        for (int k = 0; k < s->n && !failed; k++) failed = flush_buf(t, &s->buf[k]) != 0;
        for (int k = 0; k < s->n; k++) s->buf[k].len = 0;   /* after a failure: discarded */
        pthread_mutex_lock(&t->mu);
        s->pending = 0;
        t->failed |= failed;
        pthread_cond_broadcast(&t->cv);
        next = (next + 1) % N_SETS;
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* Wait until set s is written; -1 if a write has failed. */
static int wait_written(hk_table_t *t, const textset_t *s)
{
    if (!t->io_up) return t->failed ? -1 : 0;
    pthread_mutex_lock(&t->mu);
    while (s->pending) pthread_cond_wait(&t->cv, &t->mu);
    const int failed = t->failed;
    pthread_mutex_unlock(&t->mu);
    return failed ? -1 : 0;
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

char *hk_table_put_string(char *p, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    *p++ = '"';
    size_t plain = 0;   /* sequences need no escaping: find the first byte that does */
    while (plain < len && (unsigned char)s[plain] >= 0x20 && (unsigned char)s[plain] < 0x7f &&
           s[plain] != '"' && s[plain] != '\\')
        plain++;
    memcpy(p, s, plain);
    p += plain;
    for (size_t i = plain; i < len;) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            /* text from the input (region names) need not be UTF-8: the table must */
            int valid;
            const size_t k = hk_text_utf8_next(s + i, len - i, &valid);
            if (valid) {
                memcpy(p, s + i, k);
                p += k;
            } else {
                memcpy(p, "\\ufffd", 6);
                p += 6;
            }
            i += k;
            continue;
        }
        i++;
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) { *p++ = (char)c; continue; }
        *p++ = '\\';
        switch (c) {
        case '"': *p++ = '"'; break;
        case '\\': *p++ = '\\'; break;
        case '\n': *p++ = 'n'; break;
        case '\t': *p++ = 't'; break;
        default:   /* other controls, DEL included: nothing raw that a terminal obeys */
            *p++ = 'u'; *p++ = '0'; *p++ = '0'; *p++ = hex[c >> 4]; *p++ = hex[c & 15];
        }
    }
    *p++ = '"';
    return p;
}

static int put_string(textbuf_t *buf, const char *s, size_t len)
{
    char *p = room(buf, 6 * len + 2);
    if (!p) return -1;
    buf->len = (size_t)(hk_table_put_string(p, s, len) - buf->p);
    return 0;
}

static int put_header(const hk_table_t *t, textbuf_t *buf)
{
    char head[512];
    snprintf(head, sizeof head, "\"format\": \"haplik-likelihoods\", \"format_version\": 1, "
             "\"producer\": {\"name\": \"haplik\", \"version\": \"%s\"}, \"model\": %s",
             PACKAGE_VERSION, t->model);
    return puts_(buf, head);
}

hk_table_t *hk_table_open(const char *path, const hk_config_t *c)
{
    hk_table_t *t = calloc(1, sizeof *t);
    if (!t) { hk_log_error("out of memory"); return NULL; }
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    if (!(t->out = hk_outfile_open(path))) { hk_table_abort(t); return NULL; }
    t->fp = hk_outfile_fp(t->out);
    t->format = c->output_format;
    t->decimals = c->decimals;
    t->sequences = c->sequences;
    t->threads = c->threads > 0 ? c->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (t->threads < 1) t->threads = 1;
    if (t->threads > MAX_FORMAT_THREADS) t->threads = MAX_FORMAT_THREADS;
    hk_table_model_json(t->model, sizeof t->model, &c->model);
    textbuf_t *head = &t->set[0].buf[0];
    if (t->format == HK_OUT_JSON &&
        (puts_(head, "{") || put_header(t, head) || puts_(head, ",\n\"regions\": [\n") ||
         flush_buf(t, head))) {
        hk_table_abort(t);
        return NULL;
    }
    t->io_up = pthread_create(&t->io, NULL, io_main, t) == 0;   /* else written in place */
    return t;
}

static int put_seq_array(textbuf_t *buf, const char *text, const uint64_t *off, uint32_t first,
                         uint32_t n)
{
    if (puts_(buf, "[")) return -1;
    for (uint32_t k = 0; k < n; k++) {
        if (k && puts_(buf, ", ")) return -1;
        if (put_string(buf, text + off[first + k], off[first + k + 1] - off[first + k])) return -1;
    }
    return puts_(buf, "]");
}

/* Format region ri of b, which has table index `index`, onto buf. */
static int format_region(const hk_table_t *t, textbuf_t *buf, const hk_batch_t *b, size_t ri,
                         uint64_t index)
{
    const hk_region_t *rg = &b->regions[ri];
    char head[96];
    snprintf(head, sizeof head, "%s{\"index\": %llu, \"name\": ",
             t->format == HK_OUT_JSON && index > 0 ? ",\n" : "", (unsigned long long)index);
    if (puts_(buf, head)) return -1;
    if (rg->name ? put_string(buf, rg->name, strlen(rg->name)) : puts_(buf, "null")) return -1;
    snprintf(head, sizeof head, ", \"line\": %ld", rg->line);
    if (puts_(buf, head)) return -1;
    if (t->sequences) {
        if (puts_(buf, ", \"haplotypes\": ") ||
            put_seq_array(buf, b->hap_text, b->hap_off, rg->hap0, rg->n_haps) ||
            puts_(buf, ", \"reads\": ") ||
            put_seq_array(buf, b->read_text, b->read_off, rg->read0, rg->n_reads))
            return -1;
    }
    if (puts_(buf, ", \"log10_likelihoods\": [")) return -1;
    const double *lk = b->lk + rg->pair0;
    const size_t per_row = (size_t)rg->n_haps * (HK_NUMFMT_MAX_LEN + 2) + 8;
    for (uint32_t r = 0; r < rg->n_reads; r++) {
        char *p = room(buf, per_row), *p0 = p;
        if (!p) return -1;
        if (r) { *p++ = ','; *p++ = ' '; }
        *p++ = '[';
        for (uint32_t h = 0; h < rg->n_haps; h++) {
            if (h) { *p++ = ','; *p++ = ' '; }
            p = hk_numfmt_fixed(p, lk[(size_t)r * rg->n_haps + h], t->decimals);
        }
        *p++ = ']';
        buf->len += (size_t)(p - p0);
    }
    return puts_(buf, t->format == HK_OUT_JSON ? "]}" : "]}\n");
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
        if (format_region(j->t, j->buf, j->b, ri, j->index0 + (ri - j->r0))) break;
    return NULL;
}

int hk_table_write(hk_table_t *t, const hk_batch_t *b)
{
    textset_t *set = &t->set[t->cur];
    if (wait_written(t, set)) return -1;
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
    set->n = n;
    if (!t->io_up) {
        for (int k = 0; k < n && !t->failed; k++) t->failed = flush_buf(t, &set->buf[k]) != 0;
        return t->failed ? -1 : 0;
    }
    pthread_mutex_lock(&t->mu);
    set->pending = 1;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    t->cur = (t->cur + 1) % N_SETS;
    return 0;
}

int hk_table_finish(hk_table_t *t, const hk_summary_t *s)
{
    io_stop(t);
    textbuf_t *buf = &t->set[0].buf[0];
    char line[512];
    int rc = t->failed ? -1 : 0;
    if (t->format == HK_OUT_JSON) rc |= puts_(buf, t->index ? "\n],\n\"summary\": " : "],\n\"summary\": ");
    else rc |= puts_(buf, "{\"summary\": ");
    snprintf(line, sizeof line, "{\"regions\": %llu, \"pairs\": %llu, \"cells\": %llu, "
             "\"double_recomputed\": %llu, \"backend\": \"%s\", \"devices\": [",
             (unsigned long long)s->regions, (unsigned long long)s->pairs,
             (unsigned long long)s->cells, (unsigned long long)s->double_recomputed, s->backend);
    rc |= puts_(buf, line);
    for (int i = 0; i < s->n_devices; i++) {
        if (i) rc |= puts_(buf, ", ");
        rc |= put_string(buf, s->devices[i], strlen(s->devices[i]));
    }
    rc |= puts_(buf, "], \"device_ordinals\": [");
    for (int i = 0; i < s->n_ordinals; i++) {
        snprintf(line, sizeof line, "%s%d", i ? ", " : "", s->ordinals[i]);
        rc |= puts_(buf, line);
    }
    snprintf(line, sizeof line, "], \"seconds\": %.3f}", s->seconds);
    rc |= puts_(buf, line);
    if (t->format == HK_OUT_JSONL) rc |= puts_(buf, ", ") || put_header(t, buf);
    rc |= puts_(buf, "}\n");
    if (rc || flush_buf(t, buf)) { hk_table_abort(t); return -1; }
    hk_outfile_t *out = t->out;
    t->out = NULL;
    hk_table_abort(t);
    return hk_outfile_commit(out);
}

void hk_table_abort(hk_table_t *t)
{
    if (!t) return;
    io_stop(t);
    hk_outfile_abort(t->out);
    for (int i = 0; i < N_SETS; i++)
        for (int k = 0; k < MAX_FORMAT_THREADS; k++) free(t->set[i].buf[k].p);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
