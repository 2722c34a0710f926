/* hk_reader.c - see hk_reader.h.
 *
 * The input's lines come indexed, a block at a time, from hk_lines.c (read
 * and scanned on all threads). Here they are walked in input order, the one
 * sequential step, which handles a few numbers per line: comments and tags,
 * then the format's module (hk_format_*.c) for everything else. The walk
 * was the critical path of every plain input (two thirds of a run,
 * docs/PERFORMANCE.md), so it does as little per sequence as it can: a region complete
 * gets its place in the batch as counts (reads and their bases; haplotypes
 * the same in the batch layout, else appended at once, as a format may write
 * beside them), and its sequences as spans of index entries (hk_seq_fill.h).
 * Everything per sequence, offsets and lines, copying, checking and encoding
 * the sequences, the results' NaN, is done later on all threads
 * (hk_seq_fill_set), beside the scan of the next
 * block, or at the end of the batch; a full batch is handed on (hk_reader_
 * set_ready) once the step after its end has set its last sequences, beside
 * the walk of the next batch, rather than the walk waiting for them.
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
#include "hk_seq_fill.h"
#include "hk_source.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The formats by id (HK_FMT_*). */
#define HK_FORMAT_ENTRY(name, NAME) [HK_FMT_##NAME] = &hk_format_##name,
static const hk_format_t *const formats[HK_FMT_COUNT] = { HK_FORMATS(HK_FORMAT_ENTRY) };
#undef HK_FORMAT_ENTRY


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

/* Report a bad character found while setting sequences (unless an error on
 * an earlier line is already kept). */
static void char_error(hk_walk_t *w, const hk_batch_error_t *e)
{
    static const char *const field[] = { "bases", "base qualities", "insertion qualities",
                                         "deletion qualities", "gap-continuation qualities" };
    if (w->failed && w->err_line <= e->line) return;
    w->failed = 0;
    if (e->code == HK_BATCH_BAD_BASE)
        hk_walk_fail(w, e->line, "%s: invalid base '%c' at position %u (expected A, C, G, T or N%s)",
                     e->is_read ? "read" : "haplotype", e->bad, e->pos + 1,
                     w->rules.unknown_as_n ? "" : "; set model.unknown_bases to \"as_n\" to accept it");
    else if (e->code == HK_BATCH_BAD_GAP)
        hk_walk_fail(w, e->line, "read: the insertion and deletion gap-open qualities at position %u "
                     "have error probabilities that sum to 1 or more, which leaves no probability "
                     "for match-to-match", e->pos + 1);
    else if (e->code == HK_BATCH_BAD_GCP)
        hk_walk_fail(w, e->line, "read: the gap-continuation quality at position %u is Q0 ('!'), "
                     "which leaves no probability for gap-to-match: every likelihood would be 0",
                     e->pos + 1);
    else
        hk_walk_fail(w, e->line, "read %s: invalid quality character 0x%02x at position %u "
                     "(expected Phred+33 '!'..'~')", field[e->field], e->bad, e->pos + 1);
}


/* The side job of two lists (one may be NULL): a full batch's last
 * sequences beside the next one's first. */
static void set_job(void *arg, int part, int nparts)
{
    const struct { hk_seq_fill_t *q[2]; } *j = arg;
    for (int k = 0; k < 2; k++)
        if (j->q[k]) hk_seq_fill_set(j->q[k], part, nparts);
}

/* Hand q to a side job, which fills expected[] with NaN too where the
 * format never writes it. */
static void hand_on(const hk_walk_t *w, hk_seq_fill_t *q, const hk_lines_index_t *ix)
{
    hk_seq_fill_ready(q, ix, w->fmt && w->fmt->no_expected);
}

/* The job of q is done: its errors and longest read; then empty it. */
static void sequences_set(hk_walk_t *w, hk_seq_fill_t *q, hk_batch_t *b)
{
    if (hk_seq_fill_has_work(q)) {
        for (int t = 0; t < HK_SEQ_FILL_PARTS; t++) {
            if (q->max_len[t] == UINT32_MAX || q->max_hap[t] == UINT32_MAX)   /* see hk_seq_fill_set */
                hk_walk_error(w, HK_E_RUNTIME, 0, "internal error: sequences longer than the format counted");
            if (q->err[t].code) char_error(w, &q->err[t]);
            if (q->max_len[t] > q->batch->max_read_len) q->batch->max_read_len = q->max_len[t];
            if (q->max_hap[t] > q->batch->max_hap_len) q->batch->max_hap_len = q->max_hap[t];
        }
    }
    hk_seq_fill_reset(q, b);
}

