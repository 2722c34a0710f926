/* cmd_shard.c - `haplik shard`: cut a genome (its .fai) into N BED files of equal length.
 *
 * The contigs of the .fai, in file order, are laid end to end; shard k (1-based) takes
 * the stretch [B(k-1), B(k)) of that line, where B(k) = round(k * T / N) (T = total
 * length) moved to the nearest allowed cut point: a contig end, or a multiple of the
 * window from a contig's start. So long contigs are cut into windows, short ones stay
 * whole where that costs little, every base lands in exactly one shard, and shards are
 * contiguous in genome order (the merged likelihood table keeps that order).
 *
 * A cut moves a boundary by at most window/2, so shard lengths differ from T/N by at most
 * one window (and a base of rounding); the window is lowered to T/(200 N) or below, to a
 * round 1, 2 or 5 x 10^k, when needed, so they stay within 1% of each other.
 * Always N files (some empty when N exceeds the genome length), each written to a
 * temporary file and renamed into place (hk_outfile), BED 0-based half-open.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/kstring.h>

#include "hk_cli.h"
#include "hk_log.h"
#include "hk_outfile.h"
#include "hk_source.h"

#define SHARD_DEFAULT_WINDOW 100000 /* bp: cut grid inside long contigs */
#define SHARD_MAX_N          1000000
#define SHARD_MIN_DIGITS     4      /* OUTPREFIX0001.bed */

typedef struct {
    char   *name;  /* contig name (column 1 of the .fai), owned */
    int64_t len;   /* length in bases (column 2), > 0 */
    int64_t start; /* offset of the contig on the concatenated genome */
} shard_contig_t;

typedef struct {
    shard_contig_t *c;  /* contigs in .fai order */
    size_t          n, m;
    int64_t         total; /* sum of lengths */
} shard_genome_t;

static void shard_genome_free(shard_genome_t *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->n; i++) free(g->c[i].name);
    free(g->c);
    g->c = NULL;
    g->n = g->m = 0;
}

/* Strict decimal integer: the whole string, no sign games, in [lo, hi]. */
HK_RESULT_USED static hk_status_t shard_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (!s || !*s || *s == ' ' || *s == '\t' || *s == '+' || (*s == '-' && lo >= 0)) return HK_E_INPUT;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi) return HK_E_INPUT;
    *out = (int64_t)v;
    return HK_OK;
}

/* Read the .fai: NAME<TAB>LENGTH<TAB>... per line. HK_OK, or HK_E_INPUT
 * (logged with file:line; HK_E_NOMEM: out of memory). */
HK_RESULT_USED static hk_status_t shard_read_fai(const char *fn, shard_genome_t *g)
{
    hFILE *hf = hk_source_hopen(fn);
    BGZF *fp = hf ? bgzf_hopen(hf, "r") : NULL; /* plain text, gzip or BGZF */
    if (hf && !fp) hclose_abruptly(hf);
    if (!fp) {
        hk_log_error("%s: cannot open: %s", fn, strerror(errno ? errno : EIO));
        return HK_E_INPUT;
    }
    kstring_t line = KS_INITIALIZE;
    int64_t lineno = 0;
    int ret;
    hk_status_t rc = HK_E_INPUT;
    while ((ret = bgzf_getline(fp, '\n', &line)) >= 0) {
        lineno++;
        if (line.l && line.s[line.l - 1] == '\r') line.s[--line.l] = '\0';
        if (line.l == 0) continue; /* tolerate blank lines (a trailing one, mostly) */
        char *tab1 = strchr(line.s, '\t');
        if (!tab1) {
            hk_log_error("%s:%" PRId64 ": expected NAME<TAB>LENGTH<TAB>... (a .fai line), found no tab", fn, lineno);
            goto fail;
        }
        *tab1 = '\0';
        char *lenf = tab1 + 1, *tab2 = strchr(lenf, '\t');
        if (tab2) *tab2 = '\0';
        if (tab1 == line.s) {
            hk_log_error("%s:%" PRId64 ": empty sequence name", fn, lineno);
            goto fail;
        }
        int64_t len;
        if (shard_parse_i64(lenf, 1, INT64_MAX / 4, &len)) {
            hk_log_error("%s:%" PRId64 ": sequence length '%s' of '%s' is not a positive integer",
                         fn, lineno, lenf, line.s);
            goto fail;
        }
        for (size_t i = 0; i < g->n; i++) /* .fai files are small: a scan is fine */
            if (strcmp(g->c[i].name, line.s) == 0) {
                hk_log_error("%s:%" PRId64 ": sequence '%s' appears twice", fn, lineno, line.s);
                goto fail;
            }
        if (g->total > INT64_MAX / 4 - len) {
            hk_log_error("%s:%" PRId64 ": total genome length is absurdly large", fn, lineno);
            goto fail;
        }
        if (g->n == g->m) {
            size_t m = g->m ? 2 * g->m : 64;
            shard_contig_t *c = realloc(g->c, m * sizeof *c);
            if (!c) { hk_log_error("out of memory"); rc = HK_E_NOMEM; goto fail; }
            g->c = c;
            g->m = m;
        }
        char *name = strdup(line.s);
        if (!name) { hk_log_error("out of memory"); rc = HK_E_NOMEM; goto fail; }
        g->c[g->n].name = name;
        g->c[g->n].len = len;
        g->c[g->n].start = g->total;
        g->n++;
        g->total += len;
    }
    if (ret < -1) {
        hk_log_error("%s:%" PRId64 ": read error (truncated or corrupt file?)", fn, lineno + 1);
        goto fail;
    }
    if (g->n == 0) {
        hk_log_error("%s:%" PRId64 ": no sequences in the index", fn, lineno);
        goto fail;
    }
    rc = HK_OK;
fail:
    free(line.s);
    if (bgzf_close(fp) < 0 && rc == HK_OK) {
        hk_log_error("%s: error closing the file", fn);
        rc = HK_E_INPUT;
    }
    return rc;
}

