/* fuzz_common.h - helpers shared by the fuzz targets (tests/fuzz/run.sh).
 *
 * The library code takes paths, so each input is written to a per-process
 * temporary file (in /dev/shm when it exists) and opened from there, exactly
 * as a user's file would be.
 */
#ifndef HK_FUZZ_COMMON_H
#define HK_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_path[256];

static void fuzz_cleanup(void) { if (*fuzz_path) unlink(fuzz_path); }

/* The temporary file's path, made once per process. */
__attribute__((unused)) static const char *fuzz_tmp_path(const char *tag)
{
    if (!*fuzz_path) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
        snprintf(fuzz_path, sizeof fuzz_path, "%s/haplik-fuzz-%s.%ld", dir ? dir : "/tmp", tag,
                 (long)getpid());
        atexit(fuzz_cleanup);
    }
    return fuzz_path;
}

/* Write n bytes to the temporary file; 0 or -1. */
__attribute__((unused)) static int fuzz_write_file(const char *path, const void *p, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) return -1;
    size_t w = n ? fwrite(p, 1, n, fp) : 0;
    int rc = fclose(fp);
    return (w == n && rc == 0) ? 0 : -1;
}

#endif
