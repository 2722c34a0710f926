/* hk_outfile.c - see hk_outfile.h. */
#include "hk_outfile.h"
#include "hk_log.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A temporary name is ".NAME.tmpXXXXXX" (a backup during commit_all adds
 * ".old"); NAME is cut so that the whole stays within NAME_MAX. */
#define TMP_SUFFIX ".tmpXXXXXX"
#define BACKUP_SUFFIX ".old"
#define TMP_NAME_ROOM (NAME_MAX - 1 - (int)(sizeof TMP_SUFFIX - 1) - (int)(sizeof BACKUP_SUFFIX - 1))

struct hk_outfile {
    char *path;      /* as given; "-" for standard output */
    char *target;    /* the file renamed over; NULL when spooled or written directly */
    char *tmp;       /* temporary file beside target, or the (unlinked) spool's name */
    char *label;     /* for messages: the path, or the spool and what it is for */
    int   spool_fd;  /* >= 0: spooled, copied to this descriptor on commit */
    FILE *fp;
    int   streamed;  /* written as it goes: a descriptor, device or FIFO that is no file */
    struct pending *slot;   /* its entry in the list of pending files, NULL if none */
};

/* Standard streams found closed at start (hk_outfile_guard_std_streams). */
static int std_closed[3];

/* ---- signals ---- */

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
static size_t pending_free;   /* entries with no path: only then is the list walked */
static pthread_mutex_t pending_mu = PTHREAD_MUTEX_INITIALIZER;
/* A thread that lists and creates a temporary file, or moves a set of
 * outputs into place, does so while no signal handler of another thread
 * walks the list: the handler marks the process dying, waits for the work
 * under way (busy) to finish, then walks it, and work that starts later
 * never begins (enter_guarded). Without this a file made just after the walk
 * stayed behind, and a walk during the renames of a split into 300 shards
 * left 176 of them (SIGINT taken by a reading thread). */
static atomic_int busy, dying;

/* Enter (leave) a section that a handler on another thread must not
 * interrupt; the caller has blocked signals in its own thread. When a
 * handler is already ending the process, never returns. */
static void enter_guarded(void)
{
    atomic_fetch_add(&busy, 1);
    if (atomic_load(&dying)) {
        atomic_fetch_sub(&busy, 1);
        for (;;) pause();
    }
}

static void leave_guarded(void) { atomic_fetch_sub(&busy, 1); }

static const int fatal_signals[] = {
    SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
    SIGXCPU,
};
#define N_FATAL (sizeof fatal_signals / sizeof *fatal_signals)

static void block_signals(sigset_t *old)
{
    sigset_t all;
    sigemptyset(&all);
    for (size_t i = 0; i < N_FATAL; i++) sigaddset(&all, fatal_signals[i]);
    pthread_sigmask(SIG_BLOCK, &all, old);
}

/* NULL when out of memory. */
static struct pending *register_tmp(char *tmp)
{
    sigset_t old;
    struct pending *e;
    block_signals(&old);
    pthread_mutex_lock(&pending_mu);
    e = NULL;
    if (pending_free)
        for (e = pending_head; e && e->tmp; e = e->next) {}
    if (e) { e->tmp = tmp; pending_free--; }
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
    pthread_mutex_lock(&pending_mu);
    e->tmp = NULL;
    pending_free++;
    pthread_mutex_unlock(&pending_mu);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void on_signal(int sig)
{
    atomic_store(&dying, 1);
    while (atomic_load(&busy)) {}   /* a mkstemp, or a commit: its renames and copies out */
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
    for (size_t i = 0; i < N_FATAL; i++) {
        /* ignored at start (nohup, a shell's background job): it stays ignored */
        struct sigaction was;
        if (sigaction(fatal_signals[i], NULL, &was) == 0 && was.sa_handler == SIG_IGN) continue;
        sigaction(fatal_signals[i], &sa, NULL);
    }
    signal(SIGXFSZ, SIG_IGN);
}

void hk_outfile_guard_std_streams(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
        /* the wrong direction on purpose: every read or write of it fails */
        int nfd = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (nfd >= 0 && nfd != fd) { dup2(nfd, fd); close(nfd); }
        std_closed[fd] = 1;
    }
}

/* ---- paths ---- */

/* The descriptor a path names (/dev/stdout, /dev/fd/N, /proc/self/fd/N,
 * /proc/<this process>/fd/N), or -1. */
