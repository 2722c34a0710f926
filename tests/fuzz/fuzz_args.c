/* fuzz_args.c - libFuzzer target for the option parser of score and check
 * (hk_cli_parse_score_opts: one getopt_long pass, -c loaded, the flags'
 * setters applied) and of the check of its outputs against its inputs that
 * score and check make next (hk_table_pick_format, hk_cli_check_score_paths).
 *
 * Input: one byte for the command ('c': check, anything else: score), then
 * the arguments, separated by NUL bytes (at most 32; an empty piece is an
 * empty argument). A piece whose first byte is 0x01-0x1e is entry 0-29 of the
 * dictionary below (the real options, files of a temporary folder made at
 * start, "-", "--", some values) followed by the rest of the piece (so
 * "\x02=x" is "--output=x" and "\x01x" is "-cx"); 0x1f and a byte B (1-255) are
 * entry 29 + B (the flags of every configuration key and their values, added after
 * the first entries so that the seed corpus keeps its meaning); any other
 * piece is itself.
 *
 * Besides crashes, sanitizer reports, leaks and hangs, it checks:
 *   - the result is HK_OK (with *first_input 0: help, --print-config),
 *     HK_E_INPUT (usage or config error) or HK_E_NOMEM;
 *   - argv is only permuted (the same strings, each once);
 *   - on HK_OK with inputs: 1 <= *first_input < argc; every operand argv[first_input..] is
 *     "-" or not an option, unless argv[first_input - 1] is "--"; when the
 *     paths are then accepted, the output (-o), if any, is no operand, plan
 *     or config (the same string, or the same regular file),
 *     "-" aside (standard input and standard output), and a path that exists
 *     and is no regular file (a folder, /dev/null: check_paths lets it pass);
 *   - the files of the temporary folder are never changed or removed.
 * Standard input and output are /dev/null (--help prints there).
 */
#include "hk_cli.h"
#include "hk_config.h"
#include "hk_log.h"
#include "hk_table.h"
#include "fuzz_common.h"

#include <stdint.h>
#include <sys/stat.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_args: check failed: %s (%s:%d)\n", \
                                           #c, __FILE__, __LINE__); abort(); } } while (0)

#define MAX_ARGS 32

static char dir[256];

/* The files made at start: name, content. */
static const struct { const char *name, *text; } files[] = {
    { "in.txt", "# hap-bases read-bases read-qual read-ins-qual read-del-qual gcp expected-result\n"
                "ACGT ACG +++ +++ +++ +++ -1.0\n" },
    { "in2.txt", "1 1\nACGT IIII IIII IIII IIII\nACGTA\n" },
    { "c.json", "{\"engine\":{\"backend\":\"cpu\",\"threads\":2},\"output\":{\"format\":\"jsonl\"}}\n" },
    { "bad.json", "{\"engine\":{\"threads\":-4}}\n" },
};
#define N_FILES (sizeof files / sizeof *files)

static char *file_path[N_FILES];

static const char *const opts[] = {
    "-c", "--config", "-o", "--output", "--backend", "--devices", "--threads", "--precision",
    "--format", "--output-format", "--no-sequences", "--tolerance", "--quiet", "-h", "--help",
    "-", "--", "cpu", "2", "jsonl", "gatk", "0,1", "1e-3",
};
#define N_OPTS (sizeof opts / sizeof *opts)
/* the flags of the keys added since (hk_config_keys.h: every key has one) and values of
 * theirs, reached through the 0x1f escape */
static const char *const opts2[] = {
    "--compression", "--decimals", "--sequences", "--float-threshold", "--min-base-quality",
    "--gcp", "--unknown-bases", "--max-batch-pairs", "--gpu-lock-dir", "--print-config",
    "tsv", "bgzf", "none", "auto", "null", "true", "false", "as_n", "93", "13", "-1", "1e400",
    "double", "nan", "--sequences=false", "--decimals=0", "--gcp=null", "--output-format=tsv",
};
#define N_OPTS2 (sizeof opts2 / sizeof *opts2)
/* after opts: the files (absolute), the same as relative paths from a
 * subfolder ("../in.txt" does not exist from the working folder, which is
 * fine), the folder itself, an output that does not exist; then opts2 */
#define N_DICT1 (N_OPTS + N_FILES + 2)
#define N_DICT (N_DICT1 + N_OPTS2)

static const char *dict_entry(unsigned i, char *buf, size_t n)
{
    i %= N_DICT;
    if (i < N_OPTS) return opts[i];
    i -= N_OPTS;
    if (i < N_FILES) return file_path[i];
    if (i == N_FILES) return dir;
    if (i == N_FILES + 1) {
        snprintf(buf, n, "%s/out.json", dir);
        return buf;
    }
    return opts2[i - N_FILES - 2];
}

static void check_files(void)
{
    for (size_t i = 0; i < N_FILES; i++) {
        FILE *fp = fopen(file_path[i], "rb");
        CHECK(fp != NULL);
        char buf[512];
        size_t n = fread(buf, 1, sizeof buf, fp);
        fclose(fp);
        CHECK(n == strlen(files[i].text) && !memcmp(buf, files[i].text, n));
    }
    /* nothing made: an output that did not exist still does not */
    char out[300];
    snprintf(out, sizeof out, "%s/out.json", dir);
    CHECK(access(out, F_OK) != 0);
}

