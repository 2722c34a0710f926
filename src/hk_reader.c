/* hk_reader.c - see hk_reader.h.
 *
 * The results-file format has no region marker: a region is the run of
 * consecutive records that share one list of haplotypes. Records are kept in
 * `recs` until the region is known to be complete:
 *   recs[0, n_done)   whole reads of the current region (n_haps records each);
 *   recs[n_done, n)   the read being collected.
 * While n_haps is 0 the first read is being collected and its distinct
 * haplotypes define the region's list. A record that does not continue the
 * pattern closes the region; the partial read then starts the next one.
 */
#include "hk_reader.h"
#include "hk_log.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>
#include <htslib/kseq.h>
#include <htslib/kstring.h>

/* Limits that turn absurd input into a clear error instead of an allocation
 * failure. */
#define MAX_REGION_READS   10000000L
#define MAX_REGION_HAPS    10000L
#define MAX_REGION_PAIRS   20000000L
/* The longest line that can be valid: a results-file record of the longest
 * sequences (haplotype, read and its four quality strings, HK_MAX_SEQ_LEN
 * each), with room for spaces, the expected value and a line end. Longer
 * lines are refused as soon as they pass it, not held in memory whole. */
#define MAX_LINE_LEN       (6 * (size_t)HK_MAX_SEQ_LEN + 4096)
#define READ_CHUNK         (256u << 10)

typedef struct {
    size_t hap, hap_len;    /* haplotype bases, offsets into arena */
    size_t read, read_len;  /* "bases qual ins del gcp" */
    double expected;
    long   line;
} record_t;

struct hk_reader {
    char       *path;
    htsFile    *fp;
    const hk_model_t *m;
    int         format;
    long        line;        /* lines read so far */
    kstring_t   ks;          /* the current line */
    kstring_t   ahead;       /* the line after it */
    int         ahead_state; /* 0 not read yet, else 2 + fetch_line's result */
    char       *name;        /* current region tag, NULL for none */
    long        source_line; /* from "# source-line N", 0 when none */
    int         eof, failed;
    long        err_line;    /* the first error: line (0 if none) and text */
    int         err_runtime; /* it is a runtime failure (memory), not bad input */
    char        err_msg[512];
    int         nthreads;    /* for normalising batches */
    int         bgzf_unterminated; /* BGZF without its end-of-file marker */
    int         bgzf_mt;     /* BGZF decompressed by htslib's threads */
    char       *buf;         /* input read ahead of the lines (fetch_line) */
    size_t      buf_pos, buf_len;
    int         buf_eof;
    /* results-file reconstruction (see top) */
    record_t   *recs;
    size_t      n, m_recs, n_done, n_haps;
    kstring_t   arena;
};

const char *hk_reader_format_name(int format)
{
    return format == HK_FMT_GATK ? "gatk" : format == HK_FMT_BATCH ? "batch" : "auto";
}

int hk_reader_parse_format(const char *s)
{
    if (!strcmp(s, "auto")) return HK_FMT_AUTO;
    if (!strcmp(s, "gatk")) return HK_FMT_GATK;
    if (!strcmp(s, "batch")) return HK_FMT_BATCH;
    return -1;
}

hk_reader_t *hk_reader_open(const char *path, int format, const hk_model_t *m)
{
    hk_reader_t *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        hk_log_error("%s: out of memory", path);
        free(r);
        return NULL;
    }
    errno = 0;
    r->fp = hts_open(path, "r");
    if (!r->fp || r->fp->is_bin) {
        char *what = r->fp ? hts_format_description(&r->fp->format) : NULL;
        if (errno == ENOEXEC || (r->fp && r->fp->is_bin))
            hk_log_error("%s:1: binary content (%s), not a text dump", path,
                         what ? what : "unknown format");
        else
            hk_log_error("%s: cannot open: %s", path, errno ? strerror(errno) : "unknown format");
        free(what);
        hk_reader_close(r);
        return NULL;
    }
    /* htslib recognises xz (and more) but reads text only plain or through
     * BGZF (gzip, BGZF); hts_getline would abort on the others */
    const int comp = r->fp->format.compression;
    if (comp != no_compression && comp != gzip && comp != bgzf) {
        char *what = hts_format_description(&r->fp->format);
        hk_log_error("%s:1: unsupported compression (%s): haplik reads plain text, gzip or BGZF",
                     path, what ? what : "unknown");
        free(what);
        hk_reader_close(r);
        return NULL;
    }
    if (!(r->buf = malloc(READ_CHUNK))) {
        hk_log_error("%s: out of memory", path);
        hk_reader_close(r);
        return NULL;
    }
    /* a BGZF file cut at a block boundary reads as a shorter valid file;
     * only its missing end-of-file marker tells */
    r->bgzf_unterminated = r->fp->format.compression == bgzf &&
                           bgzf_check_EOF(r->fp->fp.bgzf) == 0;
    r->m = m;
    r->format = format;
    return r;
}

