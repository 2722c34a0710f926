/* hk_log.c - see hk_log.h. */
#include "hk_log.h"
#include "hk_knobs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int log_quiet;
static _Thread_local int errors_muted;

void hk_log_set_quiet(int quiet) { log_quiet = quiet; }
int  hk_log_quiet(void) { return log_quiet; }
void hk_log_mute_errors(int mute) { errors_muted = mute; }

int hk_log_tracing(void) { return hk_knob(HK_KNOB_TRACE) != 0; }

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

static void log_line(const char *kind, const char *fmt, va_list ap)
{
    /* build the line first so that concurrent threads never interleave it */
    char msg[2048], line[4 * sizeof msg + 32];
    vsnprintf(msg, sizeof msg, fmt, ap);
    int n = snprintf(line, sizeof line, "haplik: %s", kind);
    if (n < 0 || (size_t)n >= sizeof line) n = 0;
    escape_controls(line + n, sizeof line - (size_t)n, msg);
    fprintf(stderr, "%s\n", line);
}

void hk_log_error(const char *fmt, ...)
{
    if (errors_muted) return;
    va_list ap;
    va_start(ap, fmt);
    log_line("error: ", fmt, ap);
    va_end(ap);
}

void hk_log_notice(const char *fmt, ...)
{
    if (log_quiet) return;
    va_list ap;
    va_start(ap, fmt);
    log_line("", fmt, ap);
    va_end(ap);
}
