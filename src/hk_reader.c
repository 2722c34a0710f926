/* hk_reader.c - see hk_reader.h.
 *
 * The input is read in blocks of 1 MB per thread (a pipe, FIFO or terminal:
 * 256 KB, see block_bytes), one block ahead, so that every step that touches
 * its bytes runs on all threads and the one sequential step handles a few
 * numbers per line:
 *   1. scan (parallel): the block is cut at line ends into one piece per
 *      thread; each thread indexes the lines of its piece (start, fields;
 *      NUL bytes and over-long lines) and, for results-file records, compares
 *      what the region reconstruction needs: whether the read equals the
 *      previous record's, and how far back the same haplotype last was.
 *   2. walk (sequential): the lines in input order: comments and tags,
 *      counts, region structure, every structural error; a region that is
 *      complete gets its place in the batch (hk_batch_append_read/hap).
 *   3. set (parallel): the sequences of the regions placed are copied into
 *      the batch, checked and encoded (hk_batch_set_read/hap).
 * Steps 3 of a block and 1 of the next run in one fork-join, while both
 * blocks are in cache; a plain file's block after them is read there too, a
 * share per thread (pread), and a stream's (gzip, BGZF, a pipe) just before.
 * The blocks of the region not yet complete are kept (with the index of
 * their lines) until it is, so memory is bounded by the largest region plus
 * the batch plus a few blocks.
 *
 * Errors are kept until the sequences placed before them have been set: a bad
 * character on an earlier line must win over a structural error found first
 * by the walk, so on an error the lines of the open region before it are
 * placed too.
 *
 * The results-file format has no region marker: a region is the run of
 * consecutive records that share one list of haplotypes. The walk keeps the
 * lines of the open region's records in `recs`:
 *   recs[0, n_done)   whole reads of the current region (n_haps records each);
 *   recs[n_done, n)   the read being collected.
 * While n_haps is 0 the first read is being collected and its distinct
 * haplotypes define the region's list. A record that does not continue the
 * pattern closes the region; the partial read then starts the next one.
 */
#include "hk_reader.h"
#include "hk_log.h"
#include "hk_threads.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>

/* Limits that turn absurd input into a clear error instead of an allocation
 * failure. */
#define MAX_REGION_READS   10000000L
#define MAX_REGION_HAPS    10000L
#define MAX_REGION_PAIRS   20000000L
/* The longest line that can be valid: a results-file record of the longest
 * sequences (haplotype, read and its four quality strings, HK_MAX_SEQ_LEN
 * each), with room for spaces, the expected value and a line end. Longer
 * lines are refused as soon as they pass it, not held in memory whole. */
#define MAX_LINE_LEN       (6 * (size_t)HK_MAX_SEQ_LEN + 4096)
/* A stream is read this much at a time: a read that fails loses no more (the
 * error is reported at the line after the last whole line before it). */
#define READ_CHUNK         ((size_t)256 << 10)
/* Bytes read per block and thread: enough that starting the threads costs
 * little, little enough that a block is still in cache when it is set (on a
 * two-core box, 1 MB parsed 5-8 % faster than 2 MB on one thread, 512 KB
 * about as fast); and at most MAX_BLOCK in all, as a few blocks are held at a
 * time. */
#define BLOCK_PER_THREAD   ((size_t)1 << 20)
#define MAX_BLOCK          ((size_t)16 << 20)
/* A piece (or a share of the sequences to set) smaller than this is not
 * worth a thread. */
#define MIN_PIECE          ((size_t)64 << 10)
#define MAX_THREADS        64

/* What a line of the index is. Lines that cannot be read stand for the
 * error found there, which the walk reports when it gets to them. */
enum { LINE_TEXT, LINE_NUL, LINE_TOO_LONG, LINE_READ_ERROR, LINE_NO_EOF_MARKER };

/* How the input ended, once it has. */
enum { INPUT_MORE, INPUT_EOF, INPUT_READ_ERROR, INPUT_LONG_LINE };

/* hap_back when a hash collision hid the answer: the walk compares itself. */
#define HAP_UNKNOWN UINT32_MAX
#define NO_REGION   SIZE_MAX

/* One line of a block, found by the scan. A record is a line of 7 fields
 * of which the sequences are not empty and the qualities as long as the
 * read; the "back" distances count lines and reach no further than the
 * first line of the line's piece (piece_back lines back). */
typedef struct {
    char    *text;           /* in its block, NUL-terminated there; NULL for an error */
    uint32_t len;            /* bytes, without the line end */
    uint32_t field_end[7];   /* field k is [k ? field_end[k-1] + 1 : 0, field_end[k]) */
    uint8_t  n_fields;       /* fields split on single spaces, 8 for more than 7 */
    uint8_t  kind;           /* LINE_* */
    uint8_t  expected_ok;    /* record: its last field is a number, `expected` */
    uint8_t  same_read;      /* record: its read fields equal those read_back lines back */
    uint32_t read_back;      /* record: lines back to the piece's previous record, 0 if none */
    uint32_t hap_back;       /* record: lines back to the piece's nearest record with the
                                same haplotype, 0 if none, or HAP_UNKNOWN */
    uint32_t piece_back;     /* lines back to the first line of the piece */
    double   expected;
} line_t;

/* The piece's most recent record by haplotype hash (open addressing). */
typedef struct {
    uint64_t hash;
    uint32_t line;           /* index in the piece */
    uint32_t stamp;          /* the entry belongs to the piece scanned with this stamp */
} hap_slot_t;

/* A block of the input: the bytes after the whole lines of the block before
 * (an unfinished line, or the last line held back), then those read. */
typedef struct {
    char       *data;
    size_t      len, cap;
    size_t      room;        /* bytes to read into it after those carried over */
    size_t      lines_end;   /* data[0, lines_end) is whole lines; the rest goes
                                on into the next block */
    int         input_end;   /* INPUT_*: whether the input ended here, and how */
    size_t      end_line;    /* once scanned: index in lines after its last line */
} block_t;

/* A thread's piece of a block and what it found there. */
typedef struct {
    char       *buf;
    size_t      lo, hi;      /* bytes [lo, hi) of buf: whole lines */
    line_t     *lines;
    size_t      n, m;
    hap_slot_t *map;
    size_t      map_cap, map_used;
    uint32_t    stamp;
    int         oom;
} piece_t;

/* A sequence placed in the batch, to be set from its line. */
typedef struct {
    size_t   line;           /* index in lines */
    size_t   index;          /* the read or haplotype in the batch */
    uint32_t len;
    uint8_t  is_read;        /* 1: the 5 read fields from `field` on; 0: a haplotype */
    uint8_t  field;
} seq_t;