void hk_reader_close(hk_reader_t *r)
{
    if (!r) return;
    if (r->fp) hts_close(r->fp);
    free(r->path);
    free(r->ks.s);
    free(r->ahead.s);
    free(r->name);
    free(r->recs);
    free(r->arena.s);
    free(r->buf);
    free(r);
}

int hk_reader_format(const hk_reader_t *r) { return r->format; }

#define FAIL(r, line, ...) do { reader_error(r, line, __VA_ARGS__); return -1; } while (0)

/* Errors are kept, not printed, until the batch they belong to has been
 * normalised: a bad character on an earlier line must win over a structural
 * error found first by the sequential scan. */
__attribute__((format(printf, 3, 4)))
static void reader_error(hk_reader_t *r, long line, const char *fmt, ...)
{
    if (r->failed) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err_msg, sizeof r->err_msg, fmt, ap);
    va_end(ap);
    r->err_line = line;
    r->failed = 1;
    r->err_runtime = !strcmp(fmt, "out of memory");   /* not the input's fault */
}

/* Read one line into *ks without its line end: 1, 0 at EOF, -1 on error.
 * Like hts_getline (one "\r\n" or "\n" line end; a last line without one),
 * but through r->buf, so that a line longer than MAX_LINE_LEN is refused
 * (as line r->line + 1, the line being read ahead) before it grows *ks. */
static int fetch_line(hk_reader_t *r, kstring_t *ks)
{
    int nl_seen = 0;
    ks->l = 0;
    for (;;) {
        if (r->buf_pos == r->buf_len) {
            if (r->buf_eof) break;
            ssize_t n = r->fp->format.compression == no_compression
                        ? hread(r->fp->fp.hfile, r->buf, READ_CHUNK)
                        : bgzf_read(r->fp->fp.bgzf, r->buf, READ_CHUNK);
            if (n < 0) return -1;
            r->buf_pos = 0;
            r->buf_len = (size_t)n;
            if (n == 0) { r->buf_eof = 1; break; }
        }
        const char *p = r->buf + r->buf_pos;
        const char *nl = memchr(p, '\n', r->buf_len - r->buf_pos);
        const size_t take = nl ? (size_t)(nl - p) : r->buf_len - r->buf_pos;
        if (ks->l + take > MAX_LINE_LEN) {
            reader_error(r, r->line + 1, "line longer than %zu bytes, longer than any valid "
                         "record (sequences have at most %u bases)", MAX_LINE_LEN, HK_MAX_SEQ_LEN);
            return -1;
        }
        if (ks_resize(ks, ks->l + take + 2) < 0) {
            reader_error(r, r->line + 1, "out of memory");
            return -1;
        }
        memcpy(ks->s + ks->l, p, take);
        ks->l += take;
        r->buf_pos += take + (nl != NULL);
        if (nl) { nl_seen = 1; break; }
    }
    if (!nl_seen && ks->l == 0) return 0;
    if (ks->l && ks->s[ks->l - 1] == '\r') ks->l--;   /* CRLF, also on a last line */
    ks->s[ks->l] = '\0';
    return 1;
}

/* Next line into r->ks: 1 on a line, 0 at EOF, -1 on error. The reader stays
 * one line ahead, so that a truncated or corrupt compressed stream is reported
 * as such rather than as a malformed last line. */
