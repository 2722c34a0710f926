/* hk_source.h - where an input's bytes come from: the layer below the formats.
 *
 * A source is a file or standard input ("-"), plain, gzip or BGZF, opened and
 * told apart by its content (htslib's detection). It gives bytes two ways:
 *   - a plain regular file is read at any offset, by several threads at once
 *     (hk_source_pread): the fastest way from the page cache;
 *   - anything else is read in order (hk_source_read). Plain gzip is inflated
 *     by Intel ISA-L where haplik was built with it (configure says), in a
 *     thread of its own a few MB ahead of the reader; a BGZF file block by
 *     block on the caller's threads (hk_source_plan), from standard input by
 *     htslib's threads;
 *     gzip from standard input, or without ISA-L, by htslib (zlib).
 * Errors are logged once as "PATH:1: what" (content) or "PATH: what" (open);
 * a read error later is a -1 return, which the reader reports with its line.
 */
#ifndef HK_SOURCE_H
#define HK_SOURCE_H

#include <stddef.h>
#include <sys/types.h>
#include "hk_options.h"   /* hk_read_opts_t */
#include "hk_types.h"

typedef struct hk_source hk_source_t;
struct hFILE;

/* The file at path ("-": standard input) opened for htslib by its own
 * name: hopen and hts_open would read "##idx##" in a name as an index's
 * delimiter and "scheme:" as a URL. NULL, with errno set, when it cannot be
 * opened. Every reader of a named input opens it through this (or
 * hk_source_open, which does). */
struct hFILE *hk_source_hopen(const char *path);

/* Open path ("-" for standard input) into *out, inflating as opt says (NULL:
 * the defaults). HK_OK, or (logged, *out NULL) HK_E_INPUT for content haplik
 * cannot read (binary, xz, ...), HK_E_RUNTIME when the file cannot be opened
 * or memory runs out. */
HK_RESULT_USED hk_status_t hk_source_open(const char *path, const hk_read_opts_t *opt, hk_source_t **out);

/* A plain regular file: hk_source_pread may be used, from any thread. */
int hk_source_seekable(const hk_source_t *s);
/* A pipe, FIFO or terminal: its writer may pause, so read a little at a time. */
int hk_source_streaming(const hk_source_t *s);
/* Compressed (gzip or BGZF). */
int hk_source_compressed(const hk_source_t *s);
/* BGZF without its end-of-file marker: a file cut at a block boundary reads
 * as a shorter valid one, and only this tells. A file is checked when it is
 * opened; a stream once hk_source_read has reached its end. */
int hk_source_unterminated(const hk_source_t *s);

/* Read only bytes [start, end) of a plain regular file, as if they were the
 * whole file (offsets of hk_source_pread count from start): a part of a dump
 * read in place (`haplik score --plan`). Before the first read. HK_OK, or
 * HK_E_INPUT when the source is not a plain regular file or the range passes
 * its end (not logged). */
HK_RESULT_USED hk_status_t hk_source_set_range(hk_source_t *s, off_t start, off_t end);

/* Up to n bytes at offset `at` of a seekable source; fewer only at its end.
 * Returns the bytes read, or -1 on a read error. */
ssize_t hk_source_pread(const hk_source_t *s, void *buf, size_t n, off_t at);
/* The next bytes, up to n, in order (any source). Returns the bytes read, 0 at
 * the end, -1 on a read error or corrupt compressed data. */
ssize_t hk_source_read(hk_source_t *s, void *buf, size_t n);

/* A source read in blocks inflated by the caller's threads (a BGZF file,
 * with ISA-L): instead of hk_source_read, plan the next bytes, at most room
 * of them (64 KB or more): the bytes planned, *end 0 when more follows, 1 at
 * the end, -1 when what follows cannot be read; then inflate them into dst
 * in nparts parts (from several threads at once); then hk_source_planned
 * gives the bytes good from the start (*bad: 1 when fewer than planned). */
int hk_source_blocks(const hk_source_t *s);
ssize_t hk_source_plan(hk_source_t *s, size_t room, int *end);
void hk_source_inflate(hk_source_t *s, char *dst, int part, int nparts);
size_t hk_source_planned(hk_source_t *s, int *bad);

/* The reader's threads: htslib's pool for BGZF; for plain gzip (one stream),
 * whether a thread inflates ahead (more than 2) or the reads do (call before
 * the first read). */
void hk_source_set_threads(hk_source_t *s, int nthreads);

/* Accepts NULL. */
void hk_source_close(hk_source_t *s);

#endif
