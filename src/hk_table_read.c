/* hk_table_read.c - see hk_table_read.h. Lines come from one large buffer,
 * filled by read(2) from a plain file (the kernel's copy alone, told that
 * the file is read in order) or by bgzf_read (gzip and BGZF, the latter
 * decompressed on several threads; a pipe), so a line is handed over where
 * it lies, without a copy; the tsv rows' checks are in hk_table_read_tsv.c,
 * the header's and summary's in hk_table_read_check.c. */
#include "hk_table_read.h"
#include "hk_table_read_check.h"
#include "hk_table_read_internal.h"
#include "hk_config.h"
#include "hk_json_scan.h"
#include "hk_log.h"
#include "hk_numfmt.h"
#include "hk_outfile.h"
#include "hk_text.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>

#define READ_BLOCK   (1u << 20)   /* bytes read at a time */
#define MAX_THREADS  8            /* BGZF decompression threads */

/* ---- lines ---- */

/* The cause of a failed open or read: the run's resources, or the table. */
static hk_status_t errno_status(int e) { return hk_status_of_errno(e); }

static hk_status_t fill(hk_tread_t *t)
{
    if (t->pos) {
        memmove(t->buf, t->buf + t->pos, t->len - t->pos);
        t->len -= t->pos;
        t->pos = 0;
    }
    if (t->cap - t->len < READ_BLOCK + 1) {
        const size_t cap = t->cap ? 2 * t->cap : 2 * READ_BLOCK;
        char *b = realloc(t->buf, cap);
        if (!b) { hk_log_error("out of memory reading %s", t->path); return HK_E_NOMEM; }
        t->buf = b;
        t->cap = cap;
    }
    ssize_t got;
    if (t->fd >= 0) {
        do got = read(t->fd, t->buf + t->len, READ_BLOCK);
        while (got < 0 && errno == EINTR);
        if (got < 0) {
            const int e = errno;
            hk_log_error("%s:%ld: read error: %s", t->path, t->line + 1, strerror(e));
            return errno_status(e);
        }
    } else if ((got = bgzf_read(t->bg, t->buf + t->len, t->cap - t->len - 1)) < 0) {
        hk_log_error("%s:%ld: read error (truncated compressed stream?)", t->path, t->line + 1);
        return HK_E_INPUT;
    }
    if (got == 0) t->eof = 1;
    t->len += (size_t)got;
    return HK_OK;
}

hk_status_t hk_tread_getline(hk_tread_t *t, int *got)
{
    hk_status_t st;
    *got = 0;
    if (!t->buf && (st = fill(t))) return st;
    for (;;) {
        char *s = t->buf + t->pos, *nl = t->len > t->pos ? memchr(s, '\n', t->len - t->pos) : NULL;
        if (nl || (t->eof && t->pos < t->len)) {
            size_t n = nl ? (size_t)(nl - s) : t->len - t->pos;
            t->pos += n + (nl != NULL);
            if (n && s[n - 1] == '\r') n--;   /* a table that went through a CRLF system */
            t->cut = s + n;
            t->cut_byte = s[n];
            s[n] = '\0';
            t->s = s;
            t->n = n;
            t->line++;
            *got = 1;
            return HK_OK;
        }
        if (t->eof) return HK_OK;
        if ((st = fill(t))) return st;
    }
}

/* ---- opening ---- */

/* What htslib's detection may call a table: text of some kind (a json
 * table starting {"htsget" would be "htsget"); anything else is binary. */
static int is_binary(enum htsExactFormat f)
{
    switch (f) {
    case text_format: case empty_format: case sam: case vcf: case bed: case fasta_format:
    case fastq_format: case htsget:
        return 0;
    default:
        return 1;
    }
}

