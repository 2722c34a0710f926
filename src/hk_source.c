/* hk_source.c - see hk_source.h. */
#include "config.h"
#include "hk_source.h"
#include "hk_log.h"
#include "hk_source_bgzf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>

/* read(2) past interruptions: up to n bytes; 0 at the end, -1 on error. */
static ssize_t read_some(int fd, void *p, size_t n)
{
    for (;;) {
        const ssize_t got = read(fd, p, n);
        if (got >= 0 || errno != EINTR) return got;
    }
}

#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>

/* Plain gzip through ISA-L; one stream is one core. A reader of 1 or 2
 * threads inflates in the thread that asks for bytes, straight into its
 * block: on two cores that was as fast or faster than a thread of its own,
 * whose every byte is copied once more. With more threads (16 measured) the
 * parse outruns inflation, and a thread of its own inflating ahead into a
 * ring of buffers, never waiting for a block to be asked for, was faster
 * (docs/PERFORMANCE.md, "Why the defaults are what they are": gzip through Intel ISA-L). */
#define INFLATE_BUFS      4
#define INFLATE_BUF_BYTES ((size_t)4 << 20)
#define INFLATE_IN_BYTES  ((size_t)1 << 20)
#define INFLATE_DIRECT_MAX_THREADS 2

typedef struct {
    uint8_t *data;
    size_t   len;
    int      status;     /* 0: more follows, 1: the end of the input, -1: an error */
} inflate_buf_t;

typedef struct {
    int             fd;
    uint8_t        *in;
    struct inflate_state st;
    int             in_eof;
    int             ahead;           /* -1: not chosen yet, 0: inflate in gunzip_read, 1: the thread */
    int             how;             /* hk_read_opts_t's gunzip: 0 auto, 1 direct, 2 ahead */
    int             status;          /* inflating in gunzip_read: inflate_buf_t's, once reached */
    pthread_t       thread;          /* the thread's ring: */
    pthread_mutex_t lock;
    pthread_cond_t  cond;
    inflate_buf_t   buf[INFLATE_BUFS];
    unsigned        filled, taken;   /* buffers produced / consumed, in ring order */
    size_t          at;              /* bytes of buf[taken % INFLATE_BUFS] consumed */
    int             stop;
} gunzip_t;
#endif

struct hk_source {
    char    *path;
    htsFile *fp;           /* NULL when ISA-L reads the file itself */
    int      fd;           /* a plain regular file, for pread; else -1 */
    int      streaming;
    int      compressed;
    int      unterminated;
    int      bgzf_mt;
    off_t    range_start;  /* hk_source_set_range: the bytes read, */
    off_t    range_end;    /* -1 for the whole file */
    off_t    read_pos;     /* hk_source_read of a range: the next offset in it */
#ifdef HAVE_ISAL
    gunzip_t *gz;
    hk_bgzf_t *bz;         /* a BGZF file inflated on the reader's threads */
#endif
};

#ifdef HAVE_ISAL
/* Inflate into out until it is full or the input ends. Members follow one
 * another (`cat a.gz b.gz` is one valid gzip file). Returns the status of
 * inflate_buf_t. */
static int inflate_into(gunzip_t *g, struct inflate_state *st, int *in_eof, uint8_t *out,
                        size_t cap);

/* The same, with *len the bytes produced (also before an error: they are
 * delivered first, and the error after them). */
static int inflate_some(gunzip_t *g, struct inflate_state *st, int *in_eof, uint8_t *out,
                        size_t cap, size_t *len)
{
    const int status = inflate_into(g, st, in_eof, out, cap);
    *len = cap - st->avail_out;
    return status;
}

static int inflate_into(gunzip_t *g, struct inflate_state *st, int *in_eof, uint8_t *out,
                        size_t cap)
{
    st->next_out = out;
    st->avail_out = (uint32_t)cap;
    for (;;) {
        if (st->avail_in == 0 && !*in_eof) {
            const ssize_t got = read_some(g->fd, g->in, INFLATE_IN_BYTES);
            if (got < 0) return -1;
            if (got == 0) *in_eof = 1;
            st->next_in = g->in;
            st->avail_in = (uint32_t)got;
        }
        if (st->block_state == ISAL_BLOCK_FINISH) {      /* a member ended */
            if (st->avail_in == 0 && *in_eof) break;
            if (st->avail_in == 0) continue;
            if (st->next_in[0] != 0x1f) return -1;        /* not another member */
            uint8_t *next_in = st->next_in, *next_out = st->next_out;
            const uint32_t avail_in = st->avail_in, avail_out = st->avail_out;
            isal_inflate_reset(st);
            st->crc_flag = ISAL_GZIP;
            st->next_in = next_in;
            st->avail_in = avail_in;
            st->next_out = next_out;
            st->avail_out = avail_out;
        }
        const uint32_t before_in = st->avail_in, before_out = st->avail_out;
        if (isal_inflate(st) != ISAL_DECOMP_OK) return -1;
        if (st->avail_out == 0) break;
        if (st->avail_in == before_in && st->avail_out == before_out &&
            st->block_state != ISAL_BLOCK_FINISH && *in_eof)
            return -1;                                    /* truncated */
    }
    return st->block_state == ISAL_BLOCK_FINISH && st->avail_in == 0 && *in_eof ? 1 : 0;
}

