/* hk_split.c - see hk_split.h. */
#include "hk_split.h"
#include "hk_cli.h"
#include "hk_log.h"
#include "hk_reader.h"
#include "hk_source.h"
#include "hk_threads.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/kstring.h>

#define SPLIT_BATCH_PAIRS (1u << 16)

typedef struct {
    long  first, last;   /* the input lines that hold the region */
    long  line;          /* the line its table reports (a "# source-line" tag may set it) */
    char *name;          /* its region tag, NULL for none */
    int   shard;
} split_region_t;

struct hk_split_plan {
    char           *path;
    int             format;      /* HK_FMT_* found by pass 1 */
    int             n_shards;
    split_region_t *reg;
    size_t          n_reg, m_reg;
    struct stat     st;          /* the input as pass 1 saw it */
};

size_t hk_split_n_regions(const hk_split_plan_t *p) { return p->n_reg; }

void hk_split_free(hk_split_plan_t *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n_reg; i++) free(p->reg[i].name);
    free(p->reg);
    free(p->path);
    free(p);
}

/* Record the regions of b; their cells go to cells[]. HK_OK or HK_E_NOMEM. */
HK_RESULT_USED static hk_status_t add_regions(hk_split_plan_t *p, const hk_batch_t *b, uint64_t **cells)
{
    if (p->n_reg + b->n_regions > p->m_reg) {
        size_t cap = 2 * (p->n_reg + b->n_regions);
        split_region_t *r = realloc(p->reg, cap * sizeof *r);
        uint64_t *c = r ? realloc(*cells, cap * sizeof *c) : NULL;
        if (r) p->reg = r;
        if (!c) return HK_E_NOMEM;
        *cells = c;
        p->m_reg = cap;
    }
    for (size_t i = 0; i < b->n_regions; i++) {
        const hk_region_t *rg = &b->regions[i];
        split_region_t *s = &p->reg[p->n_reg];
        *s = (split_region_t){ .first = rg->first_line, .last = rg->last_line, .line = rg->line };
        if (rg->name && !(s->name = strdup(rg->name))) return HK_E_NOMEM;
        (*cells)[p->n_reg++] = rg->cells;
    }
    return HK_OK;
}

/* Region i goes to the shard that holds the midpoint of its cells. */
static void assign_shards(hk_split_plan_t *p, const uint64_t *cells)
{
    uint64_t total = 0, before = 0;
    for (size_t i = 0; i < p->n_reg; i++) total += cells[i];
    for (size_t i = 0; i < p->n_reg; i++) {
        long double mid = (long double)before + (long double)cells[i] / 2;
        int k = total ? (int)(mid * p->n_shards / (long double)total) : 0;
        p->reg[i].shard = k >= p->n_shards ? p->n_shards - 1 : k;
        before += cells[i];
    }
}

hk_status_t hk_split_plan(const char *path, int format, const hk_read_opts_t *ro, int n_shards,
                          hk_split_plan_t **out)
{
    hk_status_t status = HK_E_NOMEM;
    *out = NULL;
    hk_split_plan_t *p = calloc(1, sizeof *p);
    uint64_t *cells = NULL;
    hk_reader_t *rd = NULL;
    hk_batch_t b;
    hk_batch_init(&b);
    if (!p || !(p->path = strdup(path))) { hk_log_error("out of memory"); goto fail; }
    p->n_shards = n_shards;
    status = HK_E_INPUT;
    /* read twice: a pipe, FIFO or process substitution would show pass 2 nothing */
    if (stat(path, &p->st)) {
        hk_log_error("%s: %s", path, strerror(errno));
        status = hk_status_of_errno(errno);
        goto fail;
    }
    if (!S_ISREG(p->st.st_mode)) {
        hk_log_error("%s: split reads its INPUT twice, so it must be a regular file, not a "
                     "pipe, FIFO or device (write the stream to a file first)", path);
        goto fail;
    }
    /* raw rules: qualities and letters pass unchanged, nothing is refused
     * that a shard could not carry as it is */
    const hk_seq_rules_t raw = { .min_base_quality = 0, .gcp = -1, .unknown_as_n = 1 };
    if ((status = hk_reader_open(path, format, raw, ro, &rd))) goto fail;
    status = HK_E_INPUT;
    /* the reader's threads: a plan of a dump of gigabytes is a pass at the
     * speed of `score`'s reading, not of one core */
    hk_reader_set_threads(rd, (int)sysconf(_SC_NPROCESSORS_ONLN));
    size_t got;
    hk_status_t st;
    while (!(st = hk_reader_next(rd, &b, SPLIT_BATCH_PAIRS, &got)) && got > 0) {
        if ((status = add_regions(p, &b, &cells))) {
            hk_log_error("out of memory");
            goto fail;
        }
        hk_batch_clear(&b);
    }
    if (st) { status = st; goto fail; }
    p->format = hk_reader_format(rd);
    hk_reader_close(rd);
    hk_batch_free(&b);
    assign_shards(p, cells);
    free(cells);
    *out = p;
    return HK_OK;
fail:
    hk_reader_close(rd);
    hk_batch_free(&b);
    free(cells);
    hk_split_free(p);
    return status;
}

