/* cmd_merge.c - `haplik merge TABLE... -o OUT`: join shard tables.
 *
 * Streams line by line, relying on the table layouts of hk_table.h, so memory
 * stays bounded by one line, and writes through the table's own writer
 * (hk_table_copy, hk_table_finish), so the header and the summary have the
 * shape that `score` writes. json and jsonl tables merge with each other;
 * tsv tables with tsv tables. Tables of another model or number of decimals
 * are refused. No line is trusted: each must be UTF-8 (the
 * ill-formed parts that earlier haplik wrote for region names that were not
 * become U+FFFD, as the table writer now writes them), parse with cJSON as
 * one JSON value, and keep to RFC 8259 where cJSON is lax. A region line is
 * then copied as written, numbers and all, but for its new index; header and
 * summary are read from their cJSON trees and written anew. What merge cannot
 * read is an input error (2) with its file and line, leaving no output.
 */
#include "hk_cli.h"
#include "hk_log.h"
#include "hk_outfile.h"
#include "hk_table.h"
#include "hk_text.h"
#include "config.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <htslib/hfile.h>
#include <htslib/hts.h>
#include <htslib/kseq.h>
#include <htslib/kstring.h>

typedef struct {
    hk_table_t *out;
    int      format;          /* HK_OUT_* of the output */
    uint64_t index;           /* regions written by the tables before this one */
    char    *model;           /* the first table's model, unformatted JSON */
    char    *decimals;        /* the first table's decimals, as JSON text */
    char    *columns;         /* tsv: the first table's column names */
    cJSON   *ordinals;        /* union of device ordinals */
    double   regions, pairs, cells, recomputed, seconds;
    char    *backend;         /* common backend, or "mixed" */
    cJSON   *devices;         /* union of device names */
    cJSON   *parts;           /* each input's summary, with its file */
    int      write_failed;    /* the output could not be written (exit 3, not 2) */
} merge_t;

/* One input table, read a line at a time. */
typedef struct {
    const char *path;
    htsFile    *fp;
    kstring_t   ks;           /* the line as read */
    char       *fixed;        /* the line with ill-formed UTF-8 replaced, when it had any */
    char       *s;            /* the line (ks.s or fixed), NUL-terminated */
    size_t      len;
    long        line;         /* its number, from 1 */
    uint64_t    regions;      /* region lines read */
    int         fixed_told;   /* the notice about ill-formed UTF-8 was given */
} table_in_t;

#define TSV_HEADER "#haplik-likelihoods "
#define TSV_SUMMARY "#summary "

/* Where a table is in its layout (hk_table.h). */
enum { AT_HEADER, AT_OPEN, AT_REGIONS, AT_SUMMARY, AT_END };

static void usage(FILE *fp)
{
    fprintf(fp,
        "Usage: haplik merge [options] TABLE... [-o OUT]\n\n"
        "Join haplik tables (e.g. of the shards made by `haplik split`) into one: regions in\n"
        "the order given, re-indexed from 0; summaries summed, devices joined, and each\n"
        "input's own summary kept under summary.parts. json and jsonl tables merge with each\n"
        "other, tsv tables with tsv tables; all must have the same model and decimals.\n"
        "Plain, gzip or BGZF. OUT may not be one of the tables.\n\n"
        "Options:\n"
        "  -o, --output FILE        write to FILE [standard output]\n"
        "      --output-format F    json, jsonl or tsv [that of the first table]\n"
        "      --compression C      auto (BGZF when OUT ends in .gz), none or bgzf [auto]\n"
        "      --quiet              no notices\n"
        "  -h, --help               this help\n");
}

#define MERGE_FAIL(...) do { hk_log_error(__VA_ARGS__); goto fail; } while (0)

/* A failed write of the output (e.g. a full disk), which the table writer has logged
 * (naming the output, with the errno of the write: logging it here again printed a second
 * line with an errno since clobbered): exit 3, -1. */
static int write_error(merge_t *m)
{
    m->write_failed = 1;
    return -1;
}

/* ---- reading a table ---- */

static void table_close(table_in_t *t)
{
    if (t->fp) hts_close(t->fp);
    free(t->ks.s);
    free(t->fixed);
}

/* Open a table: plain text, gzip or BGZF; -1 (logged) for anything else.
 * Close t with table_close in either case. */