static void *gunzip_thread(void *arg)
{
    gunzip_t *g = arg;
    pthread_setname_np(pthread_self(), "hk-gunzip");
    int status = 0;
    while (status == 0) {
        pthread_mutex_lock(&g->lock);
        while (g->filled - g->taken == INFLATE_BUFS && !g->stop) pthread_cond_wait(&g->cond, &g->lock);
        const int stop = g->stop;
        pthread_mutex_unlock(&g->lock);
        if (stop) break;
        inflate_buf_t *b = &g->buf[g->filled % INFLATE_BUFS];
        b->len = 0;
        status = inflate_some(g, &g->st, &g->in_eof, b->data, INFLATE_BUF_BYTES, &b->len);
        if (status == 0 && b->len == 0) status = 1;
        b->status = status;
        pthread_mutex_lock(&g->lock);
        g->filled++;
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
    }
    return NULL;
}

static void gunzip_close(gunzip_t *g)
{
    if (!g) return;
    if (g->ahead == 1) {
        pthread_mutex_lock(&g->lock);
        g->stop = 1;
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
        pthread_join(g->thread, NULL);
        pthread_mutex_destroy(&g->lock);
        pthread_cond_destroy(&g->cond);
    }
    for (int k = 0; k < INFLATE_BUFS; k++) free(g->buf[k].data);
    free(g->in);
    if (g->fd >= 0) close(g->fd);
    free(g);
}

static gunzip_t *gunzip_open(const char *path, int how)
{
    gunzip_t *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->ahead = -1;
    g->how = how;
    g->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (g->fd < 0 || !(g->in = malloc(INFLATE_IN_BYTES))) {
        gunzip_close(g);
        return NULL;
    }
    isal_inflate_init(&g->st);
    g->st.crc_flag = ISAL_GZIP;
    g->st.avail_in = 0;
    return g;
}

/* How to inflate, once, before the first read: by the reader's thread count,
 * or as HK_GUNZIP=direct|ahead says (hk_read_opts_t). Where the thread cannot
 * be had, gunzip_read inflates. */
static void gunzip_choose(gunzip_t *g, int nthreads)
{
    if (g->ahead >= 0) return;
    const int how = g->how;
    g->ahead = how == 1 ? 0 : how == 2 ? 1 : nthreads > INFLATE_DIRECT_MAX_THREADS;
    int ok = g->ahead == 1;
    for (int k = 0; ok && k < INFLATE_BUFS; k++) ok = (g->buf[k].data = malloc(INFLATE_BUF_BYTES)) != NULL;
    if (ok) {
        pthread_mutex_init(&g->lock, NULL);
        pthread_cond_init(&g->cond, NULL);
        if (pthread_create(&g->thread, NULL, gunzip_thread, g) == 0) return;
        pthread_mutex_destroy(&g->lock);
        pthread_cond_destroy(&g->cond);
    }
    g->ahead = 0;
}

static ssize_t gunzip_read(gunzip_t *g, char *out, size_t n)
{
    gunzip_choose(g, 1);
    if (!g->ahead) {   /* straight into out; an error after the bytes before it */
        if (g->status) return g->status < 0 ? -1 : 0;
        size_t len = 0;
        g->status = inflate_some(g, &g->st, &g->in_eof, (uint8_t *)out, n, &len);
        if (g->status == 0 && len == 0) g->status = 1;
        return len ? (ssize_t)len : g->status < 0 ? -1 : 0;
    }
    size_t done = 0;
    while (done < n) {
        pthread_mutex_lock(&g->lock);
        while (g->filled == g->taken) pthread_cond_wait(&g->cond, &g->lock);
        pthread_mutex_unlock(&g->lock);
        inflate_buf_t *b = &g->buf[g->taken % INFLATE_BUFS];
        const size_t k = b->len - g->at < n - done ? b->len - g->at : n - done;
        memcpy(out + done, b->data + g->at, k);
        done += k;
        g->at += k;
        if (g->at < b->len) break;
        if (b->status != 0) {                /* the end, or an error: it stays */
            if (b->status < 0 && done == 0) return -1;
            break;
        }
        g->at = 0;
        pthread_mutex_lock(&g->lock);
        g->taken++;
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
    }
    return (ssize_t)done;
}
#endif

