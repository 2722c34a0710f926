/* hk_lines.h - an input's lines, read in blocks and indexed on all threads.
 *
 * The layer between the byte source (hk_source.h) and the formats
 * (hk_format.h): it reads a block ahead of the walk, cuts each block at line
 * ends into one piece per thread, and each thread indexes the lines of its
 * piece (start, length, fields split on single spaces or the format's separator, NUL bytes and
 * over-long lines), NUL-terminating each in place. A format may add its own
 * pass over each piece (hk_lines_scan_fn), run there in parallel too.
 *
 * The index holds the lines from the first one the walk still needs to the
 * end of the last block read; their blocks are kept until then, so that
 * memory is bounded by the largest region plus a few blocks.
 *
 * Why blocks and one step (a fork-join) per block: reading, scanning and
 * copying out the sequences of the regions walked in the block before (the
 * reader's `side` job) all run on every thread, beside the walk.
 */
#ifndef HK_LINES_H
#define HK_LINES_H

#include <stddef.h>
#include <stdint.h>
#include "hk_source.h"
#include "hk_types.h"

/* The longest line that can be valid: a results-file record of the longest
 * sequences (haplotype, read and its four quality strings, HK_MAX_SEQ_LEN
 * each), with room for spaces, the expected value and a line end. Longer
 * lines are refused as soon as they pass it, not held in memory whole. */
#define HK_MAX_LINE_LEN (6 * (size_t)HK_MAX_SEQ_LEN + 4096)
#define HK_MAX_FIELDS   8

/* What a line of the index is. Lines that cannot be read stand for the error
 * found there, which the walk reports when it gets to them. */
enum { HK_LINE_TEXT, HK_LINE_NUL, HK_LINE_TOO_LONG, HK_LINE_READ_ERROR, HK_LINE_NO_EOF_MARKER };

/* hap_back when a hash collision hid the answer: the walk compares itself. */
#define HK_HAP_UNKNOWN UINT32_MAX

/* hk_line_t.flags: the index's bits, then the format scan's own from
 * HK_LINE_SCAN_BIT up (zero before its scan ran). */
enum { HK_LINE_REGULAR = 1,   /* fields 3 .. n_fields - 2 are as long as field 2 */
       HK_LINE_TAB = 2,       /* split on tabs (else spaces) */
       HK_LINE_SCAN_BIT = 4 };

/* HK_LINE_KEPT_FIELDS field ends are kept; the others are computed: every
 * format's valid records repeat one width from field 2 to the last but one
 * (a read, then its qualities), so a line is 48 bytes, not 80 (the index is
 * written by the scan, copied by the take and read by the walk and the side
 * job: na27's 20M lines). */
#define HK_LINE_KEPT_FIELDS 3

typedef struct {
    char    *text;           /* in its block, NUL-terminated there; NULL for an error */
    uint32_t len;            /* bytes, without the line end */
    uint32_t field_end[HK_LINE_KEPT_FIELDS];   /* of fields 0..2; see hk_field_end */
    uint32_t piece_back;     /* lines back to the first line of its piece */
    uint8_t  n_fields;       /* fields split on single separators (a space, or the format's),
                                HK_MAX_FIELDS + 1 for more */
    uint8_t  kind;           /* HK_LINE_* */
    char     first;          /* the line's first byte ('\0' when empty): the walk tells a
                                comment without reading the text (a cache miss per line) */
    uint8_t  flags;          /* HK_LINE_REGULAR, HK_LINE_TAB; the scan's bits */
    /* What a format's scan pass found, by format (zero before it ran). */
    union {
        /* hk_format_results.c, for records: the expected value (and a bit
         * in flags saying whether it parsed), how far back the record with
         * the same read was (and a bit: whether it has the same read) and
         * the same haplotype; "back" reaches no further than the piece. */
        struct {
            double   expected;
            uint32_t read_back, hap_back;
        };
        /* hk_format_batch.c: the run of read (haplotype) lines from this one
         * to the end of the run or the piece, its kind in flags: how many,
         * and their bases in all. */
        struct {
            uint32_t run, run_bases;
        };
    };
} hk_line_t;

/* Field k's end found in the text, for a line without HK_LINE_REGULAR. */
uint32_t hk_lines_field_end_split(const hk_line_t *L, int k);

/* Where field k (< n_fields) ends: [hk_field_start(L, k), hk_field_end(L, k)). */
static inline uint32_t hk_field_end(const hk_line_t *L, int k)
{
    if (k < HK_LINE_KEPT_FIELDS) return L->field_end[k];
    if (k + 1 >= L->n_fields) return L->len;
    if (!(L->flags & HK_LINE_REGULAR)) return hk_lines_field_end_split(L, k);   /* a bad line */
    return L->field_end[2] + (uint32_t)(k - 2) * (L->field_end[2] - L->field_end[1]);
}
static inline uint32_t hk_field_start(const hk_line_t *L, int k) { return k ? hk_field_end(L, k - 1) + 1 : 0; }
static inline uint32_t hk_field_len(const hk_line_t *L, int k) { return hk_field_end(L, k) - hk_field_start(L, k); }

