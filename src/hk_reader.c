/* hk_reader.c - see hk_reader.h.
 *
 * The input's lines come indexed, a block at a time, from hk_lines.c (read
 * and scanned on all threads). Here they are walked in input order, the one
 * sequential step, which handles a few numbers per line: comments and tags,
 * then the format's module (hk_format_*.c) for everything else. A region
 * complete gets its place in the batch (hk_batch_append_read/hap); its
 * sequences are copied, checked and encoded later, on all threads, beside
 * the scan of the next block (while that block's bytes are in cache), or at
 * the end of the batch.
 *
 * Errors are kept until the sequences placed before them have been set: a bad
 * character on an earlier line must win over a structural error found first
 * by the walk, so on an error the lines of the open region before it are
 * placed too.
 */
#include "hk_reader.h"
#include "hk_format.h"
#include "hk_lines.h"
#include "hk_log.h"
#include "hk_source.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIDE_PARTS 64

/* The formats by id (HK_FMT_*). */
#define HK_FORMAT_ENTRY(name, NAME) [HK_FMT_##NAME] = &hk_format_##name,
static const hk_format_t *const formats[HK_FMT_COUNT] = { HK_FORMATS(HK_FORMAT_ENTRY) };
#undef HK_FORMAT_ENTRY

/* A sequence placed in the batch, to be set from its line. */
typedef struct {
    size_t   line;           /* index entry */
    size_t   index;          /* the read or haplotype in the batch */
    uint32_t len;
    uint8_t  is_read;        /* 1: the 5 read fields from `field` on; 0: a haplotype */
    uint8_t  field;
} seq_t;

/* Sequences placed and not set yet, and the job that sets them. */
typedef struct {
    seq_t           *v;
    size_t           n, m, bytes;
    size_t           min_line;  /* the earliest index entry they read */
    hk_walk_t       *w;
    hk_batch_t      *batch;
    hk_batch_error_t err[MAX_SIDE_PARTS];   /* the earliest per part */
} seq_list_t;

struct hk_walk {
    hk_walk_where_t at;         /* first: hk_format.h reads it in place */
    char          *path;
    hk_source_t   *src;
    hk_lines_t    *lines;
    hk_seq_rules_t rules;
    int            format;      /* HK_FMT_*; AUTO until detected */
    int            want_pdhmm;  /* -1: any; 0 or 1: regions must (not) be PDHMM (hk_reader_expect_pdhmm) */
    const hk_format_t *fmt;     /* NULL until then */
    void          *state;       /* the format's walk state */
    char          *name;        /* current region tag, NULL for none */
    long           source_line; /* from "# source-line N", 0 when none */
    int            failed;
    long           err_line;    /* the first error: line (0 if none), kind and text */
    hk_err_kind_t  err_kind;
    char           err_msg[512];
    seq_list_t     placed;      /* placed by the walk since the last step began */
    seq_list_t     setting;     /* being set by the step in flight */
    double         t_walk, t_wait;   /* seconds walking, and waiting for steps (HK_TRACE) */
};

struct hk_reader { hk_walk_t w; };

/* ---- formats by name ---- */

const char *hk_reader_format_name(int format)
{
    return format > HK_FMT_AUTO && format < HK_FMT_COUNT ? formats[format]->name : "auto";
}

const char *hk_reader_format_header(int format, const char **prefix)
{
    const hk_format_t *f = format > HK_FMT_AUTO && format < HK_FMT_COUNT ? formats[format] : NULL;
    *prefix = f ? f->header_prefix : NULL;
    return f ? f->header : NULL;
}

int hk_reader_parse_format(const char *s)
{
    if (!strcmp(s, "auto")) return HK_FMT_AUTO;
    for (int f = HK_FMT_AUTO + 1; f < HK_FMT_COUNT; f++)
        if (!strcmp(s, formats[f]->name)) return f;
    return -1;
}

int hk_reader_format(const hk_reader_t *r) { return r->w.format; }

/* ---- errors ---- */

__attribute__((format(printf, 4, 0)))
static void record_error(hk_walk_t *w, hk_err_kind_t kind, long line, const char *fmt, va_list ap)
{
    if (w->failed) return;
    vsnprintf(w->err_msg, sizeof w->err_msg, fmt, ap);
    w->err_line = line;
    w->err_kind = kind;
    w->failed = 1;
}