static int table_open(table_in_t *t, const char *path)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    hFILE *hf = hopen(path, "r");
    if (!hf) {
        hk_log_error("%s: %s", path, strerror(errno));
        return -1;
    }
    /* htslib recognises xz, bzip2 and zstd, but reads text only plain or
     * through BGZF (hts_getline would abort on xz): detect first */
    htsFormat f;
    if (hts_detect_format(hf, &f) < 0) {
        hk_log_error("%s: %s", path, strerror(errno));
        hclose_abruptly(hf);
        return -1;
    }
    if (f.compression != no_compression && f.compression != gzip && f.compression != bgzf) {
        char *what = hts_format_description(&f);
        hk_log_error("%s:1: unsupported compression (%s): haplik reads plain text, gzip or BGZF "
                     "tables", path, what ? what : "unknown");
        free(what);
        hclose_abruptly(hf);
        return -1;
    }
    if (!(t->fp = hts_hopen(hf, path, "r")) || t->fp->is_bin) {
        char *what = hts_format_description(&f);
        hk_log_error("%s:1: binary content (%s), not a haplik table", path,
                     what ? what : "unknown format");
        free(what);
        if (!t->fp) hclose_abruptly(hf);
        return -1;
    }
    return 0;
}

/* The next line into t->s: 1, 0 at the end of the table, -1 on an error
 * (logged). */
static int table_next(table_in_t *t)
{
    const int ret = hts_getline(t->fp, KS_SEP_LINE, &t->ks);
    if (ret == -1) return 0;
    t->line++;
    if (ret < -1) {
        hk_log_error("%s:%ld: read error (truncated compressed stream?)", t->path, t->line);
        return -1;
    }
    if (!t->ks.s && kputs("", &t->ks) < 0) { hk_log_error("out of memory"); return -1; }
    t->s = t->ks.s;
    t->len = t->ks.l;
    if (hk_text_utf8_valid_len(t->s, t->len) < t->len) {
        free(t->fixed);
        if (!(t->fixed = hk_text_utf8_fix(t->s, t->len, &t->len))) {
            hk_log_error("out of memory");
            return -1;
        }
        t->s = t->fixed;
        if (!t->fixed_told++)
            hk_log_notice("%s:%ld: text that is not UTF-8 is written as U+FFFD", t->path, t->line);
    }
    return 1;
}

/* Parse s[0, len) of the line between prefix and suffix (a json table's
 * header and summary lines are fragments of one document) as one JSON value
 * held to RFC 8259. NULL when it is none (logged). */
static cJSON *table_parse(const table_in_t *t, const char *prefix, size_t len, const char *suffix)
{
    kstring_t k = { 0, 0, NULL };
    if (!*prefix && !*suffix && t->s[len] == '\0') {
        k.s = t->s;   /* a whole line (a region): no copy */
        k.l = len;
    } else if (kputs(prefix, &k) < 0 || kputsn(t->s, len, &k) < 0 || kputs(suffix, &k) < 0) {
        free(k.s);
        hk_log_error("out of memory");
        return NULL;
    }
    const size_t skip = strlen(prefix);
    const char *end = NULL, *what = NULL;
    size_t at = 0;
    /* the length counts the NUL: cJSON wants it to refuse trailing text */
    cJSON *j = cJSON_ParseWithLengthOpts(k.s, k.l + 1, &end, 1);
    if (!j) at = end ? (size_t)(end - k.s) : 0;
    else what = hk_text_json_strict(k.s, k.l, &at);
    if (!j || what) {
        at = at > skip ? at - skip : 0;
        if (at > len) at = len;
        hk_log_error("%s:%ld: not valid JSON%s%s at byte %zu", t->path, t->line, what ? ": " : "",
                     what ? what : "", at + 1);
        cJSON_Delete(j);
        j = NULL;
    }
    if (k.s != t->s) free(k.s);
    return j;
}

/* ---- what a table holds ---- */

