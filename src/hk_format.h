/* hk_format.h - the interface every input format implements, and the list of them.
 *
 * A format turns the lines of an input (hk_lines.h) into regions of a batch.
 * The reader (hk_reader.c) owns the walk over the lines in input order and
 * everything formats share: comments and tags ("# region NAME", "# source-line
 * N"), the region name; the walk's services (hk_walk.h) record errors and place
 * sequences into the batch (their text is copied and checked later, on all
 * threads). A format says what its lines mean; it includes the walk, the
 * reader includes the formats, never the reverse. Adding a format: one file hk_format_NAME.c defining
 * `const hk_format_t hk_format_NAME`, one line in HK_FORMATS (hk_formats.h).
 */
#ifndef HK_FORMAT_H
#define HK_FORMAT_H

#include <stddef.h>
#include "hk_batch.h"
#include "hk_formats.h"
#include "hk_walk.h"

typedef struct hk_format {
    const char *name;          /* for input.format, messages and the table */
    size_t      state_size;    /* the walk state the reader allocates (zeroed) for it */
    char        separator;     /* between the fields of its records: ' ' or '\t' */
    int         pdhmm;         /* 1: its pairs are scored with the PDHMM model (SPEC 1b) */
    /* A comment line that names this format (a header): how it starts, and
     * the whole line as a file of it begins (`split` gives it to shards); NULL
     * for none. */
    const char *header_prefix;
    const char *header;
    /* Whether a first data line (not blank, not a comment) is this format's
     * (see hk_line_count). */
    int  (*claims)(const hk_line_t *L);
    /* Optional: a pass over each piece of each block, in parallel. */
    hk_piece_scan_fn scan;
    void (*scan_free)(void *state);
    /* Whether the format takes the next line whatever it is (inside a
     * structure where blank and '#' lines are errors, not comments). */
    int  (*inside)(const void *st);
    /* Walk entry hk_walk_pos(w): a data line, or any line while inside. */
    hk_status_t (*line)(hk_walk_t *w, void *st, hk_batch_t *b);
    /* A region tag follows: close what is open (optional). */
    hk_status_t (*boundary)(hk_walk_t *w, void *st, hk_batch_t *b);
    /* The input ended after the lines walked. */
    hk_status_t (*end)(hk_walk_t *w, void *st, hk_batch_t *b);
    /* After an error: place the open region's lines walked before it, so
     * that a bad character there is found (and, being earlier, reported). */
    void (*place_open)(hk_walk_t *w, void *st, hk_batch_t *b);
    /* The first index entry the format still needs (n when none). */
    size_t (*first_needed)(const void *st, size_t n);
    /* Index entries moved down by `by` (the lines before were dropped). */
    void (*shift)(void *st, size_t by);
    /* Release what the walk state holds (optional; the reader frees the state). */
    void (*free_state)(void *st);
    /* The format never writes b->expected: the reader fills it with NaN on
     * all threads, not in the walk (0: filled when a region ends, for the
     * format to overwrite). */
    int  no_expected;
    /* Optional: checks that need the sequences set, over regions region0.. of
     * b (at the end of a batch, in input order). */
    hk_status_t (*check_set)(hk_walk_t *w, const hk_batch_t *b, size_t region0);
} hk_format_t;

#define HK_FORMAT_DECLARE(name, NAME) extern const hk_format_t hk_format_##name;
HK_FORMATS(HK_FORMAT_DECLARE)
#undef HK_FORMAT_DECLARE

#endif
