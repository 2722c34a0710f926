/* hk_log.c - see hk_log.h. */
#include "hk_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int log_quiet;

void hk_log_set_quiet(int quiet) { log_quiet = quiet; }
int  hk_log_quiet(void) { return log_quiet; }

int hk_log_tracing(void)
{
    const char *v = getenv("HK_TRACE");
    return v && *v && strcmp(v, "0");
}

double hk_log_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void log_line(const char *kind, const char *fmt, va_list ap)
{
    /* build the line first so that concurrent threads never interleave it */
    char buf[2048];
    int n = snprintf(buf, sizeof buf, "haplik: %s", kind);
    if (n < 0 || (size_t)n >= sizeof buf) n = 0;
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    fprintf(stderr, "%s\n", buf);
}

void hk_log_error(const char *fmt, ...)
{
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
