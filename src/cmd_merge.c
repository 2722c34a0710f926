/* cmd_merge.c - `haplik merge TABLE... -o OUT`: join shard tables.
 *
 * Streams line by line, relying on the table layout of hk_table.h: region
 * lines are copied verbatim but for their new index, so a region is never
 * parsed and memory stays bounded by one line. Header and summary lines are
 * parsed with cJSON to check that the tables agree and to sum the summaries.
 */
#include "hk_cli.h"
#include "hk_log.h"
#include "hk_outfile.h"
#include "hk_table.h"
#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/hts.h>
#include <htslib/kseq.h>
#include <htslib/kstring.h>

typedef struct {
    FILE    *fp;
    int      format;          /* HK_OUT_* of the output */
    uint64_t index;
    char    *model;           /* the first table's model, unformatted JSON */
    double   regions, pairs, cells, recomputed, seconds;
    char    *backend;         /* common backend, or "mixed" */
    cJSON   *devices;         /* union of device names */
    cJSON   *parts;           /* each input's summary, with its file */
    int      write_failed;    /* the output could not be written (exit 3, not 2) */
} merge_t;

static void usage(FILE *fp)
{
    fprintf(fp,
        "Usage: haplik merge [options] TABLE... [-o OUT]\n\n"
        "Join haplik tables (json or jsonl, e.g. of the shards made by `haplik split`) into one:\n"
        "regions in the order given, re-indexed from 0; summaries summed, devices joined, and\n"
        "each input's own summary kept under summary.parts. All tables must come from the same\n"
        "model settings.\n\n"
        "Options:\n"
        "  -o, --output FILE        write to FILE [standard output]\n"
        "      --output-format F    json or jsonl [that of the first table]\n"
        "      --quiet              no notices\n"
        "  -h, --help               this help\n");
}

#define MERGE_FAIL(...) do { hk_log_error(__VA_ARGS__); goto fail; } while (0)

/* A failed write of the output (e.g. a full disk): logged, -1. */
static int write_error(merge_t *m)
{
    hk_log_error("merge: write failed: %s", strerror(errno));
    m->write_failed = 1;
    return -1;
}

/* A region line: {"index": N, ... ; write it re-indexed, without any
 * trailing comma. */
static int copy_region(merge_t *m, const char *path, long line, char *s, size_t len)
{
    if (len && s[len - 1] == ',') s[--len] = '\0';
    const char *p = s + 10;   /* after {"index": */
    while (*p >= '0' && *p <= '9') p++;
    if (p == s + 10 || *p != ',' || len < 2 || s[len - 1] != '}') {
        hk_log_error("%s:%ld: not a haplik region line", path, line);
        return -1;
    }
    if (m->format == HK_OUT_JSON && m->index && fputs(",\n", m->fp) == EOF) return write_error(m);
    if (fprintf(m->fp, "{\"index\": %llu", (unsigned long long)m->index++) < 0) return write_error(m);
    if (fwrite(p, 1, len - (size_t)(p - s), m->fp) != len - (size_t)(p - s)) return write_error(m);
    if (m->format == HK_OUT_JSONL && fputc('\n', m->fp) == EOF) return write_error(m);
    return 0;
}

static int take_header(merge_t *m, const char *path, long line, const cJSON *h)
{
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(h, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(h, "format_version");
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(h, "model");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "haplik-likelihoods") || !model) {
        hk_log_error("%s:%ld: not a haplik likelihood table", path, line);
        return -1;
    }
    if (!cJSON_IsNumber(ver) || ver->valueint != 1) {
        hk_log_error("%s:%ld: table format_version %g is not supported (1 is)", path, line,
                     cJSON_IsNumber(ver) ? ver->valuedouble : -1.0);
        return -1;
    }
    char *text = cJSON_PrintUnformatted(model);
    if (!text) { hk_log_error("out of memory"); return -1; }
    if (!m->model) { m->model = text; return 0; }
    int same = !strcmp(text, m->model);
    if (!same) hk_log_error("%s:%ld: model %s differs from the first table's %s", path, line,
                            text, m->model);
    free(text);
    return same ? 0 : -1;
}

static int take_summary(merge_t *m, const char *path, long line, const cJSON *s)
{
    static const char *const nums[] = { "regions", "pairs", "cells", "double_recomputed", "seconds" };
    double *dst[] = { &m->regions, &m->pairs, &m->cells, &m->recomputed, &m->seconds };
    for (int i = 0; i < 5; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, nums[i]);
        if (!cJSON_IsNumber(v)) {
            hk_log_error("%s:%ld: summary.%s missing or not a number", path, line, nums[i]);
            return -1;
        }
        *dst[i] += v->valuedouble;
    }
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(s, "backend");
    if (cJSON_IsString(b)) {
        if (!m->backend) m->backend = strdup(b->valuestring);
        else if (strcmp(m->backend, b->valuestring)) { free(m->backend); m->backend = strdup("mixed"); }
    }
    const cJSON *d, *devs = cJSON_GetObjectItemCaseSensitive(s, "devices");
    cJSON_ArrayForEach(d, devs) {
        int seen = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, m->devices) seen |= cJSON_Compare(d, e, 1);
        if (!seen) cJSON_AddItemToArray(m->devices, cJSON_Duplicate(d, 1));
    }
    cJSON *part = cJSON_Duplicate(s, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(part, "parts");
    cJSON_AddStringToObject(part, "table", path);
    cJSON_AddItemToArray(m->parts, part);
    return 0;
}