/* Start reading hf (owned from here); HK_E_INPUT (logged) for what is no table. */
static hk_status_t start(hk_tread_t *t, hFILE *hf)
{
    /* htslib recognises xz, bzip2 and zstd, but reads text only plain or
     * through BGZF: detect first */
    htsFormat f;
    if (hts_detect_format(hf, &f) < 0) {
        const int e = errno;
        hk_log_error("%s: %s", t->path, strerror(e));
        hclose_abruptly(hf);
        return errno_status(e);
    }
    if (f.compression != no_compression && f.compression != gzip && f.compression != bgzf) {
        char *what = hts_format_description(&f);
        hk_log_error("%s:1: unsupported compression (%s): haplik reads plain text, gzip or BGZF "
                     "tables", t->path, what ? what : "unknown");
        free(what);
        hclose_abruptly(hf);
        return HK_E_INPUT;
    }
    if (is_binary(f.format)) {
        char *what = hts_format_description(&f);
        hk_log_error("%s:1: binary content (%s), not a haplik table", t->path,
                     what ? what : "unknown format");
        free(what);
        hclose_abruptly(hf);
        return HK_E_INPUT;
    }
    /* a plain file: read(2) into the line buffer, one copy fewer than through hFILE */
    struct stat st;
    if (f.compression == no_compression && strcmp(t->path, "-") && !stat(t->path, &st) &&
        S_ISREG(st.st_mode) && (t->fd = open(t->path, O_RDONLY | O_CLOEXEC)) >= 0) {
        if (fstat(t->fd, &st) || !S_ISREG(st.st_mode)) {
            close(t->fd);   /* replaced meanwhile: read on as it was opened */
            t->fd = -1;
        } else {
            (void)posix_fadvise(t->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
            hclose_abruptly(hf);
            return HK_OK;
        }
    }
    if (!(t->bg = bgzf_hopen(hf, "r"))) {
        const int e = errno ? errno : EIO;
        hk_log_error("%s: %s", t->path, strerror(e));
        hclose_abruptly(hf);
        return errno_status(e);
    }
    if (f.compression == bgzf) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (cores > MAX_THREADS) cores = MAX_THREADS;
        if (cores > 1) (void)bgzf_mt(t->bg, (int)cores, 256);
    }
    return HK_OK;
}

/* The format from the first line: a json table's ends with a comma (its
 * header's members), a tsv table's is its column names. */
static hk_status_t detect(hk_tread_t *t)
{
    if (!strncmp(t->s, "#haplik-likelihoods ", 20)) {
        hk_log_error("%s:1: a tsv table of an earlier haplik (with # lines), which merge no longer "
                     "reads: score its input again", t->path);
        return HK_E_INPUT;
    }
    if (!strncmp(t->s, "input\t", 6)) return hk_tread_tsv_start(t);
    t->format = t->n && t->s[t->n - 1] == ',' ? HK_OUT_JSON : HK_OUT_JSONL;
    if (t->format == HK_OUT_JSONL) {
        t->pending = 1;   /* the first line is a region or the summary */
        t->at = AT_REGIONS;
        return HK_OK;
    }
    /* {"format": ..., "decimals": N, */
    hk_status_t st = hk_tread_parse(t, "", t->s, t->n - 1, "}", &t->header_doc);
    if (st || (st = hk_tread_check_header(t, t->header_doc))) return st;
    t->header = t->header_doc;
    t->header_where = t->path;
    t->header_line = 1;
    t->at = AT_OPEN;
    return HK_OK;
}

hk_status_t hk_tread_open(const char *path, hk_tread_t **out)
{
    *out = NULL;
    hk_tread_t *t = calloc(1, sizeof *t);
    if (!t) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    hk_status_t st = HK_E_INPUT;
    t->path = path;
    t->spool = t->fd = -1;
    errno = 0;
    hFILE *hf = strcmp(path, "-") ? hopen(path, "r") : hdopen(dup(STDIN_FILENO), "r");
    if (!hf) {
        const int e = errno ? errno : EIO;
        hk_log_error("%s: %s", path, strerror(e));
        st = errno_status(e);
        goto fail;
    }
    if ((st = start(t, hf))) goto fail;
    int got;
    if ((st = hk_tread_getline(t, &got))) goto fail;
    if (!got) {
        hk_log_error("%s: empty file, not a haplik table", path);
        st = HK_E_INPUT;
        goto fail;
    }
    if ((st = detect(t))) goto fail;
    *out = t;
    return HK_OK;
fail:
    hk_tread_close(t);
    return st;
}

void hk_tread_close(hk_tread_t *t)
{
    if (!t) return;
    if (t->bg) bgzf_close(t->bg);
    if (t->fd >= 0) close(t->fd);
    if (t->spool >= 0) close(t->spool);
    free(t->buf);
    free(t->fixed);
    free(t->name);
    free(t->input);
    cJSON_Delete(t->header_doc);
    cJSON_Delete(t->ahead_doc);
    cJSON_Delete(t->summary_doc);
    free(t->sidecar);
    free(t);
}

