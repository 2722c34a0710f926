/* tap.h - a minimal Test Anything Protocol emitter for the C unit tests. */
#ifndef TAP_H
#define TAP_H
#include <stdio.h>

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
#endif