/* Set every sequence placed, now (the end of a batch): the step in flight
 * sets those placed before it began (its scan of the next block may go on),
 * the rest are set here. */
static void finish_pending(hk_walk_t *w);

static void set_all(hk_walk_t *w, hk_batch_t *b)
{
    const double t0 = hk_log_now();
    hk_lines_wait_side(w->lines);
    const double t1 = hk_log_now();
    sequences_set(w, w->setting, b);
    if (w->pending) sequences_set(w, w->tail_setting, w->pending);
    struct { hk_seq_fill_t *q[2]; } job = { { w->placed, w->pending ? w->tail : NULL } };
    size_t bytes = 0;
    for (int k = 0; k < 2; k++) {
        if (job.q[k] && hk_seq_fill_has_work(job.q[k])) {
            hand_on(w, job.q[k], w->at.ix);
            bytes += hk_seq_fill_bytes(job.q[k]);
        }
    }
    if (bytes) hk_lines_run_side(w->lines, set_job, &job, bytes);
    sequences_set(w, w->placed, b);
    if (w->pending) {
        sequences_set(w, w->tail, w->pending);
        finish_pending(w);
    }
    const double t2 = hk_log_now();
    w->t_wait += t2 - t0;
    w->t_end_wait += t1 - t0;
    w->t_end_side += t2 - t1;
    w->n_ends++;
}

/* The pending batch's sequences are all set: on to the caller, unless an
 * error was found (the reader then fails). */
static void finish_pending(hk_walk_t *w)
{
    hk_batch_t *p = w->pending;
    w->pending = NULL;
    if (!w->failed && w->fmt->check_set) (void)!w->fmt->check_set(w, p, w->pending_region0);   /* recorded in w */
    if (!w->failed) w->ready(p, w->ready_arg);
}

/* b ended full with more input to walk: hand it back now, its sequences
 * placed since the last take set by the next step beside the walk of the
 * next batch (no wait for the side job in flight, no side job alone). */
static void hold_pending(hk_walk_t *w, hk_batch_t *b, size_t region0)
{
    hk_seq_fill_t *x = w->tail, *y = w->tail_setting;   /* empty: nothing pending */
    w->tail = w->placed;
    w->tail_setting = w->setting;
    w->placed = x;
    w->setting = y;
    w->pending = b;
    w->pending_region0 = region0;
    w->n_overlapped++;
}

/* ---- the walk ---- */

/* The format is known: its state, and its scan pass over what is indexed. */
HK_RESULT_USED static hk_status_t use_format(hk_walk_t *w, int format)
{
    w->format = format;
    w->fmt = formats[format];
    w->fmt_name = w->fmt->name;
    w->fmt_pdhmm = w->fmt->pdhmm;
    w->fmt_no_expected = w->fmt->no_expected;
    if (w->fmt->pdhmm) {   /* that model takes qualities as written (SPEC 1b) */
        w->rules.pdhmm = 1;
        w->rules.min_base_quality = 0;
    }
    if (!(w->state = calloc(1, w->fmt->state_size ? w->fmt->state_size : 1)))
        return hk_walk_oom(w, hk_walk_line_no(w, w->at.pos));
    /* lines indexed with another pass (or none) are split and scanned again */
    if (hk_lines_set_scan(w->lines, w->fmt->separator, w->fmt->scan, w->fmt->scan_free))
        hk_lines_rescan(w->lines, w->at.pos);
    return HK_OK;
}

HK_RESULT_USED static hk_status_t detect_format(hk_walk_t *w)
{
    const hk_line_t *L = hk_walk_line(w, w->at.pos);
    for (int f = HK_FMT_AUTO + 1; f < HK_FMT_COUNT; f++)
        if (formats[f]->claims(L)) return use_format(w, f);
    return hk_walk_fail(w, hk_walk_line_no(w, w->at.pos), "cannot tell the format: expected a batch "
                        "header 'READS HAPLOTYPES' or a 7-field HaplotypeCaller results record "
                        "(set input.format to force one)");
}

/* The format the walk will likely detect, from the first block's lines
 * (hk_lines_set_first): a format's header, else the first data line's claim.
 * It sets the scan of the first blocks only; the walk still detects. */
