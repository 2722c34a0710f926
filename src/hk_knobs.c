/* hk_knobs.c - the HK_* environment variables, read once (hk_knobs.h). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hk_knobs.h"

#define HK_KNOB_ROW(NAME, FOR, DEF, MIN, MAX, WORDS, DOC) \
    { "HK_" #NAME, HK_KNOB_FOR_##FOR, DEF, MIN, MAX, WORDS, DOC },
static const hk_knob_info_t knobs[HK_N_KNOBS] = { HK_KNOBS(HK_KNOB_ROW) };
#undef HK_KNOB_ROW

static _Atomic long long value[HK_N_KNOBS];
static atomic_int is_set[HK_N_KNOBS];
static pthread_once_t read_once = PTHREAD_ONCE_INIT;

/* One line on stderr, even with --quiet: a setting refused or ignored. The
 * module prints for itself so that it depends on nothing of ours (hk_log
 * reads HK_TRACE from here); control characters of a quoted value print
 * as '?'. */
static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (char *p = line; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    fprintf(stderr, "haplik: warning: %s\n", line);
}

int hk_knobs_tuning(void)
{
#ifdef HK_TUNING_KNOBS
    return 1;
#else
    return 0;
#endif
}

/* The index of word w in the list "a|b|c", or -1. */
static long long word_index(const char *list, const char *w)
{
    const size_t len = strlen(w);
    long long i = 0;
    for (const char *p = list;; i++) {
        const char *bar = strchr(p, '|');
        const size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && !strncmp(p, w, n)) return i;
        if (!bar) return -1;
        p = bar + 1;
    }
}

/* Knob K's value from text s into *out: 1, or 0 when s is refused (warned). */
static int parse(const hk_knob_info_t *K, const char *s, long long *out)
{
    if (K->words) {
        const long long i = word_index(K->words, s);
        if (i < 0) {
            warn("%s=%s: not one of %s; using the default", K->name, s, K->words);
            return 0;
        }
        *out = i;
        return 1;
    }
    char *end;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno || v < K->min || v > K->max) {
        warn("%s=%s: not a whole number from %lld to %lld; using the default", K->name, s, K->min,
                       K->max);
        return 0;
    }
    *out = v;
    return 1;
}

static void read_env(void)
{
    for (int k = 0; k < HK_N_KNOBS; k++) {
        const hk_knob_info_t *K = &knobs[k];
        long long v = K->dflt;
        int set = 0;
        const char *s = getenv(K->name);
        if (s && *s) {
            if (K->who == HK_KNOB_FOR_TUNING && !hk_knobs_tuning())
                warn("%s is read only by a build configured with --enable-tuning-knobs; ignored",
                               K->name);
            else
                set = parse(K, s, &v);
        }
        atomic_store_explicit(&value[k], v, memory_order_relaxed);
        atomic_store_explicit(&is_set[k], set, memory_order_relaxed);
    }
}

long long hk_knob(hk_knob_t k)
{
    pthread_once(&read_once, read_env);
    return atomic_load_explicit(&value[k], memory_order_relaxed);
}

int hk_knob_is_set(hk_knob_t k)
{
    pthread_once(&read_once, read_env);
    return atomic_load_explicit(&is_set[k], memory_order_relaxed);
}

const hk_knob_info_t *hk_knob_info(hk_knob_t k) { return &knobs[k]; }

const char *hk_knob_word(hk_knob_t k)
{
    enum { MAX_WORD = 32 };
    static _Thread_local char word[MAX_WORD];
    const char *p = knobs[k].words;
    if (!p) return NULL;
    for (long long i = hk_knob(k); i > 0 && p; i--) {
        p = strchr(p, '|');
        if (p) p++;
    }
    if (!p) return NULL;
    const size_t n = strcspn(p, "|");
    if (n >= MAX_WORD) return NULL;
    memcpy(word, p, n);
    word[n] = '\0';
    return word;
}

void hk_knobs_reread(void)
{
    pthread_once(&read_once, read_env);
    read_env();
}
