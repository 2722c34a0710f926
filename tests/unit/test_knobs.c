/* test_knobs.c - the registry of HK_* environment variables (src/hk_knobs.h):
 * values parsed with an end pointer (junk, out of range and unknown words
 * refused, with a warning, the default kept), word knobs, reading the
 * environment again, the tuning knobs read only by a build configured for
 * them, each knob read into its field of the options value (hk_options.h),
 * and docs/KNOBS.md holding exactly one row per entry, as the list says.
 *
 * `test_knobs --table` prints the rows docs/KNOBS.md must hold. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hk_knobs.h"
#include "hk_options.h"
#include "tap.h"

static const char *who_name(hk_knob_for_t w)
{
    return w == HK_KNOB_FOR_USERS ? "users" : w == HK_KNOB_FOR_TESTS ? "tests" : "tuning";
}

/* Knob k's documentation row: | `HK_X` | for | default | values | doc | */
static void row(hk_knob_t k, char *out, size_t cap)
{
    const hk_knob_info_t *K = hk_knob_info(k);
    char dflt[64], values[128];
    if (K->words) {
        const char *p = K->words;
        for (long long i = K->dflt; i > 0 && p; i--) {
            p = strchr(p, '|');
            if (p) p++;
        }
        snprintf(dflt, sizeof dflt, "%.*s", p ? (int)strcspn(p, "|") : 0, p ? p : "");
        size_t o = 0;
        for (const char *w = K->words; *w && o + 3 < sizeof values; w++) {
            if (*w == '|') { values[o++] = ','; values[o++] = ' '; }
            else values[o++] = *w;
        }
        values[o] = '\0';
    } else {
        snprintf(dflt, sizeof dflt, "%lld", K->dflt);
        snprintf(values, sizeof values, "%lld to %lld", K->min, K->max);
    }
    snprintf(out, cap, "| `%s` | %s | %s | %s | %s |", K->name, who_name(K->who), dflt, values, K->doc);
}