/* ---- pass 2 ---- */

typedef struct {
    hk_split_plan_t *p;
    FILE           **out;
    const char *const *names;
    int              cur;        /* shard being written, -1 before the first line */
    char            *header;     /* the input's results-file header line, if seen */
    const char      *std_header; /* the format's header line (NULL: it has none) */
    const char      *prefix;     /* how its header line starts */
    char            *source;     /* the input's name, escaped, for HK_SPLIT_SOURCE_TAG */
    int              source_due; /* the first shard's tag is still to be written */
} copier_t;

/* The escaped text of a "# source-input" tag naming name[0, n). */
static char *source_text(const char *name, size_t n)
{
    char *out = malloc(2 * n + 1), *p = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        const char c = name[i];
        if (c == '\\' || c == '\n' || c == '\r') *p++ = '\\';
        *p++ = c == '\n' ? 'n' : c == '\r' ? 'r' : c;
    }
    *p = '\0';
    return out;
}

HK_RESULT_USED static hk_status_t put_source(const copier_t *c, FILE *fp)
{
    return fprintf(fp, HK_SPLIT_SOURCE_TAG "%s\n", c->source) < 0 ? HK_E_RUNTIME : HK_OK;
}

HK_RESULT_USED static hk_status_t put_line(FILE *fp, const char *s, size_t n)
{
    return (fwrite(s, 1, n, fp) != n || putc('\n', fp) == EOF) ? HK_E_RUNTIME : HK_OK;
}

/* Start writing shard k before region (or gap) i: what it needs to read the
 * following lines on its own. Shard 0's first line is the input's first. */
HK_RESULT_USED static hk_status_t enter_shard(copier_t *c, int k, const split_region_t *next)
{
    FILE *fp = c->out[k];
    const int first_shard = c->cur < 0;
    c->cur = k;
    /* the first shard's tag: after the input's header, once an old tag is read */
    if (first_shard) return c->source_due = 1, HK_OK;
    const char *h = c->header ? c->header : c->std_header;
    if (h && put_line(fp, h, strlen(h))) return HK_E_RUNTIME;
    if (put_source(c, fp)) return HK_E_RUNTIME;
    if (next && next->name && fprintf(fp, "# region %s\n", next->name) < 0) return HK_E_RUNTIME;
    return HK_OK;
}

/* Shards that got no line: a results-file header (they hold no region).
 * The shard whose write failed, or -1. */
static int finish_empty_shards(copier_t *c, const int *written)
{
    for (int k = 0; k < c->p->n_shards; k++) {
        const char *h = c->header ? c->header : c->std_header;
        if (written[k]) continue;
        if ((h && put_line(c->out[k], h, strlen(h))) || put_source(c, c->out[k])) return k;
    }
    return -1;
}

static int input_changed(const hk_split_plan_t *p)
{
    struct stat st;
    if (stat(p->path, &st)) return 1;
    return st.st_dev != p->st.st_dev || st.st_ino != p->st.st_ino ||
           st.st_size != p->st.st_size || st.st_mtim.tv_sec != p->st.st_mtim.tv_sec ||
           st.st_mtim.tv_nsec != p->st.st_mtim.tv_nsec;
}