struct hk_reader {
    char       *path;
    htsFile    *fp;
    hk_seq_rules_t rules;    /* how sequences are normalised */
    int         format;
    char       *name;        /* current region tag, NULL for none */
    long        source_line; /* from "# source-line N", 0 when none */
    int         failed;
    long        err_line;    /* the first error: line (0 if none) and text */
    int         err_runtime; /* it is a runtime failure (memory), not bad input */
    char        err_msg[512];
    int         nthreads;    /* for scanning and setting sequences */
    int         bgzf_unterminated; /* BGZF without its end-of-file marker */
    int         bgzf_mt;     /* BGZF decompressed by htslib's threads */
    /* the input, read a block ahead of the scan: the blocks of the lines in
     * the index (kept until walked and placed), the block after them */
    int         fd;          /* a plain regular file, read by all threads at once
                                (pread), or -1: a stream, read in order (htslib) */
    off_t       fd_pos;      /* where its next block starts */
    int         streaming;   /* a pipe, FIFO or terminal, not a regular file */
    block_t   **held;        /* oldest first */
    size_t      n_held, m_held;
    block_t    *ahead;       /* the next block, NULL before the first */
    block_t    *spare;       /* a block to reuse */
    int         input_end;   /* INPUT_*: of the last block scanned */
    line_t     *lines;
    size_t      n_lines, m_lines;
    size_t      walk;        /* the next line to walk */
    long        line0;       /* input line number of lines[0] */
    piece_t    *pieces;
    int         n_pieces;    /* allocated */
    seq_t      *seqs;        /* the placed sequences not set yet */
    size_t      n_seqs, m_seqs, seq_bytes;
    /* batch format: the region being walked */
    size_t      head;        /* the line of its header, NO_REGION when none */
    long        head_reads, head_haps;
    /* results-file reconstruction (see top): lines of the open region's records */
    size_t     *recs;
    size_t      n, m_recs, n_done, n_haps;
};

const char *hk_reader_format_name(int format)
{
    return format == HK_FMT_GATK ? "gatk" : format == HK_FMT_BATCH ? "batch" : "auto";
}

int hk_reader_parse_format(const char *s)
{
    if (!strcmp(s, "auto")) return HK_FMT_AUTO;
    if (!strcmp(s, "gatk")) return HK_FMT_GATK;
    if (!strcmp(s, "batch")) return HK_FMT_BATCH;
    return -1;
}

hk_reader_t *hk_reader_open(const char *path, int format, hk_seq_rules_t rules)
{
    hk_reader_t *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        hk_log_error("%s: out of memory", path);
        free(r);
        return NULL;
    }
    r->fd = -1;
    errno = 0;
    r->fp = hts_open(path, "r");
    if (!r->fp || r->fp->is_bin) {
        char *what = r->fp ? hts_format_description(&r->fp->format) : NULL;
        if (errno == ENOEXEC || (r->fp && r->fp->is_bin))
            hk_log_error("%s:1: binary content (%s), not a text dump", path,
                         what ? what : "unknown format");
        else
            hk_log_error("%s: cannot open: %s", path, errno ? strerror(errno) : "unknown format");
        free(what);
        hk_reader_close(r);
        return NULL;
    }
    /* htslib recognises xz (and more) but reads text only plain or through
     * BGZF (gzip, BGZF); hts_getline would abort on the others */
    const int comp = r->fp->format.compression;
    if (comp != no_compression && comp != gzip && comp != bgzf) {
        char *what = hts_format_description(&r->fp->format);
        hk_log_error("%s:1: unsupported compression (%s): haplik reads plain text, gzip or BGZF",
                     path, what ? what : "unknown");
        free(what);
        hk_reader_close(r);
        return NULL;
    }
    /* a plain regular file can be read at any offset: by all threads at once
     * (stat first: opening a FIFO again would wait for another writer) */
    struct stat st;
    r->streaming = !strcmp(path, "-") ? fstat(STDIN_FILENO, &st) != 0 || !S_ISREG(st.st_mode)
                                      : stat(path, &st) != 0 || !S_ISREG(st.st_mode);
    if (comp == no_compression && strcmp(path, "-") && stat(path, &st) == 0 &&
        S_ISREG(st.st_mode)) {
        const int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) r->fd = fd;
        else if (fd >= 0) close(fd);
    }
    /* a BGZF file cut at a block boundary reads as a shorter valid file;
     * only its missing end-of-file marker tells */
    r->bgzf_unterminated = r->fp->format.compression == bgzf &&
                           bgzf_check_EOF(r->fp->fp.bgzf) == 0;
    r->rules = rules;
    r->format = format;
    r->nthreads = 1;
    r->line0 = 1;
    r->head = NO_REGION;
    return r;
}

static void free_block(block_t *blk)
{
    if (blk) free(blk->data);
    free(blk);
}

void hk_reader_close(hk_reader_t *r)
{
    if (!r) return;
    if (r->fp) hts_close(r->fp);
    if (r->fd >= 0) close(r->fd);
    free(r->path);
    free(r->name);
    for (size_t i = 0; i < r->n_held; i++) free_block(r->held[i]);
    free(r->held);
    free_block(r->ahead);
    free_block(r->spare);
    free(r->lines);
    for (int k = 0; k < r->n_pieces; k++) {
        free(r->pieces[k].lines);
        free(r->pieces[k].map);
    }
    free(r->pieces);
    free(r->seqs);
    free(r->recs);
    free(r);
}

int hk_reader_format(const hk_reader_t *r) { return r->format; }

#define FAIL(r, line, ...) do { reader_error(r, line, __VA_ARGS__); return -1; } while (0)

/* Errors are kept, not printed, until the sequences placed before them have
 * been set: a bad character on an earlier line must win over a structural
 * error found first by the walk. */
__attribute__((format(printf, 3, 4)))
static void reader_error(hk_reader_t *r, long line, const char *fmt, ...)
{
    if (r->failed) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err_msg, sizeof r->err_msg, fmt, ap);
    va_end(ap);
    r->err_line = line;
    r->failed = 1;
    r->err_runtime = !strcmp(fmt, "out of memory");   /* not the input's fault */
}

/* Input line number of lines[i]. */
static long line_no(const hk_reader_t *r, size_t i) { return r->line0 + (long)i; }

static const char *line_text(const hk_reader_t *r, size_t i) { return r->lines[i].text; }

static uint32_t field_start(const line_t *L, int k) { return k ? L->field_end[k - 1] + 1 : 0; }

/* Threads worth starting for this many bytes. */
static int threads_for(const hk_reader_t *r, size_t bytes)
{
    const size_t n = bytes / MIN_PIECE;
    return n < 1 ? 1 : n < (size_t)r->nthreads ? (int)n : r->nthreads;
}

/* ---- step 1: scan (one thread per piece) ---- */

/* Split line L (text s) on single spaces: n_fields and field_end. */
static void split_fields(line_t *L, const char *s)
{
    uint32_t from = 0;
    for (int n = 0;; n++) {
        if (n == 7) { L->n_fields = 8; return; }
        const char *q = memchr(s + from, ' ', L->len - from);
        L->field_end[n] = q ? (uint32_t)(q - s) : L->len;
        if (!q) { L->n_fields = (uint8_t)(n + 1); return; }
        from = L->field_end[n] + 1;
    }
}

/* A record: 7 fields, sequences not empty, qualities as long as the read
 * (what the walk checks before it takes a line as a record). */
