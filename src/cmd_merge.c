/* cmd_merge.c - `haplik merge TABLE... -o OUT`: join shard tables.
 *
 * The tables are read by hk_table_read.h, which checks every region line and
 * row while it streams them; merge copies each as written but for its new
 * index, through the table's own writer (hk_table_copy, hk_table_finish), so
 * that header and summary have the shape that `score` writes. Only headers
 * and summaries, one or two per table, become cJSON trees: they are compared
 * (model, decimals, columns) and summed. json and jsonl tables merge with
 * each other; tsv tables with tsv tables. Each table is read once, so a pipe
 * or standard input may stand in any place. What merge cannot read is an
 * input error (2) with its file and line, leaving no output.
 *
 * Reading and checking the tables (a thread of its own) and handing their
 * records to the writer (the calling thread) overlap: the reader copies the
 * checked records into blocks of about a MiB, a few of which are in flight,
 * and the writer copies them on with their new indices, so each side's work
 * hides the other's (docs/PERFORMANCE.md, "merge").
 */
#include "hk_cli.h"
#include "hk_log.h"
#include "hk_outfile.h"
#include "hk_table.h"
#include "hk_table_read.h"
#include "hk_text.h"
#include "config.h"

#include <cJSON.h>
#include <ctype.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    hk_table_t *out;
    int      format;          /* HK_OUT_* of the output */
    uint64_t index;           /* regions written by the tables before this one */
    char    *model;           /* the first table's model, unformatted JSON */
    char    *decimals;        /* the first table's decimals, as JSON text */
    int      expected;        /* tsv: the rows have expected values (-1: no row yet) */
    cJSON   *ordinals;        /* union of device ordinals */
    double   regions, pairs, cells, recomputed, seconds;
    char    *backend;         /* common backend, or "mixed" */
    cJSON   *devices;         /* union of device names */
    cJSON   *parts;           /* each input's summary, with its file */
    int      write_failed;    /* the output could not be written (exit 3, not 2) */
    int      no_memory;       /* the reader ran out of memory (exit 3) */
} merge_t;

/* ---- records in flight from the reader to the writer ---- */

#define BLOCK_BYTES   (1u << 20)   /* text of the records of a block, unless one is longer */
#define BLOCK_RECORDS 32768        /* records of a block */
#define N_BLOCKS      4            /* blocks in flight */

typedef struct {
    uint64_t index;      /* the record's index in the merged table */
    size_t   off, len;   /* its text, in the block's */
} rec_ref_t;

typedef struct {
    char      *text;
    size_t     len, cap, n;
    rec_ref_t *rec;
    int        expected;   /* tsv: whether the rows have the expected columns (-1: no row yet) */
} block_t;

typedef struct {
    merge_t        *m;
    block_t         block[N_BLOCKS];
    size_t          fill, take, full;   /* the block being filled, the next to write, blocks full */
    int             threaded;           /* else each block is written as soon as it is full */
    int             done, stop;         /* the reader has finished; the writer failed */
    int             expected_set;
    pthread_mutex_t mu;
    pthread_cond_t  cv;
} pipe_t;

/* Write the records of b (the writer's side). */
static int write_block(pipe_t *p, block_t *b)
{
    merge_t *m = p->m;
    if (!p->expected_set && b->expected >= 0) {
        hk_table_set_expected(m->out, b->expected);
        p->expected_set = 1;
    }
    for (size_t i = 0; i < b->n; i++)
        if (hk_table_copy(m->out, b->rec[i].index, b->text + b->rec[i].off, b->rec[i].len)) {
            m->write_failed = 1;   /* logged by the table writer, with the errno of the write */
            return -1;
        }
    return 0;
}

/* The reader's side: hand the block being filled over and wait for a free
 * one; -1 when the writer has failed (then the reader stops). */