hk_status_t hk_split_write(hk_split_plan_t *p, FILE **out, const char *const *names)
{
    copier_t c = { .p = p, .out = out, .names = names, .cur = -1 };
    c.std_header = hk_reader_format_header(p->format, &c.prefix);
    int *written = calloc((size_t)p->n_shards, sizeof *written);
    kstring_t line = KS_INITIALIZE;
    BGZF *in = NULL;
    hk_status_t status = HK_E_NOMEM;
    int wfail = -1, got;
    if (!written) { hk_log_error("out of memory"); goto done; }
    status = HK_E_INPUT;
    hFILE *hf = NULL;
    errno = 0;
    if (input_changed(p) || !(hf = hk_source_hopen(p->path)) || !(in = bgzf_hopen(hf, "r"))) {
        const int e = errno;
        if (hf && !in) hclose_abruptly(hf);
        if (hk_status_of_errno(e) != HK_E_INPUT) {   /* out of files or memory: the run's */
            hk_log_error("%s: cannot open: %s", p->path, strerror(e));
            status = hk_status_of_errno(e);
        } else {
            hk_log_error("%s: changed or went away while being split", p->path);
        }
        goto done;
    }
    long ln = 0;
    size_t ri = 0;   /* the region holding line ln, or the next one */
    if (!(c.source = source_text(p->path, strlen(p->path)))) {
        hk_log_error("out of memory");
        status = HK_E_NOMEM;
        goto done;
    }
    while ((got = bgzf_getline(in, '\n', &line)) >= 0) {
        ln++;
        /* a shard's own tag (after its header): its shards keep the name it gives */
        if (ln <= 2 && !strncmp(line.s, HK_SPLIT_SOURCE_TAG, strlen(HK_SPLIT_SOURCE_TAG))) {
            free(c.source);
            if (line.l && line.s[line.l - 1] == '\r') line.s[--line.l] = '\0';   /* a Windows line end */
            if (!(c.source = strdup(line.s + strlen(HK_SPLIT_SOURCE_TAG)))) {
                hk_log_error("out of memory");
                status = HK_E_NOMEM;
                goto done;
            }
            continue;
        }
        while (ri < p->n_reg && p->reg[ri].last < ln) ri++;
        const split_region_t *rg = ri < p->n_reg ? &p->reg[ri] : NULL;
        const int k = rg ? rg->shard : p->n_reg ? p->reg[p->n_reg - 1].shard : 0;
        if (k != c.cur && enter_shard(&c, k, rg)) { wfail = k; break; }
        written[k] = 1;
        if (!c.header && c.prefix && !strncmp(line.s, c.prefix, strlen(c.prefix)) &&
            !(c.header = strdup(line.s))) {
            hk_log_error("out of memory");
            status = HK_E_NOMEM;
            goto done;
        }
        const int is_header = ln == 1 && c.prefix && !strncmp(line.s, c.prefix, strlen(c.prefix));
        if (c.source_due && !is_header) {
            c.source_due = 0;
            if (put_source(&c, out[k])) { wfail = k; break; }
        }
        if (rg && ln == rg->first && fprintf(out[k], "# source-line %ld\n", rg->line) < 0)
            { wfail = k; break; }
        if (put_line(out[k], line.s, line.l)) { wfail = k; break; }
    }
    if (wfail < 0 && c.source_due && put_source(&c, out[c.cur])) wfail = c.cur;
    if (wfail < 0) wfail = finish_empty_shards(&c, written);
    if (wfail >= 0) {
        hk_log_error("%s: write failed: %s", names[wfail], strerror(errno));
        status = HK_E_RUNTIME;
        goto done;
    }
    if (got < -1) { hk_log_error("%s:%ld: read error", p->path, ln + 1); goto done; }
    /* the same file, the same lines: pass 2 saw every region pass 1 counted */
    if ((p->n_reg && ln < p->reg[p->n_reg - 1].last) || input_changed(p)) {
        hk_log_error("%s: changed while being split (pass 1 found %zu regions)", p->path,
                     p->n_reg);
        goto done;
    }
    status = HK_OK;
done:
    if (in) bgzf_close(in);
    ks_free(&line);
    free(c.header);
    free(c.source);
    free(written);
    return status;
}

