/* test_table_read.c - merge's table reader (hk_table_read.h) and its
 * outcomes: a table read to its end record by record, the faults of a table
 * as HK_E_INPUT (merge exits 2), memory that runs out as HK_E_NOMEM (merge
 * exits 3, and writes nothing). Memory is made to run out by failing the
 * large reallocations of the reader's line buffer: linked with
 * -Wl,--wrap=realloc, which reaches the library's calls and not htslib's or
 * cJSON's. The tables come from $HAPLIK scoring $HK_TESTDATA/tiny.in. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hk_cli.h"
#include "hk_log.h"
#include "hk_table_read.h"
#include "hk_types.h"
#include "tap.h"

/* ---- failing allocations ---- */

#define LARGE (1u << 20)   /* the reader's line buffer grows by at least this */

/* The large reallocation, counted from 1, that fails (0: none). */
static int fail_large_at;
static int large_seen;

void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n)
{
    if (n >= LARGE && fail_large_at && ++large_seen == fail_large_at) return NULL;
    return __real_realloc(p, n);
}

static void fail_large(int at)
{
    fail_large_at = at;
    large_seen = 0;
}

/* ---- tables ---- */

static char dir[] = "/tmp/haplik-test-table-read.XXXXXX";

static char *path_of(const char *name)
{
    static char buf[8][512];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

/* Score tiny.in into dir/name; 0 on success. */
static int score(const char *name)
{
    const char *haplik = getenv("HAPLIK"), *data = getenv("HK_TESTDATA");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' score --quiet '%s/tiny.in' -o '%s' 2>/dev/null",
             haplik ? haplik : "./haplik", data ? data : "tests/data", path_of(name));
    return system(cmd);
}

/* Copy src to dst without its last line (the summary, in json and jsonl). */
static int truncate_copy(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb");
    if (!in) return -1;
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text, in);
    fclose(in);
    while (n && text[n - 1] == '\n') n--;
    while (n && text[n - 1] != '\n') n--;
    FILE *out = fopen(dst, "wb");
    if (!out) return -1;
    const int ok = fwrite(text, 1, n, out) == n;
    return fclose(out) == 0 && ok ? 0 : -1;
}

/* haplik merge -o out tables... in a child (merge flushes standard output
 * and sets process state): its exit status, or -1. */
static int merge(const char *out, const char *a, const char *b)
{
    fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        char *argv[] = { "merge", "-o", (char *)out, (char *)a, (char *)b, NULL };
        if (!getenv("TR_DEBUG")) (void)!freopen("/dev/null", "w", stderr);
        _exit(hk_cmd_merge(b ? 5 : 4, argv));
    }
    int ws;
    if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws)) return -1;
    return WEXITSTATUS(ws);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- the reader ---- */

static void test_read_through(const char *name, uint64_t regions)
{
    hk_tread_t *t;
    hk_status_t st = hk_tread_open(path_of(name), &t);
    TAP_OK(st == HK_OK && t, "%s: opens", name);
    if (st) return;
    const cJSON *h = NULL;
    st = hk_tread_header(t, 1, &h, NULL, NULL);
    TAP_OK(st == HK_OK && h, "%s: its header, read ahead", name);
    hk_tread_rec_t rec;
    uint64_t records = 0, pairs = 0;
    int got = -1;
    while (!(st = hk_tread_next(t, &rec, &got)) && got == 1) records++, pairs += rec.pairs;
    TAP_OK(st == HK_OK && got == 0, "%s: read to its end (status %d, got %d)", name, (int)st, got);
    TAP_OK(hk_tread_regions(t) == regions && pairs == 332,
           "%s: %llu regions, %llu pairs, in %llu records", name,
           (unsigned long long)hk_tread_regions(t), (unsigned long long)pairs,
           (unsigned long long)records);
    TAP_OK(hk_tread_summary(t, NULL, NULL) != NULL, "%s: its summary", name);
    hk_tread_close(t);
}