const char *hk_tread_path(const hk_tread_t *t) { return t->path; }
int hk_tread_format(const hk_tread_t *t) { return t->format; }
long hk_tread_line(const hk_tread_t *t) { return t->line; }
uint64_t hk_tread_regions(const hk_tread_t *t) { return t->regions; }
int hk_tread_tsv_expected(const hk_tread_t *t) { return t->expected; }

const cJSON *hk_tread_summary(const hk_tread_t *t, const char **where, long *line)
{
    if (where) *where = t->summary_where;
    if (line) *line = t->summary_line;
    return t->summary;
}

/* A jsonl table's summary line, with the header: {"summary": {...}, "format": ...}. */
static hk_status_t jsonl_summary(hk_tread_t *t)
{
    cJSON *j;
    hk_status_t st = hk_tread_parse(t, "", t->s, t->n, "", &j);
    if (st) return st;
    cJSON_Delete(t->summary_doc);
    t->summary_doc = j;
    if ((st = hk_tread_check_header(t, j))) return st;
    if (!t->header) {
        t->header = j;
        t->header_where = t->path;
        t->header_line = t->line;
    }
    t->at = AT_END;
    return hk_tread_check_summary(t, cJSON_GetObjectItemCaseSensitive(j, "summary"), t->path,
                                  t->line);
}

/* Whether the line's first member is "summary" (a jsonl table's last line). */
static int is_summary_line(const char *s)
{
    s += strspn(s, " \t");
    if (*s++ != '{') return 0;
    s += strspn(s, " \t");
    return !strncmp(s, "\"summary\"", 9);
}

/* ---- the first table's header, read ahead ---- */

/* The last line of the plain regular file open at fd, into a new string *out. */
static hk_status_t last_line_of(const hk_tread_t *t, int fd, char **out)
{
    struct stat st;
    *out = NULL;
    if (fstat(fd, &st)) { hk_log_error("%s: %s", t->path, strerror(errno)); return errno_status(errno); }
    size_t want = 1u << 16;
    for (;;) {
        const size_t size = (size_t)st.st_size, n = want < size ? want : size;
        char *b = malloc(n + 1);
        if (!b) { hk_log_error("out of memory"); return HK_E_NOMEM; }
        if (pread(fd, b, n, (off_t)(size - n)) != (ssize_t)n) {
            hk_log_error("%s: %s", t->path, errno ? strerror(errno) : "file changed while read");
            free(b);
            return HK_E_INPUT;
        }
        size_t end = n;
        while (end && (b[end - 1] == '\n' || b[end - 1] == '\r')) end--;
        const char *nl = end ? memrchr(b, '\n', end) : NULL;
        if (nl || n == size) {
            const size_t from = nl ? (size_t)(nl - b) + 1 : 0;
            memmove(b, b + from, end - from);
            b[end - from] = '\0';
            *out = b;
            return HK_OK;
        }
        free(b);
        want *= 4;
    }
}

/* Copy what is left of t (buffered and unread) into an unlinked temporary
 * file and read on from there: a pipe cannot be read twice. A fault of the
 * copy is the run's (HK_E_RUNTIME), not the table's. */