/* ---- plans: the shards' bytes, read in place ---- */

#define PLAN_MAGIC "# haplik split plan 1"

/* The modification time in nanoseconds from 1970, negative before it; a
 * time past the range of 64 bits (before 1677, after 2262) wraps round
 * (two's complement), the same when the plan is written and when it is
 * checked. */
static long long mtime_ns(const struct stat *st)
{
    const unsigned long long ns = (unsigned long long)(long long)st->st_mtim.tv_sec * 1000000000ULL +
                                  (unsigned long long)st->st_mtim.tv_nsec;
    return ns <= (unsigned long long)LLONG_MAX ? (long long)ns : -(long long)(~ns) - 1;
}

/* Shard k's first line, as hk_split_write cuts: after the last region of the
 * shards before it (the lines between two regions go with the one after);
 * past the end (EOF_LINE) when no region follows, as the lines after the
 * last region stay with its shard. first[n_shards] is past the end too;
 * last[k] is the index of the last region before shard k's start, or -1. */
#define EOF_LINE LONG_MAX
static void shard_first_lines(const hk_split_plan_t *p, long *first, long *last_before)
{
    long after = 1;
    long seen = -1;
    size_t i = 0;
    first[0] = 1;
    last_before[0] = -1;
    for (int k = 1; k <= p->n_shards; k++) {
        while (i < p->n_reg && p->reg[i].shard < k) { after = p->reg[i].last + 1; seen = (long)i++; }
        first[k] = i < p->n_reg ? after : EOF_LINE;
        last_before[k] = seen;
    }
}

/* Lines are found by counting line ends, on all cores: the file is cut into
 * one range per thread, each counts its line ends, then the range that holds
 * each wanted line is read again up to it (a 6 GB dump is read about twice
 * from the page cache instead of once on one core). */
#define COUNT_CHUNK ((size_t)1 << 20)

typedef struct {
    int        fd;
    long long  lo, hi;      /* the range */
    long       skip;        /* to find a line: the line ends of the range before it; -1: count */
    long       count;       /* line ends counted */
    long long  at;          /* where the line found starts (hi: not found) */
    int        err;         /* errno of a failure, 0 if none */
    int        target;      /* the index in first[] it is for */
} count_job_t;

/* Count the range's line ends, or, with skip >= 0, find where the line after
 * its skip+1-th line end starts. */
static void *count_range(void *arg)
{
    count_job_t *j = arg;
    char *buf = malloc(COUNT_CHUNK);
    long n = 0;
    j->at = j->hi;
    j->err = buf ? 0 : ENOMEM;
    for (long long pos = j->lo; buf && pos < j->hi && j->at == j->hi;) {
        const size_t want = (size_t)(j->hi - pos) < COUNT_CHUNK ? (size_t)(j->hi - pos) : COUNT_CHUNK;
        const ssize_t got = pread(j->fd, buf, want, (off_t)pos);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) { j->err = got < 0 ? errno : EIO; break; }
        for (const char *q = buf, *e = buf + got; (q = memchr(q, '\n', (size_t)(e - q))); q++)
            if (n++ == j->skip) { j->at = pos + (q - buf) + 1; break; }
        pos += got;
    }
    j->count = n;
    free(buf);
    return NULL;
}

/* The byte offset of each line first[0..n) (non-decreasing; EOF_LINE: the
 * end) of the plain file fd of size bytes, and in *n_lines the lines it has.
 * HK_OK, or HK_E_RUNTIME on a read error or without memory (errno set). */