static void guess_format(hk_lines_t *lines, const char *data, size_t len, void *arg)
{
    (void)arg;
    for (const char *s = data, *end = data + len; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const hk_line_t L = { .text = (char *)s, .len = (uint32_t)((nl ? nl : end) - s) };
        s = nl ? nl + 1 : end;
        if (L.len == 0 || (L.len == 1 && L.text[0] == '\r')) continue;
        for (int f = HK_FMT_AUTO + 1; f < HK_FMT_COUNT; f++) {
            const char *h = formats[f]->header_prefix;
            const int claimed = L.text[0] == '#' ? h && L.len >= strlen(h) && !strncmp(L.text, h, strlen(h))
                                                 : formats[f]->claims(&L);
            if (claimed) {
                (void)hk_lines_set_scan(lines, formats[f]->separator, formats[f]->scan, formats[f]->scan_free);
                return;
            }
        }
        if (L.text[0] != '#') return;   /* a data line no format claims: the walk says so */
    }
}

static int is_tag(const char *s)
{
    return (!strncmp(s, "# region", 8) && (s[8] == ' ' || s[8] == '\0')) ||
           !strncmp(s, "# source-line ", 14);
}

/* Apply a '#' line: region tags, source lines, a format's header; other
 * comments are ignored. */
HK_RESULT_USED static hk_status_t comment_line(hk_walk_t *w, const char *s, long line)
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
    return HK_OK;
}

/* Walk index entry w->at.pos. */
HK_RESULT_USED static hk_status_t walk_line(hk_walk_t *w, hk_batch_t *b)
{
    hk_status_t rc;
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
    if (L->len == 0) return HK_OK;
    if (L->first == '#') {
        const char *s = L->text;
        /* a tag closes the region before it, so apply it only after */
        if (w->fmt && w->fmt->boundary && is_tag(s) && (rc = w->fmt->boundary(w, w->state, b))) return rc;
        return comment_line(w, s, line);
    }
    if (!w->fmt && (rc = detect_format(w))) return rc;
    return w->fmt->line(w, w->state, b);
}

/* The walk is at the end of the index: take the block the step in flight
 * has scanned (its sequences are set then), dropping the entries no longer
 * needed; start the next step, which sets what the walk placed meanwhile. */
HK_RESULT_USED static hk_status_t refill(hk_walk_t *w, hk_batch_t *b)
{
    const size_t n = w->at.ix->n_lines;
    const size_t keep = w->fmt ? w->fmt->first_needed(w->state, n) : n;
    /* what the walk placed goes to the next step, which reads the index as
     * it is now (the take leaves it so) */
    const hk_lines_index_t was = *w->at.ix;
    const double t0 = hk_log_now();
    hk_lines_wait(w->lines);
    const double t1 = hk_log_now();
    sequences_set(w, w->setting, b);
    hk_seq_fill_t *const done = w->setting;
    w->setting = w->placed;
    w->placed = done;
    hk_seq_fill_reset(w->placed, b);
    hand_on(w, w->setting, &was);
    size_t bytes = hk_seq_fill_has_work(w->setting) ? hk_seq_fill_bytes(w->setting) : 0;
    w->job.q[0] = w->setting;
    w->job.q[1] = NULL;
    if (w->pending) {   /* the batch handed back: its last sequences go to this step */
        sequences_set(w, w->tail_setting, w->pending);
        hk_seq_fill_t *const t = w->tail_setting;
        w->tail_setting = w->tail;
        w->tail = t;
        if (hk_seq_fill_has_work(w->tail_setting)) {
            hand_on(w, w->tail_setting, &was);
            bytes += hk_seq_fill_bytes(w->tail_setting);
            w->job.q[1] = w->tail_setting;
        } else {
            finish_pending(w);
        }
    }
    const hk_status_t rc = hk_lines_take(w->lines, keep, bytes ? set_job : NULL, &w->job, bytes);
    const double t2 = hk_log_now();
    w->t_wait += t2 - t0;
    w->t_take_wait += t1 - t0;
    w->t_take += t2 - t1;
    if (rc) return hk_walk_oom(w, hk_walk_line_no(w, w->at.ix->n_lines));
    w->at.pos -= keep;
    if (w->fmt) w->fmt->shift(w->state, keep);
    if (w->all_read && hk_lines_ended(w->lines)) {
        void (*const all_read)(void *) = w->all_read;
        w->all_read = NULL;
        all_read(w->all_read_arg);
    }
    return w->failed ? w->err_kind : HK_OK;   /* a bad character found while setting */
}

