/* test_faults.c - what a constructor reports when a resource fails, and
 * what the run frees then. Memory is made to run out by failing each
 * allocation of a call in turn (the first, then the second, ...): linked
 * with -Wl,--wrap for malloc, calloc, realloc and strdup, which reaches the
 * library's calls and not htslib's or libc's own. Every such failure must
 * come back as a resource failure (exit status 3), never as the input's
 * (2) nor as success without the object. The inputs are $HK_TESTDATA's. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hk_config.h"
#include "hk_log.h"
#include "hk_model.h"
#include "hk_reader.h"
#include "hk_run.h"
#include "hk_types.h"
#include "tap.h"

/* ---- failing allocations ---- */

static long fail_at;   /* the allocation, counted from 1 since arm(), that fails; 0: none */
static long seen;      /* allocations since arm() */

static int failing(void)
{
    if (!fail_at) return 0;
    return __atomic_add_fetch(&seen, 1, __ATOMIC_RELAXED) == fail_at;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

void *__wrap_malloc(size_t n)
{
    if (failing()) { errno = ENOMEM; return NULL; }
    return __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
    if (failing()) { errno = ENOMEM; return NULL; }
    return __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
    if (failing()) { errno = ENOMEM; return NULL; }
    return __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    if (failing()) { errno = ENOMEM; return NULL; }
    return __real_strdup(s);
}

/* Failing thread starts: the one, counted from 1, that the calling thread
 * of the run (the test's) makes and that fails with EAGAIN (0: none). Those
 * of the threads it started come in no fixed order, and are not counted. */
static long thread_fail_at, threads_seen;
static pthread_t test_thread;

int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    if (thread_fail_at && pthread_equal(pthread_self(), test_thread) && ++threads_seen == thread_fail_at)
        return EAGAIN;
    return __real_pthread_create(t, a, fn, arg);
}

/* Fail allocation k (from 1) from now on. */
static void arm(long k)
{
    seen = 0;
    fail_at = k;
}

/* Stop failing; how many allocations there were since arm(). */
static long disarm(void)
{
    fail_at = 0;
    return seen;
}

static const char *data_path(const char *name)
{
    static char buf[4][4096];
    static int k;
    const char *data = getenv("HK_TESTDATA");
    char *p = buf[k++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", data ? data : "tests/data", name);
    return p;
}

/* ---- hk_reader_open ---- */

/* Open path as format with each of its allocations failing in turn. */
static void sweep_reader(const char *name, const char *path, int format)
{
    const hk_model_t m = { .precision = HK_PREC_MIXED, .float_threshold = HK_FLOAT_THRESHOLD, .min_base_quality = 6,
                           .gcp = -1, .unknown_as_n = 0 };
    long k, wrong = 0, absorbed = 0;
    for (k = 1;; k++) {
        hk_status_t st = (hk_status_t)-1;
        arm(k);
        hk_reader_t *r = (hk_reader_t *)&m;   /* must be set to NULL on failure */
        st = hk_reader_open(path, format, hk_model_seq_rules(&m), NULL, &r);
        const long made = disarm();
        if (made < k) {   /* none failed: it opens */
            TAP_OK(r && st == HK_OK, "%s: opens (status %d)", name, (int)st);
            hk_reader_close(r);
            break;
        }
        if (r && st == HK_OK) { absorbed++; hk_reader_close(r); continue; }
        if (r || hk_status_exit(st) != 3) {
            printf("# %s: allocation %ld failing: reader %p, status %d (exit %d)\n", name, k, (void *)r,
                   (int)st, hk_status_exit(st));
            wrong++;
        }
        hk_reader_close(r);
    }
    tap_result(wrong == 0, "%s: each of its %ld allocations failing is a resource failure, exit 3 "
               "(%ld absorbed)", name, k - 1, absorbed);
}

/* ---- the run ---- */

/* Descriptors open in this process. */
static int open_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++) n += fcntl(fd, F_GETFD) >= 0;
    return n;
}

/* Score inputs (NULL-terminated names in $HK_TESTDATA) into output (a
 * name in a temporary folder; NULL: check, no table) with each thread start
 * failing in turn: the run fails (exit 3, no table) or copes, and frees
 * what it made (the sanitizer build's leak check sees what it did not). */
