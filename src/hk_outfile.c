/* hk_outfile.c - see hk_outfile.h. */
#include "hk_outfile.h"
#include "hk_log.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct hk_outfile {
    char *path;      /* destination; NULL for stdout */
    char *tmp;       /* temporary path; NULL for stdout's spool */
    FILE *fp;
    struct pending *slot;   /* its entry in the list of pending files, NULL if none */
};

/* Temporary paths a signal handler must remove: a list that only grows
 * (entries are reused, never freed), so that the handler, which may run in
 * any thread at any time, always walks valid memory. An entry is published
 * whole by one pointer store; it is free again when its path is NULL. Written
 * only with signals blocked (in the writing thread) under pending_mu, read
 * by the handler. There is no limit on the number of outputs (split writes
 * one per shard). */
struct pending {
    char *volatile tmp;
    struct pending *next;
};
static struct pending *volatile pending_head;
static pthread_mutex_t pending_mu = PTHREAD_MUTEX_INITIALIZER;

static void block_signals(sigset_t *old)
{
    sigset_t all;
    sigemptyset(&all);
    sigaddset(&all, SIGINT); sigaddset(&all, SIGTERM);
    sigaddset(&all, SIGHUP); sigaddset(&all, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &all, old);
}

/* NULL when out of memory. */
static struct pending *register_tmp(char *tmp)
{
    sigset_t old;
    struct pending *e;
    block_signals(&old);
    pthread_mutex_lock(&pending_mu);
    for (e = pending_head; e && e->tmp; e = e->next) {}
    if (e) e->tmp = tmp;
    else if ((e = malloc(sizeof *e))) {
        e->tmp = tmp;
        e->next = pending_head;
        pending_head = e;
    }
    pthread_mutex_unlock(&pending_mu);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return e;
}

static void unregister_tmp(struct pending *e)
{
    if (!e) return;
    sigset_t old;
    block_signals(&old);
    e->tmp = NULL;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void on_signal(int sig)
{
    for (struct pending *e = pending_head; e; e = e->next) {
        char *tmp = e->tmp;
        if (tmp) unlink(tmp);
    }
    signal(sig, SIG_DFL);
    raise(sig);
    _exit(128 + sig);
}

void hk_outfile_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaction(sigs[i], &sa, NULL);
}

hk_outfile_t *hk_outfile_open(const char *path)
{
    hk_outfile_t *o = calloc(1, sizeof *o);
    if (!o) { hk_log_error("out of memory"); return NULL; }
    o->slot = NULL;
    if (!path || !strcmp(path, "-")) {
        if (!(o->fp = tmpfile())) {
            hk_log_error("cannot create a temporary file to spool standard output: %s",
                         strerror(errno));
            free(o);
            return NULL;
        }
        return o;
    }
    /* a destination that exists and is no regular file (/dev/null, a FIFO, a
     * terminal) is written directly: renaming over it would replace it */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            hk_log_error("%s: is a directory", path);
            free(o);
            return NULL;
        }
        if (!(o->path = strdup(path)) || !(o->fp = fopen(path, "w"))) {
            hk_log_error("%s: cannot open for writing: %s", path, strerror(errno));
            free(o->path);
            free(o);
            return NULL;
        }
        return o;
    }
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    o->path = strdup(path);
    o->tmp = malloc(strlen(path) + 16);
    if (!o->path || !o->tmp) { hk_log_error("out of memory"); goto fail; }
    sprintf(o->tmp, "%.*s.%s.tmpXXXXXX", (int)dirlen, path, path + dirlen);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        hk_log_error("%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        goto fail;
    }
    if (!(o->slot = register_tmp(o->tmp)) || !(o->fp = fdopen(fd, "w"))) {
        hk_log_error("%s: %s", o->tmp, strerror(errno));
        close(fd);
        unlink(o->tmp);
        goto fail;
    }
    setvbuf(o->fp, NULL, _IOFBF, 1 << 20);
    return o;
fail:
    unregister_tmp(o->slot);
    free(o->path);
    free(o->tmp);
    free(o);
    return NULL;
}

FILE *hk_outfile_fp(hk_outfile_t *o) { return o->fp; }
const char *hk_outfile_path(const hk_outfile_t *o) { return o->path ? o->path : "-"; }

static void outfile_free(hk_outfile_t *o)
{
    unregister_tmp(o->slot);
    free(o->path);
    free(o->tmp);
    free(o);
}

static int copy_to_stdout(FILE *in)
{
    char buf[1 << 16];
    size_t n;
    if (fflush(in) || fseek(in, 0, SEEK_SET)) return -1;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, stdout) != n) return -1;
    if (ferror(in) || fflush(stdout)) return -1;
    return 0;
}

int hk_outfile_commit(hk_outfile_t *o)
{
    int rc = 0;
    if (!o->path) {
        if (copy_to_stdout(o->fp) < 0) {
            hk_log_error("writing standard output: %s", strerror(errno));
            /* reported: drop what stdout still buffers, so that the final
             * check of standard output (hk_cli_close_stdout) stays quiet */
            __fpurge(stdout);
            clearerr(stdout);
            rc = -1;
        }
        fclose(o->fp);
        outfile_free(o);
        return rc;
    }
    /* no fsync: rename gives all-or-nothing against failures of haplik; a
     * fsync of a large table would cost more than writing it */
    if (ferror(o->fp) || fflush(o->fp)) {
        hk_log_error("%s: write failed: %s", o->path, strerror(errno));
        rc = -1;
    }
    if (fclose(o->fp) && rc == 0) {
        hk_log_error("%s: write failed: %s", o->path, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && o->tmp) {   /* no tmp: a device or FIFO written directly */
        mode_t mask = umask(0);
        umask(mask);
        chmod(o->tmp, 0666 & ~mask);
        if (rename(o->tmp, o->path)) {
            hk_log_error("%s: cannot move the output into place: %s", o->path, strerror(errno));
            rc = -1;
        }
    }
    if (rc && o->tmp) unlink(o->tmp);
    outfile_free(o);
    return rc;
}

void hk_outfile_abort(hk_outfile_t *o)
{
    if (!o) return;
    fclose(o->fp);
    if (o->tmp) unlink(o->tmp);
    outfile_free(o);
}