static void test_input_faults(void)
{
    hk_tread_t *t = (hk_tread_t *)1;
    hk_status_t st = hk_tread_open(path_of("missing.jsonl"), &t);
    TAP_OK(st == HK_E_INPUT && !t, "a missing table: HK_E_INPUT, no reader (status %d)", (int)st);

    if (truncate_copy(path_of("t.jsonl"), path_of("cut.jsonl"))) {
        TAP_OK(0, "a truncated table written");
        return;
    }
    st = hk_tread_open(path_of("cut.jsonl"), &t);
    TAP_OK(st == HK_OK, "a truncated jsonl table opens");
    if (st) return;
    hk_tread_rec_t rec;
    int got, records = 0;
    while (!(st = hk_tread_next(t, &rec, &got)) && got) records++;
    TAP_OK(st == HK_E_INPUT && got == 0 && records == 3,
           "a truncated jsonl table: its 3 records, then HK_E_INPUT (status %d after %d)",
           (int)st, records);
    hk_tread_close(t);
    st = hk_tread_open(path_of("cut.jsonl"), &t);
    const cJSON *h = (const cJSON *)1;
    if (st == HK_OK) {
        st = hk_tread_header(t, 1, &h, NULL, NULL);
        hk_tread_close(t);
    }
    TAP_OK(st == HK_E_INPUT && !h, "a truncated jsonl table's header, read ahead: HK_E_INPUT");
}

static void test_no_memory(void)
{
    hk_tread_t *t = (hk_tread_t *)1;
    fail_large(1);
    hk_status_t st = hk_tread_open(path_of("t.json"), &t);
    fail_large(0);
    TAP_OK(st == HK_E_NOMEM && !t, "memory out while opening: HK_E_NOMEM (status %d)", (int)st);
    if (!st) hk_tread_close(t);
}

/* ---- merge's exit status ---- */

static void test_merge_status(void)
{
    char out[512];
    snprintf(out, sizeof out, "%s", path_of("merged.jsonl"));
    TAP_OK(merge(out, path_of("t.jsonl"), path_of("t.json")) == 0 && exists(out),
           "merge of two tables: exit 0");
    unlink(out);
    TAP_OK(merge(out, path_of("t.jsonl"), path_of("cut.jsonl")) == 2 && !exists(out),
           "merge with a truncated table: exit 2, no output");
    TAP_OK(merge(out, path_of("missing.jsonl"), NULL) == 2 && !exists(out),
           "merge of a missing table: exit 2, no output");
    fail_large(1);
    int rc = merge(out, path_of("t.json"), path_of("t.jsonl"));
    TAP_OK(rc == 3 && !exists(out), "memory out reading the first table: exit 3 (got %d), no output",
           rc);
    /* each large allocation in turn: the first table's buffer, the second's
     * (each table has its own reader), and merge's own blocks */
    int failed = 0, wrong = 0;
    for (int at = 1; at <= 8; at++) {
        fail_large(at);
        rc = merge(out, path_of("t.json"), path_of("t.jsonl"));
        if (rc != 0) {
            failed++;
            if (rc != 3 || exists(out)) {
                printf("# memory out at large allocation %d: exit %d%s\n", at, rc,
                       exists(out) ? ", output written" : "");
                wrong++;
            }
        }
        unlink(out);
    }
    fail_large(0);
    TAP_OK(failed >= 2 && !wrong, "memory out at each large allocation of a merge of two tables: "
           "exit 3, no output (%d failed runs, %d wrong)", failed, wrong);
}

int main(void)
{
    hk_log_set_quiet(1);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    if (score("t.jsonl") || score("t.json") || score("t.tsv")) {
        printf("Bail out! cannot score tiny.in with $HAPLIK\n");
        return 1;
    }
    test_read_through("t.jsonl", 3);
    test_read_through("t.json", 3);
    test_read_through("t.tsv", 3);
    test_input_faults();
    test_no_memory();
    test_merge_status();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) printf("# could not remove %s\n", dir);
    return TAP_DONE();
}
