/* hk_table.h - the JSON likelihood table (SPEC section 3), streamed.
 *
 * Layout, which `merge` relies on: in `json` the header (format, producer,
 * model) is the first line, then `"regions": [`, then one region object per
 * line, then `],` and the summary; in `jsonl` one region object per line and
 * a last line {"summary": ..., "format": ..., "producer": ..., "model": ...}.
 * Every region line starts with {"index": N, .
 * The table is written through hk_outfile: complete or absent.
 */
#ifndef HK_TABLE_H
#define HK_TABLE_H

#include <stdint.h>
#include "hk_batch.h"
#include "hk_config.h"

typedef struct {
    uint64_t    regions, pairs, cells, double_recomputed;
    const char *backend;          /* "cpu" or "cuda" */
    const char *const *devices;   /* device names */
    int         n_devices;
    const int  *ordinals;         /* CUDA ordinals of the GPUs, n_ordinals of them */
    int         n_ordinals;
    double      seconds;          /* wall time of scoring (reading included) */
} hk_summary_t;

typedef struct hk_table hk_table_t;

/* path NULL or "-" for standard output. NULL on failure (logged). */
hk_table_t *hk_table_open(const char *path, const hk_config_t *c);
/* Append the regions of b, indexed from the count written so far. */
int hk_table_write(hk_table_t *t, const hk_batch_t *b) __attribute__((warn_unused_result));
/* Write the summary and move the table into place; frees t. */
int hk_table_finish(hk_table_t *t, const hk_summary_t *s) __attribute__((warn_unused_result));
/* Discard; frees t; accepts NULL. */
void hk_table_abort(hk_table_t *t);

/* The model object as written in the header, e.g. for comparing tables.
 * Writes at most n bytes to buf. */
void hk_table_model_json(char *buf, size_t n, const hk_model_t *m);

/* Append s to the buffer as a JSON string (quoted, escaped); returns the end.
 * Control characters and DEL are written as \u00XX, and each part of s that
 * is not well-formed UTF-8 as \ufffd (see hk_text_utf8_next), so the table
 * stays valid JSON whatever the input holds. Needs at most 6 * len + 2 bytes. */
char *hk_table_put_string(char *p, const char *s, size_t len);

#endif