HK_RESULT_USED static hk_status_t line_offsets(int fd, long long size, const long *first, int n, long long *off,
                                              long *n_lines)
{
    int nt = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nt < 1) nt = 1;
    if (nt > 64) nt = 64;
    if ((long long)nt * (long long)COUNT_CHUNK > size) nt = (int)(size / (long long)COUNT_CHUNK) + 1;
    count_job_t *jobs = calloc((size_t)(nt > n ? nt : n), sizeof *jobs);
    long *ends = calloc((size_t)nt + 1, sizeof *ends);   /* ends[r]: line ends before range r */
    hk_status_t rc = HK_E_RUNTIME;
    if (!jobs || !ends) { errno = ENOMEM; goto done; }
    for (int r = 0; r < nt; r++)
        jobs[r] = (count_job_t){ .fd = fd, .lo = size * r / nt, .hi = size * (r + 1) / nt, .skip = -1 };
    hk_threads_run(count_range, jobs, sizeof *jobs, nt);
    for (int r = 0; r < nt; r++) {
        if (jobs[r].err) { errno = jobs[r].err; goto done; }
        ends[r + 1] = ends[r] + jobs[r].count;
    }
    unsigned char last = '\n';
    if (size > 0 && pread(fd, &last, 1, (off_t)(size - 1)) != 1) goto done;
    *n_lines = ends[nt] + (last != '\n');
    /* line L starts after the (L-1)-th line end, found in the range that holds it */
    int m = 0;
    for (int t = 0; t < n; t++) {
        if (first[t] == 1) { off[t] = 0; continue; }
        if (first[t] == EOF_LINE || first[t] - 1 > ends[nt]) { off[t] = size; continue; }
        int r = 0;
        while (ends[r + 1] < first[t] - 1) r++;
        jobs[m++] = (count_job_t){ .fd = fd, .lo = size * r / nt, .hi = size * (r + 1) / nt,
                                   .skip = first[t] - 2 - ends[r], .target = t };
    }
    if (m) hk_threads_run(count_range, jobs, sizeof *jobs, m);
    for (int k = 0; k < m; k++) {
        if (jobs[k].err) { errno = jobs[k].err; goto done; }
        off[jobs[k].target] = jobs[k].at;
    }
    rc = HK_OK;
done:
    free(jobs);
    free(ends);
    return rc;
}

hk_status_t hk_split_write_plan(const hk_split_plan_t *p, FILE *fp, const char *name)
{
    const int n = p->n_shards;
    long *first = malloc((size_t)(n + 1) * sizeof *first);
    long *before = malloc((size_t)(n + 1) * sizeof *before);
    long long *off = malloc((size_t)(n + 1) * sizeof *off);
    hk_status_t status = HK_E_RUNTIME;
    int fd = -1;
    long n_lines = 0;
    unsigned char magic[2] = { 0, 0 };
    if (!first || !before || !off) { hk_log_error("out of memory"); goto done; }
    if ((fd = open(p->path, O_RDONLY | O_CLOEXEC)) < 0) {
        hk_log_error("%s: %s", p->path, strerror(errno));
        goto done;
    }
    if (pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        hk_log_error("%s:1: a plan reads parts of a plain text file in place; this one is "
                     "compressed (gzip or BGZF): cut it with `haplik split INPUT OUT...` instead",
                     p->path);
        status = HK_E_INPUT;
        goto done;
    }
    shard_first_lines(p, first, before);
    if (line_offsets(fd, (long long)p->st.st_size, first, n + 1, off, &n_lines)) {
        hk_log_error("%s: read error: %s", p->path, strerror(errno));
        goto done;
    }
    if (input_changed(p)) {
        hk_log_error("%s: changed while being planned", p->path);
        status = HK_E_INPUT;
        goto done;
    }
    fprintf(fp, PLAN_MAGIC "\n#input\t%lld\t%lld\t%s\t%d\n", (long long)p->st.st_size,
            mtime_ns(&p->st), hk_reader_format_name(p->format), n);
    size_t r = 0;
    for (int k = 0; k < n; k++) {
        size_t r0 = r;
        while (r < p->n_reg && p->reg[r].shard == k) r++;
        const char *tag = before[k] >= 0 ? p->reg[before[k]].name : NULL;
        fprintf(fp, "%d\t%lld\t%lld\t%ld\t%zu\t%s\n", k + 1, off[k], off[k + 1],
                first[k] == EOF_LINE ? n_lines + 1 : first[k], r - r0, tag ? tag : "");
    }
    if (fflush(fp) || ferror(fp)) {
        hk_log_error("%s: write failed: %s", name, strerror(errno));
        goto done;
    }
    status = HK_OK;
done:
    if (fd >= 0) close(fd);
    free(first);
    free(before);
    free(off);
    return status;
}

