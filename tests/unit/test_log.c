/* test_log.c - the fatal error stays the last line on stderr: once an error
 * is printed, notices and progress lines (from any thread, in any order)
 * are dropped, and an open progress line is ended before the error. */
#include "hk_log.h"
#include "tap.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *late_notices(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++) {
        hk_log_notice("no usable GPU; scoring on the CPU");
        hk_log_progress("%d regions", i);
    }
    hk_log_progress_end();
    return NULL;
}

int main(void)
{
    char path[] = "/tmp/haplik-test-log.XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0 || !freopen(path, "w+", stderr)) return tap_skip_all("no temporary file");
    unlink(path);
    close(fd);
    hk_log_progress("1 regions");
    hk_log_notice("a notice before the error");
    hk_log_error("bad.in:3: the fatal error");
    pthread_t th;
    pthread_create(&th, NULL, late_notices, NULL);
    pthread_join(th, NULL);
    hk_log_notice("a notice after the error");
    fflush(stderr);
    rewind(stderr);
    char text[4096] = "";
    const size_t n = fread(text, 1, sizeof text - 1, stderr);
    text[n] = '\0';
    TAP_OK(!strcmp(text, "\rhaplik: 1 regions\nhaplik: a notice before the error\n"
                         "haplik: error: bad.in:3: the fatal error\n"),
           "the error is the last line, the progress line ended before the notice: [%s]", text);
    return TAP_DONE();
}