static int next_line(hk_reader_t *r)
{
    if (r->ahead_state == 0) r->ahead_state = 2 + fetch_line(r, &r->ahead);   /* first call */
    switch (r->ahead_state) {
    case 1: reader_error(r, r->line + 1, "read error (truncated or corrupt %s stream?)",
                         r->fp->format.compression == no_compression ? "input" : "compressed");
            return -1;
    case 2:
        if (r->bgzf_unterminated) {
            reader_error(r, 1, "read error (truncated BGZF stream: no end-of-file marker)");
            return -1;
        }
        r->eof = 1;
        return 0;
    }
    kstring_t t = r->ks;
    r->ks = r->ahead;
    r->ahead = t;
    r->line++;
    r->ahead_state = 2 + fetch_line(r, &r->ahead);
    if (r->ahead_state == 2 && r->bgzf_unterminated) {
        reader_error(r, r->line, "read error (truncated BGZF stream: no end-of-file marker)");
        return -1;
    }
    if (r->ahead_state == 1) {
        reader_error(r, r->line + 1, "read error (truncated or corrupt %s stream?)",
                     r->fp->format.compression == no_compression ? "input" : "compressed");
        return -1;
    }
    if (memchr(r->ks.s, '\0', r->ks.l)) {
        reader_error(r, r->line, "NUL byte in text (binary input?)");
        return -1;
    }
    return 1;
}

/* Split s in place on single spaces into at most max fields; the count. */
static int split_fields(char *s, size_t len, char **f, size_t *fl, int max)
{
    int n = 0;
    char *p = s, *end = s + len;
    while (n < max) {
        char *q = memchr(p, ' ', (size_t)(end - p));
        if (!q) q = end;
        f[n] = p; fl[n] = (size_t)(q - p); n++;
        if (q == end) return n;
        p = q + 1;
    }
    return n + 1;   /* more than max */
}