static int fd_of_path(const char *p)
{
    if (!strcmp(p, "/dev/stdin")) return 0;
    if (!strcmp(p, "/dev/stdout")) return 1;
    if (!strcmp(p, "/dev/stderr")) return 2;
    const char *num = NULL;
    if (!strncmp(p, "/dev/fd/", 8)) num = p + 8;
    else if (!strncmp(p, "/proc/self/fd/", 14)) num = p + 14;
    else if (!strncmp(p, "/proc/thread-self/fd/", 21)) num = p + 21;
    else if (!strncmp(p, "/proc/", 6) && isdigit((unsigned char)p[6])) {
        char *end;
        long pid = strtol(p + 6, &end, 10);
        if (pid == (long)getpid() && !strncmp(end, "/fd/", 4)) num = end + 4;
    }
    if (!num || !isdigit((unsigned char)*num)) return -1;
    char *end;
    errno = 0;
    long v = strtol(num, &end, 10);
    return (*end || errno || v > INT_MAX) ? -1 : (int)v;
}

/* A copy of path with its final symbolic links followed (at most 40 hops),
 * stopping at a name of a descriptor (then *fd is set). NULL: out of memory. */
static char *follow_links(const char *path, int *fd)
{
    char *cur = strdup(path);
    *fd = -1;
    for (int hop = 0; cur && hop < 40; hop++) {
        if ((*fd = fd_of_path(cur)) >= 0) break;
        struct stat st;
        char link[PATH_MAX];
        ssize_t n;
        if (lstat(cur, &st) || !S_ISLNK(st.st_mode) ||
            (n = readlink(cur, link, sizeof link - 1)) < 0)
            break;
        link[n] = '\0';
        const char *slash = strrchr(cur, '/');
        const int dirlen = link[0] == '/' || !slash ? 0 : (int)(slash - cur) + 1;
        char *next = malloc((size_t)dirlen + (size_t)n + 1);
        if (next) sprintf(next, "%.*s%s", dirlen, cur, link);
        free(cur);
        cur = next;
    }
    return cur;
}

/* ---- open ---- */

static void outfile_free(hk_outfile_t *o)
{
    if (!o) return;
    unregister_tmp(o->slot);
    free(o->path);
    free(o->target);
    free(o->tmp);
    free(o->label);
    free(o);
}

/* Free o, which failed to open with st; returns st. */
static hk_status_t fail_open(hk_outfile_t *o, hk_status_t st)
{
    if (o->fp) fclose(o->fp);
    outfile_free(o);
    return st;
}

/* A descriptor that is not a regular file (a pipe, a terminal): written as
 * the table is made, through a duplicate of it. */
static hk_status_t open_stream(hk_outfile_t *o, int fd, const char *what)
{
    const int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (!(o->label = strdup(what))) {
        hk_log_error("out of memory");
        if (dfd >= 0) close(dfd);
        return fail_open(o, HK_E_NOMEM);
    }
    if (dfd < 0 || !(o->fp = fdopen(dfd, "w"))) {
        hk_log_error("%s: cannot write: %s", what, strerror(errno));
        if (dfd >= 0) close(dfd);
        return fail_open(o, HK_E_RUNTIME);
    }
    o->streamed = 1;
    setvbuf(o->fp, NULL, _IOFBF, 1 << 16);
    return HK_OK;
}

static _Atomic(const char *) temp_dir = "/tmp";

void hk_outfile_set_temp_dir(const char *dir) { atomic_store(&temp_dir, dir && *dir ? dir : "/tmp"); }

const char *hk_outfile_temp_dir(void) { return atomic_load(&temp_dir); }

/* Standard output or another descriptor: streamed when it is not a regular
 * file, else spooled in $TMPDIR (unlinked at once). */