/* Parse a JSON fragment: the header line ends with ',' and lacks '}'; the
 * summary line of json lacks the opening '{'. */
static cJSON *parse_fragment(const char *prefix, const char *s, size_t len, const char *suffix)
{
    kstring_t k = { 0, 0, NULL };
    kputs(prefix, &k);
    kputsn(s, len, &k);
    kputs(suffix, &k);
    cJSON *j = k.s ? cJSON_Parse(k.s) : NULL;
    free(k.s);
    return j;
}

static int merge_one(merge_t *m, const char *path)
{
    htsFile *fp = hts_open(path, "r");
    if (!fp) { hk_log_error("%s: cannot open", path); return -1; }
    kstring_t ks = { 0, 0, NULL };
    long line = 0;
    int format = -1, state = 0, rc = -1;   /* state: 0 header, 1 regions, 2 after regions, 3 done */
    int ret;
    while ((ret = hts_getline(fp, KS_SEP_LINE, &ks)) >= 0) {
        line++;
        char *s = ks.s;
        size_t len = ks.l;
        cJSON *j = NULL;
        if (format < 0) {
            if (!strncmp(s, "{\"format\": ", 11)) format = HK_OUT_JSON;
            else if (!strncmp(s, "{\"index\": ", 10) || !strncmp(s, "{\"summary\": ", 12)) format = HK_OUT_JSONL;
            else MERGE_FAIL("%s:%ld: not a haplik likelihood table", path, line);
        }
        if (format == HK_OUT_JSON) {
            if (state == 0) {
                if (len < 2 || s[len - 1] != ',' || !(j = parse_fragment("", s, len - 1, "}")))
                    MERGE_FAIL("%s:%ld: not a haplik table header", path, line);
                if (take_header(m, path, line, j)) goto fail_j;
                state = 1;
            } else if (state == 1 && !strcmp(s, "\"regions\": [")) {
                state = 2;
            } else if (state == 2 && !strncmp(s, "{\"index\": ", 10)) {
                if (copy_region(m, path, line, s, len)) goto fail;
            } else if (state == 2 && !strcmp(s, "],")) {
                state = 3;
            } else if (state == 3 && !strncmp(s, "\"summary\": ", 11)) {
                cJSON *w = parse_fragment("{", s, len, "");
                j = w ? cJSON_DetachItemFromObjectCaseSensitive(w, "summary") : NULL;
                cJSON_Delete(w);
                if (!j) MERGE_FAIL("%s:%ld: bad summary", path, line);
                if (take_summary(m, path, line, j)) goto fail_j;
                state = 4;
            } else {
                MERGE_FAIL("%s:%ld: unexpected line in a haplik json table", path, line);
            }
        } else {
            if (state == 0 && !strncmp(s, "{\"index\": ", 10)) {
                if (copy_region(m, path, line, s, len)) goto fail;
            } else if (state == 0 && !strncmp(s, "{\"summary\": ", 12)) {
                if (!(j = cJSON_ParseWithLength(s, len))) MERGE_FAIL("%s:%ld: bad summary", path, line);
                if (take_header(m, path, line, j) ||
                    take_summary(m, path, line, cJSON_GetObjectItemCaseSensitive(j, "summary")))
                    goto fail_j;
                state = 4;
            } else {
                MERGE_FAIL("%s:%ld: unexpected line in a haplik jsonl table", path, line);
            }
        }
        cJSON_Delete(j);
        continue;
fail_j:
        cJSON_Delete(j);
        goto fail;
    }
    if (ret < -1) MERGE_FAIL("%s:%ld: read error (truncated compressed stream?)", path, line + 1);
    if (state != 4) MERGE_FAIL("%s:%ld: truncated table (no summary)", path, line);
    rc = 0;
fail:
    free(ks.s);
    hts_close(fp);
    return rc;
}