/* Largest 1, 2 or 5 x 10^k not above v (v >= 1): round cut points for people to read. */
static int64_t shard_round_down(int64_t v)
{
    int64_t p = 1;
    while (p <= v / 10) p *= 10;
    return v >= 5 * p ? 5 * p : v >= 2 * p ? 2 * p : p;
}

/* Index of the contig holding concatenated position p (0 <= p < total). */
static size_t shard_find_contig(const shard_genome_t *g, int64_t p)
{
    size_t lo = 0, hi = g->n - 1;
    while (lo < hi) { /* last contig with start <= p */
        size_t mid = lo + (hi - lo + 1) / 2;
        if (g->c[mid].start <= p) lo = mid; else hi = mid - 1;
    }
    return lo;
}

/* Nearest allowed cut point to p: a contig boundary or contig start + m*w. */
static int64_t shard_snap(const shard_genome_t *g, int64_t p, int64_t w)
{
    if (p <= 0) return 0;
    if (p >= g->total) return g->total;
    const shard_contig_t *c = &g->c[shard_find_contig(g, p)];
    int64_t off = p - c->start;
    int64_t below = c->start + off / w * w;
    int64_t above = c->start + (off / w + 1) * w;
    if (above > c->start + c->len) above = c->start + c->len;
    return (p - below <= above - p) ? below : above;
}

/* Write [from, to) of the concatenated genome as BED lines to fp. */
HK_RESULT_USED static hk_status_t shard_write_bed(FILE *fp, const shard_genome_t *g, int64_t from, int64_t to)
{
    if (from >= to) return HK_OK;
    for (size_t i = shard_find_contig(g, from); i < g->n && g->c[i].start < to; i++) {
        const shard_contig_t *c = &g->c[i];
        int64_t s = from > c->start ? from - c->start : 0;
        int64_t e = (to < c->start + c->len ? to : c->start + c->len) - c->start;
        if (fprintf(fp, "%s\t%" PRId64 "\t%" PRId64 "\n", c->name, s, e) < 0) return HK_E_RUNTIME;
    }
    return HK_OK;
}

static void shard_usage(FILE *fp)
{
    fprintf(fp,
"Usage: haplik shard --fai REF.fai -n N [--window BP] OUTPREFIX\n"
"\n"
"Cut a genome into N shards of (nearly) equal length for running HaplotypeCaller per\n"
"shard: writes OUTPREFIX0001.bed ... OUTPREFIX<N>.bed (always N files, BED 0-based\n"
"half-open, contigs in .fai order, every base in exactly one file).\n"
"\n"
"Options:\n"
"  -f, --fai FILE     the reference's FASTA index (samtools faidx); '-' for stdin\n"
"  -n, --shards N     number of shards, 1..%d [required]\n"
"  -w, --window BP    long contigs are cut only at multiples of BP from their start\n"
"                     (contig ends are always allowed) [%d]; lowered as needed to keep\n"
"                     the shards within 1%% of each other\n"
"  -q, --quiet        no notices on stderr\n"
"  -h, --help         this help\n"
"\n"
"Exit status: 0 success, 2 usage or input error, 3 runtime failure.\n",
            SHARD_MAX_N, SHARD_DEFAULT_WINDOW);
}