static hk_status_t open_spool(hk_outfile_t *o, int fd)
{
    const char *what = fd == 1 ? "standard output" : fd == 2 ? "standard error" : o->path;
    struct stat st;
    if ((fd <= 2 && std_closed[fd]) || fcntl(fd, F_GETFD) < 0) {
        hk_log_error("%s is closed: there is nowhere to write the output (give -o FILE)", what);
        return fail_open(o, HK_E_RUNTIME);
    }
    if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) return open_stream(o, fd, what);
    const char *dir = hk_outfile_temp_dir();
    size_t len = strlen(dir) + 32, llen = len + strlen(what) + 32;
    if (!(o->tmp = malloc(len)) || !(o->label = malloc(llen))) {
        hk_log_error("out of memory");
        return fail_open(o, HK_E_NOMEM);
    }
    snprintf(o->tmp, len, "%s/haplik-spool.XXXXXX", dir);
    int sfd = mkstemp(o->tmp);
    if (sfd < 0) {
        hk_log_error("%s: cannot create the spool of %s ($TMPDIR, else /tmp): %s", o->tmp, what,
                     strerror(errno));
        return fail_open(o, HK_E_RUNTIME);
    }
    unlink(o->tmp);
    snprintf(o->label, llen, "%s (the spool of %s)", o->tmp, what);
    if (!(o->fp = fdopen(sfd, "w+"))) {
        hk_log_error("%s: %s", o->label, strerror(errno));
        close(sfd);
        return fail_open(o, HK_E_RUNTIME);
    }
    o->spool_fd = fd;
    return HK_OK;
}

/* A device, FIFO or socket: written directly, never renamed over. */
static hk_status_t open_direct(hk_outfile_t *o, const char *dest)
{
    if (!(o->label = strdup(o->path))) { hk_log_error("out of memory"); return fail_open(o, HK_E_NOMEM); }
    int fd = open(dest, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 || !(o->fp = fdopen(fd, "w"))) {
        hk_log_error("%s: cannot open for writing: %s", o->path, strerror(errno));
        if (fd >= 0) close(fd);
        return fail_open(o, HK_E_RUNTIME);
    }
    o->streamed = 1;
    return HK_OK;
}

/* A regular file (or a new one): a temporary file beside dest, with the mode
 * the file has (or would get). */
