/* hk_table_read.h - merge's table reader, beside the table writers
 * (hk_table.h): reads a likelihood table that haplik wrote, in any of its
 * formats, and checks every record against its format's contract while it
 * streams, without building it in memory.
 *
 *   json   line 1 the header's members, "regions": [, one region per line,
 *          "],", "summary": {...}}
 *   jsonl  one region per line; the last line the summary with the header
 *   tsv    one row of column names, one row per pair; header and summary in
 *          the sidecar FILE.meta.json ({"haplik-likelihoods": {...},
 *          "summary": {...}}), which a tsv table given as a file must have
 *
 * A record is a json/jsonl region line or a tsv row, handed over as its text
 * around its region index so that the caller can copy it with another index.
 * Each is checked before it is handed over: a region line is one JSON object
 * of the region's shape (hk_json_scan.h); a tsv row has the columns of its
 * table, each of its type (counts, numbers or empty, escaped text), its
 * region index the one before or the next, and its read and haplotype indices
 * in order. At the end the summary is checked against what was read (regions,
 * pairs). Text that is not UTF-8 in a json/jsonl line (written by earlier
 * versions) is repaired to U+FFFD with a notice. Plain, gzip or BGZF; a pipe
 * works (the first table's header, which a jsonl table keeps last, is then
 * found through a temporary copy). Every fault is logged once as FILE:LINE:
 * what; nothing here exits. Fallible functions return HK_OK, HK_E_INPUT (the
 * table: not one, unsupported compression, a read error, a truncated
 * stream), HK_E_NOMEM, or HK_E_RUNTIME (the temporary copy of a pipe).
 */
#ifndef HK_TABLE_READ_H
#define HK_TABLE_READ_H

#include "hk_table_read_types.h"


/* Open the table at path ("-": standard input) into *out, read its first line
 * and find its format. On failure (logged) *out is NULL. Close with
 * hk_tread_close. */
HK_RESULT_USED hk_status_t hk_tread_open(const char *path, hk_tread_t **out);
/* Discard; accepts NULL. */
void hk_tread_close(hk_tread_t *t);

const char *hk_tread_path(const hk_tread_t *t);
/* HK_OUT_* */
int hk_tread_format(const hk_tread_t *t);
/* The line last read (for messages), from 1. */
long hk_tread_line(const hk_tread_t *t);

/* The header object (format, model, decimals, ...) into *h, checked to be a
 * haplik table of a format version this reader knows; where it was found in
 * *where and *line (the table or the sidecar; line 0 when read ahead). A
 * jsonl table keeps it on its last line: *h NULL until that is read, unless
 * ahead, when it is read first (a file is read twice, a pipe through a
 * temporary copy). On failure (logged) *h is NULL. Owned by t. */
HK_RESULT_USED hk_status_t hk_tread_header(hk_tread_t *t, int ahead, const cJSON **h,
                                           const char **where, long *line);

/* tsv: whether the table has the expected and difference columns; -1 when it
 * has no rows and so need not agree with other tables. */
int hk_tread_tsv_expected(const hk_tread_t *t);

/* The next record into *rec: *got 1, or 0 at the table's end (its summary
 * then read and checked). */
HK_RESULT_USED hk_status_t hk_tread_next(hk_tread_t *t, hk_tread_rec_t *rec, int *got);

/* After hk_tread_next reached the end: the summary object, and where it was (the
 * table's line, or the sidecar's). Owned by t. */
const cJSON *hk_tread_summary(const hk_tread_t *t, const char **where, long *line);
/* Regions read. */
uint64_t hk_tread_regions(const hk_tread_t *t);

#endif
