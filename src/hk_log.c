/* hk_log.c - see hk_log.h. */
#include "hk_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int log_quiet;
static _Thread_local int errors_muted;
/* Every line is printed under log_mu, so that "an error was printed" and
 * "nothing came after it" hold across threads. */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static int error_printed;    /* then notices and progress are dropped */
static int progress_open;    /* a progress line without its line end is on stderr */

void hk_log_set_quiet(int quiet) { log_quiet = quiet; }
int  hk_log_quiet(void) { return log_quiet; }
void hk_log_mute_errors(int mute) { errors_muted = mute; }

static int log_tracing;
void hk_log_set_tracing(int on) { log_tracing = on; }
int hk_log_tracing(void) { return log_tracing; }

double hk_log_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Copy src to dst (cap bytes, cap > 0) with the control characters written
 * as \xNN: C0 (newline included: a diagnostic is one line), DEL, and C1 in
 * its UTF-8 form (C2 80..C2 9F, which some terminals obey). Messages quote
 * input (fields, file names), and an ESC sequence there must not drive the
 * terminal. Truncates to fit. */
static void escape_controls(char *dst, size_t cap, const char *src)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (const unsigned char *s = (const unsigned char *)src; *s; s++) {
        const int c1 = s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f;
        const size_t need = c1 ? 8 : (s[0] < 0x20 || s[0] == 0x7f) ? 4 : 1;
        if (o + need >= cap) break;
        if (need == 1) { dst[o++] = (char)s[0]; continue; }
        for (int k = 0; k <= c1; k++) {
            dst[o++] = '\\'; dst[o++] = 'x';
            dst[o++] = hex[s[k] >> 4]; dst[o++] = hex[s[k] & 15];
        }
        s += c1;
    }
    dst[o] = '\0';
}

enum { LINE_NOTICE, LINE_ERROR, LINE_PROGRESS };

static void log_line(int what, const char *fmt, va_list ap)
{
    /* build the line first so that concurrent threads never interleave it */
    char msg[2048], line[4 * sizeof msg + 32];
    vsnprintf(msg, sizeof msg, fmt, ap);
    int n = snprintf(line, sizeof line, "haplik: %s", what == LINE_ERROR ? "error: " : "");
    if (n < 0 || (size_t)n >= sizeof line) n = 0;
    escape_controls(line + n, sizeof line - (size_t)n, msg);
    pthread_mutex_lock(&log_mu);
    if (what == LINE_ERROR || !error_printed) {
        if (what == LINE_PROGRESS) fprintf(stderr, "\r%s", line);
        else fprintf(stderr, "%s%s\n", progress_open ? "\n" : "", line);
        progress_open = what == LINE_PROGRESS;
        error_printed |= what == LINE_ERROR;
        fflush(stderr);
    }
    pthread_mutex_unlock(&log_mu);
}

void hk_log_error(const char *fmt, ...)
{
    if (errors_muted) return;
    va_list ap;
    va_start(ap, fmt);
    log_line(LINE_ERROR, fmt, ap);
    va_end(ap);
}

void hk_log_notice(const char *fmt, ...)
{
    if (log_quiet) return;
    va_list ap;
    va_start(ap, fmt);
    log_line(LINE_NOTICE, fmt, ap);
    va_end(ap);
}

void hk_log_progress(const char *fmt, ...)
{
    if (log_quiet) return;
    va_list ap;
    va_start(ap, fmt);
    log_line(LINE_PROGRESS, fmt, ap);
    va_end(ap);
}

void hk_log_progress_end(void)
{
    pthread_mutex_lock(&log_mu);
    if (progress_open) fputc('\n', stderr);
    progress_open = 0;
    pthread_mutex_unlock(&log_mu);
}