/* Whether every knob's row is in docs/KNOBS.md, once, and no other HK_ row. */
static void check_doc(void)
{
    const char *data = getenv("HK_TESTDATA");
    char path[4096];
    snprintf(path, sizeof path, "%s/../../docs/KNOBS.md", data ? data : "tests/data");
    FILE *fp = fopen(path, "r");
    TAP_OK(fp != NULL, "docs/KNOBS.md opens (%s)", path);
    if (!fp) return;
    static char doc[1 << 16];
    const size_t n = fread(doc, 1, sizeof doc - 1, fp);
    doc[n] = '\0';
    fclose(fp);
    int rows = 0;
    for (const char *p = doc; (p = strstr(p, "\n| `HK_")); p++) rows++;
    TAP_OK(rows == HK_N_KNOBS, "docs/KNOBS.md has %d knob rows for the list's %d", rows, (int)HK_N_KNOBS);
    for (int k = 0; k < HK_N_KNOBS; k++) {
        char r[1024], want[1030];
        row((hk_knob_t)k, r, sizeof r);
        snprintf(want, sizeof want, "\n%s\n", r);
        const char *at = strstr(doc, want);
        tap_result(at && !strstr(at + 1, want), "docs/KNOBS.md: %s's row is the list's, once",
                   hk_knob_info((hk_knob_t)k)->name);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--table")) {
        for (int k = 0; k < HK_N_KNOBS; k++) {
            char r[1024];
            row((hk_knob_t)k, r, sizeof r);
            puts(r);
        }
        return 0;
    }
    /* the environment, before the first read */
    setenv("HK_TRACE", "1", 1);
    setenv("HK_BLOCK_KB", "64x", 1);             /* trailing junk */
    setenv("HK_OPEN_EARLY", "7", 1);             /* out of range */
    setenv("HK_CPU_PASS", "avx2", 1);
    setenv("HK_CUDA_CGAP_SET", "", 1);           /* empty: as unset */
    setenv("HK_CUDA_CHUNK_CELLS", "99999999999999999999999", 1);   /* overflows */
    setenv("HK_CUDA_RAMP", "2", 1);              /* a tuning knob */
    TAP_OK(hk_knob(HK_KNOB_TRACE) == 1 && hk_knob_is_set(HK_KNOB_TRACE), "HK_TRACE=1 is read");
    TAP_OK(hk_knob(HK_KNOB_BLOCK_KB) == 0 && !hk_knob_is_set(HK_KNOB_BLOCK_KB),
           "HK_BLOCK_KB=64x is refused: the default stands");
    TAP_OK(hk_knob(HK_KNOB_OPEN_EARLY) == 1 && !hk_knob_is_set(HK_KNOB_OPEN_EARLY),
           "HK_OPEN_EARLY=7 (out of range) is refused");
    TAP_OK(hk_knob(HK_KNOB_CUDA_CHUNK_CELLS) == 0, "a number that overflows is refused");
    TAP_OK(hk_knob(HK_KNOB_CPU_PASS) == 3 && !strcmp(hk_knob_word(HK_KNOB_CPU_PASS), "avx2"),
           "HK_CPU_PASS=avx2 is the word avx2 (%lld)", hk_knob(HK_KNOB_CPU_PASS));
    TAP_OK(hk_knob(HK_KNOB_CUDA_CGAP_SET) == 1 && !hk_knob_is_set(HK_KNOB_CUDA_CGAP_SET),
           "an empty value is the same as none");
    TAP_OK(hk_knob(HK_KNOB_CUDA_RAMP) == (hk_knobs_tuning() ? 2 : 4),
           "a tuning knob is read only by a build with --enable-tuning-knobs (this build: %s)",
           hk_knobs_tuning() ? "with" : "without");
    TAP_OK(hk_knob_word(HK_KNOB_TRACE) == NULL, "a number knob has no word");

    setenv("HK_CPU_PASS", "avx3", 1);
    setenv("HK_BLOCK_KB", " 128", 1);            /* strtol skips leading blanks: accepted */
    setenv("HK_OPEN_EARLY", "0", 1);
    hk_knobs_reread();
    TAP_OK(hk_knob(HK_KNOB_CPU_PASS) == 0 && !strcmp(hk_knob_word(HK_KNOB_CPU_PASS), "auto"),
           "HK_CPU_PASS=avx3 is refused: auto stands");
    TAP_OK(hk_knob(HK_KNOB_BLOCK_KB) == 128, "HK_BLOCK_KB=' 128' is 128");
    TAP_OK(hk_knob(HK_KNOB_OPEN_EARLY) == 0, "HK_OPEN_EARLY=0 is read again after hk_knobs_reread");

    /* the options value: with no HK_* set, the registry's defaults, the
     * same as hk_options_init's (which reads nothing) */
    for (int k = 0; k < HK_N_KNOBS; k++) unsetenv(hk_knob_info((hk_knob_t)k)->name);
    hk_knobs_reread();
    const char *tmpdir = getenv("TMPDIR");   /* not a knob: the run's, read at the edge too */
    char *kept_tmpdir = tmpdir ? strdup(tmpdir) : NULL;
    unsetenv("TMPDIR");
    hk_options_t dflt, got;
    memset(&dflt, 0, sizeof dflt);
    memset(&got, 0, sizeof got);
    hk_options_init(&dflt);
    hk_options_read(&got);
    got.env_visible_devices = got.env_max_connections = 0;   /* CUDA's variables, not knobs */
    /* the same text, maybe two copies of it (literals are merged only where the build lets them) */
    if (got.temp_dir && dflt.temp_dir && !strcmp(got.temp_dir, dflt.temp_dir)) got.temp_dir = dflt.temp_dir;
    TAP_OK(!memcmp(&dflt, &got, sizeof dflt), "with no HK_* set, hk_options_read gives hk_options_init's defaults");
    setenv("TMPDIR", "/some/where", 1);
    hk_options_read(&got);
    TAP_OK(!strcmp(got.temp_dir, "/some/where") && !strcmp(dflt.temp_dir, "/tmp"),
           "TMPDIR reaches temp_dir (%s), /tmp without it", got.temp_dir);
    if (kept_tmpdir) setenv("TMPDIR", kept_tmpdir, 1);
    else unsetenv("TMPDIR");
    free(kept_tmpdir);
    /* each knob set reaches its field */
    setenv("HK_TRACE", "1", 1);
    setenv("HK_CPU_PASS", "scalar", 1);
    setenv("HK_CPU_DIAG", "all", 1);
    setenv("HK_OPEN_EARLY", "0", 1);
    setenv("HK_BLOCK_KB", "128", 1);
    setenv("HK_CUDA_CGAP_SET", "0", 1);
    setenv("HK_CUDA_CHUNK_CELLS", "20000", 1);
    setenv("HK_ALL_GPUS_VISIBLE", "1", 1);
    setenv("HK_OPEN_DELAY_MS", "250", 1);
    setenv("HK_GKL_GPU_SMALL", "0", 1);
    setenv("HK_GKL_GPU_QUEUE", "3", 1);
    setenv("HK_CUDA_SLOT_MB", "0", 1);           /* tuning: 0 is "no cap", unlike unset (-1) */
    setenv("HK_BGZF", "htslib", 1);              /* tuning */
    setenv("HK_GKL_GPU_PRECISION", "config", 1); /* tuning */
    hk_knobs_reread();
    hk_options_read(&got);
    TAP_OK(got.trace == 1 && !strcmp(got.cpu_pass, "scalar") && got.cpu_diag == 2 && got.open_early == 0,
           "HK_TRACE, HK_CPU_PASS, HK_CPU_DIAG, HK_OPEN_EARLY reach their fields");
    TAP_OK(got.read.block_kb == 128 && got.cuda.cgap_set == 0 && got.cuda.chunk_cells == 20000 &&
           got.all_gpus_visible == 1 && got.open_delay_ms == 250 && got.gkl_gpu_small == 0 && got.gkl_gpu_queue == 3,
           "the test knobs reach their fields");
    const int tune = hk_knobs_tuning();
    TAP_OK(got.cuda.slot_mb == (tune ? 0 : -1) && got.read.bgzf_htslib == tune && got.gkl_gpu_precision == tune,
           "the tuning knobs reach their fields %s --enable-tuning-knobs, as read", tune ? "with" : "(defaults) without");

    int ok = 1;
    for (int k = 0; k < HK_N_KNOBS; k++) {
        const hk_knob_info_t *K = hk_knob_info((hk_knob_t)k);
        ok &= !strncmp(K->name, "HK_", 3) && K->doc && *K->doc && !strchr(K->doc, '|') && K->min <= K->max;
    }
    TAP_OK(ok, "every entry is named HK_*, documented in one line without '|', and its range is not empty");
    int users = 0;
    for (int k = 0; k < HK_N_KNOBS; k++) users += hk_knob_info((hk_knob_t)k)->who == HK_KNOB_FOR_USERS;
    TAP_OK(users == 2 && hk_knob_info(HK_KNOB_TRACE)->who == HK_KNOB_FOR_USERS &&
           hk_knob_info(HK_KNOB_CPU_PASS)->who == HK_KNOB_FOR_USERS,
           "the knobs for users are HK_TRACE and HK_CPU_PASS (README.md documents them)");
    check_doc();
    return TAP_DONE();
}