int hk_walk_fail(hk_walk_t *w, long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record_error(w, HK_ERR_INPUT, line, fmt, ap);
    va_end(ap);
    return -1;
}

__attribute__((format(printf, 4, 5)))
static int walk_error(hk_walk_t *w, hk_err_kind_t kind, long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record_error(w, kind, line, fmt, ap);
    va_end(ap);
    return -1;
}

int hk_walk_oom(hk_walk_t *w, long line) { return walk_error(w, HK_ERR_RUNTIME, line, "out of memory"); }

/* Report a bad character found while setting sequences (unless an error on
 * an earlier line is already kept). */
static void char_error(hk_walk_t *w, const hk_batch_error_t *e)
{
    static const char *const field[] = { "bases", "base qualities", "insertion qualities",
                                         "deletion qualities", "gap-continuation qualities" };
    if (w->failed && w->err_line <= e->line) return;
    w->failed = 0;
    if (e->code == HK_BATCH_EBASE)
        hk_walk_fail(w, e->line, "%s: invalid base '%c' at position %u (expected A, C, G, T or N%s)",
                     e->is_read ? "read" : "haplotype", e->bad, e->pos + 1,
                     w->rules.unknown_as_n ? "" : "; set model.unknown_bases to \"as_n\" to accept it");
    else if (e->code == HK_BATCH_EGAP)
        hk_walk_fail(w, e->line, "read: the insertion and deletion gap-open qualities at position %u "
                     "have error probabilities that sum to 1 or more, which leaves no probability "
                     "for match-to-match", e->pos + 1);
    else if (e->code == HK_BATCH_EGCP)
        hk_walk_fail(w, e->line, "read: the gap-continuation quality at position %u is Q0 ('!'), "
                     "which leaves no probability for gap-to-match: every likelihood would be 0",
                     e->pos + 1);
    else
        hk_walk_fail(w, e->line, "read %s: invalid quality character 0x%02x at position %u "
                     "(expected Phred+33 '!'..'~')", field[e->field], e->bad, e->pos + 1);
}

/* ---- the walk's services to formats ---- */


int hk_walk_begin_region(hk_walk_t *w, hk_batch_t *b, size_t first)
{
    const long line = hk_walk_line_no(w, first);
    const long reported = w->source_line ? w->source_line : line;
    w->source_line = 0;
    const int pd = w->fmt->pdhmm;
    if ((w->want_pdhmm >= 0 && pd != w->want_pdhmm) || (b->n_regions && pd != b->pdhmm))
        return hk_walk_fail(w, line, "a %s dump cannot be scored in one run with %s dumps: score "
                            "them in separate runs", pd ? "PDHMM" : w->fmt->name,
                            pd ? "other" : "PDHMM");
    b->pdhmm = pd;
    if (hk_batch_begin_region(b, w->name, reported)) return hk_walk_oom(w, line);
    return 0;
}

int hk_walk_end_region(hk_walk_t *w, hk_batch_t *b, size_t first, size_t last)
{
    if (hk_batch_end_region(b)) return hk_walk_oom(w, hk_walk_line_no(w, first));
    hk_region_t *rg = hk_batch_last_region(b);
    rg->first_line = hk_walk_line_no(w, first);
    rg->last_line = hk_walk_line_no(w, last);
    return 0;
}

/* Report an error of the append functions (length, memory). */
static int append_error(hk_walk_t *w, long line, int rc, const char *what)
{
    if (rc == HK_BATCH_ELONG)
        return hk_walk_fail(w, line, "%s longer than %u bases", what, HK_MAX_SEQ_LEN);
    return hk_walk_oom(w, line);
}

/* Note that the sequence of entry li goes to read (haplotype) `index`. */
static int add_seq(hk_walk_t *w, size_t li, size_t index, uint32_t len, int is_read, int field)
{
    seq_list_t *q = &w->placed;
    if (q->n == q->m) {
        const size_t m = q->m ? 2 * q->m : 4096;
        seq_t *x = realloc(q->v, m * sizeof *x);
        if (!x) return hk_walk_oom(w, hk_walk_line_no(w, li));
        q->v = x;
        q->m = m;
    }
    if (q->n == 0 || li < q->min_line) q->min_line = li;
    q->v[q->n++] = (seq_t){ .line = li, .index = index, .len = len,
                            .is_read = (uint8_t)is_read, .field = (uint8_t)field };
    q->bytes += (size_t)len * (is_read ? 5 : 1);
    return 0;
}