/* Walk lines into b (placed, set later) until it holds max_pairs pairs; see
 * hk_reader_next. */
HK_RESULT_USED static hk_status_t fill(hk_walk_t *w, hk_batch_t *b, size_t max_pairs, size_t *got)
{
    hk_status_t rc;
    const size_t regions0 = b->n_regions;
    while (b->n_regions == regions0 || b->n_pairs < max_pairs) {
        if (w->at.pos < w->at.ix->n_lines) {
            if ((rc = walk_line(w, b))) goto fail;
            w->at.pos++;
        } else if (hk_lines_ended(w->lines)) {
            if (w->fmt && (rc = w->fmt->end(w, w->state, b))) goto fail;
            break;
        } else if ((rc = refill(w, b))) {
            goto fail;
        }
    }
    *got = b->n_regions - regions0;
    return HK_OK;
fail:
    if (w->err_kind == HK_E_INPUT && w->fmt) w->fmt->place_open(w, w->state, b);
    *got = 0;
    return rc;
}

/* ---- the reader ---- */

static double thread_cpu(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)) return 0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

hk_status_t hk_reader_open(const char *path, int format, hk_seq_rules_t rules, const hk_read_opts_t *opt,
                           hk_reader_t **out)
{
    *out = NULL;
    hk_reader_t *r = calloc(1, sizeof *r);
    hk_walk_t *w = r ? &r->w : NULL;
    if (!r || !(w->path = strdup(path))) {
        hk_log_error("%s: out of memory", path);
        free(r);
        return HK_E_NOMEM;
    }
    hk_status_t st = hk_source_open(path, opt, &w->src);
    if (st == HK_OK && !(w->lines = hk_lines_open(w->src, 1, opt))) {
        hk_log_error("%s: out of memory", path);
        st = HK_E_NOMEM;
    }
    if (st) {
        hk_reader_close(r);
        return st;
    }
    w->at.ix = hk_lines_index(w->lines);
    w->rules = rules;
    w->want_pdhmm = -1;
    for (int k = 0; k < 4; k++) w->lists[k].rules = &w->rules;
    w->placed = &w->lists[0];
    w->setting = &w->lists[1];
    w->tail = &w->lists[2];
    w->tail_setting = &w->lists[3];
    w->overlap = !(opt && opt->batch_wait);   /* HK_BATCH_END=wait, for measuring */
    if (format <= HK_FMT_AUTO || format >= HK_FMT_COUNT) hk_lines_set_first(w->lines, guess_format, NULL);
    if (format > HK_FMT_AUTO && format < HK_FMT_COUNT && (st = use_format(w, format))) {
        hk_log_error("%s: out of memory", path);
        hk_reader_close(r);
        return st;
    }
    *out = r;
    return HK_OK;
}

hk_status_t hk_reader_set_range(hk_reader_t *r, long long start, long long end, long first_line,
                                const char *region)
{
    hk_walk_t *w = &r->w;
    if (hk_source_set_range(w->src, (off_t)start, (off_t)end)) {
        hk_log_error("%s: cannot read bytes %lld-%lld of it in place: not a plain regular file "
                     "(compressed, or a stream), or shorter than that", w->path, start, end);
        return HK_E_INPUT;
    }
    hk_lines_set_first_line(w->lines, first_line);
    free(w->name);
    w->name = NULL;
    if (region && !(w->name = strdup(region))) {
        hk_log_error("%s: out of memory", w->path);
        return HK_E_NOMEM;
    }
    return HK_OK;
}

void hk_reader_expect_pdhmm(hk_reader_t *r, int pdhmm) { r->w.want_pdhmm = pdhmm; }

void hk_reader_set_ready(hk_reader_t *r, void (*ready)(hk_batch_t *b, void *arg), void *arg)
{
    r->w.ready = ready;
    r->w.ready_arg = arg;
}

void hk_reader_set_all_read(hk_reader_t *r, void (*all_read)(void *arg), void *arg)
{
    r->w.all_read = all_read;
    r->w.all_read_arg = arg;
}

hk_status_t hk_reader_prime(hk_reader_t *r) { return hk_lines_prime(r->w.lines); }

void hk_reader_set_threads(hk_reader_t *r, int nthreads)
{
    hk_lines_set_threads(r->w.lines, nthreads);
    hk_source_set_threads(r->w.src, nthreads);
}

