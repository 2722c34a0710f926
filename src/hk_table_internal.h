/* hk_table_internal.h - what the table's formats share with its core.
 *
 * A format is a small table of operations (hk_table_format_t), chosen once
 * when the table is opened; the core (hk_table.c) owns the buffers, the
 * threads that format regions, the I/O thread, the sink (plain or BGZF) and
 * the output file's discipline (hk_outfile: complete or absent). Formats
 * only turn regions, rows and the summary into text. This header is below
 * both: it includes nothing of the core (hk_table.h), so that the core calls
 * the formats and never the reverse.
 */
#ifndef HK_TABLE_INTERNAL_H
#define HK_TABLE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "hk_batch.h"
#include "hk_textbuf.h"

/* s as a JSON string (hk_table_put_string). */
int hk_textbuf_put_json_string(hk_textbuf_t *buf, const char *s, size_t len);

/* What a format sees of its table. */
typedef struct {
    int         sequences;     /* write reads and haplotypes (json, jsonl) */
    int         decimals;
    int         expected;      /* the input carries expected values (tsv columns) */
    const char *header;        /* "\"format\": ..., \"decimals\": N": the header's members */
    const char *const *inputs; /* the inputs' names as given (a region's `input` indexes them) */
    int         n_inputs;
} hk_table_info_t;

typedef struct {
    const char *name;
    /* What comes before the first region. */
    int (*open)(const hk_table_info_t *t, hk_textbuf_t *buf);
    /* Region ri of b, with table index `index`. */
    int (*region)(const hk_table_info_t *t, hk_textbuf_t *buf, const hk_batch_t *b, size_t ri,
                  uint64_t index);
    /* A region (json, jsonl) or row (tsv) of a table of this format, copied
     * with a new index: rest is its text after its old index (json, jsonl),
     * or the whole row (tsv). */
    int (*copy)(const hk_table_info_t *t, hk_textbuf_t *buf, uint64_t index, const char *rest,
                size_t len);
    /* The end: summary is the summary object's JSON text; regions written. */
    int (*summary)(const hk_table_info_t *t, hk_textbuf_t *buf, const char *summary,
                   uint64_t regions);
    /* The sidecar file's text (header and summary), for a format whose table
     * holds rows alone; NULL: the table carries them itself. */
    int (*sidecar)(const hk_table_info_t *t, hk_textbuf_t *buf, const char *summary);
} hk_table_format_t;

/* Append s to the buffer as a JSON string (quoted, escaped); returns the end.
 * Control characters and DEL are written as \u00XX, and each part of s that
 * is not well-formed UTF-8 as \ufffd (see hk_text_utf8_next), so the table
 * stays valid JSON whatever the input holds. Needs at most 6 * len + 2 bytes. */
char *hk_table_put_string(char *p, const char *s, size_t len);

/* Whether a tsv row has the expected and difference columns. */
int hk_table_tsv_expected_row(const char *row, size_t len);

extern const hk_table_format_t hk_table_json, hk_table_jsonl, hk_table_tsv;

#endif