static hk_status_t spool(hk_tread_t *t)
{
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/haplik-merge.XXXXXX", hk_outfile_temp_dir());
    const int fd = mkstemp(tmpl);
    if (fd < 0) {
        hk_log_error("%s: cannot make a temporary copy of the table: %s", tmpl, strerror(errno));
        return HK_E_RUNTIME;
    }
    unlink(tmpl);
    /* everything read so far is still in the buffer: only the first line was taken */
    t->pos = 0;
    if (t->cut) *t->cut = t->cut_byte;
    hk_status_t st;
    for (;;) {
        const char *p = t->buf;
        size_t n = t->len;
        while (n) {
            const ssize_t w = write(fd, p, n);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                hk_log_error("%s: cannot make a temporary copy of the table: %s", t->path,
                             strerror(w < 0 ? errno : ENOSPC));
                close(fd);
                return HK_E_RUNTIME;
            }
            p += w;
            n -= (size_t)w;
        }
        t->len = 0;
        if (t->eof) break;
        if ((st = fill(t))) { close(fd); return st; }
    }
    bgzf_close(t->bg);
    t->bg = NULL;
    hFILE *hf = lseek(fd, 0, SEEK_SET) == 0 ? hdopen(dup(fd), "r") : NULL;
    if (!hf || !(t->bg = bgzf_hopen(hf, "r"))) {
        const int e = errno;
        hk_log_error("%s: cannot read the temporary copy of the table: %s", t->path, strerror(e));
        if (hf) hclose_abruptly(hf);
        close(fd);
        return e == ENOMEM ? HK_E_NOMEM : HK_E_RUNTIME;
    }
    t->spool = fd;
    t->pos = t->len = 0;
    t->eof = 0;
    t->line = 0;
    int got;
    if ((st = hk_tread_getline(t, &got))) return st;
    if (!got) {
        hk_log_error("%s: the table changed while it was read", t->path);
        return HK_E_INPUT;
    }
    return HK_OK;
}

/* The last line of a compressed file, read through from the start, into a
 * new string *out (NULL when the file has none). */
static hk_status_t last_line_read(const hk_tread_t *t, char **out)
{
    hk_tread_t *u;
    *out = NULL;
    hk_status_t st = hk_tread_open(t->path, &u);
    if (st) return st;
    const char *last = NULL;
    int got;
    size_t n = 0;
    while (!(st = hk_tread_getline(u, &got)) && got) n = u->n, last = u->s;
    if (!st && last && !(*out = strndup(last, n))) {
        hk_log_error("out of memory");
        st = HK_E_NOMEM;
    }
    hk_tread_close(u);
    return st;
}

/* The header from the last line of a jsonl table into *out, its errors
 * muted: NULL when it is not there or not right (the caller then finds why
 * in turn). HK_E_NOMEM alone is returned, its message muted too. */
static hk_status_t header_ahead(hk_tread_t *t, cJSON **out)
{
    *out = NULL;
    const int plain = t->fd >= 0 || !bgzf_compression(t->bg);
    int fd = t->spool;
    if (fd < 0 && plain) fd = open(t->path, O_RDONLY);
    char *last;
    hk_status_t st = fd >= 0 && plain ? last_line_of(t, fd, &last) : last_line_read(t, &last);
    if (fd >= 0 && fd != t->spool) close(fd);
    if (st == HK_OK && last && is_summary_line(last)) {
        hk_tread_t probe = *t;
        probe.fixed = NULL;
        probe.fixed_told = 1;   /* told when the line is read in turn */
        cJSON *j;
        if (!(st = hk_tread_parse(&probe, "", last, strlen(last), "", &j)) &&
            (st = hk_tread_check_header(&probe, j)))
            cJSON_Delete(j);
        else if (!st)
            *out = j;
        free(probe.fixed);
    }
    free(last);
    return st == HK_E_NOMEM ? st : HK_OK;
}

hk_status_t hk_tread_header(hk_tread_t *t, int ahead, const cJSON **h, const char **where,
                            long *line)
{
    hk_status_t st;
    *h = NULL;
    if (!t->header && ahead && t->format == HK_OUT_JSONL) {
        struct stat sb;
        if (t->spool < 0 && (strcmp(t->path, "-") == 0 || stat(t->path, &sb) || !S_ISREG(sb.st_mode)) &&
            (st = spool(t)))
            return st;
        hk_log_mute_errors(1);
        cJSON *j;
        st = header_ahead(t, &j);
        hk_log_mute_errors(0);
        if (st) {
            hk_log_error("out of memory");
            return st;
        }
        if (!j) {
            /* read it in turn: the first fault is reported where it is */
            hk_tread_rec_t rec;
            int got;
            while (!(st = hk_tread_next(t, &rec, &got)) && got) continue;
            if (st) return st;
            hk_log_error("%s: the table changed while it was read", t->path);
            return HK_E_INPUT;
        }
        t->ahead_doc = j;
        t->header = j;
        t->header_where = t->path;
        t->header_line = 0;
    }
    if (where) *where = t->header_where;
    if (line) *line = t->header_line;
    *h = t->header;
    return HK_OK;
}

/* ---- records ---- */