int hk_walk_place_read(hk_walk_t *w, hk_batch_t *b, size_t li, int field)
{
    const uint32_t len = hk_field_len(hk_walk_line(w, li), field);
    /* the step in flight sets sequences into b: it must be done before an
     * append moves b's arrays (rarely: they double) */
    if (!hk_batch_read_fits(b, len)) hk_lines_wait(w->lines);
    const int rc = hk_batch_append_read(b, len, hk_walk_line_no(w, li));
    if (rc) return append_error(w, hk_walk_line_no(w, li), rc, "read");
    return add_seq(w, li, b->n_reads - 1, len, 1, field);
}

int hk_walk_place_hap(hk_walk_t *w, hk_batch_t *b, size_t li)
{
    return hk_walk_place_hap_len(w, b, li, hk_walk_line(w, li)->field_end[0]);
}

int hk_walk_place_hap_len(hk_walk_t *w, hk_batch_t *b, size_t li, uint32_t len)
{
    if (!hk_batch_hap_fits(b, len)) hk_lines_wait(w->lines);
    const int rc = hk_batch_append_hap(b, len, hk_walk_line_no(w, li));
    if (rc) return append_error(w, hk_walk_line_no(w, li), rc, "haplotype");
    return add_seq(w, li, b->n_haps - 1, len, 0, 0);
}

/* ---- setting the sequences placed (the side job, on every thread) ---- */

static void set_part(void *arg, int part, int nparts)
{
    seq_list_t *q = arg;
    hk_walk_t *w = q->w;
    hk_batch_error_t *first = &q->err[part], e;
    const size_t lo = q->n * (size_t)part / (size_t)nparts;
    const size_t hi = q->n * (size_t)(part + 1) / (size_t)nparts;
    first->code = 0;
    for (size_t k = lo; k < hi; k++) {
        const seq_t *x = &q->v[k];
        const hk_line_t *L = hk_walk_line(w, x->line);
        const char *s = L->text + hk_field_start(L, x->field);
        const size_t step = (size_t)x->len + 1;   /* the read's fields, one space apart */
        const int rc = x->is_read
            ? hk_batch_set_read(q->batch, &w->rules, x->index, s, s + step, s + 2 * step,
                                s + 3 * step, s + 4 * step, &e)
            : hk_batch_set_hap(q->batch, &w->rules, x->index, s, &e);
        if (rc && (!first->code || e.line < first->line)) *first = e;
    }
}

/* The sequences of q are set (its step is done): their errors, then empty it. */
static void sequences_set(hk_walk_t *w, seq_list_t *q)
{
    if (q->n)
        for (int t = 0; t < MAX_SIDE_PARTS; t++)
            if (q->err[t].code) char_error(w, &q->err[t]);
    memset(q->err, 0, sizeof q->err);
    q->n = q->bytes = 0;
}

/* Set every sequence placed, now (the end of a batch): the step in flight
 * sets those placed before it began (its scan of the next block may go on),
 * the rest are set here. */
static void set_all(hk_walk_t *w, hk_batch_t *b)
{
    const double t0 = hk_log_now();
    hk_lines_wait_side(w->lines);
    sequences_set(w, &w->setting);
    if (w->placed.n) {
        w->placed.batch = b;
        hk_lines_run_side(w->lines, set_part, &w->placed, w->placed.bytes);
    }
    sequences_set(w, &w->placed);
    w->t_wait += hk_log_now() - t0;
}

/* ---- the walk ---- */

/* The format is known: its state, and its scan pass over what is indexed. */
static int use_format(hk_walk_t *w, int format)
{
    w->format = format;
    w->fmt = formats[format];
    if (w->fmt->pdhmm) {   /* that model takes qualities as written (SPEC 1b) */
        w->rules.pdhmm = 1;
        w->rules.min_base_quality = 0;
    }
    if (!(w->state = calloc(1, w->fmt->state_size ? w->fmt->state_size : 1)))
        return hk_walk_oom(w, hk_walk_line_no(w, w->at.pos));
    hk_lines_set_scan(w->lines, w->fmt->separator, w->fmt->scan, w->fmt->scan_free);
    hk_lines_rescan(w->lines, w->at.pos);
    return 0;
}