static int hand_over(pipe_t *p)
{
    block_t *b = &p->block[p->fill];
    if (!p->threaded) {
        const int rc = write_block(p, b);
        b->n = b->len = 0;
        return rc;
    }
    pthread_mutex_lock(&p->mu);
    p->full++;
    p->fill = (p->fill + 1) % N_BLOCKS;
    pthread_cond_broadcast(&p->cv);
    while (p->full == N_BLOCKS && !p->stop) pthread_cond_wait(&p->cv, &p->mu);
    const int stop = p->stop;
    pthread_mutex_unlock(&p->mu);
    return stop ? -1 : 0;
}

/* Queue a record's text, then `more` bytes of suffix, for the writer, with
 * its index in the merged table. */
static int put_record(pipe_t *p, uint64_t index, const char *text, size_t len_text,
                      const char *suffix, size_t more)
{
    const size_t len = len_text + more;
    block_t *b = &p->block[p->fill];
    if (b->n && (b->n == BLOCK_RECORDS || b->cap - b->len < len)) {
        if (hand_over(p)) return -1;
        b = &p->block[p->fill];
    }
    if (b->cap - b->len < len || !b->rec) {
        const size_t cap = b->len + len > BLOCK_BYTES ? b->len + len : BLOCK_BYTES;
        char *text2 = b->cap < cap ? realloc(b->text, cap) : b->text;
        rec_ref_t *rec = b->rec ? b->rec : malloc(BLOCK_RECORDS * sizeof *rec);
        if (text2) b->text = text2, b->cap = b->cap < cap ? cap : b->cap;
        b->rec = rec;
        if (!text2 || !rec) {
            hk_log_error("out of memory");
            p->m->no_memory = 1;
            return -1;
        }
    }
    memcpy(b->text + b->len, text, len_text);
    if (more) memcpy(b->text + b->len + len_text, suffix, more);
    b->rec[b->n++] = (rec_ref_t){ .index = index, .off = b->len, .len = len };
    b->len += len;
    b->expected = p->m->expected;
    return 0;
}

static void usage(FILE *fp)
{
    fprintf(fp,
        "Usage: haplik merge [options] TABLE... [-o OUT]\n\n"
        "Join haplik tables (e.g. of the shards made by `haplik split`) into one: regions in\n"
        "the order given, re-indexed from 0; summaries summed, devices joined, and each\n"
        "input's own summary kept under summary.parts. json and jsonl tables merge with each\n"
        "other, tsv tables with tsv tables; all must have the same model and decimals.\n"
        "Plain, gzip or BGZF; a table may be a pipe or standard input (-). A tsv table\n"
        "needs its sidecar TABLE.meta.json. OUT (and its sidecar) may not be a file read.\n\n"
        "Options:\n"
        "  -o, --output FILE        write to FILE [standard output]\n"
        "      --output-format F    json, jsonl or tsv [OUT's extension (.json, .jsonl, .tsv,\n"
        "                           each optionally .gz), else that of the first table]\n"
        "      --compression C      auto (BGZF when OUT ends in .gz), none or bgzf [auto]\n"
        "      --quiet              no notices\n"
        "  -h, --help               this help\n");
}

/* ---- what a table holds ---- */

/* Compare the header h of table t (found at where:line) with the first's. */
static int take_header(merge_t *m, const char *where, long line, const cJSON *h)
{
    const cJSON *decimals = cJSON_GetObjectItemCaseSensitive(h, "decimals");
    char *digits = decimals ? cJSON_PrintUnformatted(decimals) : strdup("unknown");
    if (!digits) { hk_log_error("out of memory"); return -1; }
    if (!m->decimals) m->decimals = digits;
    else {
        const int same = !strcmp(digits, m->decimals);
        if (!same) hk_log_error("%s:%ld: decimals %s differ from the first table's %s (score them "
                                "again with one --decimals)", where, line, digits, m->decimals);
        free(digits);
        if (!same) return -1;
    }
    char *text = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(h, "model"));
    if (!text) { hk_log_error("out of memory"); return -1; }
    if (!m->model) { m->model = text; return 0; }
    const int same = !strcmp(text, m->model);
    if (!same) hk_log_error("%s:%ld: model %s differs from the first table's %s", where, line,
                            text, m->model);
    free(text);
    return same ? 0 : -1;
}