static int is_record(const line_t *L)
{
    const uint32_t *fe = L->field_end;
    if (L->n_fields != 7 || fe[0] == 0 || fe[1] == fe[0] + 1) return 0;
    for (int k = 2; k < 6; k++)
        if (fe[k] - fe[k - 1] != fe[1] - fe[0]) return 0;
    return 1;
}

/* Bytes of a record's read fields with the spaces between them. */
static uint32_t read_span(const line_t *L) { return L->field_end[5] - L->field_end[0] - 1; }

/* A hash of n bytes for the haplotype map. Four lanes keep four multipliers
 * busy; each lane's state is a bijection of its words, so only the final
 * mix can make two texts of one length collide. */
static uint64_t hash_bytes(const char *s, size_t n)
{
    const uint64_t K = 0x9E3779B97F4A7C15u, M = 0xBF58476D1CE4E5B9u;
    uint64_t a = n, b = n ^ 0x243F6A8885A308D3u, c = n ^ 0x13198A2E03707344u,
             d = n ^ 0xA4093822299F31D0u, w[4];
    for (; n >= 32; s += 32, n -= 32) {
        memcpy(w, s, 32);
        a = (a ^ w[0]) * K;
        b = (b ^ w[1]) * K;
        c = (c ^ w[2]) * K;
        d = (d ^ w[3]) * K;
    }
    if (n) {
        memset(w, 0, sizeof w);
        memcpy(w, s, n);
        a = (a ^ w[0]) * K;
        b = (b ^ w[1]) * K;
        c = (c ^ w[2]) * K;
        d = (d ^ w[3]) * K;
    }
    uint64_t x = a;
    x = (x ^ (x >> 31) ^ b) * M;
    x = (x ^ (x >> 31) ^ c) * M;
    x = (x ^ (x >> 31) ^ d) * M;
    return x ^ (x >> 29);
}

/* Double the piece's haplotype map (or make it), keeping this piece's entries. */
static int map_grow(piece_t *p)
{
    const size_t cap = p->map_cap ? 2 * p->map_cap : 1024;
    hap_slot_t *m = calloc(cap, sizeof *m);   /* stamp 0: empty (stamps start at 1) */
    if (!m) return -1;
    for (size_t k = 0; k < p->map_cap; k++) {
        if (p->map[k].stamp != p->stamp) continue;
        size_t j = p->map[k].hash & (cap - 1);
        while (m[j].stamp == p->stamp) j = (j + 1) & (cap - 1);
        m[j] = p->map[k];
    }
    free(p->map);
    p->map = m;
    p->map_cap = cap;
    return 0;
}

/* hap_back of record i: the piece's most recent record with the same
 * haplotype hash is the nearest with the same haplotype, if the texts agree. */
static void scan_hap(piece_t *p, size_t i)
{
    line_t *L = &p->lines[i];
    const char *hap = L->text;
    const uint32_t len = L->field_end[0];
    const uint64_t h = hash_bytes(hap, len);
    const size_t mask = p->map_cap - 1;
    size_t k = h & mask;
    for (; p->map[k].stamp == p->stamp; k = (k + 1) & mask) {
        if (p->map[k].hash != h) continue;
        const line_t *J = &p->lines[p->map[k].line];
        L->hap_back = J->field_end[0] == len && !memcmp(J->text, hap, len)
                      ? (uint32_t)(i - p->map[k].line) : HAP_UNKNOWN;
        p->map[k].line = (uint32_t)i;
        return;
    }
    p->map[k] = (hap_slot_t){ .hash = h, .line = (uint32_t)i, .stamp = p->stamp };
    if (++p->map_used * 2 > p->map_cap && map_grow(p)) p->oom = 1;
}

/* What the walk needs of record i beyond its fields, found here in parallel. */
static void scan_record(piece_t *p, size_t i, size_t *prev_record)
{
    line_t *L = &p->lines[i];
    const char *s = L->text, *value = s + L->field_end[5] + 1;
    char *end;
    L->expected = strtod(value, &end);
    L->expected_ok = end != value && *end == '\0';
    if (*prev_record != SIZE_MAX) {
        const line_t *P = &p->lines[*prev_record];
        L->read_back = (uint32_t)(i - *prev_record);
        L->same_read = read_span(P) == read_span(L) &&
                       !memcmp(P->text + P->field_end[0] + 1, s + L->field_end[0] + 1,
                               read_span(L));
    }
    *prev_record = i;
    scan_hap(p, i);
}

/* Index the lines of the piece; NUL-terminate each in place. */
static void *scan_piece(void *arg)
{
    piece_t *p = arg;
    char *s = p->buf + p->lo, *const end = p->buf + p->hi;
    char *nul = memchr(s, '\0', (size_t)(end - s));   /* the next NUL byte at or after s */
    if (!nul) nul = end;
    size_t prev_record = SIZE_MAX;
    p->n = 0;
    p->oom = 0;
    p->map_used = 0;
    if (++p->stamp == 0) {   /* wrapped: no entry may look current */
        if (p->map) memset(p->map, 0, p->map_cap * sizeof *p->map);
        p->stamp = 1;
    }
    if (!p->map && map_grow(p)) { p->oom = 1; return NULL; }
    while (s < end && !p->oom) {
        char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl) nl = end;    /* the last line, without a line end */
        if (nul < s && !(nul = memchr(s, '\0', (size_t)(end - s)))) nul = end;
        if (p->n == p->m) {
            const size_t m = p->m ? 2 * p->m : 4096;
            line_t *x = realloc(p->lines, m * sizeof *x);
            if (!x) { p->oom = 1; return NULL; }
            p->lines = x;
            p->m = m;
        }
        const size_t i = p->n++;
        line_t *L = &p->lines[i];
        size_t len = (size_t)(nl - s);
        memset(L, 0, sizeof *L);
        L->text = s;
        L->piece_back = (uint32_t)i;
        if (len > MAX_LINE_LEN) {
            L->kind = LINE_TOO_LONG;
        } else if (nul < nl) {
            L->kind = LINE_NUL;
        } else {
            if (len && s[len - 1] == '\r') len--;   /* CRLF, also on a last line */
            s[len] = '\0';
            L->len = (uint32_t)len;
            split_fields(L, s);
            if (is_record(L)) scan_record(p, i, &prev_record);
        }
        s = nl + 1;
    }
    return NULL;
}

static int add_line(hk_reader_t *r, size_t n)
{
    if (r->n_lines + n <= r->m_lines) return 0;
    size_t m = r->m_lines ? r->m_lines : 4096;
    while (m < r->n_lines + n) m *= 2;
    line_t *x = realloc(r->lines, m * sizeof *x);
    if (!x) FAIL(r, line_no(r, r->n_lines), "out of memory");
    r->lines = x;
    r->m_lines = m;
    return 0;
}

/* A line for an error found where the input ends, reported when walked. */
static int add_error_line(hk_reader_t *r, int kind)
{
    if (add_line(r, 1)) return -1;
    r->lines[r->n_lines++] = (line_t){ .kind = (uint8_t)kind };
    return 0;
}

