/* hk_split.c - see hk_split.h. */
#include "hk_split.h"
#include "hk_cli.h"
#include "hk_log.h"
#include "hk_reader.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <htslib/bgzf.h>
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

/* Record the regions of b; their cells go to cells[]. 0, or -1 out of memory. */
static int add_regions(hk_split_plan_t *p, const hk_batch_t *b, uint64_t **cells)
{
    if (p->n_reg + b->n_regions > p->m_reg) {
        size_t cap = 2 * (p->n_reg + b->n_regions);
        split_region_t *r = realloc(p->reg, cap * sizeof *r);
        uint64_t *c = r ? realloc(*cells, cap * sizeof *c) : NULL;
        if (r) p->reg = r;
        if (!c) return -1;
        *cells = c;
        p->m_reg = cap;
    }
    for (size_t i = 0; i < b->n_regions; i++) {
        const hk_region_t *rg = &b->regions[i];
        split_region_t *s = &p->reg[p->n_reg];
        *s = (split_region_t){ .first = rg->first_line, .last = rg->last_line, .line = rg->line };
        if (rg->name && !(s->name = strdup(rg->name))) return -1;
        (*cells)[p->n_reg++] = rg->cells;
    }
    return 0;
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

hk_split_plan_t *hk_split_plan(const char *path, int format, int n_shards, int *status)
{
    *status = HK_EXIT_RUNTIME;
    hk_split_plan_t *p = calloc(1, sizeof *p);
    uint64_t *cells = NULL;
    hk_reader_t *rd = NULL;
    hk_batch_t b;
    hk_batch_init(&b);
    if (!p || !(p->path = strdup(path))) { hk_log_error("out of memory"); goto fail; }
    p->n_shards = n_shards;
    *status = HK_EXIT_INPUT;
    /* read twice: a pipe, FIFO or process substitution would show pass 2 nothing */
    if (stat(path, &p->st)) { hk_log_error("%s: %s", path, strerror(errno)); goto fail; }
    if (!S_ISREG(p->st.st_mode)) {
        hk_log_error("%s: split reads its INPUT twice, so it must be a regular file, not a "
                     "pipe, FIFO or device (write the stream to a file first)", path);
        goto fail;
    }
    /* raw rules: qualities and letters pass unchanged, nothing is refused
     * that a shard could not carry as it is */
    const hk_seq_rules_t raw = { .min_base_quality = 0, .gcp = -1, .unknown_as_n = 1 };
    if (!(rd = hk_reader_open(path, format, raw))) goto fail;
    size_t got;
    hk_status_t st;
    while (!(st = hk_reader_next(rd, &b, SPLIT_BATCH_PAIRS, &got)) && got > 0) {
        if (add_regions(p, &b, &cells)) {
            hk_log_error("out of memory");
            *status = HK_EXIT_RUNTIME;
            goto fail;
        }
        hk_batch_clear(&b);
    }
    if (st) { *status = hk_status_exit(st); goto fail; }
    p->format = hk_reader_format(rd);
    hk_reader_close(rd);
    hk_batch_free(&b);
    assign_shards(p, cells);
    free(cells);
    *status = 0;
    return p;
fail:
    hk_reader_close(rd);
    hk_batch_free(&b);
    free(cells);
    hk_split_free(p);
    return NULL;
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
} copier_t;

static int put_line(FILE *fp, const char *s, size_t n)
{
    return (fwrite(s, 1, n, fp) != n || putc('\n', fp) == EOF) ? -1 : 0;
}

/* Start writing shard k before region (or gap) i: what it needs to read the
 * following lines on its own. Shard 0's first line is the input's first. */
static int enter_shard(copier_t *c, int k, const split_region_t *next)
{
    FILE *fp = c->out[k];
    const int first_shard = c->cur < 0;
    c->cur = k;
    if (first_shard) return 0;
    const char *h = c->header ? c->header : c->std_header;
    if (h && put_line(fp, h, strlen(h))) return -1;
    if (next && next->name && fprintf(fp, "# region %s\n", next->name) < 0) return -1;
    return 0;
}

/* Shards that got no line: a results-file header (they hold no region). */
static int finish_empty_shards(copier_t *c, const int *written)
{
    for (int k = 0; k < c->p->n_shards; k++) {
        const char *h = c->header ? c->header : c->std_header;
        if (written[k] || !h) continue;
        if (put_line(c->out[k], h, strlen(h))) return k;
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

int hk_split_write(hk_split_plan_t *p, FILE **out, const char *const *names)
{
    copier_t c = { .p = p, .out = out, .names = names, .cur = -1 };
    c.std_header = hk_reader_format_header(p->format, &c.prefix);
    int *written = calloc((size_t)p->n_shards, sizeof *written);
    kstring_t line = KS_INITIALIZE;
    BGZF *in = NULL;
    int status = HK_EXIT_RUNTIME, wfail = -1, got;
    if (!written) { hk_log_error("out of memory"); goto done; }
    status = HK_EXIT_INPUT;
    if (input_changed(p) || !(in = bgzf_open(p->path, "r"))) {
        hk_log_error("%s: changed or went away while being split", p->path);
        goto done;
    }
    long ln = 0;
    size_t ri = 0;   /* the region holding line ln, or the next one */
    while ((got = bgzf_getline(in, '\n', &line)) >= 0) {
        ln++;
        while (ri < p->n_reg && p->reg[ri].last < ln) ri++;
        const split_region_t *rg = ri < p->n_reg ? &p->reg[ri] : NULL;
        const int k = rg ? rg->shard : p->n_reg ? p->reg[p->n_reg - 1].shard : 0;
        if (k != c.cur && enter_shard(&c, k, rg)) { wfail = k; break; }
        written[k] = 1;
        if (!c.header && c.prefix && !strncmp(line.s, c.prefix, strlen(c.prefix)) &&
            !(c.header = strdup(line.s))) {
            hk_log_error("out of memory");
            status = HK_EXIT_RUNTIME;
            goto done;
        }
        if (rg && ln == rg->first && fprintf(out[k], "# source-line %ld\n", rg->line) < 0)
            { wfail = k; break; }
        if (put_line(out[k], line.s, line.l)) { wfail = k; break; }
    }
    if (wfail < 0) wfail = finish_empty_shards(&c, written);
    if (wfail >= 0) {
        hk_log_error("%s: write failed: %s", names[wfail], strerror(errno));
        status = HK_EXIT_RUNTIME;
        goto done;
    }
    if (got < -1) { hk_log_error("%s:%ld: read error", p->path, ln + 1); goto done; }
    /* the same file, the same lines: pass 2 saw every region pass 1 counted */
    if ((p->n_reg && ln < p->reg[p->n_reg - 1].last) || input_changed(p)) {
        hk_log_error("%s: changed while being split (pass 1 found %zu regions)", p->path,
                     p->n_reg);
        goto done;
    }
    status = 0;
done:
    if (in) bgzf_close(in);
    ks_free(&line);
    free(c.header);
    free(written);
    return status;
}