static int write_summary(merge_t *m)
{
    char *devs = cJSON_PrintUnformatted(m->devices), *parts = cJSON_PrintUnformatted(m->parts);
    if (!devs || !parts) { free(devs); free(parts); return -1; }
    char head[512];
    snprintf(head, sizeof head, "\"format\": \"haplik-likelihoods\", \"format_version\": 1, "
             "\"producer\": {\"name\": \"haplik\", \"version\": \"%s\"}, \"model\": ",
             PACKAGE_VERSION);
    if (m->format == HK_OUT_JSON)
        fprintf(m->fp, "%s],\n\"summary\": ", m->index ? "\n" : "");
    else
        fputs("{\"summary\": ", m->fp);
    fprintf(m->fp, "{\"regions\": %.0f, \"pairs\": %.0f, \"cells\": %.0f, \"double_recomputed\": "
            "%.0f, \"backend\": \"%s\", \"devices\": %s, \"seconds\": %.3f, \"parts\": %s}",
            m->regions, m->pairs, m->cells, m->recomputed, m->backend ? m->backend : "cpu",
            devs, m->seconds, parts);
    if (m->format == HK_OUT_JSONL) fprintf(m->fp, ", %s%s", head, m->model ? m->model : "null");
    fputs("}\n", m->fp);
    free(devs);
    free(parts);
    return ferror(m->fp) ? -1 : 0;
}

/* The format of a table and its model, read before anything is written
 * because the json header carries the model (a jsonl table has it on its
 * last line). */
static int peek_table(const char *path, int *format, char **model)
{
    htsFile *fp = hts_open(path, "r");
    kstring_t ks = { 0, 0, NULL };
    cJSON *h = NULL;
    if (fp && hts_getline(fp, KS_SEP_LINE, &ks) >= 0) {
        if (!strncmp(ks.s, "{\"format\": ", 11) && ks.s[ks.l - 1] == ',') {
            *format = HK_OUT_JSON;
            h = parse_fragment("", ks.s, ks.l - 1, "}");
        } else {
            *format = HK_OUT_JSONL;
            kstring_t last = { 0, 0, NULL };
            do {
                last.l = 0;
                kputsn(ks.s, ks.l, &last);
            } while (hts_getline(fp, KS_SEP_LINE, &ks) >= 0);
            h = last.s ? cJSON_Parse(last.s) : NULL;
            free(last.s);
        }
    }
    free(ks.s);
    if (fp) hts_close(fp);
    const cJSON *mj = h ? cJSON_GetObjectItemCaseSensitive(h, "model") : NULL;
    *model = mj ? cJSON_PrintUnformatted(mj) : NULL;
    cJSON_Delete(h);
    if (!*model) { hk_log_error("%s: not a haplik likelihood table", path); return -1; }
    return 0;
}

int hk_cmd_merge(int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' }, { "output-format", required_argument, NULL, 'F' },
        { "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
    };
    const char *output = NULL;
    int format = -1, c;
    optind = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'F':
            if (!strcmp(optarg, "json")) format = HK_OUT_JSON;
            else if (!strcmp(optarg, "jsonl")) format = HK_OUT_JSONL;
            else { hk_log_error("--output-format: expected json or jsonl"); return HK_EXIT_INPUT; }
            break;
        case 'q': hk_log_set_quiet(1); break;
        case 'h': usage(stdout); return hk_cli_close_stdout() ? HK_EXIT_RUNTIME : 0;
        default: usage(stderr); return HK_EXIT_INPUT;
        }
    }
    if (optind >= argc) { usage(stderr); return HK_EXIT_INPUT; }
    hk_outfile_catch_signals();
    merge_t m = { .devices = cJSON_CreateArray(), .parts = cJSON_CreateArray() };
    hk_outfile_t *out = NULL;
    char *model = NULL;
    int first_format, status = HK_EXIT_INPUT;
    if (peek_table(argv[optind], &first_format, &model)) goto done;
    m.format = format >= 0 ? format : first_format;
    status = HK_EXIT_RUNTIME;
    if (!m.devices || !m.parts || !(out = hk_outfile_open(output))) goto done;
    m.fp = hk_outfile_fp(out);
    if (m.format == HK_OUT_JSON)
        fprintf(m.fp, "{\"format\": \"haplik-likelihoods\", \"format_version\": 1, "
                "\"producer\": {\"name\": \"haplik\", \"version\": \"%s\"}, \"model\": %s,\n"
                "\"regions\": [\n", PACKAGE_VERSION, model);
    status = HK_EXIT_INPUT;
    for (int i = optind; i < argc; i++)
        if (merge_one(&m, argv[i])) {
            if (m.write_failed) status = HK_EXIT_RUNTIME;
            goto done;
        }
    status = HK_EXIT_RUNTIME;
    if (write_summary(&m)) { hk_log_error("merge: write failed"); goto done; }
    hk_outfile_t *o = out;
    out = NULL;
    status = hk_outfile_commit(o) ? HK_EXIT_RUNTIME : HK_EXIT_OK;
done:
    hk_outfile_abort(out);
    free(model);
    free(m.model);
    free(m.backend);
    cJSON_Delete(m.devices);
    cJSON_Delete(m.parts);
    if (hk_cli_close_stdout()) status = HK_EXIT_RUNTIME;
    return status;
}