static int detect_format(hk_walk_t *w)
{
    const hk_line_t *L = hk_walk_line(w, w->at.pos);
    for (int f = HK_FMT_AUTO + 1; f < HK_FMT_COUNT; f++)
        if (formats[f]->claims(L)) return use_format(w, f);
    return hk_walk_fail(w, hk_walk_line_no(w, w->at.pos), "cannot tell the format: expected a batch "
                        "header 'READS HAPLOTYPES' or a 7-field HaplotypeCaller results record "
                        "(set input.format to force one)");
}

static int is_tag(const char *s)
{
    return (!strncmp(s, "# region", 8) && (s[8] == ' ' || s[8] == '\0')) ||
           !strncmp(s, "# source-line ", 14);
}

/* Apply a '#' line: region tags, source lines, a format's header; other
 * comments are ignored. */
static int comment_line(hk_walk_t *w, const char *s, long line)
{
    if (!strncmp(s, "# region", 8) && (s[8] == ' ' || s[8] == '\0')) {
        const char *nm = s + 8;
        while (*nm == ' ') nm++;
        free(w->name);
        w->name = NULL;
        if (*nm && !(w->name = strdup(nm))) return hk_walk_oom(w, line);
    } else if (!strncmp(s, "# source-line ", 14)) {
        char *end;
        errno = 0;
        const long v = strtol(s + 14, &end, 10);
        if (errno || *end || v <= 0) return hk_walk_fail(w, line, "bad '# source-line' tag");
        w->source_line = v;
    } else if (!w->fmt) {
        for (int f = HK_FMT_AUTO + 1; f < HK_FMT_COUNT; f++) {
            const char *h = formats[f]->header_prefix;
            if (h && !strncmp(s, h, strlen(h))) return use_format(w, f);
        }
    }
    return 0;
}

/* Walk index entry w->at.pos. */
static int walk_line(hk_walk_t *w, hk_batch_t *b)
{
    const hk_line_t *L = hk_walk_line(w, w->at.pos);
    const long line = hk_walk_line_no(w, w->at.pos);
    switch (L->kind) {
    case HK_LINE_NUL: return hk_walk_fail(w, line, "NUL byte in text (binary input?)");
    case HK_LINE_TOO_LONG:
        return hk_walk_fail(w, line, "line longer than %zu bytes, longer than any valid record "
                            "(sequences have at most %u bases)", HK_MAX_LINE_LEN, HK_MAX_SEQ_LEN);
    case HK_LINE_READ_ERROR:
        return hk_walk_fail(w, line, "read error (truncated or corrupt %s stream?)",
                            hk_source_compressed(w->src) ? "compressed" : "input");
    case HK_LINE_NO_EOF_MARKER:
        return hk_walk_fail(w, line, "read error (truncated BGZF stream: no end-of-file marker)");
    }
    if (w->fmt && w->fmt->inside && w->fmt->inside(w->state)) return w->fmt->line(w, w->state, b);
    if (L->len == 0) return 0;
    const char *s = L->text;
    if (s[0] == '#') {
        /* a tag closes the region before it, so apply it only after */
        if (w->fmt && w->fmt->boundary && is_tag(s) && w->fmt->boundary(w, w->state, b) < 0) return -1;
        return comment_line(w, s, line);
    }
    if (!w->fmt && detect_format(w) < 0) return -1;
    return w->fmt->line(w, w->state, b);
}

/* The walk is at the end of the index: take the block the step in flight
 * has scanned (its sequences are set then), dropping the entries no longer
 * needed; start the next step, which sets what the walk placed meanwhile. */
static int refill(hk_walk_t *w, hk_batch_t *b)
{
    const size_t n = w->at.ix->n_lines;
    size_t keep = w->fmt ? w->fmt->first_needed(w->state, n) : n;
    if (w->placed.n && w->placed.min_line < keep) keep = w->placed.min_line;
    const double t0 = hk_log_now();
    int rc = hk_lines_take(w->lines, keep);
    w->t_wait += hk_log_now() - t0;
    sequences_set(w, &w->setting);
    if (rc < 0) return hk_walk_oom(w, hk_walk_line_no(w, w->at.ix->n_lines));
    w->at.pos -= keep;
    if (w->fmt) w->fmt->shift(w->state, keep);
    for (size_t k = 0; k < w->placed.n; k++) w->placed.v[k].line -= keep;
    w->placed.min_line -= w->placed.n ? keep : 0;
    /* what the walk placed goes to the next step */
    const seq_list_t done = w->setting;
    w->setting = w->placed;
    w->placed = done;
    w->setting.batch = b;
    rc = hk_lines_start(w->lines, w->setting.n ? set_part : NULL, &w->setting, w->setting.bytes);
    if (rc < 0) return hk_walk_oom(w, hk_walk_line_no(w, w->at.ix->n_lines));
    return w->failed ? -1 : 0;   /* a bad character found while setting */
}