/* Write the n BED files names[], all or none. */
static hk_status_t shard_write_all(const shard_genome_t *g, int64_t n, int64_t window,
                                   const char *const *names)
{
    /* 1% balance: each boundary moves <= w/2, so |len - T/N| <= w; keep w <= T/(200N). */
    int64_t w = window, wmax = g->total / (200 * n);
    if (wmax < 1) wmax = 1;
    if (w > wmax) w = shard_round_down(wmax);

    /* all N files or none: each is written and closed in turn (N may be far
     * more than the files one process can hold open), then all are renamed
     * into place together */
    hk_outfile_t **out = calloc((size_t)n, sizeof *out);
    hk_status_t rc = out ? HK_OK : HK_E_NOMEM;
    if (!out) hk_log_error("out of memory");
    int64_t k, from = 0;
    for (k = 1; k <= n && rc == HK_OK; k++) {
        /* boundary k: round(k*T/N) without overflow (T < 2^61, N <= 1e6) */
        int64_t q = g->total / n, r = g->total % n;
        int64_t exact_num = r * k;                      /* k*T = k*q*N + k*r */
        int64_t b = q * k + (exact_num + n / 2) / n;
        int64_t to = (k == n) ? g->total : shard_snap(g, b, w);
        if (to < from) to = from;
        if ((rc = hk_outfile_open(names[k - 1], &out[k - 1]))) break;
        hk_outfile_t *o = out[k - 1];
        if ((rc = shard_write_bed(hk_outfile_fp(o), g, from, to))) {
            hk_log_error("%s: write error: %s", names[k - 1], strerror(errno));
            break;
        }
        if ((rc = hk_outfile_close(o))) break;
        from = to;
    }
    if (rc == HK_OK) rc = hk_outfile_commit_all(out, (size_t)n);
    if (out) for (int64_t j = 0; j < n; j++) hk_outfile_abort(out[j]);
    free(out);
    if (rc == HK_OK)
        hk_log_notice("shard: %" PRId64 " shards of ~%" PRId64 " bp from %zu sequences (%" PRId64 " bp, cut grid %" PRId64 " bp)",
                      n, g->total / n, g->n, g->total, w);
    return rc;
}

static hk_status_t shard_main(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"fai", required_argument, NULL, 'f'},
        {"shards", required_argument, NULL, 'n'},
        {"window", required_argument, NULL, 'w'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *fai = NULL;
    int64_t n = 0, window = SHARD_DEFAULT_WINDOW;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":f:n:w:qh", lopts, NULL)) != -1) {
        switch (c) {
        case 'f': fai = optarg; break;
        case 'n':
            if (shard_parse_i64(optarg, 1, SHARD_MAX_N, &n)) {
                hk_log_error("shard: -n/--shards: expected an integer from 1 to %d, got '%s'", SHARD_MAX_N, optarg);
                return HK_E_INPUT;
            }
            break;
        case 'w':
            if (shard_parse_i64(optarg, 1, INT64_MAX / 4, &window)) {
                hk_log_error("shard: -w/--window: expected a positive integer, got '%s'", optarg);
                return HK_E_INPUT;
            }
            break;
        case 'q': hk_log_set_quiet(1); break;
        case 'h':
            shard_usage(stdout);
            return hk_cli_close_stdout();
        case ':':
            hk_log_error("shard: option '%s' needs a value (see haplik shard --help)", argv[optind - 1]);
            return HK_E_INPUT;
        default:
            hk_log_error("shard: unknown option '%s' (see haplik shard --help)", argv[optind - 1]);
            return HK_E_INPUT;
        }
    }
    if (!fai) { hk_log_error("shard: --fai REF.fai is required (see haplik shard --help)"); return HK_E_INPUT; }
    if (n == 0) { hk_log_error("shard: -n N is required (see haplik shard --help)"); return HK_E_INPUT; }
    if (argc - optind != 1) {
        hk_log_error("shard: expected exactly one OUTPREFIX, got %d (see haplik shard --help)", argc - optind);
        return HK_E_INPUT;
    }
    const char *prefix = argv[optind];
    int digits = SHARD_MIN_DIGITS;
    for (int64_t t = n; t >= 10000; t /= 10) digits++;
    /* every name first: none may be the .fai, nor two the same file */
    char **names = calloc((size_t)n, sizeof *names);
    hk_status_t rc = names ? HK_OK : HK_E_NOMEM;
    for (int64_t k = 1; k <= n && rc == HK_OK; k++) {
        kstring_t path = KS_INITIALIZE;
        if (ksprintf(&path, "%s%0*" PRId64 ".bed", prefix, digits, k) < 0) rc = HK_E_NOMEM;
        names[k - 1] = ks_release(&path);
    }
    if (rc) hk_log_error("out of memory");
    else rc = hk_outfile_check_paths((const char *const *)names, (size_t)n, &fai, 1);
    shard_genome_t g = {0};
    if (!rc) rc = shard_read_fai(fai, &g);
    if (!rc) rc = shard_write_all(&g, n, window, (const char *const *)names);
    for (int64_t k = 0; names && k < n; k++) free(names[k]);
    free(names);
    shard_genome_free(&g);
    return rc;
}

int hk_cmd_shard(int argc, char **argv)
{
    return hk_status_exit(shard_main(argc, argv));
}