static int take_header(merge_t *m, const table_in_t *t, const cJSON *h)
{
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(h, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(h, "format_version");
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(h, "model");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "haplik-likelihoods") ||
        !cJSON_IsObject(model)) {
        hk_log_error("%s:%ld: not a haplik likelihood table", t->path, t->line);
        return -1;
    }
    if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) {
        hk_log_error("%s:%ld: table format_version %g is not supported (1 is)", t->path, t->line,
                     cJSON_IsNumber(ver) ? ver->valuedouble : -1.0);
        return -1;
    }
    const cJSON *decimals = cJSON_GetObjectItemCaseSensitive(h, "decimals");
    char *digits = decimals ? cJSON_PrintUnformatted(decimals) : strdup("unknown");
    if (!digits) { hk_log_error("out of memory"); return -1; }
    if (!m->decimals) m->decimals = digits;
    else {
        const int same = !strcmp(digits, m->decimals);
        if (!same) hk_log_error("%s:%ld: decimals %s differ from the first table's %s (score them "
                                "again with one --decimals)", t->path, t->line, digits, m->decimals);
        free(digits);
        if (!same) return -1;
    }
    char *text = cJSON_PrintUnformatted(model);
    if (!text) { hk_log_error("out of memory"); return -1; }
    if (!m->model) { m->model = text; return 0; }
    const int same = !strcmp(text, m->model);
    if (!same) hk_log_error("%s:%ld: model %s differs from the first table's %s", t->path, t->line,
                            text, m->model);
    free(text);
    return same ? 0 : -1;
}

/* Where the value of a region line's index ends: the line starts {"index": N
 * (in any JSON spacing). NULL when it does not. */
static const char *after_index(const char *s)
{
    static const char space[] = " \t\r";
    s += strspn(s, space);
    if (*s++ != '{') return NULL;
    s += strspn(s, space);
    if (strncmp(s, "\"index\"", 7)) return NULL;
    s += 7;
    s += strspn(s, space);
    if (*s++ != ':') return NULL;
    s += strspn(s, space);
    return s + strspn(s, "0123456789+-.eE");
}

static int is_count(const cJSON *v)
{
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 9007199254740992.0 &&
           v->valuedouble == floor(v->valuedouble);
}

/* Check the region r, parsed from the line, and write the line with its new
 * index. */
static int take_region(merge_t *m, table_in_t *t, const cJSON *r)
{
    const cJSON *name = cJSON_IsObject(r) ? cJSON_GetObjectItemCaseSensitive(r, "name") : NULL;
    const char *why = NULL, *rest = after_index(t->s);
    if (!cJSON_IsObject(r)) why = "not an object";
    else if (!rest || !r->child || strcmp(r->child->string, "index") || !is_count(r->child))
        why = "it does not start with its index";
    else if (!cJSON_IsString(name) && !cJSON_IsNull(name)) why = "name is not a string or null";
    else if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(r, "line"))) why = "line is not a number";
    else if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(r, "log10_likelihoods")))
        why = "log10_likelihoods is not an array";
    if (why) {
        hk_log_error("%s:%ld: not a haplik region: %s", t->path, t->line, why);
        return -1;
    }
    const size_t n = t->len - (size_t)(rest - t->s);
    if (hk_table_copy(m->out, m->index + t->regions++, rest, n)) return write_error(m);
    return 0;
}

/* What is wrong with the summary s of table t (written into buf), or NULL. */
static const char *summary_fault(const table_in_t *t, const cJSON *s, char *buf, size_t n)
{
    static const char *const counts[] = { "regions", "pairs", "cells", "double_recomputed" };
    if (!cJSON_IsObject(s)) return "summary is not an object";
    for (int i = 0; i < 4; i++)
        if (!is_count(cJSON_GetObjectItemCaseSensitive(s, counts[i]))) {
            snprintf(buf, n, "summary.%s is missing or not a count", counts[i]);
            return buf;
        }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, "seconds");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return "summary.seconds is missing or not a number of seconds";
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(s, "backend")))
        return "summary.backend is missing or not a name";
    const cJSON *d, *devs = cJSON_GetObjectItemCaseSensitive(s, "devices");
    int names = cJSON_IsArray(devs);
    cJSON_ArrayForEach(d, devs) names &= cJSON_IsString(d);
    if (!names) return "summary.devices is missing or not a list of names";
    /* a table cut after a region line, and the rest of another pasted on */
    const double regions = cJSON_GetObjectItemCaseSensitive(s, "regions")->valuedouble;
    if (regions != (double)t->regions) {
        snprintf(buf, n, "summary.regions is %.0f but the table holds %llu regions", regions,
                 (unsigned long long)t->regions);
        return buf;
    }
    return NULL;
}