static void sweep_run_threads(const char *const *names, int max_batch_pairs, const char *output, int check,
                              int gpu_lock)
{
    char dir[] = "/tmp/haplik-test-faults.XXXXXX";
    if (!mkdtemp(dir)) { TAP_OK(0, "a temporary folder"); return; }
    char out[4096 + 64], meta[4096 + 128], what[256] = "";
    snprintf(out, sizeof out, "%s/%s", dir, output ? output : "none");
    snprintf(meta, sizeof meta, "%s.meta.json", out);
    char *inputs[8];
    int n = 0;
    for (; names[n] && n < 8; n++) {
        inputs[n] = strdup(data_path(names[n]));
        snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s", n ? " + " : "", names[n]);
    }
    snprintf(what + strlen(what), sizeof what - strlen(what), " -> %s", output ? output : "check, no table");
    hk_config_t c;
    hk_config_init(&c);
    c.backend = gpu_lock ? HK_BACKEND_AUTO : HK_BACKEND_CPU;
    c.threads = 2;
    if (gpu_lock) {   /* GPU 0, claimed by a lock in dir before the run's threads start (a CUDA build) */
        c.n_devices = 1;
        c.devices[0] = 0;
        c.gpu_lock_dir = strdup(dir);
        strncat(what, " (GPU 0 claimed)", sizeof what - strlen(what) - 1);
    }
    c.max_batch_pairs = max_batch_pairs;
    long k, wrong = 0, failed = 0;
    for (k = 1;; k++) {
        hk_run_stats_t stats;
        if (gpu_lock) unsetenv("CUDA_VISIBLE_DEVICES");   /* the claim sets it */
        const int fds = open_fds();
        thread_fail_at = k;
        threads_seen = 0;
        const hk_status_t st = hk_run(&c, inputs, n, NULL, output ? out : NULL, check, &stats);
        const long made = threads_seen;
        thread_fail_at = 0;
        if (open_fds() != fds) {   /* a GPU lock still held: the next run would wait for it */
            printf("# thread start %ld failing: %d descriptors open before, %d after\n", k, fds, open_fds());
            wrong++;
            break;
        }
        if (made < k) {
            tap_result(st == HK_OK || gpu_lock, "%s: scored with no thread start failing (status %d)", what, (int)st);
            break;
        }
        if (st) failed++;
        if (st && hk_status_exit(st) != 3) {
            printf("# thread start %ld failing: status %d (exit %d)\n", k, (int)st, hk_status_exit(st));
            wrong++;
        }
        if (st && (access(out, F_OK) == 0 || access(meta, F_OK) == 0)) {
            printf("# thread start %ld failing: the table is there after a failure\n", k);
            wrong++;
        }
        unlink(out);
        unlink(meta);
    }
    tap_result(wrong == 0 && failed > 0, "%s: each of the run's %ld thread starts failing: exit 3 and no "
               "table, or scored (%ld failed)", what, k - 1, failed);
    hk_config_free(&c);
    for (int i = 0; i < n; i++) free(inputs[i]);
    unlink(out);
    unlink(meta);
    char lock[4096 + 32];
    snprintf(lock, sizeof lock, "%s/gpu0.lock", dir);
    unlink(lock);
    rmdir(dir);
}

int main(void)
{
    test_thread = pthread_self();
    hk_log_set_quiet(1);
    hk_log_mute_errors(1);
    sweep_reader("tiny.in, format detected", data_path("tiny.in"), HK_FMT_AUTO);
    sweep_reader("tiny.in, format batch", data_path("tiny.in"), hk_reader_parse_format("batch"));
    sweep_reader("pairhmm-testdata.txt, format gatk", data_path("pairhmm-testdata.txt"),
                 hk_reader_parse_format("gatk"));
    sweep_reader("pdhmm_syn_990_1_2.txt, format pdhmm", data_path("pdhmm_syn_990_1_2.txt"),
                 hk_reader_parse_format("pdhmm"));
    static const char *const tiny[] = { "tiny.in", NULL }, *two[] = { "tiny.in", "10s.in", NULL },
                             *large[] = { "1m.in", NULL };
    sweep_run_threads(tiny, 0, "t.json", 0, 0);
    sweep_run_threads(two, 0, "t.tsv", 0, 0);
    sweep_run_threads(large, 200, "t.jsonl.gz", 0, 0);   /* many batches, read ahead while the engine opens */
    sweep_run_threads(two, 0, NULL, 1, 0);
    sweep_run_threads(tiny, 0, "t.json", 0, 1);
    hk_log_mute_errors(0);
    return TAP_DONE();
}