/* Add the summary s (checked by the reader) of the table at path to the merged one. */
static int take_summary(merge_t *m, const char *path, const cJSON *s)
{
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
    char *table = hk_text_utf8_fix(path, strlen(path), NULL);
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

/* Queue rec, a record of t, for the output with its new index. */
static int copy_record(pipe_t *p, const hk_tread_t *t, const hk_tread_rec_t *rec)
{
    merge_t *m = p->m;
    const char *text = rec->rest;
    size_t len = rec->rest_len, more = 0;
    if (m->format == HK_OUT_TSV) {
        /* the columns of the first table with rows, as `haplik score` decides
         * them by its first pair: a table of other columns (a dump without
         * GATK's values beside one with them) has its rows fitted to them,
         * empty expected and difference fields added or its own dropped */
        const int expected = hk_tread_tsv_expected(t);
        if (m->expected < 0) m->expected = expected;
        text = rec->head;   /* the whole row, whose region_index the writer replaces */
        len = (size_t)(rec->rest + rec->rest_len - rec->head);
        if (expected && !m->expected) {
            for (int tabs = 0; len > 0 && (text[len - 1] != '\t' || ++tabs < 2); len--) continue;
            if (len) len--;   /* the tab before `expected` */
        } else if (!expected && m->expected) {
            more = 2;
        }
    }
    return put_record(p, m->index + rec->index, text, len, "\t\t", more);
}

/* Merge table t (opened; the first table's header already taken). */
static int merge_one(pipe_t *p, hk_tread_t *t, int first)
{
    merge_t *m = p->m;
    const char *where;
    long line;
    const int format = hk_tread_format(t);
    if ((format == HK_OUT_TSV) != (m->format == HK_OUT_TSV)) {
        hk_log_error("%s:1: a %s table cannot be merged into a %s table", hk_tread_path(t),
                     hk_table_format_name(format), hk_table_format_name(m->format));
        return -1;
    }
    const cJSON *h = NULL;
    hk_status_t st = first ? HK_OK : hk_tread_header(t, 0, &h, &where, &line);
    if (!st && h && take_header(m, where, line, h)) return -1;
    hk_tread_rec_t rec;
    int got = 0;
    while (!st && !(st = hk_tread_next(t, &rec, &got)) && got)
        if (copy_record(p, t, &rec)) return -1;
    /* a jsonl table's header is on its last line */
    if (!st && !first && !h && !(st = hk_tread_header(t, 0, &h, &where, &line)) &&
        (!h || take_header(m, where, line, h)))
        return -1;
    if (st) {
        if (hk_status_exit(st) != HK_EXIT_INPUT) m->no_memory = 1;   /* exit 3, not 2 */
        return -1;
    }
    const cJSON *s = hk_tread_summary(t, &where, &line);
    if (take_summary(m, hk_tread_path(t), s)) return -1;
    m->index += hk_tread_regions(t);
    return 0;
}

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

/* ---- the reader's thread ---- */

typedef struct {
    pipe_t      *p;
    hk_tread_t  *first;     /* the first table, open, its header taken */
    char *const *paths;
    int          n;
    int          failed;    /* a table could not be merged (logged) */
} reader_t;

/* Read, check and queue every table, in order. */
static void *read_tables(void *arg)
{
    reader_t *r = arg;
    pipe_t *p = r->p;
    hk_tread_t *t = r->first;
    for (int i = 0; i < r->n && !r->failed; i++) {
        hk_status_t st = i > 0 ? hk_tread_open(r->paths[i], &t) : HK_OK;
        if (st) {
            if (hk_status_exit(st) != HK_EXIT_INPUT) p->m->no_memory = 1;
            r->failed = 1;
            break;
        }
        r->failed = merge_one(p, t, i == 0) != 0;
        hk_tread_close(t);
    }
    if (!r->failed && p->block[p->fill].n) r->failed = hand_over(p) != 0;
    if (p->threaded) {
        pthread_mutex_lock(&p->mu);
        p->done = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    return NULL;
}

/* Write what the reader queues until it is done; -1 when a write failed. */
static int write_blocks(pipe_t *p)
{
    int rc = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->full && !p->done) pthread_cond_wait(&p->cv, &p->mu);
        block_t *b = p->full ? &p->block[p->take] : NULL;
        pthread_mutex_unlock(&p->mu);
        if (!b) return rc;
        rc = write_block(p, b);
        pthread_mutex_lock(&p->mu);
        b->n = b->len = 0;
        p->take = (p->take + 1) % N_BLOCKS;
        p->full--;
        if (rc) p->stop = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        if (rc) return rc;
    }
}