/* Check the summary s of table t and add it to the merged one. */
static int take_summary(merge_t *m, const table_in_t *t, const cJSON *s)
{
    char buf[160];
    const char *fault = summary_fault(t, s, buf, sizeof buf);
    if (fault) {
        hk_log_error("%s:%ld: %s", t->path, t->line, fault);
        return -1;
    }
    m->regions += cJSON_GetObjectItemCaseSensitive(s, "regions")->valuedouble;
    m->pairs += cJSON_GetObjectItemCaseSensitive(s, "pairs")->valuedouble;
    m->cells += cJSON_GetObjectItemCaseSensitive(s, "cells")->valuedouble;
    m->recomputed += cJSON_GetObjectItemCaseSensitive(s, "double_recomputed")->valuedouble;
    m->seconds += cJSON_GetObjectItemCaseSensitive(s, "seconds")->valuedouble;
    const char *backend = cJSON_GetObjectItemCaseSensitive(s, "backend")->valuestring;
    if (!m->backend) m->backend = strdup(backend);
    else if (strcmp(m->backend, backend)) { free(m->backend); m->backend = strdup("mixed"); }
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(s, "devices")) {
        int seen = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, m->devices) seen |= cJSON_Compare(d, e, 1);
        if (!seen) cJSON_AddItemToArray(m->devices, cJSON_Duplicate(d, 1));
    }
    /* tables of earlier haplik have no device_ordinals: nothing to add */
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(s, "device_ordinals")) {
        int seen = !cJSON_IsNumber(d);
        const cJSON *e;
        cJSON_ArrayForEach(e, m->ordinals) seen |= cJSON_Compare(d, e, 1);
        if (!seen) cJSON_AddItemToArray(m->ordinals, cJSON_Duplicate(d, 1));
    }
    /* the file name goes into the table: it must be UTF-8 too */
    char *table = hk_text_utf8_fix(t->path, strlen(t->path), NULL);
    cJSON *part = cJSON_Duplicate(s, 1);
    if (!m->backend || !table || !part) {
        free(table);
        cJSON_Delete(part);
        hk_log_error("out of memory");
        return -1;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(part, "parts");
    cJSON_AddStringToObject(part, "table", table);
    cJSON_AddItemToArray(m->parts, part);
    free(table);
    return 0;
}

/* A line of a json table; *at is where the table is in its layout. */
static int json_line(merge_t *m, table_in_t *t, int *at, int *comma)
{
    cJSON *j = NULL;
    int rc = -1;
    if (*at == AT_HEADER) {
        /* {"format": ..., "model": {...}, */
        if (!t->len || t->s[t->len - 1] != ',')
            MERGE_FAIL("%s:%ld: not a haplik table header", t->path, t->line);
        if (!(j = table_parse(t, "", t->len - 1, "}")) || take_header(m, t, j)) goto fail;
        *at = AT_OPEN;
    } else if (*at == AT_OPEN) {
        if (strcmp(t->s, "\"regions\": ["))
            MERGE_FAIL("%s:%ld: expected \"regions\": [", t->path, t->line);
        *at = AT_REGIONS;
    } else if (*at == AT_REGIONS && !strcmp(t->s, "],")) {
        if (*comma) MERGE_FAIL("%s:%ld: the last region line ends with a comma", t->path, t->line - 1);
        *at = AT_SUMMARY;
    } else if (*at == AT_REGIONS) {
        if (t->regions && !*comma)
            MERGE_FAIL("%s:%ld: no comma after the region before", t->path, t->line);
        if ((*comma = t->len && t->s[t->len - 1] == ',')) t->s[--t->len] = '\0';
        if (!(j = table_parse(t, "", t->len, "")) || take_region(m, t, j)) goto fail;
    } else if (*at == AT_SUMMARY) {
        /* "summary": {...}} */
        cJSON *w = table_parse(t, "{", t->len, "");
        if (!w) goto fail;
        j = cJSON_DetachItemFromObjectCaseSensitive(w, "summary");
        cJSON_Delete(w);
        if (!j) MERGE_FAIL("%s:%ld: expected the summary", t->path, t->line);
        if (take_summary(m, t, j)) goto fail;
        *at = AT_END;
    } else {
        MERGE_FAIL("%s:%ld: unexpected line after the summary", t->path, t->line);
    }
    rc = 0;
fail:
    cJSON_Delete(j);
    return rc;
}

