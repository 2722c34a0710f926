/* hk_table.h - the likelihood table (SPEC section 3), streamed, in one of
 * three formats behind one interface: `json` (one document), `jsonl` (one
 * region per line, the summary with the header last) and `tsv` (a long
 * table, one row per pair, for pandas, polars, data.table and DuckDB).
 *
 * Layouts, which `merge` reads:
 *   json   line 1 the header's members ({"format": ..., "decimals": N,),
 *          line 2 "regions": [, one region object per line (each but the
 *          last ending with a comma), "],", then "summary": {...}}
 *   jsonl  one region object per line, last {"summary": {...}, header...}
 *   tsv    one header row (the column names), then one row per pair:
 *          input, line, region_index, region_name, read_index,
 *          haplotype_index, log10_likelihood [, expected, difference];
 *          nothing else. Header and summary go into the sidecar
 *          NAME.meta.json: {"haplik-likelihoods": {header}, "summary": {...}},
 *          put in place with the table, all or nothing; a tsv written to a
 *          stream (standard output, a pipe, a device) has none.
 * Every json region line starts with {"index": N. Plain text, or BGZF
 * (output.compression, or an output named *.gz). Written through hk_outfile:
 * a file is complete or absent; standard output that is a pipe or a
 * terminal is streamed, batch by batch, its end (the json or jsonl summary)
 * marking a complete run.
 */
#ifndef HK_TABLE_H
#define HK_TABLE_H

#include <stdint.h>
#include "hk_batch.h"
#include "hk_config.h"

typedef struct {
    uint64_t    regions, pairs, cells, double_recomputed;
    const char *backend;          /* "cpu", "cuda", or "mixed" (merge) */
    const char *const *devices;   /* device names */
    int         n_devices;
    const int  *ordinals;         /* CUDA ordinals of the GPUs, n_ordinals of them */
    int         n_ordinals;
    double      seconds;          /* wall time of scoring (reading included) */
    const char *parts;            /* merge: JSON array of the inputs' summaries, or NULL */
} hk_summary_t;

typedef struct hk_table hk_table_t;

/* The sidecar of a tsv table is its name followed by this. */
#define HK_TABLE_SIDECAR_SUFFIX ".meta.json"

/* The name of the sidecar a table of this format written to path gets
 * (path and HK_TABLE_SIDECAR_SUFFIX, to be freed), for checking it against
 * the inputs before any work: *name is NULL where there is none (a format
 * without one, standard output, a device or FIFO). HK_OK, or HK_E_NOMEM
 * (logged). */
HK_RESULT_USED hk_status_t hk_table_sidecar_name(const char *path, int format, char **name);

/* The format of a table written to path (NULL or "-": standard output) when
 * the settings ask for `format` (HK_OUT_AUTO: none asked): the one its name's
 * extension says (.json, .jsonl, .tsv, each optionally followed by .gz),
 * else `format`, else json. A format asked for that contradicts the
 * extension is a usage error (logged, naming both): HK_E_INPUT. */
HK_RESULT_USED hk_status_t hk_table_pick_format(const char *path, int format, int *picked);

/* Open a table for scoring into *out with c's format (HK_OUT_AUTO:
 * hk_table_pick_format), compression, decimals, sequences and model; path
 * NULL or "-" for standard output. inputs[0, n_inputs) are the inputs' names
 * as given (a region's `input` indexes them; the tsv's `input` column); the
 * table keeps the pointers, which must outlive it. HK_OK; else *out is NULL
 * and the failure, logged, is the output's (hk_outfile_open: HK_E_RUNTIME,
 * HK_E_NOMEM), HK_E_RUNTIME when compression cannot start, or HK_E_NOMEM. */
HK_RESULT_USED hk_status_t hk_table_open(const char *path, const hk_config_t *c, const char *const *inputs,
                                         int n_inputs, hk_table_t **out);
/* Open a table as merge writes it (decimals -1: unknown, written as null):
 * the model is the JSON text of the inputs' model; compression as
 * output.compression; format not HK_OUT_AUTO (see hk_table_pick_format).
 * Returns as hk_table_open. */
HK_RESULT_USED hk_status_t hk_table_open_as(const char *path, int format, int compression, int decimals,
                                            const char *model_json, int threads, hk_table_t **out);
/* Append the regions of b, indexed from the count written so far. HK_OK,
 * or the first failure of the table's writes (logged: HK_E_RUNTIME for a
 * write, HK_E_NOMEM for memory), which every later call returns too. */
HK_RESULT_USED hk_status_t hk_table_write(hk_table_t *t, const hk_batch_t *b);
/* Whether a tsv table has the expected and difference columns (merge: call
 * before the first hk_table_copy; else the first row copied tells, by its
 * number of fields, and a table with no row has none). */
void hk_table_set_expected(hk_table_t *t, int expected);
/* Append a region (json, jsonl) or a row (tsv) read from a table of the same
 * format, with the index `index`: json and jsonl: rest is the region's text
 * after its index; tsv: rest is the whole row (no line end), whose third
 * field (region_index) is replaced. HK_OK, or a failure as hk_table_write's
 * (logged, with the output's name and the cause for a write). */
HK_RESULT_USED hk_status_t hk_table_copy(hk_table_t *t, uint64_t index, const char *rest, size_t len);
/* The format's name ("json", "jsonl", "tsv"). */
const char *hk_table_format_name(int format);
/* Write the summary and move the table into place; frees t. HK_OK, or a
 * failure as hk_table_write's (then nothing is put in place). */
HK_RESULT_USED hk_status_t hk_table_finish(hk_table_t *t, const hk_summary_t *s);
/* Discard; frees t; accepts NULL. */
void hk_table_abort(hk_table_t *t);

/* The model object as written in the header. Writes at most n bytes. */
void hk_table_model_json(char *buf, size_t n, const hk_model_t *m);

#endif