/* Merge the n tables at paths (the first open as first) into m->out: 0, or
 * -1 (logged) with m->write_failed or m->no_memory telling a runtime fault
 * from an input's. The first table is closed. */
static int merge_all(merge_t *m, hk_tread_t *first, char *const *paths, int n)
{
    pipe_t p = { .m = m, .threaded = 1 };
    reader_t r = { .p = &p, .first = first, .paths = paths, .n = n };
    pthread_t tid;
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    if (pthread_create(&tid, NULL, read_tables, &r)) {
        p.threaded = 0;   /* no thread to spare: read and write in turn */
        read_tables(&r);
    } else {
        (void)write_blocks(&p);
        pthread_join(tid, NULL);
    }
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv);
    for (int i = 0; i < N_BLOCKS; i++) {
        free(p.block[i].text);
        free(p.block[i].rec);
    }
    return r.failed || m->write_failed ? -1 : 0;
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

/* The output's format: the one asked for (format, -1 or HK_OUT_AUTO when
 * none), else the one the output's name says (hk_table_pick_format), else
 * that of the first table. -1 (logged) when the name and the format asked
 * for disagree. */
static int pick_format(const char *output, int format, int first_format, int *picked)
{
    if (format >= 0 && format != HK_OUT_AUTO) return hk_table_pick_format(output, format, picked);
    /* the first table's format, unless the name says another */
    hk_log_mute_errors(1);
    const int other = hk_table_pick_format(output, first_format, picked);
    hk_log_mute_errors(0);
    return other ? hk_table_pick_format(output, HK_OUT_AUTO, picked) : 0;
}

/* Refuse an output that would replace or append to a file merge reads: the
 * output (standard output when none), and with tsv its sidecar, against the
 * tables (standard input for "-"), and with tsv their sidecars (every table
 * of a tsv merge is tsv: a json one is refused when it is reached).
 * sidecars: whether the format, now known, is tsv. HK_OK or an error
 * status (logged). */
static hk_status_t check_paths(const char *output, int sidecars, char **inputs, int n)
{
    const char *outs[2] = { output, NULL };
    size_t n_outs = 1;
    char *meta = NULL;
    const char **ins = malloc(2 * (size_t)n * sizeof *ins);
    char **metas = sidecars ? calloc((size_t)n, sizeof *metas) : NULL;
    hk_status_t rc = !ins || (sidecars && !metas) ? HK_E_NOMEM : HK_OK;
    if (rc) hk_log_error("out of memory");
    if (!rc && sidecars && !(rc = hk_table_sidecar_name(output, HK_OUT_TSV, &meta)) && meta)
        outs[n_outs++] = meta;
    size_t n_ins = 0;
    for (int i = 0; i < n && !rc; i++) {
        ins[n_ins++] = inputs[i];
        if (!sidecars || !strcmp(inputs[i], "-")) continue;
        /* read beside any table but standard input, a FIFO's too */
        const size_t len = strlen(inputs[i]) + sizeof HK_TABLE_SIDECAR_SUFFIX;
        if (!(metas[i] = malloc(len))) { hk_log_error("out of memory"); rc = HK_E_NOMEM; break; }
        snprintf(metas[i], len, "%s%s", inputs[i], HK_TABLE_SIDECAR_SUFFIX);
        ins[n_ins++] = metas[i];
    }
    if (!rc) rc = hk_outfile_check_paths(outs, n_outs, ins, n_ins);
    for (int i = 0; metas && i < n; i++) free(metas[i]);
    free(metas);
    free(meta);
    free(ins);
    return rc;
}