/* A line of a jsonl table: a region, or the summary (with the header) last. */
static int jsonl_line(merge_t *m, table_in_t *t, int *at)
{
    if (*at == AT_END) {
        hk_log_error("%s:%ld: unexpected line after the summary", t->path, t->line);
        return -1;
    }
    cJSON *j = table_parse(t, "", t->len, "");
    if (!j) return -1;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "summary");
    int rc;
    if (s) {
        rc = take_header(m, t, j) || take_summary(m, t, s) ? -1 : 0;
        *at = AT_END;
    } else {
        rc = take_region(m, t, j);
    }
    cJSON_Delete(j);
    return rc;
}

/* A line of a tsv table: header, column names, rows, summary. A row's first
 * field is its region index, from 0 and each the one before or the next. */
/* Drop the first n bytes of t's line (a tsv comment's prefix). */
static void skip_prefix(table_in_t *t, size_t n)
{
    memmove(t->s, t->s + n, t->len - n + 1);
    t->len -= n;
}

static int tsv_line(merge_t *m, table_in_t *t, int *at)
{
    cJSON *j = NULL;
    int rc = -1;
    if (*at == AT_HEADER) {
        skip_prefix(t, strlen(TSV_HEADER));
        if (!(j = table_parse(t, "", t->len, "")) || take_header(m, t, j)) goto fail;
        *at = AT_OPEN;
    } else if (*at == AT_OPEN) {
        if (strncmp(t->s, "region_index\t", 13))
            MERGE_FAIL("%s:%ld: expected the column names", t->path, t->line);
        if (!m->columns && !(m->columns = strdup(t->s))) MERGE_FAIL("out of memory");
        if (strcmp(m->columns, t->s))
            MERGE_FAIL("%s:%ld: columns differ from the first table's (%s)", t->path, t->line,
                       m->columns);
        *at = AT_REGIONS;
    } else if (*at == AT_REGIONS && !strncmp(t->s, TSV_SUMMARY, strlen(TSV_SUMMARY))) {
        skip_prefix(t, strlen(TSV_SUMMARY));
        if (!(j = table_parse(t, "", t->len, "")) || take_summary(m, t, j)) goto fail;
        *at = AT_END;
    } else if (*at == AT_REGIONS) {
        char *end;
        errno = 0;
        const unsigned long long old = strtoull(t->s, &end, 10);
        if (end == t->s || *end != '\t' || errno || t->s[0] == '-' ||
            old > t->regions || old + 1 < t->regions)
            MERGE_FAIL("%s:%ld: not a row of region %llu or %llu", t->path, t->line,
                       (unsigned long long)(t->regions ? t->regions - 1 : 0),
                       (unsigned long long)t->regions);
        if (old == t->regions) t->regions++;
        if (hk_table_copy(m->out, m->index + old, end, t->len - (size_t)(end - t->s))) {
            write_error(m);
            goto fail;
        }
    } else {
        MERGE_FAIL("%s:%ld: unexpected line after the summary", t->path, t->line);
    }
    rc = 0;
fail:
    cJSON_Delete(j);
    return rc;
}

/* A json table's first line is its header, which ends with a comma; no line
 * of a jsonl table does. A tsv table's starts with TSV_HEADER. */
static int table_format(const table_in_t *t)
{
    if (!strncmp(t->s, TSV_HEADER, strlen(TSV_HEADER))) return HK_OUT_TSV;
    return t->len && t->s[t->len - 1] == ',' ? HK_OUT_JSON : HK_OUT_JSONL;
}

static int merge_one(merge_t *m, const char *path)
{
    table_in_t t;
    int at = AT_HEADER, comma = 0, format = HK_OUT_JSON, got, rc = -1;
    if (table_open(&t, path)) goto fail;
    while ((got = table_next(&t)) > 0) {
        if (t.line == 1) {
            format = table_format(&t);
            if ((format == HK_OUT_TSV) != (m->format == HK_OUT_TSV))
                MERGE_FAIL("%s:1: a %s table cannot be merged into a %s table", path,
                           hk_table_format_name(format), hk_table_format_name(m->format));
        }
        if (format == HK_OUT_TSV ? tsv_line(m, &t, &at)
            : format == HK_OUT_JSON ? json_line(m, &t, &at, &comma) : jsonl_line(m, &t, &at))
            goto fail;
    }
    if (got < 0) goto fail;
    if (!t.line) MERGE_FAIL("%s: empty file, not a haplik table", path);
    if (at != AT_END) MERGE_FAIL("%s:%ld: truncated table (no summary)", path, t.line);
    m->index += t.regions;
    rc = 0;
fail:
    table_close(&t);
    return rc;
}

