/* hk_split.h - cutting a dump into shards at region boundaries (`haplik split`).
 *
 * Two passes over one regular file. The first reads it with the dump reader
 * and records each region's cells and the lines that hold it; the shards are
 * then cut contiguous and balanced by cells (region i goes to the shard that
 * holds the midpoint of its cells). The second pass copies the input's own
 * lines into the shards, as they are: expected values keep every digit,
 * comments and tags stay where they were (lines between two regions go with
 * the region after them). Each region is preceded by "# source-line N" so that
 * scoring a shard reports the original line, and each shard begins with what
 * it needs to read the same regions on its own (the results file's header,
 * the region tag in force). So the shards' tables, concatenated in order, are
 * the table of the whole input. Each shard's first line is "# source-input
 * NAME", the input's name (or the name its own first line gives, a shard of a
 * shard) with \\, newline and carriage return escaped as \\\\ \\n \\r: the
 * name a tsv table of the shard gives as its rows' input (hk_run).
 */
#ifndef HK_SPLIT_H
#define HK_SPLIT_H

#include <stddef.h>
#include <stdio.h>
#include "hk_options.h"   /* hk_read_opts_t */
#include "hk_types.h"

#define HK_SPLIT_SOURCE_TAG "# source-input "

typedef struct hk_split_plan hk_split_plan_t;

/* Pass 1 over path (format HK_FMT_*, read as ro says; NULL: the defaults)
 * for n_shards shards, into *out: HK_OK, or a failure (logged; HK_E_INPUT:
 * bad input) and *out NULL. */
HK_RESULT_USED hk_status_t hk_split_plan(const char *path, int format, const hk_read_opts_t *ro, int n_shards,
                                         hk_split_plan_t **out);

/* Regions found by pass 1. */
size_t hk_split_n_regions(const hk_split_plan_t *p);

/* Pass 2: write shard k to out[k] (named names[k] in messages). Fails
 * (HK_E_INPUT, logged) when the input is no longer what pass 1 read: another
 * size, time or inode, or fewer lines or regions; a write error is
 * HK_E_RUNTIME. */
HK_RESULT_USED hk_status_t hk_split_write(hk_split_plan_t *p, FILE **out, const char *const *names);

/* Accepts NULL. */
void hk_split_free(hk_split_plan_t *p);

/* ---- parts read in place (`haplik split --plan`, `haplik score --plan`) ----
 *
 * Instead of copying the shards, a plan file names each shard's bytes of the
 * input: the same boundaries as hk_split_write's shards (shard k's lines are
 * the lines it would copy), with what a shard file states before them: the
 * input line its first byte is on, and the region tag then in force. Only a
 * plain (uncompressed) file can be read this way. The plan is text:
 *
 *   # haplik split plan 1
 *   #input  SIZE  MTIME_NS  FORMAT  PARTS
 *   PART  START  END  FIRST_LINE  REGIONS  [REGION_TAG]     (tab-separated, PART from 1)
 */
typedef struct {
    long long start, end;    /* the part: bytes [start, end) of the input */
    long      first_line;    /* the input line that begins at start */
    char     *region;        /* the region tag in force at start, NULL for none */
    int       format;        /* HK_FMT_* that pass 1 found (AUTO: no record) */
} hk_split_part_t;

/* Write the plan of pass 1 (the input must be plain text) to fp, named name
 * in messages: HK_OK, HK_E_INPUT (a compressed input) or HK_E_RUNTIME (I/O),
 * logged. */
HK_RESULT_USED hk_status_t hk_split_write_plan(const hk_split_plan_t *p, FILE *fp, const char *name);

/* Part `part` (1-based) of plan file plan_path, for input: refused
 * (HK_E_INPUT, logged as "PLAN:LINE: what") when the plan is malformed, has
 * no such part, or was made for another file than input is now (size and
 * modification time). HK_OK or the failure; free with hk_split_part_free. */
HK_RESULT_USED hk_status_t hk_split_load_part(const char *plan_path, int part, const char *input,
                                              hk_split_part_t *out);

/* Frees what out holds (not out); accepts a zeroed part. */
void hk_split_part_free(hk_split_part_t *part);

#endif