static hk_source_t *source_open(const char *path, const hk_read_opts_t *opt, hk_status_t *kind)
{
    (void)opt;   /* without ISA-L htslib inflates everything */
    hk_source_t *s = calloc(1, sizeof *s);
    *kind = HK_E_RUNTIME;
    if (!s || !(s->path = strdup(path))) {
        hk_log_error("%s: out of memory", path);
        *kind = HK_E_NOMEM;
        free(s);
        return NULL;
    }
    s->fd = -1;
    s->range_end = -1;
    const int is_stdin = !strcmp(path, "-");
    errno = 0;
    hFILE *hf = hk_source_hopen(path);
    if (hf && !(s->fp = hts_hopen(hf, path, "r"))) {
        const int e = errno;
        hclose_abruptly(hf);
        errno = e;
    }
    if (!s->fp || s->fp->is_bin) {
        char *what = s->fp ? hts_format_description(&s->fp->format) : NULL;
        if (errno == ENOEXEC || (s->fp && s->fp->is_bin)) {
            hk_log_error("%s:1: binary content (%s), not a text dump", path,
                         what ? what : "unknown format");
            *kind = HK_E_INPUT;
        } else {
            hk_log_error("%s: cannot open: %s", path, errno ? strerror(errno) : "unknown format");
            *kind = errno ? hk_status_of_errno(errno) : HK_E_INPUT;
        }
        free(what);
        hk_source_close(s);
        return NULL;
    }
    /* htslib recognises xz (and more) but reads text only plain or through
     * BGZF (gzip, BGZF); hts_getline would abort on the others */
    const int comp = s->fp->format.compression;
    if (comp != no_compression && comp != gzip && comp != bgzf) {
        char *what = hts_format_description(&s->fp->format);
        hk_log_error("%s:1: unsupported compression (%s): haplik reads plain text, gzip or BGZF",
                     path, what ? what : "unknown");
        free(what);
        *kind = HK_E_INPUT;
        hk_source_close(s);
        return NULL;
    }
    s->compressed = comp != no_compression;
    /* stat first: opening a FIFO again would wait for another writer */
    struct stat st;
    const int regular = is_stdin ? fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)
                                 : stat(path, &st) == 0 && S_ISREG(st.st_mode);
    s->streaming = !regular;
    if (comp == no_compression && !is_stdin && regular) {
        const int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) s->fd = fd;
        else if (fd >= 0) close(fd);
        else if (hk_status_of_errno(errno) != HK_E_INPUT) {   /* out of files: the run's */
            hk_log_error("%s: cannot open: %s", path, strerror(errno));
            *kind = hk_status_of_errno(errno);
            hk_source_close(s);
            return NULL;
        }
    }
    s->unterminated = comp == bgzf && bgzf_check_EOF(s->fp->fp.bgzf) == 0;
#ifdef HAVE_ISAL
    /* plain gzip in a file: ISA-L reads it itself (standard input stays
     * with htslib, which has already taken its first bytes) */
    if (comp == gzip && !is_stdin && regular) {
        if (!(s->gz = gunzip_open(path, opt->gunzip))) {
            hk_log_error("%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
            *kind = errno ? hk_status_of_errno(errno) : HK_E_NOMEM;
            hk_source_close(s);
            return NULL;
        }
        hts_close(s->fp);
        s->fp = NULL;
    }
    /* a BGZF file: its blocks inflated on the reader's threads (htslib's fp
     * stays open, unread; HK_BGZF=htslib reads through it, for measuring) */
    if (comp == bgzf && !is_stdin && regular && !opt->bgzf_htslib && (*kind = hk_bgzf_open(path, &s->bz))) {
        hk_log_error("%s: cannot open: %s", path, strerror(errno));
        hk_source_close(s);
        return NULL;
    }
#endif
    *kind = HK_OK;
    return s;
}

struct hFILE *hk_source_hopen(const char *path)
{
    if (!strcmp(path, "-")) return hopen("-", "r");   /* standard input */
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    hFILE *hf = hdopen(fd, "r");
    if (!hf) {
        const int e = errno;
        close(fd);
        errno = e;
    }
    return hf;
}

hk_status_t hk_source_open(const char *path, const hk_read_opts_t *opt, hk_source_t **out)
{
    hk_status_t st;
    hk_read_opts_t dflt;
    if (!opt) hk_read_opts_init(&dflt);
    *out = source_open(path, opt ? opt : &dflt, &st);
    return *out ? HK_OK : st;
}