/* Parse a strictly positive integer field; 0 when it is not one. */
static long parse_count(const char *s, size_t len, long max)
{
    if (len == 0 || len > 18) return len > 18 ? max + 1 : 0;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* Report a character error found by normalisation (unless an earlier
 * error is already kept). */
static void char_error(hk_reader_t *r, const hk_batch_error_t *e)
{
    static const char *const field[] = { "bases", "base qualities", "insertion qualities",
                                         "deletion qualities", "gap-continuation qualities" };
    if (r->failed && r->err_line <= e->line) return;
    r->failed = 0;
    if (e->code == HK_BATCH_EBASE)
        reader_error(r, e->line, "%s: invalid base '%c' at position %u (expected A, C, G, T or N%s)",
                     e->is_read ? "read" : "haplotype", e->bad, e->pos + 1,
                     r->m->unknown_as_n ? "" : "; set model.unknown_bases to \"as_n\" to accept it");
    else if (e->code == HK_BATCH_EGAP)
        reader_error(r, e->line, "read: the insertion and deletion gap-open qualities at position %u "
                     "have error probabilities that sum to 1 or more, which leaves no probability "
                     "for match-to-match", e->pos + 1);
    else
        reader_error(r, e->line, "read %s: invalid quality character 0x%02x at position %u "
                     "(expected Phred+33 '!'..'~')", field[e->field], e->bad, e->pos + 1);
}

/* Report an error of the raw add functions (length, memory). */
static int add_error(hk_reader_t *r, long line, int rc, const char *what)
{
    if (rc == HK_BATCH_ELONG)
        reader_error(r, line, "%s longer than %u bases", what, HK_MAX_SEQ_LEN);
    else
        reader_error(r, line, "out of memory");
    return -1;
}

static int is_tag(const char *s)
{
    return (!strncmp(s, "# region", 8) && (s[8] == ' ' || s[8] == '\0')) ||
           !strncmp(s, "# source-line ", 14);
}

/* Apply a '#' line: region tags, source lines; other comments are ignored
 * (the results file's header names the format). */
static int comment_line(hk_reader_t *r)
{
    const char *s = r->ks.s;
    if (!strncmp(s, "# region", 8) && (s[8] == ' ' || s[8] == '\0')) {
        const char *nm = s + 8;
        while (*nm == ' ') nm++;
        free(r->name);
        r->name = NULL;
        if (*nm && !(r->name = strdup(nm))) FAIL(r, r->line, "out of memory");
    } else if (!strncmp(s, "# source-line ", 14)) {
        char *end;
        errno = 0;
        long v = strtol(s + 14, &end, 10);
        if (errno || *end || v <= 0) FAIL(r, r->line, "bad '# source-line' tag");
        r->source_line = v;
    } else if (r->format == HK_FMT_AUTO && !strncmp(s, "# hap-bases", 11)) {
        r->format = HK_FMT_GATK;
    }
    return 0;
}

static long region_line(hk_reader_t *r, long line)
{
    long l = r->source_line ? r->source_line : line;
    r->source_line = 0;
    return l;
}

/* ---- batch format ---- */

static int read_batch_region(hk_reader_t *r, hk_batch_t *b)
{
    char *f[6];
    size_t fl[6];
    const long head = r->line;
    int nf = split_fields(r->ks.s, r->ks.l, f, fl, 2);
    long R = nf == 2 ? parse_count(f[0], fl[0], MAX_REGION_READS) : 0;
    long H = nf == 2 ? parse_count(f[1], fl[1], MAX_REGION_HAPS) : 0;
    if (nf != 2 || R <= 0 || H <= 0)
        FAIL(r, head, "expected a batch header 'READS HAPLOTYPES' of two positive integers");
    if (R > MAX_REGION_READS || H > MAX_REGION_HAPS || R * H > MAX_REGION_PAIRS)
        FAIL(r, head, "batch of %ld reads x %ld haplotypes is larger than haplik accepts "
             "(%ld reads, %ld haplotypes, %ld pairs)", R, H, MAX_REGION_READS, MAX_REGION_HAPS,
             MAX_REGION_PAIRS);
    if (hk_batch_begin_region(b, r->name, region_line(r, head)))
        FAIL(r, head, "out of memory");
    int rc;
    for (long k = 0; k < R + H; k++) {
        int got = next_line(r);
        if (got < 0) return -1;
        if (got == 0)
            FAIL(r, r->line, "truncated input: the batch at line %ld expects %ld reads and %ld "
                 "haplotypes, the input ended after %ld lines of it", head, R, H, k);
        if (k < R) {
            nf = split_fields(r->ks.s, r->ks.l, f, fl, 5);
            if (nf != 5)
                FAIL(r, r->line, "expected a read line 'BASES QUALS INS DELS GCPS' (5 fields), "
                     "found %s%d", nf > 5 ? "more than " : "", nf > 5 ? 5 : nf);
            for (int i = 1; i < 5; i++)
                if (fl[i] != fl[0])
                    FAIL(r, r->line, "field %d has %zu characters but the read has %zu bases",
                         i + 1, fl[i], fl[0]);
            if (fl[0] == 0) FAIL(r, r->line, "empty read");
            rc = hk_batch_add_read_raw(b, f[0], f[1], f[2], f[3], f[4], (uint32_t)fl[0], r->line);
            if (rc) return add_error(r, r->line, rc, "read");
        } else {
            nf = split_fields(r->ks.s, r->ks.l, f, fl, 1);
            if (nf != 1 || fl[0] == 0)
                FAIL(r, r->line, "expected a haplotype line (one field of bases)");
            rc = hk_batch_add_hap_raw(b, f[0], (uint32_t)fl[0], r->line);
            if (rc) return add_error(r, r->line, rc, "haplotype");
        }
    }
    if (hk_batch_end_region(b)) FAIL(r, head, "out of memory");
    return 1;
}

/* ---- results-file format ---- */

static const char *arena_at(const hk_reader_t *r, size_t off) { return r->arena.s + off; }

static int same_text(const hk_reader_t *r, size_t a, size_t alen, size_t b, size_t blen)
{
    return alen == blen && !memcmp(arena_at(r, a), arena_at(r, b), alen);
}

/* Move the region recs[0, n_done) (n_haps records per read) into the batch,
 * and keep recs[n_done, n), moved to the front, for the next region. */
static int emit_gatk_region(hk_reader_t *r, hk_batch_t *b)
{
    const size_t H = r->n_haps, R = r->n_done / H;
    if ((long)R > MAX_REGION_READS || (long)H > MAX_REGION_HAPS)
        FAIL(r, r->recs[0].line, "region of %zu reads x %zu haplotypes is larger than haplik "
             "accepts", R, H);
    if (hk_batch_begin_region(b, r->name, region_line(r, r->recs[0].line)))
        FAIL(r, r->recs[0].line, "out of memory");
    int rc;
    for (size_t h = 0; h < H; h++) {
        const record_t *x = &r->recs[h];
        rc = hk_batch_add_hap_raw(b, arena_at(r, x->hap), (uint32_t)x->hap_len, x->line);
        if (rc) return add_error(r, x->line, rc, "haplotype");
    }
    for (size_t k = 0; k < R; k++) {
        const record_t *x = &r->recs[k * H];
        const char *s = arena_at(r, x->read);
        const uint32_t L = (uint32_t)((x->read_len - 4) / 5);
        rc = hk_batch_add_read_raw(b, s, s + (L + 1), s + 2 * (L + 1), s + 3 * (L + 1),
                                   s + 4 * (L + 1), L, x->line);
        if (rc) return add_error(r, x->line, rc, "read");
    }
    if (hk_batch_end_region(b)) FAIL(r, r->recs[0].line, "out of memory");
    hk_region_t *rg = hk_batch_last_region(b);
    for (size_t i = 0; i < r->n_done; i++) b->expected[rg->pair0 + i] = r->recs[i].expected;

    const size_t rest = r->n - r->n_done;
    const size_t base = rest ? r->recs[r->n_done].hap : r->arena.l;
    memmove(r->recs, r->recs + r->n_done, rest * sizeof *r->recs);
    memmove(r->arena.s, r->arena.s + base, r->arena.l - base);
    r->arena.l -= base;
    for (size_t i = 0; i < rest; i++) { r->recs[i].hap -= base; r->recs[i].read -= base; }
    r->n = rest;
    r->n_done = 0;
    r->n_haps = 0;
    return 1;
}

/* Does the last record, recs[n-1], continue the pattern of recs[0, n-1)? */
static int continues(const hk_reader_t *r)
{
    const size_t prior = r->n - 1;
    const record_t *x = &r->recs[prior];
    if (r->n_haps == 0) {               /* collecting the first read */
        if (prior == 0) return 1;
        if (!same_text(r, x->read, x->read_len, r->recs[0].read, r->recs[0].read_len)) return 0;
        for (size_t k = 0; k < prior; k++)
            if (same_text(r, x->hap, x->hap_len, r->recs[k].hap, r->recs[k].hap_len)) return 0;
        return 1;
    }
    const size_t idx = prior - r->n_done;   /* position within the read being collected */
    const record_t *want = &r->recs[idx];
    if (!same_text(r, x->hap, x->hap_len, want->hap, want->hap_len)) return 0;
    return idx == 0 || same_text(r, x->read, x->read_len, r->recs[r->n_done].read,
                                 r->recs[r->n_done].read_len);
}

/* Parse the record on the current line into the arena and append it to recs. */
static int push_gatk_record(hk_reader_t *r)
{
    char *f[8];
    size_t fl[8];
    int nf = split_fields(r->ks.s, r->ks.l, f, fl, 7);
    if (nf != 7)
        FAIL(r, r->line, "expected 7 space-separated fields (hap-bases read-bases read-qual "
             "read-ins-qual read-del-qual gcp expected-result), found %s%d",
             nf > 7 ? "more than " : "", nf > 7 ? 7 : nf);
    if (fl[0] == 0) FAIL(r, r->line, "empty haplotype");
    if (fl[1] == 0) FAIL(r, r->line, "empty read");
    for (int i = 2; i < 6; i++)
        if (fl[i] != fl[1])
            FAIL(r, r->line, "field %d has %zu characters but the read has %zu bases",
                 i + 1, fl[i], fl[1]);
    record_t x;
    char *end;
    f[6][fl[6]] = '\0';
    x.expected = strtod(f[6], &end);
    if (end == f[6] || *end) FAIL(r, r->line, "expected-result '%s' is not a number", f[6]);
    x.line = r->line;
    if ((long)(r->n + 1) > MAX_REGION_PAIRS)
        FAIL(r, r->line, "region longer than %ld records", MAX_REGION_PAIRS);
    x.hap = r->arena.l;
    x.hap_len = fl[0];
    x.read = r->arena.l + fl[0];
    x.read_len = (size_t)(f[5] + fl[5] - f[1]);
    if (kputsn(f[0], fl[0], &r->arena) < 0 || kputsn(f[1], x.read_len, &r->arena) < 0)
        FAIL(r, r->line, "out of memory");
    if (r->n == r->m_recs) {
        size_t cap = r->m_recs ? 2 * r->m_recs : 1024;
        record_t *p = realloc(r->recs, cap * sizeof *p);
        if (!p) FAIL(r, r->line, "out of memory");
        r->recs = p;
        r->m_recs = cap;
    }
    r->recs[r->n++] = x;
    return 0;
}

/* Place the record just pushed: it continues the region, or it closes the
 * region (emitted to b) and starts the next one. */
static int place_gatk_record(hk_reader_t *r, hk_batch_t *b)
{
    for (;;) {
        if (continues(r)) {
            /* refuse an oversized region now, not after holding all of it
             * (and checking each new haplotype against all before it) */
            if (r->n_haps == 0 && (long)r->n > MAX_REGION_HAPS)
                FAIL(r, r->line, "region with more than %ld haplotypes (the first read's records, "
                     "from line %ld, have as many distinct haplotypes)", MAX_REGION_HAPS,
                     r->recs[0].line);
            if (r->n_haps && r->n - r->n_done == r->n_haps) r->n_done = r->n;
            if (r->n_haps && (long)(r->n_done / r->n_haps) > MAX_REGION_READS)
                FAIL(r, r->line, "region with more than %ld reads (from line %ld)",
                     MAX_REGION_READS, r->recs[0].line);
            return 0;
        }
        if (r->n_haps == 0) {           /* the first read ended: its haplotypes are the list */
            r->n_haps = r->n_done = r->n - 1;
            continue;
        }
        if (emit_gatk_region(r, b) < 0) return -1;
    }
}

/* Close the current region at a boundary (tag, EOF): emit the whole reads,
 * then the partial read, if any, as a region of its own. */
static int close_gatk_regions(hk_reader_t *r, hk_batch_t *b)
{
    while (r->n > 0) {
        if (r->n_haps == 0) r->n_haps = r->n_done = r->n;
        if (emit_gatk_region(r, b) < 0) return -1;
    }
    r->arena.l = 0;
    return 0;
}

/* ---- driver ---- */

static int detect_format(hk_reader_t *r)
{
    char *f[8];
    size_t fl[8];
    int nf = split_fields(r->ks.s, r->ks.l, f, fl, 7);
    if (nf == 2) r->format = HK_FMT_BATCH;
    else if (nf == 7) r->format = HK_FMT_GATK;
    else FAIL(r, r->line, "cannot tell the format: expected a batch header 'READS HAPLOTYPES' "
              "or a 7-field HaplotypeCaller results record (set input.format to force one)");
    return 0;
}

static int fill(hk_reader_t *r, hk_batch_t *b, size_t max_pairs);

void hk_reader_set_threads(hk_reader_t *r, int nthreads)
{
    r->nthreads = nthreads;
    /* BGZF blocks decompress independently: let htslib do it in parallel
     * (plain gzip is one stream and stays sequential) */
    if (nthreads > 1 && r->fp->format.compression == bgzf && !r->bgzf_mt)
        r->bgzf_mt = bgzf_mt(r->fp->fp.bgzf, nthreads < 8 ? nthreads : 8, 256) == 0;
}

int hk_reader_next(hk_reader_t *r, hk_batch_t *b, size_t max_pairs)
{
    if (r->failed) return r->err_runtime ? -2 : -1;
    const size_t read0 = b->n_reads, hap0 = b->n_haps;
    int got = fill(r, b, max_pairs);
    hk_batch_error_t e;
    if (hk_batch_normalize(b, r->m, read0, hap0, r->nthreads, &e)) char_error(r, &e);
    if (r->failed) {
        if (r->err_line > 0) hk_log_error("%s:%ld: %s", r->path, r->err_line, r->err_msg);
        else hk_log_error("%s: %s", r->path, r->err_msg);
        return r->err_runtime ? -2 : -1;
    }
    return got;
}

/* Scan lines into b (raw) until it holds max_pairs pairs; see hk_reader_next. */
static int fill(hk_reader_t *r, hk_batch_t *b, size_t max_pairs)
{
    const size_t regions0 = b->n_regions;
    while (b->n_regions == regions0 || b->n_pairs < max_pairs) {
        if (r->eof) {
            if (r->format == HK_FMT_GATK && close_gatk_regions(r, b) < 0) return -1;
            break;
        }
        int got = next_line(r);
        if (got < 0) return -1;
        if (got == 0) continue;   /* eof handled above */
        if (r->ks.l == 0) continue;
        if (r->ks.s[0] == '#') {
            /* a tag closes the region before it, so apply it only after */
            if (r->format == HK_FMT_GATK && is_tag(r->ks.s) && close_gatk_regions(r, b) < 0)
                return -1;
            if (comment_line(r) < 0) return -1;
            continue;
        }
        if (r->format == HK_FMT_AUTO && detect_format(r) < 0) return -1;
        if (r->format == HK_FMT_BATCH) {
            if (read_batch_region(r, b) < 0) return -1;
            continue;
        }
        if (push_gatk_record(r) < 0 || place_gatk_record(r, b) < 0) return -1;
    }
    return (int)(b->n_regions - regions0);
}

/* ---- writing regions back (split) ---- */

static int put_qual(FILE *fp, const uint8_t *q, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (putc(q[i] + 33, fp) == EOF) return -1;
    return 0;
}

int hk_reader_write_region(FILE *fp, const hk_batch_t *b, size_t ri, int format,
                           char **last_name)
{
    const hk_region_t *rg = &b->regions[ri];
    const char *nm = rg->name;
    if ((nm == NULL) != (*last_name == NULL) || (nm && strcmp(nm, *last_name))) {
        if (nm ? fprintf(fp, "# region %s\n", nm) < 0 : fputs("# region\n", fp) == EOF) return -1;
        free(*last_name);
        *last_name = NULL;
        if (nm && !(*last_name = strdup(nm))) return -1;
    }
    if (fprintf(fp, "# source-line %ld\n", rg->line) < 0) return -1;
    if (format == HK_FMT_BATCH && fprintf(fp, "%u %u\n", rg->n_reads, rg->n_haps) < 0) return -1;
    for (uint32_t k = 0; k < rg->n_reads; k++) {
        const size_t rk = rg->read0 + k, o = b->read_off[rk];
        const size_t L = hk_batch_read_len(b, rk);
        const int nh = format == HK_FMT_GATK ? (int)rg->n_haps : 1;
        for (int h = 0; h < nh; h++) {
            if (format == HK_FMT_GATK) {
                const size_t hk = rg->hap0 + (size_t)h;
                if (fwrite(b->hap_text + b->hap_off[hk], 1, hk_batch_hap_len(b, hk), fp) !=
                        hk_batch_hap_len(b, hk) || putc(' ', fp) == EOF)
                    return -1;
            }
            if (fwrite(b->read_text + o, 1, L, fp) != L || putc(' ', fp) == EOF ||
                put_qual(fp, b->read_q + o, L) || putc(' ', fp) == EOF ||
                put_qual(fp, b->read_i + o, L) || putc(' ', fp) == EOF ||
                put_qual(fp, b->read_d + o, L) || putc(' ', fp) == EOF ||
                put_qual(fp, b->read_g + o, L))
                return -1;
            if (format == HK_FMT_GATK &&
                fprintf(fp, " %e", b->expected[rg->pair0 + (uint64_t)k * rg->n_haps + h]) < 0)
                return -1;
            if (putc('\n', fp) == EOF) return -1;
        }
    }
    if (format == HK_FMT_BATCH)
        for (uint32_t h = 0; h < rg->n_haps; h++) {
            const size_t hk = rg->hap0 + h;
            if (fwrite(b->hap_text + b->hap_off[hk], 1, hk_batch_hap_len(b, hk), fp) !=
                    hk_batch_hap_len(b, hk) || putc('\n', fp) == EOF)
                return -1;
        }
    return 0;
}