/* Report a bad character found while setting sequences (unless an earlier
 * error is already kept). */
static void char_error(hk_reader_t *r, const hk_batch_error_t *e)
{
    static const char *const field[] = { "bases", "base qualities", "insertion qualities",
                                         "deletion qualities", "gap-continuation qualities" };
    if (r->failed && r->err_line <= e->line) return;
    r->failed = 0;
    if (e->code == HK_BATCH_EBASE)
        reader_error(r, e->line, "%s: invalid base '%c' at position %u (expected A, C, G, T or N%s)",
                     e->is_read ? "read" : "haplotype", e->bad, e->pos + 1,
                     r->rules.unknown_as_n ? "" : "; set model.unknown_bases to \"as_n\" to accept it");
    else if (e->code == HK_BATCH_EGAP)
        reader_error(r, e->line, "read: the insertion and deletion gap-open qualities at position %u "
                     "have error probabilities that sum to 1 or more, which leaves no probability "
                     "for match-to-match", e->pos + 1);
    else if (e->code == HK_BATCH_EGCP)
        reader_error(r, e->line, "read: the gap-continuation quality at position %u is Q0 ('!'), "
                     "which leaves no probability for gap-to-match: every likelihood would be 0",
                     e->pos + 1);
    else
        reader_error(r, e->line, "read %s: invalid quality character 0x%02x at position %u "
                     "(expected Phred+33 '!'..'~')", field[e->field], e->bad, e->pos + 1);
}

/* ---- reading blocks, one ahead of the scan ---- */

/* A stream's writer may hold it open with nothing more to send for a while
 * (a producer waiting on haplik's output, or between records): what came
 * before must then be scored and written, not held back until a large block
 * fills. So a stream is read a chunk per block, as the reader before blocks
 * did (and the scan of a chunk gains little from threads anyway). */
static size_t block_bytes(const hk_reader_t *r)
{
    if (r->streaming) return READ_CHUNK;
    const size_t n = BLOCK_PER_THREAD * (size_t)r->nthreads;
    return n < MAX_BLOCK ? n : MAX_BLOCK;
}

/* Where the whole lines of blk end, its bytes read: after its last line end;
 * at the end of the input, at its end; and before its last line when more
 * follows a block that ends with a line end (held back: only what follows
 * tells whether it is the input's last, where a missing BGZF end-of-file
 * marker is reported). A last line already longer than any valid one ends
 * the input: it is refused before it is read whole. */
static void end_block(block_t *blk)
{
    const char *nl = memrchr(blk->data, '\n', blk->len);
    const size_t last = nl ? (size_t)(nl + 1 - blk->data) : 0;   /* start of the last line */
    if (blk->len - last > MAX_LINE_LEN) blk->input_end = INPUT_LONG_LINE;
    blk->lines_end = blk->input_end == INPUT_EOF ? blk->len : last;
    if (blk->input_end == INPUT_MORE && last == blk->len && last > 0) {
        nl = memrchr(blk->data, '\n', last - 1);
        blk->lines_end = nl ? (size_t)(nl + 1 - blk->data) : 0;
    }
}

/* Read a block of a stream into blk, after the bytes carried over into it. */
static void read_stream(hk_reader_t *r, block_t *blk)
{
    const size_t goal = blk->len + blk->room;
    blk->input_end = INPUT_MORE;
    while (blk->len < goal) {   /* a chunk at a time: a failed read loses no more */
        char *at = blk->data + blk->len;
        const size_t ask = goal - blk->len < READ_CHUNK ? goal - blk->len : READ_CHUNK;
        const ssize_t got = r->fp->format.compression == no_compression
                            ? hread(r->fp->fp.hfile, at, ask) : bgzf_read(r->fp->fp.bgzf, at, ask);
        if (got <= 0) {
            blk->input_end = got < 0 ? INPUT_READ_ERROR : INPUT_EOF;
            break;
        }
        blk->len += (size_t)got;
    }
    end_block(blk);
}

/* A share of a plain file's next block: bytes [lo, hi) after those carried
 * into blk, at fd_pos + lo. Returns the bytes read (short at the end of the
 * file), *err set on a read error. */
static size_t read_share(const hk_reader_t *r, const block_t *blk, size_t lo, size_t hi, int *err)
{
    size_t at = lo;
    while (at < hi) {
        const ssize_t n = pread(r->fd, blk->data + blk->len + at, hi - at, r->fd_pos + (off_t)at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            *err = n < 0;
            break;
        }
        at += (size_t)n;
    }
    return at - lo;
}

/* The shares of blk read: it ends at the first short one. */
static void end_shares(hk_reader_t *r, block_t *blk, const size_t *got, const size_t *want,
                       const int *err, int n)
{
    size_t len = 0;
    blk->input_end = INPUT_MORE;
    for (int k = 0; k < n && blk->input_end == INPUT_MORE; k++) {
        len += got[k];
        if (err[k]) blk->input_end = INPUT_READ_ERROR;
        else if (got[k] < want[k]) blk->input_end = INPUT_EOF;
    }
    blk->len += len;
    r->fd_pos += (off_t)len;
    end_block(blk);
}

/* The block after prev (NULL for the first) with the bytes after prev's
 * whole lines carried over, room for a block more, not read yet. */
static block_t *new_block(hk_reader_t *r, const block_t *prev)
{
    const size_t carry = prev ? prev->len - prev->lines_end : 0;
    const size_t need = carry + block_bytes(r) + 1;   /* + 1: a last line's terminating NUL */
    block_t *blk = r->spare ? r->spare : calloc(1, sizeof *blk);
    r->spare = NULL;
    if (!blk) {
        reader_error(r, line_no(r, r->n_lines), "out of memory");
        return NULL;
    }
    if (blk->cap < need) {
        char *x = realloc(blk->data, need);
        if (!x) {
            free_block(blk);
            reader_error(r, line_no(r, r->n_lines), "out of memory");
            return NULL;
        }
        blk->data = x;
        blk->cap = need;
    }
    if (carry) memcpy(blk->data, prev->data + prev->lines_end, carry);
    blk->len = carry;
    blk->room = block_bytes(r);
    return blk;
}

/* ---- steps 1 and 3: scan a block, set the sequences placed ---- */

typedef struct {
    hk_reader_t      *r;
    hk_batch_t       *b;
    size_t            lo, hi;    /* seqs[lo, hi) to set */
    hk_batch_error_t  err;       /* the error on the earliest line (code 0 if none) */
    piece_t          *piece;     /* to scan, or NULL */
    block_t          *next;      /* a plain file's next block, to read a share of, or NULL */
    size_t            read_lo, read_hi, read_got;
    int               read_err;
} step_job_t;

