/* hk_reader.h - streaming readers of Pair-HMM dumps (SPEC section 2).
 *
 * Reads the HaplotypeCaller results-file format (`gatk`), its PDHMM variant
 * (`pdhmm`) and the benchmark batch format (`batch`), plain, gzip or BGZF (htslib), or "-" for standard
 * input, and appends whole regions to a batch. Memory is bounded by the
 * largest region plus the batch the caller asks for plus a few blocks of
 * input (1 MB per thread, at most 16 MB each), never by the file.
 *
 * Errors (bad input, I/O) are logged once as "FILE:LINE: what" and reported
 * by a -1 return; the reader is then unusable except for hk_reader_close.
 */
#ifndef HK_READER_H
#define HK_READER_H

#include <stddef.h>
#include <stdio.h>
#include "hk_batch.h"
#include "hk_formats.h"   /* HK_FMT_* */
#include "hk_options.h"   /* hk_read_opts_t */


typedef struct hk_reader hk_reader_t;

/* Open path ("-" for stdin) into *out. format is HK_FMT_*; AUTO detects
 * from the content. Sequences are normalised by `rules` as they are read,
 * and read as opt says (NULL: the defaults). HK_OK; else *out is NULL and
 * the failure, logged, is HK_E_INPUT (the file: not there, not readable,
 * binary) or the run's (HK_E_RUNTIME, HK_E_NOMEM: out of open files or
 * memory). */
HK_RESULT_USED hk_status_t hk_reader_open(const char *path, int format, hk_seq_rules_t rules, const hk_read_opts_t *opt,
                                          hk_reader_t **out);

/* Append whole regions to b until it holds at least max_pairs pairs (at least
 * one region when any is left); *regions: how many were added, 0 at the end
 * of the input. HK_OK, or HK_E_INPUT (bad input) or HK_E_NOMEM (both
 * logged). */
HK_RESULT_USED hk_status_t hk_reader_next(hk_reader_t *r, hk_batch_t *b, size_t max_pairs, size_t *regions);

/* Hand full batches (at least max_pairs pairs) to ready(b, arg) rather than
 * the return of hk_reader_next: it is called, in the caller's thread, once
 * b's sequences are set, which may be during a later hk_reader_next (the
 * last ones are set beside the walk of the next batch), or never when that
 * call fails. Until then b must be left alone; a batch that is not full is
 * complete on return, as without this. */
void hk_reader_set_ready(hk_reader_t *r, void (*ready)(hk_batch_t *b, void *arg), void *arg);

/* Read only bytes [start, end) of a plain regular file, as a file of its
 * own whose first line is line first_line of the whole, with the region tag
 * `region` (NULL: none) in force: one part of a dump planned by `haplik
 * split --plan`, read in place. Call before the first read. HK_OK, or
 * HK_E_INPUT (logged) when the input is not a plain regular file (a
 * compressed one, standard input) or is shorter than end (HK_E_NOMEM: out of
 * memory). */
HK_RESULT_USED hk_status_t hk_reader_set_range(hk_reader_t *r, long long start, long long end, long first_line,
                                               const char *region);

/* Threads that read (a plain file), scan the input and normalise its
 * sequences (default 1). */
void hk_reader_set_threads(hk_reader_t *r, int nthreads);

/* Regions must be PDHMM dumps' (1) or must not be (0): a run scores one
 * model; a region of the other is an input error at its line. */
void hk_reader_expect_pdhmm(hk_reader_t *r, int pdhmm);

/* Start reading and scanning the input's first block now, beside the
 * caller (after hk_reader_set_threads): for the next input,
 * opened while the one before is still walked. HK_OK, or the failure
 * (memory, a thread: then close it and open it again in turn). */
HK_RESULT_USED hk_status_t hk_reader_prime(hk_reader_t *r);
/* Call all_read(arg) once, in the walk's thread, when the input has all
 * been read and scanned (its last lines may still be walked): the moment to
 * open and prime the next input. */
void hk_reader_set_all_read(hk_reader_t *r, void (*all_read)(void *arg), void *arg);

/* The detected (or forced) format; HK_FMT_AUTO until the first record. */
int hk_reader_format(const hk_reader_t *r);
/* Name of a format for messages and the table ("gatk", "batch"). */
const char *hk_reader_format_name(int format);
/* The header line a file of this format starts with (NULL for none), and
 * in *prefix how a header line of it is recognised. */
const char *hk_reader_format_header(int format, const char **prefix);
/* Parse "auto" or a format's name ("pdhmm", "gatk", "batch"); -1 when unknown. */
int hk_reader_parse_format(const char *s);

/* Accepts NULL. */
void hk_reader_close(hk_reader_t *r);

#endif