static void cleanup(void)
{
    for (size_t i = 0; i < N_FILES; i++) if (file_path[i]) unlink(file_path[i]);
    if (*dir) rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    hk_log_set_quiet(1);
    /* --help prints to standard output; -c /dev/stdin must not wait */
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "r", stdin)) abort();
    const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/haplik-fuzz-args.XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) { perror("fuzz_args: mkdtemp"); abort(); }
    atexit(cleanup);
    for (size_t i = 0; i < N_FILES; i++) {
        file_path[i] = malloc(strlen(dir) + strlen(files[i].name) + 2);
        if (!file_path[i]) abort();
        sprintf(file_path[i], "%s/%s", dir, files[i].name);
        if (fuzz_write_file(file_path[i], files[i].text, strlen(files[i].text))) abort();
    }
    return 0;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(char *const *)a, y = (uintptr_t)*(char *const *)b;
    return x < y ? -1 : x > y;
}

static int is_option(const char *s) { return s[0] == '-' && s[1] != '\0'; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const char *cmd = data[0] == 'c' ? "check" : "score";
    char *argv[MAX_ARGS + 2], *orig[MAX_ARGS + 1];
    int argc = 0;
    argv[argc++] = strdup(cmd);
    CHECK(argv[0] != NULL);
    for (size_t p = 1; p < size && argc <= MAX_ARGS; ) {
        const uint8_t *end = memchr(data + p, 0, size - p);
        size_t n = end ? (size_t)(end - (data + p)) : size - p;
        char buf[300];
        const char *head = "";
        size_t skip = 0;
        if (n > 1 && data[p] == 0x1f) { head = dict_entry(29u + data[p + 1], buf, sizeof buf); skip = 2; }
        else if (n > 0 && data[p] >= 0x01 && data[p] <= 0x1f) { head = dict_entry(data[p] - 1u, buf, sizeof buf); skip = 1; }
        size_t h = strlen(head);
        char *a = malloc(h + n - skip + 1);
        CHECK(a != NULL);
        memcpy(a, head, h);
        memcpy(a + h, data + p + skip, n - skip);
        a[h + n - skip] = '\0';
        argv[argc++] = a;
        p += n + 1;
    }
    argv[argc] = NULL;
    memcpy(orig, argv, (size_t)argc * sizeof *argv);

    hk_cli_opts_t o;
    int first = -7;
    const hk_status_t rc = hk_cli_parse_score_opts(cmd, argc, argv, &o, &first);
    CHECK(rc == HK_OK || rc == HK_E_INPUT || rc == HK_E_NOMEM);
    CHECK(rc != HK_OK || first == 0 || (first >= 1 && first < argc));

    /* getopt only permutes */
    char *sorted_a[MAX_ARGS + 1], *sorted_b[MAX_ARGS + 1];
    memcpy(sorted_a, argv, (size_t)argc * sizeof *argv);
    memcpy(sorted_b, orig, (size_t)argc * sizeof *argv);
    qsort(sorted_a, (size_t)argc, sizeof *sorted_a, cmp_ptr);
    qsort(sorted_b, (size_t)argc, sizeof *sorted_b, cmp_ptr);
    CHECK(!memcmp(sorted_a, sorted_b, (size_t)argc * sizeof *sorted_a));
    CHECK(argv[argc] == NULL);

    if (rc == HK_OK && first > 0) {
        const int after_dashdash = !strcmp(argv[first - 1], "--");
        for (int i = first; i < argc; i++) CHECK(after_dashdash || !is_option(argv[i]));
        int format;
        hk_status_t paths = hk_table_pick_format(o.output, o.cfg.output_format, &format);
        if (!paths) paths = hk_cli_check_score_paths(*data == 'c', &o, format, argv + first, argc - first);
        CHECK(paths == HK_OK || paths == HK_E_INPUT || paths == HK_E_NOMEM);
        /* the files read: the operands, the plan, the config */
        const char *reads[MAX_ARGS + 2];
        int n_reads = 0;
        for (int i = first; i < argc; i++) reads[n_reads++] = argv[i];
        if (o.plan) reads[n_reads++] = o.plan;
        if (o.config) reads[n_reads++] = o.config;
        for (int i = 0; i < n_reads && paths == HK_OK; i++) {
            if (o.output && strcmp(o.output, "-")) {
                /* the same name is refused unless it is something other than a
                 * regular file (`-o / /`, `-o /dev/null /dev/null`: nothing to
                 * destroy; opening it fails or writes nowhere) */
                struct stat so, si;
                const int out_exists = stat(o.output, &so) == 0;
                if (!strcmp(o.output, reads[i])) CHECK(out_exists && !S_ISREG(so.st_mode));
                if (out_exists && S_ISREG(so.st_mode) && stat(reads[i], &si) == 0)
                    CHECK(!(so.st_dev == si.st_dev && so.st_ino == si.st_ino));
            }
        }
        /* the output is a value, never an option */
        if (o.output) CHECK(!is_option(o.output));
    }
    hk_config_free(&o.cfg);
    check_files();
    for (int i = 0; i < argc; i++) free(orig[i]);
    return 0;
}