static void *step_part(void *arg)
{
    step_job_t *j = arg;
    const hk_reader_t *r = j->r;
    hk_batch_error_t e;
    j->err.code = 0;
    for (size_t k = j->lo; k < j->hi; k++) {
        const seq_t *x = &r->seqs[k];
        const char *s = r->lines[x->line].text + field_start(&r->lines[x->line], x->field);
        const size_t step = (size_t)x->len + 1;   /* the read's fields, one space apart */
        const int rc = x->is_read
            ? hk_batch_set_read(j->b, &r->rules, x->index, s, s + step, s + 2 * step, s + 3 * step,
                                s + 4 * step, &e)
            : hk_batch_set_hap(j->b, &r->rules, x->index, s, &e);
        if (rc && (!j->err.code || e.line < j->err.line)) j->err = e;
    }
    if (j->piece) scan_piece(j->piece);
    if (j->next) j->read_got = read_share(r, j->next, j->read_lo, j->read_hi, &j->read_err);
    return NULL;
}

/* In one fork-join: give the sequences placed so far their text, normalised
 * (while the block they come from is still in cache); scan the whole lines
 * of blk (unless NULL) into r->pieces; read next (unless NULL), a plain
 * file's block after blk, a share per thread. Returns the number of pieces. */
static int run_step(hk_reader_t *r, hk_batch_t *b, block_t *blk, block_t *next)
{
    const size_t scan_bytes = blk ? blk->lines_end : 0, read_bytes = next ? next->room : 0;
    const int nt = threads_for(r, r->seq_bytes + scan_bytes + read_bytes);
    if (blk && nt > r->n_pieces) {
        piece_t *x = realloc(r->pieces, (size_t)nt * sizeof *x);
        if (!x) {
            reader_error(r, line_no(r, r->n_lines), "out of memory");
            return 0;
        }
        memset(x + r->n_pieces, 0, (size_t)(nt - r->n_pieces) * sizeof *x);
        r->pieces = x;
        r->n_pieces = nt;
    }
    step_job_t job[MAX_THREADS];
    size_t at = 0;
    for (int t = 0; t < nt; t++) {
        job[t] = (step_job_t){ .r = r, .b = b, .lo = r->n_seqs * (size_t)t / (size_t)nt,
                               .hi = r->n_seqs * (size_t)(t + 1) / (size_t)nt, .next = next,
                               .read_lo = read_bytes * (size_t)t / (size_t)nt,
                               .read_hi = read_bytes * (size_t)(t + 1) / (size_t)nt };
        if (!blk) continue;
        /* pieces cut after the first line end past an even share */
        size_t cut = t + 1 == nt ? scan_bytes : scan_bytes / (size_t)nt * (size_t)(t + 1);
        if (cut < at) cut = at;
        if (cut < scan_bytes) {
            const char *nl = memchr(blk->data + cut, '\n', scan_bytes - cut);
            cut = nl ? (size_t)(nl + 1 - blk->data) : scan_bytes;
        }
        job[t].piece = &r->pieces[t];
        job[t].piece->buf = blk->data;
        job[t].piece->lo = at;
        job[t].piece->hi = at = cut;
    }
    if (blk || next || r->n_seqs) hk_threads_run(step_part, job, sizeof *job, nt);
    r->n_seqs = r->seq_bytes = 0;
    for (int t = 0; t < nt; t++)
        if (job[t].err.code) char_error(r, &job[t].err);
    if (next) {
        size_t got[MAX_THREADS], want[MAX_THREADS];
        int err[MAX_THREADS];
        for (int t = 0; t < nt; t++) {
            got[t] = job[t].read_got;
            want[t] = job[t].read_hi - job[t].read_lo;
            err[t] = job[t].read_err;
        }
        end_shares(r, next, got, want, err, nt);
    }
    return blk ? nt : 0;
}

/* Read the first block (before there is anything to scan). */
static int read_first_block(hk_reader_t *r)
{
    if (!(r->ahead = new_block(r, NULL))) return -1;
    if (r->fd < 0) {
        read_stream(r, r->ahead);
    } else {
        const size_t want = r->ahead->room;
        int err = 0;
        const size_t got = read_share(r, r->ahead, 0, want, &err);
        end_shares(r, r->ahead, &got, &want, &err, 1);
    }
    return 0;
}

/* Append the lines of the np pieces scanned to the index. */
static int append_lines(hk_reader_t *r, int np)
{
    size_t total = 0;
    for (int k = 0; k < np; k++) {
        if (r->pieces[k].oom) FAIL(r, line_no(r, r->n_lines + total), "out of memory");
        total += r->pieces[k].n;
    }
    if (add_line(r, total)) return -1;
    for (int k = 0; k < np; k++) {
        if (!r->pieces[k].n) continue;
        memcpy(r->lines + r->n_lines, r->pieces[k].lines, r->pieces[k].n * sizeof *r->lines);
        r->n_lines += r->pieces[k].n;
    }
    return 0;
}

/* Give the sequences placed so far their text; see run_step. */
static void set_sequences(hk_reader_t *r, hk_batch_t *b) { (void)run_step(r, b, NULL, NULL); }

/* Drop the lines walked and placed, keeping those of the open region, and
 * the blocks that held no other. */
static void drop_placed_lines(hk_reader_t *r)
{
    size_t keep = r->n_lines;   /* the first line kept */
    if (r->head != NO_REGION) keep = r->head;
    else if (r->n) keep = r->recs[0];
    if (keep) memmove(r->lines, r->lines + keep, (r->n_lines - keep) * sizeof *r->lines);
    r->n_lines -= keep;
    r->walk -= keep;
    r->line0 += (long)keep;
    if (r->head != NO_REGION) r->head -= keep;
    for (size_t i = 0; i < r->n; i++) r->recs[i] -= keep;
    size_t k = 0;
    for (; k < r->n_held && r->held[k]->end_line <= keep; k++) {
        if (r->spare) free_block(r->held[k]);
        else r->spare = r->held[k];
    }
    memmove(r->held, r->held + k, (r->n_held - k) * sizeof *r->held);
    r->n_held -= k;
    for (size_t i = 0; i < r->n_held; i++) r->held[i]->end_line -= keep;
}

/* The walk has reached the end of the index: take the block read ahead and
 * read the next (a stream now, a plain file's in the step); set what the walk
 * placed and scan the block; drop the lines no longer needed and add the
 * block's. */
static int refill(hk_reader_t *r, hk_batch_t *b)
{
    /* none ahead: the first block (after the last the walk does not come back) */
    if (!r->ahead && read_first_block(r) < 0) return -1;
    block_t *blk = r->ahead;
    r->ahead = NULL;
    if (r->n_held == r->m_held) {
        const size_t m = r->m_held ? 2 * r->m_held : 16;
        block_t **x = realloc(r->held, m * sizeof *x);
        if (!x) {
            free_block(blk);
            FAIL(r, line_no(r, r->n_lines), "out of memory");
        }
        r->held = x;
        r->m_held = m;
    }
    r->held[r->n_held++] = blk;
    blk->end_line = SIZE_MAX;   /* its lines are not in the index yet */
    r->input_end = blk->input_end;
    if (blk->input_end == INPUT_MORE) {
        if (!(r->ahead = new_block(r, blk))) return -1;
        if (r->fd < 0) read_stream(r, r->ahead);
    }
    const int np = run_step(r, b, blk, r->fd >= 0 ? r->ahead : NULL);
    drop_placed_lines(r);   /* before the block's lines are added: fewer to move */
    const size_t first = r->n_lines;
    if (append_lines(r, np) < 0) return -1;
    blk->end_line = r->n_lines;
    switch (blk->input_end) {
    case INPUT_READ_ERROR: return add_error_line(r, LINE_READ_ERROR);
    case INPUT_LONG_LINE:  return add_error_line(r, LINE_TOO_LONG);
    case INPUT_EOF:
        if (!r->bgzf_unterminated) break;
        if (r->n_lines == first) return add_error_line(r, LINE_NO_EOF_MARKER);
        r->lines[r->n_lines - 1].kind = LINE_NO_EOF_MARKER;
    }
    return r->failed ? -1 : 0;   /* a bad character found while setting */
}