void hk_split_part_free(hk_split_part_t *part) { free(part->region); part->region = NULL; }

__attribute__((format(printf, 3, 4)))
static hk_status_t plan_error(const char *path, long line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hk_log_error("%s:%ld: %s", path, line, msg);
    return HK_E_INPUT;
}

/* The next tab-separated integer of *s (advanced past it and its tab). */
HK_RESULT_USED static hk_status_t plan_int(char **s, long long lo, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(*s, &end, 10);
    if (errno || end == *s || (*end != '\t' && *end != '\0') || *v < lo) return HK_E_INPUT;
    *s = *end ? end + 1 : end;
    return HK_OK;
}

hk_status_t hk_split_load_part(const char *plan_path, int part, const char *input, hk_split_part_t *out)
{
    *out = (hk_split_part_t){ 0 };
    FILE *fp = fopen(plan_path, "r");
    kstring_t line = KS_INITIALIZE;
    hk_status_t status = HK_E_INPUT;
    int found = 0;
    long ln = 0;
    long long size = -1, mtime = 0, n_parts = -1;
    struct stat st;
    if (!fp) {
        hk_log_error("%s: %s", plan_path, strerror(errno));
        return hk_status_of_errno(errno);
    }
    while (!found) {
        line.l = 0;
        if (kgetline(&line, (kgets_func *)fgets, fp) < 0) break;
        ln++;
        char *s = line.s;
        if (line.l && s[line.l - 1] == '\r') s[--line.l] = '\0';
        if (ln == 1) {
            if (strcmp(s, PLAN_MAGIC)) { status = plan_error(plan_path, ln, "not a haplik split plan "
                                                             "(expected '" PLAN_MAGIC "')"); goto done; }
            continue;
        }
        if (!strncmp(s, "#input\t", 7)) {
            s += 7;
            char *fmt;
            if (plan_int(&s, 0, &size) || plan_int(&s, LLONG_MIN, &mtime) || !(fmt = s) ||
                !(s = strchr(s, '\t')) || (*s++ = '\0', plan_int(&s, 1, &n_parts)) ||
                (out->format = hk_reader_parse_format(fmt)) < 0) {
                status = plan_error(plan_path, ln, "bad #input line (expected SIZE, MTIME_NS, "
                                    "FORMAT and PARTS, tab-separated)");
                goto done;
            }
            continue;
        }
        if (s[0] == '#' || s[0] == '\0') continue;
        long long k, start, end, first, regions;
        if (size < 0) { status = plan_error(plan_path, ln, "a part before the #input line"); goto done; }
        if (plan_int(&s, 1, &k) || plan_int(&s, 0, &start) || plan_int(&s, start, &end) ||
            plan_int(&s, 1, &first) || plan_int(&s, 0, &regions) || end > size || first > LONG_MAX) {
            status = plan_error(plan_path, ln, "bad part (expected PART, START, END, FIRST_LINE, "
                                "REGIONS and a region tag, tab-separated, within the input's size)");
            goto done;
        }
        if (k != part) continue;
        *out = (hk_split_part_t){ .start = start, .end = end, .first_line = (long)first,
                                  .format = out->format };
        if (*s && !(out->region = strdup(s))) { hk_log_error("out of memory"); status = HK_E_NOMEM; goto done; }
        found = 1;
    }
    if (ferror(fp)) {
        hk_log_error("%s: read error: %s", plan_path, strerror(errno));
        status = HK_E_RUNTIME;
        goto done;
    }
    if (!found) {
        status = plan_error(plan_path, ln, "no part %d (the plan has %lld)", part, n_parts < 0 ? 0 : n_parts);
        goto done;
    }
    if (stat(input, &st)) {
        hk_log_error("%s: %s", input, strerror(errno));
        status = hk_status_of_errno(errno);
        goto done;
    }
    if (st.st_size != size || mtime_ns(&st) != mtime) {
        hk_log_error("%s: not the file %s was made for (size or modification time differ): "
                     "plan it again with `haplik split --plan`", input, plan_path);
        goto done;
    }
    status = HK_OK;
done:
    if (status) hk_split_part_free(out);
    ks_free(&line);
    fclose(fp);
    return status;
}