/* Walk lines into b (placed, set later) until it holds max_pairs pairs; see
 * hk_reader_next. */
static int fill(hk_walk_t *w, hk_batch_t *b, size_t max_pairs)
{
    const size_t regions0 = b->n_regions;
    while (b->n_regions == regions0 || b->n_pairs < max_pairs) {
        if (w->at.pos < w->at.ix->n_lines) {
            if (walk_line(w, b) < 0) goto fail;
            w->at.pos++;
        } else if (hk_lines_ended(w->lines)) {
            if (w->fmt && w->fmt->end(w, w->state, b) < 0) goto fail;
            break;
        } else if (refill(w, b) < 0) {
            goto fail;
        }
    }
    return (int)(b->n_regions - regions0);
fail:
    if (w->err_kind == HK_ERR_INPUT && w->fmt) w->fmt->place_open(w, w->state, b);
    return -1;
}

/* ---- the reader ---- */

hk_reader_t *hk_reader_open(const char *path, int format, hk_seq_rules_t rules)
{
    hk_reader_t *r = calloc(1, sizeof *r);
    hk_walk_t *w = r ? &r->w : NULL;
    if (!r || !(w->path = strdup(path))) {
        hk_log_error("%s: out of memory", path);
        free(r);
        return NULL;
    }
    hk_err_kind_t kind;
    if (!(w->src = hk_source_open(path, &kind)) || !(w->lines = hk_lines_open(w->src, 1))) {
        if (w->src) hk_log_error("%s: out of memory", path);
        hk_reader_close(r);
        return NULL;
    }
    w->at.ix = hk_lines_index(w->lines);
    w->rules = rules;
    w->want_pdhmm = -1;
    w->placed.w = w->setting.w = w;
    if (format > HK_FMT_AUTO && format < HK_FMT_COUNT && use_format(w, format) < 0) {
        hk_log_error("%s: out of memory", path);
        hk_reader_close(r);
        return NULL;
    }
    return r;
}

void hk_reader_expect_pdhmm(hk_reader_t *r, int pdhmm) { r->w.want_pdhmm = pdhmm; }

void hk_reader_set_threads(hk_reader_t *r, int nthreads)
{
    hk_lines_set_threads(r->w.lines, nthreads);
    hk_source_set_threads(r->w.src, nthreads);
}

int hk_reader_next(hk_reader_t *r, hk_batch_t *b, size_t max_pairs)
{
    hk_walk_t *w = &r->w;
    if (w->failed) return w->err_kind == HK_ERR_RUNTIME ? -2 : -1;
    const double t0 = hk_log_now(), wait0 = w->t_wait;
    const int got = fill(w, b, max_pairs);
    w->t_walk += hk_log_now() - t0 - (w->t_wait - wait0);
    set_all(w, b);
    if (!w->failed && got > 0 && w->fmt->check_set)
        (void)w->fmt->check_set(w, b, b->n_regions - (size_t)got);
    if (w->failed) {
        if (w->err_line > 0) hk_log_error("%s:%ld: %s", w->path, w->err_line, w->err_msg);
        else hk_log_error("%s: %s", w->path, w->err_msg);
        return w->err_kind == HK_ERR_RUNTIME ? -2 : -1;
    }
    return got;
}

void hk_reader_close(hk_reader_t *r)
{
    if (!r) return;
    hk_walk_t *w = &r->w;
    if (hk_log_tracing())
        hk_log_notice("reader %s: walking %.3f s, waiting for reading, scanning and setting %.3f s",
                    w->path, w->t_walk, w->t_wait);
    if (w->fmt && w->fmt->free_state && w->state) w->fmt->free_state(w->state);
    free(w->state);
    hk_lines_close(w->lines);
    hk_source_close(w->src);
    free(w->path);
    free(w->name);
    free(w->placed.v);
    free(w->setting.v);
    free(r);
}