/* The format of the first table, read before anything is written, and the
 * model and decimals, which the output's header needs first: from a json or
 * tsv table's first line, or a jsonl table's last line. The table is read again by merge_one. */
static int peek_table(merge_t *m, const char *path, int *format)
{
    table_in_t t;
    kstring_t last = { 0, 0, NULL };
    int rc = -1, got;
    cJSON *j = NULL;
    if (table_open(&t, path)) goto fail;
    t.fixed_told = 1;   /* merge_one tells */
    if ((got = table_next(&t)) <= 0) {
        if (!got) hk_log_error("%s: empty file, not a haplik table", path);
        goto fail;
    }
    *format = table_format(&t);
    if (*format == HK_OUT_JSON) {
        if (!(j = table_parse(&t, "", t.len - 1, "}")) || take_header(m, &t, j)) goto fail;
    } else if (*format == HK_OUT_TSV) {
        skip_prefix(&t, strlen(TSV_HEADER));
        if (!(j = table_parse(&t, "", t.len, "")) || take_header(m, &t, j)) goto fail;
    } else {
        /* keep the last line: reading on past it reuses the buffer */
        while ((got = table_next(&t)) > 0) {
            last.l = 0;
            if (kputsn(t.s, t.len, &last) < 0) MERGE_FAIL("out of memory");
        }
        t.s = last.s;
        t.len = last.l;
        if (got < 0 || !(j = table_parse(&t, "", t.len, ""))) goto fail;
        if (!cJSON_GetObjectItemCaseSensitive(j, "summary"))
            MERGE_FAIL("%s:%ld: truncated table (no summary)", path, t.line);
        if (take_header(m, &t, j)) goto fail;
    }
    rc = 0;
fail:
    cJSON_Delete(j);
    free(last.s);
    table_close(&t);
    return rc;
}

/* The summary, in the shape score writes (hk_table_finish), with parts. */
static int write_summary(merge_t *m)
{
    const int n_dev = cJSON_GetArraySize(m->devices), n_ord = cJSON_GetArraySize(m->ordinals);
    const char **names = calloc((size_t)n_dev + 1, sizeof *names);
    int *ordinals = calloc((size_t)n_ord + 1, sizeof *ordinals);
    char *parts = cJSON_PrintUnformatted(m->parts);
    int rc = -1;
    if (!names || !ordinals || !parts) { hk_log_error("out of memory"); goto out; }
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, m->devices) names[i++] = e->valuestring;
    i = 0;
    cJSON_ArrayForEach(e, m->ordinals) ordinals[i++] = (int)e->valuedouble;
    const hk_summary_t s = {
        .regions = (uint64_t)m->regions, .pairs = (uint64_t)m->pairs, .cells = (uint64_t)m->cells,
        .double_recomputed = (uint64_t)m->recomputed, .backend = m->backend ? m->backend : "cpu",
        .devices = names, .n_devices = n_dev, .ordinals = ordinals, .n_ordinals = n_ord,
        .seconds = m->seconds, .parts = parts,
    };
    hk_table_t *out = m->out;
    m->out = NULL;
    rc = hk_table_finish(out, &s);
out:
    free(names);
    free(ordinals);
    free(parts);
    return rc;
}

/* ---- the command ---- */

/* Parse the options; 0 to go on, -1 after --help, else an exit status. */
/* Parse the options; 0 to go on, -1 after --help, else an exit status.
 * --output-format and --compression are the configuration keys' own flags,
 * checked by their validator; *format stays -1 when not given. */