/* ---- step 2: walk ---- */

/* Report an error of the append functions (length, memory). */
static int add_error(hk_reader_t *r, long line, int rc, const char *what)
{
    if (rc == HK_BATCH_ELONG)
        reader_error(r, line, "%s longer than %u bases", what, HK_MAX_SEQ_LEN);
    else
        reader_error(r, line, "out of memory");
    return -1;
}

/* Note that the sequence of line li goes to read (haplotype) `index`. */
static int add_seq(hk_reader_t *r, size_t li, size_t index, uint32_t len, int is_read, int field)
{
    if (r->n_seqs == r->m_seqs) {
        const size_t m = r->m_seqs ? 2 * r->m_seqs : 4096;
        seq_t *x = realloc(r->seqs, m * sizeof *x);
        if (!x) FAIL(r, line_no(r, li), "out of memory");
        r->seqs = x;
        r->m_seqs = m;
    }
    r->seqs[r->n_seqs++] = (seq_t){ .line = li, .index = index, .len = len,
                                    .is_read = (uint8_t)is_read, .field = (uint8_t)field };
    r->seq_bytes += (size_t)len * (is_read ? 5 : 1);
    return 0;
}

/* Give the read whose bases are field `field` of line li its place in the
 * last region of b; its sequences are set later (set_sequences). */
static int place_read(hk_reader_t *r, hk_batch_t *b, size_t li, int field)
{
    const line_t *L = &r->lines[li];
    const uint32_t len = L->field_end[field] - field_start(L, field);
    int rc = hk_batch_append_read(b, len, line_no(r, li));
    if (rc) return add_error(r, line_no(r, li), rc, "read");
    return add_seq(r, li, b->n_reads - 1, len, 1, field);
}

/* The same for the haplotype in field 0 of line li. */
static int place_hap(hk_reader_t *r, hk_batch_t *b, size_t li)
{
    const uint32_t len = r->lines[li].field_end[0];
    int rc = hk_batch_append_hap(b, len, line_no(r, li));
    if (rc) return add_error(r, line_no(r, li), rc, "haplotype");
    return add_seq(r, li, b->n_haps - 1, len, 0, 0);
}

