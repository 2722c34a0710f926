/* hk_outfile.h - output files that are complete or absent, and never an input.
 *
 * A file is written to a temporary file beside its destination and renamed
 * into place by hk_outfile_commit (hk_outfile_commit_all: several outputs,
 * all or none); hk_outfile_abort, or a signal once hk_outfile_catch_signals
 * was called, removes it. A destination reached through a symbolic link is
 * the link's target (the link stays); a replaced file keeps its permission
 * bits. Standard output ("-" or NULL) and paths naming an open descriptor
 * (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N) are streamed when
 * the descriptor is a pipe, a terminal or another stream (written as the
 * table is made: the exit status, and the table's own end, tell a complete
 * run); when it is redirected to a regular file they are spooled to an
 * unlinked temporary file in $TMPDIR and copied to the descriptor on commit,
 * so a failed run writes nothing there. Devices and FIFOs named as paths are
 * written directly (streamed); nothing is ever renamed over them. A stream
 * whose reader has gone (a closed pipe) ends the process by SIGPIPE, quietly,
 * once hk_outfile_catch_signals is in place.
 */
#ifndef HK_OUTFILE_H
#define HK_OUTFILE_H

#include <stddef.h>
#include <stdio.h>
#include "hk_types.h"

typedef struct hk_outfile hk_outfile_t;

/* Open path for writing into *out. HK_OK; else *out is NULL and the
 * failure, logged, is HK_E_NOMEM, or HK_E_RUNTIME for the rest (a
 * directory, a closed standard output, no room for the temporary file). */
HK_RESULT_USED hk_status_t hk_outfile_open(const char *path, hk_outfile_t **out);
FILE *hk_outfile_fp(hk_outfile_t *o);
const char *hk_outfile_path(const hk_outfile_t *o);
/* Whether o is a file renamed into place on commit (else a spool or a stream). */
int hk_outfile_renamed(const hk_outfile_t *o);
/* Whether o is written as it goes (a pipe, terminal, device or FIFO): the
 * writer flushes what it has, batch by batch. */
int hk_outfile_streams(const hk_outfile_t *o);
/* Flush, close and move into place; frees o. HK_OK, or HK_E_RUNTIME
 * (logged; nothing left). */
HK_RESULT_USED hk_status_t hk_outfile_commit(hk_outfile_t *o);
/* Commit o[0..n) all or none: every file is flushed and closed first; then
 * all are renamed with signals held back, and if one rename fails those
 * already renamed are undone (a file they replaced is put back). Frees every
 * o[i] and sets it to NULL. HK_OK, or HK_E_RUNTIME or HK_E_NOMEM (logged). */
HK_RESULT_USED hk_status_t hk_outfile_commit_all(hk_outfile_t **o, size_t n);
/* Done writing o: flush and close its file now, so that many outputs need
 * not be open at once; it stays pending (removed by abort or a signal) until
 * committed. A spool stays open. HK_OK, or HK_E_RUNTIME (logged). */
HK_RESULT_USED hk_status_t hk_outfile_close(hk_outfile_t *o);
/* Discard; frees o; accepts NULL. */
void hk_outfile_abort(hk_outfile_t *o);

/* Refuse, before any work, outputs that would destroy an input or each
 * other: an output named "" (a usage error, as no file has that name); an
 * output that is the same file as an input (same path, or same device and
 * inode: hard and symbolic links, /dev/stdout redirected to it); two outputs
 * that are one file. NULL or "-" is standard output among the outputs and
 * standard input among the inputs, each the file it is redirected to (so
 * `x < f >> f` is refused). The inputs are every file the command reads, not
 * only its data; the outputs every file it writes (a table's sidecar too).
 * Outputs are compared with each other by sorting, so a million are checked
 * quickly. HK_OK, HK_E_INPUT (logged: a usage error) or HK_E_NOMEM. */
HK_RESULT_USED hk_status_t hk_outfile_check_paths(const char *const *outs, size_t n_outs,
                                                  const char *const *ins, size_t n_ins);

/* Remove pending temporary files and die of the signal (exit 128+signal) on
 * SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
 * SIGVTALRM, SIGPROF and SIGXCPU, except those ignored at start (nohup,
 * a non-interactive shell's background job), which stay ignored; ignore
 * SIGXFSZ, so that a write past the file size limit fails with EFBIG and is
 * reported. */
void hk_outfile_catch_signals(void);

/* Where temporary files that are not beside an output go (a spool, merge's
 * copy of a pipe): the edge sets it from $TMPDIR (hk_options_apply);
 * /tmp until then. dir must outlive its use. */
void hk_outfile_set_temp_dir(const char *dir);
const char *hk_outfile_temp_dir(void);

/* Called first in main(): a standard stream that was closed at start (e.g.
 * `>&-`) is held by /dev/null opened the wrong way round, so that a file
 * opened later never takes its number and every use of it fails; writing the
 * table to a closed standard output is refused by hk_outfile_open. */
void hk_outfile_guard_std_streams(void);

#endif