/* A format's pass over the lines of one piece, on that piece's thread; state
 * is the piece's own (NULL at first), freed with the free function given. */
typedef void (*hk_lines_scan_fn)(hk_line_t *lines, size_t n, void **state);
/* Work to run beside a block's scan, on every thread: part of nparts
 * (nparts at most HK_LINES_MAX_PARTS, several per thread). */
#define HK_LINES_MAX_PARTS 256
typedef void (*hk_lines_side_fn)(void *arg, int part, int nparts);

typedef struct hk_lines hk_lines_t;

/* Lines of src (which must outlive them), read and scanned with nthreads,
 * in blocks and steps as opt says (NULL: the defaults). */
hk_lines_t *hk_lines_open(hk_source_t *src, int nthreads, const hk_read_opts_t *opt);
void hk_lines_set_threads(hk_lines_t *L, int nthreads);
/* The input's first line is line `line` (1 by default): a part of a file. */
void hk_lines_set_first_line(hk_lines_t *L, long line);
/* The format's records: their field separator (' ' until set) and its scan
 * pass. Returns whether either changed: lines indexed before then need
 * hk_lines_rescan. */
int hk_lines_set_scan(hk_lines_t *L, char sep, hk_lines_scan_fn scan, void (*free_state)(void *));

/* fn(L, data, len, arg) is called once, in the thread that reads, with the
 * whole lines of the input's first block before they are scanned: where the
 * format is not known yet, it may guess it from its first lines and set the
 * scan (hk_lines_set_scan), so that no block is scanned twice. */
typedef void (*hk_lines_first_fn)(hk_lines_t *L, const char *data, size_t len, void *arg);
void hk_lines_set_first(hk_lines_t *L, hk_lines_first_fn fn, void *arg);

/* Split entries from..end again with the separator, and run the scan pass
 * (set with hk_lines_set_scan) over them as one piece: they were indexed
 * before the format was known, from its first lines. */
void hk_lines_rescan(hk_lines_t *L, size_t from);

/* The index, as the walk reads it: entry i is lines[i], input line line0 + i
 * (1-based). hk_lines_take moves it; the pointer to it stays. The walk reads
 * a few entries per input line, so these are read in place, not called. */
typedef struct {
    hk_line_t *lines;
    size_t     n_lines;
    long       line0;
} hk_lines_index_t;
const hk_lines_index_t *hk_lines_index(const hk_lines_t *L);
/* Whether the input has ended with the lines in the index. */
int hk_lines_ended(const hk_lines_t *L);

/* Reading and scanning run a block ahead of the walk, in a step of their own
 * (a thread that forks over the workers) while the caller walks:
 *   hk_lines_take   waits for the step in flight, starts the next one (the
 *                   scan of the block after, the read of the one after that,
 *                   and side(arg, part, nparts) on every thread, side_bytes
 *                   saying how much work it is), then drops the index
 *                   entries before keep (their blocks go when no line needs
 *                   them) and appends the lines of the block scanned (the
 *                   first block: read and scanned here). Entry i becomes
 *                   i - keep. The index moves to another array: the side job
 *                   reads the one it was in (its entries and their text as
 *                   they were before the take), left as it is until the next
 *                   take. HK_OK, or HK_E_NOMEM when memory (or a thread)
 *                   could not be had.
 */
HK_RESULT_USED hk_status_t hk_lines_take(hk_lines_t *L, size_t keep, hk_lines_side_fn side, void *arg, size_t side_bytes);
/* Read and scan the first block now, beside the caller, not at the first
 * take: for an input opened while the one before is still walked. Set its
 * threads and scan first. HK_OK (also when begun already), or HK_E_NOMEM
 * when memory (or a thread) could not be had. */
HK_RESULT_USED hk_status_t hk_lines_prime(hk_lines_t *L);
/* Wait for the step in flight, if any. */
void hk_lines_wait(hk_lines_t *L);
/* Wait for the side job of the step in flight (its scan may go on). */
void hk_lines_wait_side(hk_lines_t *L);
/* Run side on every thread worth starting for side_bytes of work, in the
 * caller; it may run beside the step in flight (it touches no block). */
void hk_lines_run_side(hk_lines_t *L, hk_lines_side_fn side, void *arg, size_t side_bytes);

/* With HK_TRACE: the threads' seconds in the steps' tasks so far (reading,
 * scanning, the side job) and the fork-joins run. */
void hk_lines_times(const hk_lines_t *L, double *read, double *scan, double *side, long *steps);
/* With HK_TRACE: fork-joins of one kind (0: steps, 1: side jobs alone), their
 * wall seconds, their threads' seconds before their first task and after
 * their last; and the seconds the stepper waited for the walk between steps. */
void hk_lines_fork_times(const hk_lines_t *L, int kind, long *n, double *wall, double *start,
                         double *end, double *idle);

/* Lines split and scanned again so far: scanned before their format was known. */
uint64_t hk_lines_rescanned(const hk_lines_t *L);

/* Accepts NULL. */
void hk_lines_close(hk_lines_t *L);

#endif