static hk_status_t open_renamed(hk_outfile_t *o, char *dest, const struct stat *old)
{
    o->target = dest;
    const char *slash = strrchr(dest, '/');
    const int dirlen = slash ? (int)(slash - dest) + 1 : 0;
    const char *base = dest + dirlen;
    int baselen = (int)strlen(base);
    if (baselen > TMP_NAME_ROOM) baselen = TMP_NAME_ROOM;
    const size_t len = (size_t)dirlen + (size_t)baselen + sizeof TMP_SUFFIX + 2;
    if (!(o->tmp = malloc(len)) || !(o->label = strdup(o->path))) {
        hk_log_error("out of memory");
        return fail_open(o, HK_E_NOMEM);
    }
    snprintf(o->tmp, len, "%.*s.%.*s%s", dirlen, dest, baselen, base, TMP_SUFFIX);
    /* listed for removal before the file exists: a signal that another
     * thread takes (this one blocks them) still finds its name */
    sigset_t old_mask;
    block_signals(&old_mask);
    enter_guarded();
    o->slot = register_tmp(o->tmp);
    const int listed = o->slot != NULL;   /* else out of memory */
    int fd = listed ? mkstemp(o->tmp) : -1;
    if (fd < 0 && o->slot) {
        const int e = errno;
        unregister_tmp(o->slot);
        o->slot = NULL;
        errno = e;
    }
    leave_guarded();
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    if (fd < 0) {
        hk_log_error("%s: cannot create a temporary file beside it: %s", o->path, strerror(errno));
        return fail_open(o, listed ? HK_E_RUNTIME : HK_E_NOMEM);
    }
    if (!o->slot || !(o->fp = fdopen(fd, "w"))) {
        hk_log_error("%s: %s", o->tmp, strerror(errno));
        close(fd);
        unlink(o->tmp);
        return fail_open(o, HK_E_RUNTIME);
    }
    mode_t mode;
    if (old) {
        mode = old->st_mode & 07777;
        if (fchown(fd, old->st_uid, old->st_gid)) { /* not ours to give: keep our own */ }
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    fchmod(fd, mode);
    setvbuf(o->fp, NULL, _IOFBF, 1 << 20);
    return HK_OK;
}

hk_status_t hk_outfile_open(const char *path, hk_outfile_t **out)
{
    *out = NULL;
    hk_outfile_t *o = calloc(1, sizeof *o);
    if (!o || !(o->path = strdup(path ? path : "-"))) {
        hk_log_error("out of memory");
        free(o);
        return HK_E_NOMEM;
    }
    o->spool_fd = -1;
    hk_status_t st;
    if (!strcmp(o->path, "-")) {
        st = open_spool(o, 1);
    } else {
        int fd;
        char *dest = follow_links(o->path, &fd);
        struct stat sb;
        if (!dest) {
            hk_log_error("out of memory");
            return fail_open(o, HK_E_NOMEM);
        }
        if (fd >= 0) {
            free(dest);
            st = open_spool(o, fd);
        } else if (stat(dest, &sb) == 0) {
            if (S_ISREG(sb.st_mode)) {
                st = open_renamed(o, dest, &sb);   /* o owns dest */
            } else if (S_ISDIR(sb.st_mode)) {
                hk_log_error("%s: is a directory", o->path);
                free(dest);
                return fail_open(o, HK_E_RUNTIME);
            } else {
                st = open_direct(o, dest);
                free(dest);
            }
        } else if (errno == ENOENT) {
            st = open_renamed(o, dest, NULL);
        } else {
            hk_log_error("%s: %s", o->path, strerror(errno));
            free(dest);
            return fail_open(o, HK_E_RUNTIME);
        }
    }
    if (st == HK_OK) *out = o;   /* else o was freed */
    return st;
}
FILE *hk_outfile_fp(hk_outfile_t *o) { return o->fp; }
int hk_outfile_renamed(const hk_outfile_t *o) { return o->target != NULL; }
int hk_outfile_streams(const hk_outfile_t *o) { return o->streamed; }
const char *hk_outfile_path(const hk_outfile_t *o) { return o->label ? o->label : o->path; }

/* ---- commit ---- */

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static hk_status_t copy_spool(hk_outfile_t *o)
{
    char buf[1 << 16];
    size_t n;
    if (fflush(o->fp) || fseek(o->fp, 0, SEEK_SET)) {
        hk_log_error("%s: %s", o->label, strerror(errno));
        return HK_E_RUNTIME;
    }
    if (o->spool_fd == 1) fflush(stdout);   /* nothing may come before the table */
    while ((n = fread(buf, 1, sizeof buf, o->fp)) > 0)
        if (write_all(o->spool_fd, buf, n)) {
            hk_log_error("writing %s: %s", strcmp(o->path, "-") ? o->path : "standard output",
                         strerror(errno));
            return HK_E_RUNTIME;
        }
    if (ferror(o->fp)) { hk_log_error("%s: read failed: %s", o->label, strerror(errno)); return HK_E_RUNTIME; }
    return HK_OK;
}

/* Flush and close a file output (not a spool). */
static hk_status_t close_output(hk_outfile_t *o)
{
    /* no fsync: rename gives all-or-nothing against failures of haplik; a
     * fsync of a large table would cost more than writing it. The cause is
     * errno only as the failing call left it: a stream's error flag set by
     * an earlier write (reported there) has no errno of its own now. */
    int err = 0;
    hk_status_t rc = HK_OK;
    if (ferror(o->fp)) rc = HK_E_RUNTIME;
    errno = 0;
    if (!rc && fflush(o->fp)) { rc = HK_E_RUNTIME; err = errno; }
    errno = 0;
    if (fclose(o->fp) && !rc) { rc = HK_E_RUNTIME; err = errno; }
    o->fp = NULL;
    if (rc && err) hk_log_error("%s: write failed: %s", o->path, strerror(err));
    else if (rc) hk_log_error("%s: write failed", o->path);
    return rc;
}

hk_status_t hk_outfile_close(hk_outfile_t *o)
{
    return o->spool_fd >= 0 || !o->fp ? HK_OK : close_output(o);
}

void hk_outfile_abort(hk_outfile_t *o)
{
    if (!o) return;
    if (o->fp) fclose(o->fp);
    if (o->target) unlink(o->tmp);
    outfile_free(o);
}

hk_status_t hk_outfile_commit(hk_outfile_t *o) { return hk_outfile_commit_all(&o, 1); }

/* Undo renames [0, done): put back what each replaced (its backup), or
 * remove what it created. */
static void roll_back(hk_outfile_t **o, char **backup, size_t done)
{
    for (size_t i = 0; i < done; i++) {
        if (!o[i]->target) continue;
        if (backup[i]) {
            if (rename(backup[i], o[i]->target) == 0) { free(backup[i]); backup[i] = NULL; }
        } else {
            unlink(o[i]->target);
        }
    }
}

/* Rename every temporary file into place, keeping a hard link to each file
 * replaced (when n > 1) so that a failure midway can be undone. */
static hk_status_t rename_all(hk_outfile_t **o, size_t n)
{
    char **backup = calloc(n, sizeof *backup);
    if (!backup) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    hk_status_t rc = HK_OK;
    size_t i;
    for (i = 0; i < n && !rc; i++) {
        if (!o[i]->target) continue;
        if (n > 1 && access(o[i]->target, F_OK) == 0) {
            size_t len = strlen(o[i]->tmp) + sizeof BACKUP_SUFFIX;
            if (!(backup[i] = malloc(len))) { hk_log_error("out of memory"); rc = HK_E_NOMEM; break; }
            snprintf(backup[i], len, "%s%s", o[i]->tmp, BACKUP_SUFFIX);
            if (link(o[i]->target, backup[i])) {
                hk_log_error("%s: cannot keep the file it replaces until all outputs are in "
                             "place: %s", o[i]->path, strerror(errno));
                free(backup[i]);
                backup[i] = NULL;
                rc = HK_E_RUNTIME;
                break;
            }
        }
        if (rename(o[i]->tmp, o[i]->target)) {
            hk_log_error("%s: cannot move the output into place: %s", o[i]->path, strerror(errno));
            rc = HK_E_RUNTIME;
            break;
        }
    }
    if (rc) roll_back(o, backup, i);
    for (size_t j = 0; j < n; j++) {
        if (backup[j]) unlink(backup[j]);
        free(backup[j]);
        if (rc && j >= i && o[j]->target) unlink(o[j]->tmp);
    }
    free(backup);
    return rc;
}

hk_status_t hk_outfile_commit_all(hk_outfile_t **o, size_t n)
{
    hk_status_t rc = HK_OK;
    for (size_t i = 0; i < n; i++)
        if (hk_outfile_close(o[i])) rc = HK_E_RUNTIME;
    if (rc == HK_OK) {
        /* the renames (and the copies out, last, as they cannot be undone)
         * happen whole: a signal, on this thread or another, waits until
         * they are done */
        sigset_t old;
        block_signals(&old);
        enter_guarded();
        rc = rename_all(o, n);
        for (size_t i = 0; i < n && rc == HK_OK; i++)
            if (o[i]->spool_fd >= 0 && copy_spool(o[i])) rc = HK_E_RUNTIME;
        leave_guarded();
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    } else {
        for (size_t i = 0; i < n; i++)
            if (o[i]->target) unlink(o[i]->tmp);
    }
    for (size_t i = 0; i < n; i++) {
        if (o[i]->fp) fclose(o[i]->fp);
        outfile_free(o[i]);
        o[i] = NULL;
    }
    return rc;
}

/* ---- inputs and outputs that must differ ---- */

/* path made absolute with its directory resolved (the file need not exist;
 * a symbolic link to a file not there yet is the name of that file, which
 * an output through the link creates). */
static char *canonical(const char *name)
{
    char *full = realpath(name, NULL);
    if (full) return full;
    int fd;
    char *path = follow_links(name, &fd);
    if (!path) return NULL;
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
    char *rdir = dir ? realpath(dir, NULL) : NULL;
    const char *base = slash ? slash + 1 : path;
    char *out = rdir ? malloc(strlen(rdir) + strlen(base) + 2) : NULL;
    if (out) sprintf(out, "%s/%s", rdir, base);
    free(dir);
    free(rdir);
    if (!out) return path;
    free(path);
    return out;
}

static int is_stdout(const char *p) { return !p || !strcmp(p, "-"); }

/* Do a and b name the same file? "-" (or NULL) is the descriptor given
 * with it: standard output for an output, standard input for an input; a
 * descriptor counts as the file it is redirected to. Two names of files not
 * yet there are the same when their directories are. */
static int same_file(const char *a, int a_fd, const char *b, int b_fd)
{
    struct stat sa, sb;
    int ha = is_stdout(a) ? fstat(a_fd, &sa) == 0 : stat(a, &sa) == 0;
    int hb = is_stdout(b) ? fstat(b_fd, &sb) == 0 : stat(b, &sb) == 0;
    if (ha && hb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && S_ISREG(sa.st_mode);
    if (is_stdout(a) || is_stdout(b) || ha || hb) return 0;
    char *ca = canonical(a), *cb = canonical(b);
    int same = ca && cb && !strcmp(ca, cb);
    free(ca);
    free(cb);
    return same;
}

/* An output as the file it would write, to find two outputs that are one:
 * an existing regular file by device and inode, a file not yet there by
 * its canonical name; anything else (a device, a pipe) is written, never
 * replaced, and may be named twice. */
typedef struct {
    int         kind;   /* 0: regular file; 1: not there yet; 2: neither */
    dev_t       dev;
    ino_t       ino;
    char       *name;   /* kind 1: canonical name */
    size_t      i;      /* index in outs */
} out_key_t;

static int cmp_key(const void *pa, const void *pb)
{
    const out_key_t *a = pa, *b = pb;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->kind == 1) {
        const int c = strcmp(a->name, b->name);
        if (c) return c;
    } else if (a->kind == 0) {
        if (a->dev != b->dev) return a->dev < b->dev ? -1 : 1;
        if (a->ino != b->ino) return a->ino < b->ino ? -1 : 1;
    }
    return a->i < b->i ? -1 : a->i > b->i;
}

/* Two outputs that are one file, found by sorting (a command may write a
 * million): HK_OK, HK_E_INPUT or HK_E_NOMEM (logged). */
static hk_status_t check_twice(const char *const *outs, size_t n)
{
    out_key_t *k = n > 1 ? calloc(n, sizeof *k) : NULL;
    if (n > 1 && !k) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    hk_status_t rc = HK_OK;
    for (size_t i = 0; i < n && n > 1 && !rc; i++) {
        struct stat st;
        const int there = is_stdout(outs[i]) ? fstat(1, &st) == 0 : stat(outs[i], &st) == 0;
        k[i].i = i;
        if (there) {
            k[i].kind = S_ISREG(st.st_mode) ? 0 : is_stdout(outs[i]) ? 1 : 2;
            k[i].dev = st.st_dev;
            k[i].ino = st.st_ino;
            /* standard output that is no file: the same only as another "-" */
            if (k[i].kind == 1 && !(k[i].name = strdup("-"))) rc = HK_E_NOMEM;
        } else if (is_stdout(outs[i])) {
            k[i].kind = 1;
            if (!(k[i].name = strdup("-"))) rc = HK_E_NOMEM;
        } else {
            k[i].kind = 1;
            if (!(k[i].name = canonical(outs[i]))) rc = HK_E_NOMEM;
        }
    }
    if (rc) hk_log_error("out of memory");
    if (!rc && n > 1) qsort(k, n, sizeof *k, cmp_key);
    for (size_t i = 1; i < n && !rc; i++) {
        if (k[i].kind == 2 || k[i].kind != k[i - 1].kind ||
            (k[i].kind == 1 ? strcmp(k[i].name, k[i - 1].name)
                            : k[i].dev != k[i - 1].dev || k[i].ino != k[i - 1].ino))
            continue;
        const char *a = outs[k[i - 1].i], *b = outs[k[i].i];   /* a comes first */
        if (is_stdout(a) && is_stdout(b)) hk_log_error("standard output is named as two outputs");
        else hk_log_error("%s: named twice as an output (also as %s)", is_stdout(b) ? "standard output" : b,
                          is_stdout(a) ? "standard output" : a);
        rc = HK_E_INPUT;
    }
    for (size_t i = 0; k && i < n; i++) free(k[i].name);
    free(k);
    return rc;
}

hk_status_t hk_outfile_check_paths(const char *const *outs, size_t n_outs,
                                   const char *const *ins, size_t n_ins)
{
    for (size_t i = 0; i < n_outs; i++)
        if (outs[i] && !*outs[i]) {
            hk_log_error("an output's name is empty");
            return HK_E_INPUT;
        }
    for (size_t i = 0; i < n_outs; i++) {
        const char *out = outs[i] ? outs[i] : "-";
        for (size_t j = 0; j < n_ins; j++) {
            if (!ins[j] || !*ins[j] || !same_file(out, 1, ins[j], 0)) continue;
            if (is_stdout(ins[j]))
                hk_log_error("%s: the output is the file standard input reads: refusing to "
                             "overwrite an input", is_stdout(out) ? "standard output" : out);
            else
                hk_log_error("%s: the output is the input %s: refusing to overwrite an input",
                             is_stdout(out) ? "standard output" : out, ins[j]);
            return HK_E_INPUT;
        }
    }
    return check_twice(outs, n_outs);
}