hk_status_t hk_reader_next(hk_reader_t *r, hk_batch_t *b, size_t max_pairs, size_t *regions)
{
    hk_walk_t *w = &r->w;
    *regions = 0;
    if (w->failed) return w->err_kind;
    const double t0 = hk_log_now(), wait0 = w->t_wait, cpu0 = thread_cpu();
    hk_seq_fill_reset(w->placed, b);
    size_t got;
    const hk_status_t walked = fill(w, b, max_pairs, &got);   /* a failure is also recorded in w */
    w->t_walk += hk_log_now() - t0 - (w->t_wait - wait0);
    w->t_cpu += thread_cpu() - cpu0;
    const int full = walked == HK_OK && got > 0 && b->n_pairs >= max_pairs && w->ready;
    const int more = !hk_lines_ended(w->lines) || w->at.pos < w->at.ix->n_lines;
    if (full && more && w->overlap && !w->failed && w->pending && !hk_seq_fill_has_work(w->tail)) {
        /* the batch before is still pending, its last sequences in the step in
         * flight: wait for that step's side job, no more */
        const double t1 = hk_log_now();
        hk_lines_wait_side(w->lines);
        sequences_set(w, w->setting, b);
        sequences_set(w, w->tail_setting, w->pending);
        finish_pending(w);
        const double dt = hk_log_now() - t1;
        w->t_wait += dt;
        w->t_end_wait += dt;
        w->n_ends++;
    }
    if (full && more && w->overlap && !w->failed && !w->pending) {
        hold_pending(w, b, b->n_regions - got);
        *regions = got;
        return HK_OK;
    }
    set_all(w, b);
    if (!w->failed && got > 0 && w->fmt->check_set)
        (void)!w->fmt->check_set(w, b, b->n_regions - got);   /* recorded in w */
    if (!w->failed && full) w->ready(b, w->ready_arg);
    if (w->failed) {
        if (w->err_line > 0) hk_log_error("%s:%ld: %s", w->path, w->err_line, w->err_msg);
        else hk_log_error("%s: %s", w->path, w->err_msg);
        return w->err_kind;
    }
    *regions = got;
    return HK_OK;
}

void hk_reader_close(hk_reader_t *r)
{
    if (!r) return;
    hk_walk_t *w = &r->w;
    if (hk_log_tracing()) {
        double rd, sc, sd;
        long steps;
        hk_lines_times(w->lines, &rd, &sc, &sd, &steps);
        hk_log_notice("reader %s: walking %.3f s, waiting for reading, scanning and setting %.3f s "
                      "(CPU time of both %.3f s); threads' time in %ld steps: reading %.3f s, "
                      "scanning %.3f s, setting %.3f s; %llu lines scanned again", w->path, w->t_walk,
                      w->t_wait, w->t_cpu, steps, rd, sc, sd,
                      (unsigned long long)hk_lines_rescanned(w->lines));
        long n[2];
        double wall[2], start[2], end[2], idle;
        for (int k = 0; k < 2; k++) hk_lines_fork_times(w->lines, k, &n[k], &wall[k], &start[k], &end[k], &idle);
        hk_log_notice("reader %s: waiting at takes %.3f s (for the step %.3f s, taking %.3f s), at %ld "
                      "batch ends %.3f s (for the side job %.3f s, setting the rest %.3f s), %ld batches "
                      "handed back before set; %ld steps: wall %.3f s, threads' time starting %.3f s, "
                      "joining %.3f s; %ld side jobs alone: wall %.3f s, starting %.3f s, joining %.3f s; "
                      "steps waiting for the walk %.3f s", w->path, w->t_take_wait + w->t_take,
                      w->t_take_wait, w->t_take, w->n_ends, w->t_end_wait + w->t_end_side, w->t_end_wait,
                      w->t_end_side, w->n_overlapped, n[0], wall[0], start[0], end[0], n[1], wall[1],
                      start[1], end[1], idle);
    }
    if (w->fmt && w->fmt->free_state && w->state) w->fmt->free_state(w->state);
    free(w->state);
    hk_lines_close(w->lines);
    hk_source_close(w->src);
    free(w->path);
    free(w->name);
    for (int k = 0; k < 4; k++) {
        free(w->lists[k].reads.v);
        free(w->lists[k].haps.v);
    }
    free(r);
}
