/* hk_lines.h - an input's lines, read in blocks and indexed on all threads.
 *
 * The layer between the byte source (hk_source.h) and the formats
 * (hk_format.h): it reads a block ahead of the walk, cuts each block at line
 * ends into one piece per thread, and each thread indexes the lines of its
 * piece (start, length, fields split on single spaces or the format's separator, NUL bytes and
 * over-long lines), NUL-terminating each in place. A format may add its own
 * pass over each piece (hk_piece_scan_fn), run there in parallel too.
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
#include "hk_line_entry.h"
#include "hk_source.h"
#include "hk_types.h"

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
int hk_lines_set_scan(hk_lines_t *L, char sep, hk_piece_scan_fn scan, void (*free_state)(void *));

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