int hk_cmd_merge(int argc, char **argv)
{
    const char *output = NULL;
    int format = -1, compression = HK_COMPRESS_AUTO;
    int status = parse_options(argc, argv, &output, &format, &compression);
    if (status) return status < 0 ? (hk_cli_close_stdout() ? HK_EXIT_RUNTIME : 0) : status;
    const hk_status_t paths = check_paths(output, 0, argv + optind, argc - optind);
    if (paths) return hk_status_exit(paths);
    hk_options_t opt;   /* the HK_* knobs: the table's threads */
    hk_options_read(&opt);
    hk_options_apply(&opt);
    hk_outfile_catch_signals();
    merge_t m = { .devices = cJSON_CreateArray(), .ordinals = cJSON_CreateArray(),
                  .parts = cJSON_CreateArray(), .expected = -1 };
    const char *where;
    long line;
    const cJSON *h;
    status = HK_EXIT_INPUT;
    /* the output's header needs the first table's model and decimals */
    hk_tread_t *t;
    hk_status_t st = hk_tread_open(argv[optind], &t);
    if (!st) st = hk_tread_header(t, 1, &h, &where, &line);
    if (st) status = hk_status_exit(st);
    if (st || !h || take_header(&m, where, line, h)) goto done;
    const int first_format = hk_tread_format(t);
    if (pick_format(output, format, first_format, &m.format)) goto done;
    if ((st = check_paths(output, m.format == HK_OUT_TSV, argv + optind, argc - optind))) {
        status = hk_status_exit(st);
        goto done;
    }
    const int first_expected = hk_tread_tsv_expected(t);
    if ((m.format == HK_OUT_TSV) != (first_format == HK_OUT_TSV)) {
        hk_log_error("merge: %s: a %s table cannot be merged into a %s table", argv[optind],
                     hk_table_format_name(first_format), hk_table_format_name(m.format));
        goto done;
    }
    status = HK_EXIT_RUNTIME;
    if (!m.devices || !m.ordinals || !m.parts) goto done;
    if ((st = hk_table_open_as(output, m.format, compression,
                               isdigit((unsigned char)m.decimals[0]) ? atoi(m.decimals) : -1, m.model,
                               opt.table_threads, &m.out))) {
        status = hk_status_exit(st);
        goto done;
    }
    status = HK_EXIT_INPUT;
    const int rc = merge_all(&m, t, argv + optind, argc - optind);
    t = NULL;
    if (rc) {
        if (m.write_failed || m.no_memory) status = HK_EXIT_RUNTIME;
        goto done;
    }
    /* no table had a row: the first one's columns */
    if (m.format == HK_OUT_TSV && m.expected < 0) hk_table_set_expected(m.out, first_expected);
    status = write_summary(&m) ? HK_EXIT_RUNTIME : HK_EXIT_OK;
done:
    hk_tread_close(t);
    hk_table_abort(m.out);
    free(m.model);
    free(m.decimals);
    free(m.backend);
    cJSON_Delete(m.devices);
    cJSON_Delete(m.ordinals);
    cJSON_Delete(m.parts);
    if (hk_cli_close_stdout()) status = HK_EXIT_RUNTIME;
    return status;
}
