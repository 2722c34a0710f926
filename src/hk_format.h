/* hk_format.h - the interface every input format implements, and the list of them.
 *
 * A format turns the lines of an input (hk_lines.h) into regions of a batch.
 * The reader (hk_reader.c) owns the walk over the lines in input order and
 * everything formats share: comments and tags ("# region NAME", "# source-line
 * N"), errors, the region name, and placing sequences into the batch (their
 * text is copied and checked later, on all threads). A format says what its
 * lines mean. Adding a format: one file hk_format_NAME.c defining
 * `const hk_format_t hk_format_NAME`, one line in HK_FORMATS (hk_formats.h).
 */
#ifndef HK_FORMAT_H
#define HK_FORMAT_H

#include <stddef.h>
#include "hk_batch.h"
#include "hk_formats.h"
#include "hk_lines.h"

/* The walk, as a format sees it (implemented in hk_reader.c). Its first
 * member says where it is, so that these are read in place. */
typedef struct hk_walk hk_walk_t;
typedef struct {
    const hk_lines_index_t *ix;
    size_t                  pos;     /* the index entry being walked */
} hk_walk_where_t;

static inline size_t hk_walk_pos(const hk_walk_t *w) { return ((const hk_walk_where_t *)w)->pos; }
static inline const hk_line_t *hk_walk_line(const hk_walk_t *w, size_t i)
{ return &((const hk_walk_where_t *)w)->ix->lines[i]; }
/* Entries in the index now (a format that looks ahead must stay below). */
static inline size_t hk_walk_n_lines(const hk_walk_t *w) { return ((const hk_walk_where_t *)w)->ix->n_lines; }
/* Input line number (1-based) of index entry i. */
static inline long hk_walk_line_no(const hk_walk_t *w, size_t i)
{ return ((const hk_walk_where_t *)w)->ix->line0 + (long)i; }
/* How often c occurs in line L's text. A format's claim counts its own
 * separator: L may have been split with another's (lines read before the
 * format is known are split on spaces; see also hk_lines_set_first). */
int hk_line_count(const hk_line_t *L, char c);
/* The walk's functions, and the format's below, return HK_OK or the kind of
 * the error they recorded in the walk (the first one is reported): a
 * format returns what they return. */
/* Record an input error at line; returns HK_E_INPUT, for `return hk_walk_fail(...)`
 * (they cannot fail: their result need not be used). */
hk_status_t hk_walk_fail(hk_walk_t *w, long line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Record that memory ran out at line; returns HK_E_NOMEM. */
hk_status_t hk_walk_oom(hk_walk_t *w, long line);
/* Begin a region in b at index entry first (its name and reported line come
 * from the tags before it). */
HK_RESULT_USED hk_status_t hk_walk_begin_region(hk_walk_t *w, hk_batch_t *b, size_t first);
/* Append to the region begun the read whose bases are field `field` of entry
 * li (its qualities the four fields after), or the haplotype in field 0. */
HK_RESULT_USED hk_status_t hk_walk_place_read(hk_walk_t *w, hk_batch_t *b, size_t li, int field);
HK_RESULT_USED hk_status_t hk_walk_place_hap(hk_walk_t *w, hk_batch_t *b, size_t li);
/* The same for a haplotype in the first len bytes of field 0. */
HK_RESULT_USED hk_status_t hk_walk_place_hap_len(hk_walk_t *w, hk_batch_t *b, size_t li, uint32_t len);
/* End the region begun: it spans entries first..last. */
HK_RESULT_USED hk_status_t hk_walk_end_region(hk_walk_t *w, hk_batch_t *b, size_t first, size_t last);
/* Append count reads at once, in entries first, first + 1, ...: a format
 * that has checked them (each has the five fields from `field` on, at most
 * HK_MAX_SEQ_LEN bases) and knows their bases in all. Touches none of their
 * lines: the walk stays off them (their sequences are set on all threads). */
HK_RESULT_USED hk_status_t hk_walk_place_reads(hk_walk_t *w, hk_batch_t *b, size_t first, size_t count,
                                               int field, uint64_t bases);
/* The same for count haplotypes, each the only field of its entry (the
 * batch layout); a format that must write beside each haplotype as it is
 * placed (PDHMM's bytes) places them one by one. */
HK_RESULT_USED hk_status_t hk_walk_place_haps(hk_walk_t *w, hk_batch_t *b, size_t first, size_t count,
                                              uint64_t bases);
/* The walk goes on after entry i (< hk_walk_n_lines), skipping the lines
 * between: a format that has checked them as a whole. */
void hk_walk_skip_to(hk_walk_t *w, size_t i);

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
    hk_lines_scan_fn scan;
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

/* Limits every format applies to a region: absurd input becomes a clear
 * error at its line instead of an allocation failure. */
#define HK_MAX_REGION_READS 10000000L
#define HK_MAX_REGION_HAPS  10000L
#define HK_MAX_REGION_PAIRS 20000000L

#define HK_FORMAT_DECLARE(name, NAME) extern const hk_format_t hk_format_##name;
HK_FORMATS(HK_FORMAT_DECLARE)
#undef HK_FORMAT_DECLARE

#endif