/* A json or jsonl region line: checked, and handed over. */
static hk_status_t region(hk_tread_t *t, hk_tread_rec_t *rec)
{
    const char *s = t->s;
    size_t n = t->n;
    hk_scan_region_t r;
    hk_scan_fault_t f;
    int rc = hk_json_scan_region(s, n, &r, &f);
    if (rc == HK_SCAN_UTF8) {
        const hk_status_t st = hk_tread_repaired(t, s, &n);
        if (st) return st;
        s = t->fixed;
        rc = hk_json_scan_region(s, n, &r, &f);
    }
    if (rc != HK_SCAN_OK) {
        hk_tread_json_fault(t, &f, 0);
        return HK_E_INPUT;
    }
    if (r.index != t->regions) {
        hk_log_error("%s:%ld: not a haplik region: its index %llu is not its place (%llu)", t->path,
                     t->line, (unsigned long long)r.index, (unsigned long long)t->regions);
        return HK_E_INPUT;
    }
    t->regions++;
    t->pairs += r.n_reads * r.n_haps;
    *rec = (hk_tread_rec_t){ .index = r.index, .head = "", .rest = s + r.rest,
                             .rest_len = n - r.rest, .pairs = r.n_reads * r.n_haps };
    return HK_OK;
}

/* One line of a json table: *got 1 a record, 0 none (go on). */
static hk_status_t json_line(hk_tread_t *t, hk_tread_rec_t *rec, int *got)
{
    *got = 0;
    switch (t->at) {
    case AT_OPEN:
        if (strcmp(t->s, "\"regions\": [")) {
            hk_log_error("%s:%ld: expected \"regions\": [", t->path, t->line);
            return HK_E_INPUT;
        }
        t->at = AT_REGIONS;
        return HK_OK;
    case AT_REGIONS:
        if (!strcmp(t->s, "],")) {
            if (t->comma) {
                hk_log_error("%s:%ld: the last region line ends with a comma", t->path, t->line - 1);
                return HK_E_INPUT;
            }
            t->at = AT_SUMMARY;
            return HK_OK;
        }
        if (t->regions && !t->comma) {
            hk_log_error("%s:%ld: no comma after the region before", t->path, t->line);
            return HK_E_INPUT;
        }
        if ((t->comma = t->n && t->s[t->n - 1] == ',')) t->s[--t->n] = '\0';
        *got = 1;
        return region(t, rec);
    case AT_SUMMARY: {
        /* "summary": {...}} */
        cJSON *w;
        const hk_status_t st = hk_tread_parse(t, "{", t->s, t->n, "", &w);
        if (st) return st;
        cJSON_Delete(t->summary_doc);
        t->summary_doc = w;
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(w, "summary");
        if (!s) {
            hk_log_error("%s:%ld: expected the summary", t->path, t->line);
            return HK_E_INPUT;
        }
        t->at = AT_END;
        return hk_tread_check_summary(t, s, t->path, t->line);
    }
    default:
        hk_log_error("%s:%ld: unexpected line after the summary", t->path, t->line);
        return HK_E_INPUT;
    }
}

hk_status_t hk_tread_next(hk_tread_t *t, hk_tread_rec_t *rec, int *got)
{
    hk_status_t st;
    for (;;) {
        int line = 1;
        *got = 0;
        if (t->pending) t->pending = 0;
        else if ((st = hk_tread_getline(t, &line))) return st;
        if (!line) {
            if (t->format == HK_OUT_TSV) return hk_tread_tsv_end(t);
            if (t->at != AT_END) {
                hk_log_error("%s:%ld: truncated table (no summary)", t->path, t->line);
                return HK_E_INPUT;
            }
            return HK_OK;
        }
        if (t->format == HK_OUT_TSV) {
            *got = 1;
            st = hk_tread_tsv_row(t, rec);
        } else if (t->format == HK_OUT_JSON) {
            st = json_line(t, rec, got);
        } else if (t->at == AT_END) {
            hk_log_error("%s:%ld: unexpected line after the summary", t->path, t->line);
            st = HK_E_INPUT;
        } else if (is_summary_line(t->s)) {
            st = jsonl_summary(t);
        } else {
            *got = 1;
            st = region(t, rec);
        }
        if (st) {
            *got = 0;
            return st;
        }
        if (*got) return HK_OK;
    }
}