int hk_source_seekable(const hk_source_t *s) { return s->fd >= 0; }

#ifdef HAVE_ISAL
int hk_source_blocks(const hk_source_t *s) { return s->bz != NULL; }
ssize_t hk_source_plan(hk_source_t *s, size_t room, int *end) { return hk_bgzf_plan(s->bz, room, end); }
void hk_source_inflate(hk_source_t *s, char *dst, int part, int nparts) { hk_bgzf_inflate(s->bz, dst, part, nparts); }
size_t hk_source_planned(hk_source_t *s, int *bad) { return hk_bgzf_done(s->bz, bad); }
#else
int hk_source_blocks(const hk_source_t *s) { (void)s; return 0; }
ssize_t hk_source_plan(hk_source_t *s, size_t room, int *end) { (void)s; (void)room; *end = -1; return -1; }
void hk_source_inflate(hk_source_t *s, char *dst, int part, int nparts) { (void)s; (void)dst; (void)part; (void)nparts; }
size_t hk_source_planned(hk_source_t *s, int *bad) { (void)s; *bad = 1; return 0; }
#endif
int hk_source_streaming(const hk_source_t *s) { return s->streaming; }
int hk_source_compressed(const hk_source_t *s) { return s->compressed; }
int hk_source_unterminated(const hk_source_t *s) { return s->unterminated; }

hk_status_t hk_source_set_range(hk_source_t *s, off_t start, off_t end)
{
    struct stat st;
    if (s->fd < 0 || start < 0 || end < start || fstat(s->fd, &st) || end > st.st_size) return HK_E_INPUT;
    s->range_start = start;
    s->range_end = end;
    return HK_OK;
}

ssize_t hk_source_pread(const hk_source_t *s, void *buf, size_t n, off_t at)
{
    if (s->range_end >= 0) {   /* the range is the file */
        if (at >= s->range_end - s->range_start) return 0;
        if ((off_t)n > s->range_end - s->range_start - at) n = (size_t)(s->range_end - s->range_start - at);
        at += s->range_start;
    }
    size_t done = 0;
    while (done < n) {
        const ssize_t got = pread(s->fd, (char *)buf + done, n - done, at + (off_t)done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return -1;
        if (got == 0) break;
        done += (size_t)got;
    }
    return (ssize_t)done;
}

ssize_t hk_source_read(hk_source_t *s, void *buf, size_t n)
{
#ifdef HAVE_ISAL
    if (s->gz) return gunzip_read(s->gz, buf, n);
#endif
    if (s->fd >= 0 && s->range_end >= 0) {
        const ssize_t got = hk_source_pread(s, buf, n, s->read_pos);
        if (got > 0) s->read_pos += got;
        return got;
    }
    if (s->fd >= 0) return read_some(s->fd, buf, n);
    if (s->fp->format.compression == no_compression) return hread(s->fp->fp.hfile, buf, n);
    BGZF *z = s->fp->fp.bgzf;
    const ssize_t got = bgzf_read(z, buf, n);
    /* htslib's threaded reader ends at a block cut short as at the end,
     * its error only in errcode */
    if (got == 0 && z->errcode) return -1;
    /* a stream cannot be checked for BGZF's end-of-file block when it is
     * opened (bgzf_check_EOF seeks): its last block tells, once read */
    if (got == 0 && s->streaming && s->fp->format.compression == bgzf && !z->last_block_eof) s->unterminated = 1;
    return got;
}

void hk_source_set_threads(hk_source_t *s, int nthreads)
{
#ifdef HAVE_ISAL
    if (s->gz) gunzip_choose(s->gz, nthreads);
#endif
    /* BGZF blocks decompress independently: let htslib do it in parallel,
     * but not a stream's: htslib's threaded reader marks every stream's last
     * block as the end-of-file block, so a stream cut at a block's end would
     * pass for whole (its blocks are inflated by the reading thread) */
    if (nthreads > 1 && s->fp && s->fp->format.compression == bgzf && !s->bgzf_mt && !hk_source_blocks(s) &&
        !s->streaming)
        s->bgzf_mt = bgzf_mt(s->fp->fp.bgzf, nthreads, 256) == 0;
}

void hk_source_close(hk_source_t *s)
{
    if (!s) return;
    if (s->fp) hts_close(s->fp);
    if (s->fd >= 0) close(s->fd);
#ifdef HAVE_ISAL
    gunzip_close(s->gz);
    hk_bgzf_close(s->bz);
#endif
    free(s->path);
    free(s);
}