/* Parse a strictly positive integer field; 0 when it is not one. */
static long parse_count(const char *s, size_t len, long max)
{
    if (len == 0 || len > 18) return len > 18 ? max + 1 : 0;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* Digits of a count quoted in a message: as read, up to a sane length. */
static int count_shown(size_t len) { return len > 40 ? 40 : (int)len; }

static int is_tag(const char *s)
{
    return (!strncmp(s, "# region", 8) && (s[8] == ' ' || s[8] == '\0')) ||
           !strncmp(s, "# source-line ", 14);
}

/* Apply a '#' line: region tags, source lines; other comments are ignored
 * (the results file's header names the format). */
static int comment_line(hk_reader_t *r, const char *s, long line)
{
    if (!strncmp(s, "# region", 8) && (s[8] == ' ' || s[8] == '\0')) {
        const char *nm = s + 8;
        while (*nm == ' ') nm++;
        free(r->name);
        r->name = NULL;
        if (*nm && !(r->name = strdup(nm))) FAIL(r, line, "out of memory");
    } else if (!strncmp(s, "# source-line ", 14)) {
        char *end;
        errno = 0;
        long v = strtol(s + 14, &end, 10);
        if (errno || *end || v <= 0) FAIL(r, line, "bad '# source-line' tag");
        r->source_line = v;
    } else if (r->format == HK_FMT_AUTO && !strncmp(s, "# hap-bases", 11)) {
        r->format = HK_FMT_GATK;
    }
    return 0;
}

static long region_line(hk_reader_t *r, long line)
{
    long l = r->source_line ? r->source_line : line;
    r->source_line = 0;
    return l;
}

/* ---- batch format ---- */

static int batch_header(hk_reader_t *r)
{
    const line_t *L = &r->lines[r->walk];
    const char *s = line_text(r, r->walk);
    const long line = line_no(r, r->walk);
    const int two = L->n_fields == 2;
    long R = two ? parse_count(s, L->field_end[0], MAX_REGION_READS) : 0;
    long H = two ? parse_count(s + field_start(L, 1), L->field_end[1] - field_start(L, 1),
                               MAX_REGION_HAPS) : 0;
    if (!two || R <= 0 || H <= 0)
        FAIL(r, line, "expected a batch header 'READS HAPLOTYPES' of two positive integers");
    if (R > MAX_REGION_READS || H > MAX_REGION_HAPS || R * H > MAX_REGION_PAIRS)
        FAIL(r, line, "batch of %.*s reads x %.*s haplotypes is larger than haplik accepts "
             "(%ld reads, %ld haplotypes, %ld pairs)", count_shown(L->field_end[0]), s,
             count_shown(L->field_end[1] - field_start(L, 1)), s + field_start(L, 1),
             MAX_REGION_READS, MAX_REGION_HAPS, MAX_REGION_PAIRS);
    r->head = r->walk;
    r->head_reads = R;
    r->head_haps = H;
    return 0;
}

/* Place the region of the header r->head, its first n_reads reads and n_haps
 * haplotypes: all of them, or those before an error, to be checked only
 * (then the region is not ended). */
static int place_batch_region(hk_reader_t *r, hk_batch_t *b, size_t n_reads, size_t n_haps)
{
    const size_t head = r->head;
    const long line = line_no(r, head);
    r->head = NO_REGION;
    if (hk_batch_begin_region(b, r->name, region_line(r, line))) FAIL(r, line, "out of memory");
    for (size_t k = 0; k < n_reads; k++)
        if (place_read(r, b, head + 1 + k, 0) < 0) return -1;
    for (size_t k = 0; k < n_haps; k++)
        if (place_hap(r, b, head + 1 + (size_t)r->head_reads + k) < 0) return -1;
    return 0;
}

/* A line of the region of header r->head: a read, then a haplotype line. */
static int batch_line(hk_reader_t *r, hk_batch_t *b)
{
    const line_t *L = &r->lines[r->walk];
    const long line = line_no(r, r->walk);
    const size_t k = r->walk - r->head - 1;
    const uint32_t *fe = L->field_end;
    if (k < (size_t)r->head_reads) {
        const int nf = L->n_fields;
        if (nf != 5)
            FAIL(r, line, "expected a read line 'BASES QUALS INS DELS GCPS' (5 fields), "
                 "found %s%d", nf > 5 ? "more than " : "", nf > 5 ? 5 : nf);
        for (int i = 1; i < 5; i++)
            if (fe[i] - field_start(L, i) != fe[0])
                FAIL(r, line, "field %d has %u characters but the read has %u bases",
                     i + 1, fe[i] - field_start(L, i), fe[0]);
        if (fe[0] == 0) FAIL(r, line, "empty read");
        if (fe[0] > HK_MAX_SEQ_LEN) FAIL(r, line, "read longer than %u bases", HK_MAX_SEQ_LEN);
    } else {
        if (L->n_fields != 1 || fe[0] == 0)
            FAIL(r, line, "expected a haplotype line (one field of bases)");
        if (fe[0] > HK_MAX_SEQ_LEN) FAIL(r, line, "haplotype longer than %u bases", HK_MAX_SEQ_LEN);
    }
    if (k + 1 < (size_t)(r->head_reads + r->head_haps)) return 0;
    const long head_line = line_no(r, r->head);
    if (place_batch_region(r, b, (size_t)r->head_reads, (size_t)r->head_haps) < 0) return -1;
    if (hk_batch_end_region(b)) FAIL(r, head_line, "out of memory");
    hk_batch_last_region(b)->first_line = head_line;
    hk_batch_last_region(b)->last_line = line;
    return 0;
}

/* ---- results-file format ---- */

static int same_hap_text(const hk_reader_t *r, size_t a, size_t c)
{
    const uint32_t len = r->lines[a].field_end[0];
    return r->lines[c].field_end[0] == len && !memcmp(line_text(r, a), line_text(r, c), len);
}

static int same_read_text(const hk_reader_t *r, size_t a, size_t c)
{
    const line_t *A = &r->lines[a], *C = &r->lines[c];
    return read_span(A) == read_span(C) &&
           !memcmp(line_text(r, a) + A->field_end[0] + 1, line_text(r, c) + C->field_end[0] + 1,
                   read_span(C));
}

/* Has record c the read of record p, the record before it? The scan has
 * compared them unless p lies in another piece. */
static int read_is(const hk_reader_t *r, size_t c, size_t p)
{
    const line_t *L = &r->lines[c];
    if (L->read_back && c - L->read_back == p) return L->same_read;
    return same_read_text(r, p, c);
}

/* Has record c the haplotype of record w, an earlier record of the region
 * such that no record between them has that haplotype? Then w is the nearest
 * record with c's haplotype, if any is, which the scan has found unless w
 * lies in another piece. */
static int hap_is(const hk_reader_t *r, size_t c, size_t w)
{
    const line_t *L = &r->lines[c];
    if (L->hap_back != HAP_UNKNOWN && c - w <= L->piece_back) return L->hap_back == c - w;
    return same_hap_text(r, w, c);
}

/* Has record c the haplotype of one of the records recs[0, k)? The nearest
 * record with its haplotype tells, unless none is in the piece and the
 * region starts before it. */
static int hap_repeats(const hk_reader_t *r, size_t c, size_t k)
{
    const line_t *L = &r->lines[c];
    const size_t first = r->recs[0];
    if (L->hap_back != HAP_UNKNOWN) {
        if (L->hap_back) return c - L->hap_back >= first;
        if (c - first <= L->piece_back) return 0;
    }
    for (size_t q = 0; q < k; q++)
        if (same_hap_text(r, r->recs[q], c)) return 1;
    return 0;
}

/* Place the region recs[0, n_done) (n_haps records per read) into the batch,
 * and keep recs[n_done, n), moved to the front, for the next region. */
static int emit_gatk_region(hk_reader_t *r, hk_batch_t *b)
{
    const size_t H = r->n_haps, R = r->n_done / H;
    const long line = line_no(r, r->recs[0]);
    if ((long)R > MAX_REGION_READS || (long)H > MAX_REGION_HAPS)
        FAIL(r, line, "region of %zu reads x %zu haplotypes is larger than haplik accepts", R, H);
    if (hk_batch_begin_region(b, r->name, region_line(r, line))) FAIL(r, line, "out of memory");
    for (size_t h = 0; h < H; h++)
        if (place_hap(r, b, r->recs[h]) < 0) return -1;
    for (size_t k = 0; k < R; k++)
        if (place_read(r, b, r->recs[k * H], 1) < 0) return -1;
    if (hk_batch_end_region(b)) FAIL(r, line, "out of memory");
    hk_region_t *rg = hk_batch_last_region(b);
    rg->first_line = line;
    rg->last_line = line_no(r, r->recs[r->n_done - 1]);
    for (size_t i = 0; i < r->n_done; i++) b->expected[rg->pair0 + i] = r->lines[r->recs[i]].expected;
    memmove(r->recs, r->recs + r->n_done, (r->n - r->n_done) * sizeof *r->recs);
    r->n -= r->n_done;
    r->n_done = 0;
    r->n_haps = 0;
    return 1;
}

/* Does the last record, recs[n-1], continue the pattern of recs[0, n-1)? */
static int continues(const hk_reader_t *r)
{
    const size_t prior = r->n - 1, c = r->recs[prior];
    if (r->n_haps == 0)                 /* collecting the first read */
        return prior == 0 || (read_is(r, c, r->recs[prior - 1]) && !hap_repeats(r, c, prior));
    /* the haplotype of the previous read's record at this position */
    if (!hap_is(r, c, r->recs[prior - r->n_haps])) return 0;
    return prior == r->n_done || read_is(r, c, r->recs[prior - 1]);
}

/* Place the record just pushed: it continues the region, or it closes the
 * region (placed in b) and starts the next one. */
static int place_gatk_record(hk_reader_t *r, hk_batch_t *b)
{
    const long line = line_no(r, r->walk);
    for (;;) {
        if (continues(r)) {
            /* refuse an oversized region now, not after holding all of it
             * (and checking each new haplotype against all before it) */
            if (r->n_haps == 0 && (long)r->n > MAX_REGION_HAPS)
                FAIL(r, line, "region with more than %ld haplotypes (the first read's records, "
                     "from line %ld, have as many distinct haplotypes)", MAX_REGION_HAPS,
                     line_no(r, r->recs[0]));
            if (r->n_haps && r->n - r->n_done == r->n_haps) r->n_done = r->n;
            if (r->n_haps && (long)(r->n_done / r->n_haps) > MAX_REGION_READS)
                FAIL(r, line, "region with more than %ld reads (from line %ld)",
                     MAX_REGION_READS, line_no(r, r->recs[0]));
            return 0;
        }
        if (r->n_haps == 0) {           /* the first read ended: its haplotypes are the list */
            r->n_haps = r->n_done = r->n - 1;
            continue;
        }
        if (emit_gatk_region(r, b) < 0) return -1;
    }
}

/* Check the record on the current line and append it to recs. */
static int gatk_record(hk_reader_t *r, hk_batch_t *b)
{
    const line_t *L = &r->lines[r->walk];
    const long line = line_no(r, r->walk);
    const uint32_t *fe = L->field_end;
    const int nf = L->n_fields;
    if (nf != 7)
        FAIL(r, line, "expected 7 space-separated fields (hap-bases read-bases read-qual "
             "read-ins-qual read-del-qual gcp expected-result), found %s%d",
             nf > 7 ? "more than " : "", nf > 7 ? 7 : nf);
    const uint32_t read_len = fe[1] - field_start(L, 1);
    if (fe[0] == 0) FAIL(r, line, "empty haplotype");
    if (read_len == 0) FAIL(r, line, "empty read");
    for (int i = 2; i < 6; i++)
        if (fe[i] - field_start(L, i) != read_len)
            FAIL(r, line, "field %d has %u characters but the read has %u bases",
                 i + 1, fe[i] - field_start(L, i), read_len);
    if (!L->expected_ok)
        FAIL(r, line, "expected-result '%s' is not a number", line_text(r, r->walk) + fe[5] + 1);
    if (fe[0] > HK_MAX_SEQ_LEN) FAIL(r, line, "haplotype longer than %u bases", HK_MAX_SEQ_LEN);
    if (read_len > HK_MAX_SEQ_LEN) FAIL(r, line, "read longer than %u bases", HK_MAX_SEQ_LEN);
    if ((long)(r->n + 1) > MAX_REGION_PAIRS)
        FAIL(r, line, "region longer than %ld records", MAX_REGION_PAIRS);
    if (r->n == r->m_recs) {
        const size_t cap = r->m_recs ? 2 * r->m_recs : 1024;
        size_t *x = realloc(r->recs, cap * sizeof *x);
        if (!x) FAIL(r, line, "out of memory");
        r->recs = x;
        r->m_recs = cap;
    }
    r->recs[r->n++] = r->walk;
    return place_gatk_record(r, b);
}

/* Close the current region at a boundary (tag, end of input): place the
 * whole reads, then the partial read, if any, as a region of its own. */
static int close_gatk_regions(hk_reader_t *r, hk_batch_t *b)
{
    while (r->n > 0) {
        if (r->n_haps == 0) r->n_haps = r->n_done = r->n;
        if (emit_gatk_region(r, b) < 0) return -1;
    }
    return 0;
}

/* ---- driver ---- */

static int detect_format(hk_reader_t *r)
{
    const int nf = r->lines[r->walk].n_fields;
    if (nf == 2) r->format = HK_FMT_BATCH;
    else if (nf == 7) r->format = HK_FMT_GATK;
    else FAIL(r, line_no(r, r->walk), "cannot tell the format: expected a batch header "
              "'READS HAPLOTYPES' or a 7-field HaplotypeCaller results record (set input.format "
              "to force one)");
    return 0;
}

/* Walk line r->walk. */
static int walk_line(hk_reader_t *r, hk_batch_t *b)
{
    const line_t *L = &r->lines[r->walk];
    const long line = line_no(r, r->walk);
    switch (L->kind) {
    case LINE_NUL: FAIL(r, line, "NUL byte in text (binary input?)");
    case LINE_TOO_LONG:
        FAIL(r, line, "line longer than %zu bytes, longer than any valid record (sequences have "
             "at most %u bases)", MAX_LINE_LEN, HK_MAX_SEQ_LEN);
    case LINE_READ_ERROR:
        FAIL(r, line, "read error (truncated or corrupt %s stream?)",
             r->fp->format.compression == no_compression ? "input" : "compressed");
    case LINE_NO_EOF_MARKER: FAIL(r, line, "read error (truncated BGZF stream: no end-of-file marker)");
    }
    if (r->head != NO_REGION) return batch_line(r, b);
    if (L->len == 0) return 0;
    const char *s = line_text(r, r->walk);
    if (s[0] == '#') {
        /* a tag closes the region before it, so apply it only after */
        if (r->format == HK_FMT_GATK && is_tag(s) && close_gatk_regions(r, b) < 0) return -1;
        return comment_line(r, s, line);
    }
    if (r->format == HK_FMT_AUTO && detect_format(r) < 0) return -1;
    if (r->format == HK_FMT_BATCH) return batch_header(r);
    return gatk_record(r, b);
}

/* The input has ended with the lines walked. */
static int end_of_input(hk_reader_t *r, hk_batch_t *b)
{
    if (r->head != NO_REGION)
        FAIL(r, line_no(r, r->n_lines - 1), "truncated input: the batch at line %ld expects %ld "
             "reads and %ld haplotypes, the input ended after %zu lines of it",
             line_no(r, r->head), r->head_reads, r->head_haps, r->n_lines - 1 - r->head);
    return r->format == HK_FMT_GATK ? close_gatk_regions(r, b) : 0;
}

/* After an error in the input: place the open region's lines before it, so
 * that setting them finds a bad character there, which wins. */
static void place_open_region(hk_reader_t *r, hk_batch_t *b)
{
    if (r->err_runtime) return;
    if (r->head != NO_REGION) {
        const size_t k = r->walk - r->head - 1, R = (size_t)r->head_reads;
        (void)place_batch_region(r, b, k < R ? k : R, k > R ? k - R : 0);
    } else if (r->format == HK_FMT_GATK) {
        (void)close_gatk_regions(r, b);
    }
}

/* Walk lines into b (placed, copied later) until it holds max_pairs pairs;
 * see hk_reader_next. */
static int fill(hk_reader_t *r, hk_batch_t *b, size_t max_pairs)
{
    const size_t regions0 = b->n_regions;
    while (b->n_regions == regions0 || b->n_pairs < max_pairs) {
        if (r->walk < r->n_lines) {
            if (walk_line(r, b) < 0) goto fail;
            r->walk++;
        } else if (r->input_end != INPUT_MORE) {
            if (end_of_input(r, b) < 0) goto fail;
            break;
        } else if (refill(r, b) < 0) {
            goto fail;
        }
    }
    return (int)(b->n_regions - regions0);
fail:
    place_open_region(r, b);
    return -1;
}

void hk_reader_set_threads(hk_reader_t *r, int nthreads)
{
    r->nthreads = nthreads < 1 ? 1 : nthreads > MAX_THREADS ? MAX_THREADS : nthreads;
    /* BGZF blocks decompress independently: let htslib do it in parallel
     * (plain gzip is one stream and stays sequential) */
    if (nthreads > 1 && r->fp->format.compression == bgzf && !r->bgzf_mt)
        r->bgzf_mt = bgzf_mt(r->fp->fp.bgzf, nthreads < 8 ? nthreads : 8, 256) == 0;
}

int hk_reader_next(hk_reader_t *r, hk_batch_t *b, size_t max_pairs)
{
    if (r->failed) return r->err_runtime ? -2 : -1;
    int got = fill(r, b, max_pairs);
    set_sequences(r, b);
    if (r->failed) {
        if (r->err_line > 0) hk_log_error("%s:%ld: %s", r->path, r->err_line, r->err_msg);
        else hk_log_error("%s: %s", r->path, r->err_msg);
        return r->err_runtime ? -2 : -1;
    }
    return got;
}
