/* tap.h - a minimal Test Anything Protocol emitter for the C unit tests. */
#ifndef TAP_H
#define TAP_H
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_n, tap_failed;

#define TAP_OK(cond, ...) do {                                   \
        int ok_ = (cond) ? 1 : 0;                                \
        printf("%sok %d - ", ok_ ? "" : "not ", ++tap_n);        \
        printf(__VA_ARGS__);                                     \
        printf("\n");                                            \
        if (!ok_) { tap_failed++;                                \
            printf("# failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); } \
    } while (0)

#define TAP_DONE() (printf("1..%d\n", tap_n), tap_failed ? 1 : 0)

/* TAP_OK as a function, for descriptions built at run time. */
static void tap_result(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
static void tap_result(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%sok %d - ", ok ? "" : "not ", ++tap_n);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    if (!ok) tap_failed++;
    fflush(stdout);
}

/* Skip the whole program: TAP's skip plan. Exit 77 (automake's skip) unless
 * run by automake's TAP driver (which sets AM_TAP_AWK), which wants status 0. */
static int tap_skip_all(const char *why) __attribute__((unused));
static int tap_skip_all(const char *why)
{
    printf("1..0 # SKIP %s\n", why);
    fprintf(stderr, "SKIP: %s\n", why);
    return getenv("AM_TAP_AWK") ? 0 : 77;
}
#endif