static int parse_options(int argc, char **argv, const char **output, int *format,
                         int *compression)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' }, { "output-format", required_argument, NULL, 'F' },
        { "compression", required_argument, NULL, 'C' },
        { "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
    };
    hk_config_t cfg;
    hk_config_init(&cfg);
    int c, longind = -1;
    optind = 0;
    opterr = 0;   /* getopt's messages are not haplik's one-line errors */
    while ((c = getopt_long(argc, argv, ":o:h", opts, &longind)) != -1) {
        /* a value that starts with '-' is the next option, not a value: GNU getopt
         * would take `-o --quiet` for an output named "--quiet" */
        if ((c == 'o' || c == 'F' || c == 'C') && optarg[0] == '-' && optarg[1]) {
            hk_log_error("merge: option '%s' needs a value, not '%s' (see haplik merge --help)",
                         longind >= 0 ? opts[longind].name : "-o", optarg);
            return HK_EXIT_INPUT;
        }
        longind = -1;
        switch (c) {
        case 'o': *output = optarg; break;
        case 'F':
            if (hk_config_set(&cfg, HK_KEY_OUTPUT_FORMAT, "merge: --output-format", optarg))
                return HK_EXIT_INPUT;
            *format = cfg.output_format;
            break;
        case 'C':
            if (hk_config_set(&cfg, HK_KEY_OUTPUT_COMPRESSION, "merge: --compression", optarg))
                return HK_EXIT_INPUT;
            *compression = cfg.compression;
            break;
        case 'q': hk_log_set_quiet(1); break;
        case 'h': usage(stdout); return -1;
        case ':':
            hk_log_error("merge: option '%s' needs a value (see haplik merge --help)", argv[optind - 1]);
            return HK_EXIT_INPUT;
        default:
            if (optopt) hk_log_error("merge: unknown option '-%c' (see haplik merge --help)", optopt);
            else hk_log_error("merge: unknown option '%s' (see haplik merge --help)", argv[optind - 1]);
            return HK_EXIT_INPUT;
        }
    }
    if (optind >= argc) {
        hk_log_error("merge: no table given (see haplik merge --help)");
        return HK_EXIT_INPUT;
    }
    return 0;
}

/* Whether the output is one of the inputs, by name or as a file (a link):
 * moving the merged table into place would replace it. Logged. */
static int output_is_input(const char *output, char **inputs, int n)
{
    if (!output || !strcmp(output, "-")) return 0;
    struct stat so, si;
    const int exists = stat(output, &so) == 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(output, inputs[i]) ||
            (exists && stat(inputs[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)) {
            hk_log_error("merge: the output %s is the input %s", output, inputs[i]);
            return 1;
        }
    }
    return 0;
}

int hk_cmd_merge(int argc, char **argv)
{
    const char *output = NULL;
    int format = -1, compression = HK_COMPRESS_AUTO;
    int status = parse_options(argc, argv, &output, &format, &compression);
    if (status) return status < 0 ? (hk_cli_close_stdout() ? HK_EXIT_RUNTIME : 0) : status;
    if (output_is_input(output, argv + optind, argc - optind)) return HK_EXIT_INPUT;
    if (!strcmp(argv[optind], "-")) {
        hk_log_error("merge: the first table cannot be standard input: it is read twice");
        return HK_EXIT_INPUT;
    }
    hk_outfile_catch_signals();
    merge_t m = { .devices = cJSON_CreateArray(), .ordinals = cJSON_CreateArray(),
                  .parts = cJSON_CreateArray() };
    int first_format;
    status = HK_EXIT_INPUT;
    if (peek_table(&m, argv[optind], &first_format)) goto done;
    m.format = format >= 0 ? format : first_format;
    if ((m.format == HK_OUT_TSV) != (first_format == HK_OUT_TSV)) {
        hk_log_error("merge: %s: a %s table cannot be merged into a %s table", argv[optind],
                     hk_table_format_name(first_format), hk_table_format_name(m.format));
        goto done;
    }
    status = HK_EXIT_RUNTIME;
    if (!m.devices || !m.ordinals || !m.parts ||
        !(m.out = hk_table_open_as(output, m.format, compression, 
                                          isdigit((unsigned char)m.decimals[0]) ? atoi(m.decimals) : -1,
                                          m.model, 0)))
        goto done;
    status = HK_EXIT_INPUT;
    for (int i = optind; i < argc; i++)
        if (merge_one(&m, argv[i])) {
            if (m.write_failed) status = HK_EXIT_RUNTIME;
            goto done;
        }
    status = write_summary(&m) ? HK_EXIT_RUNTIME : HK_EXIT_OK;
done:
    hk_table_abort(m.out);
    free(m.model);
    free(m.decimals);
    free(m.columns);
    free(m.backend);
    cJSON_Delete(m.devices);
    cJSON_Delete(m.ordinals);
    cJSON_Delete(m.parts);
    if (hk_cli_close_stdout()) status = HK_EXIT_RUNTIME;
    return status;
}
