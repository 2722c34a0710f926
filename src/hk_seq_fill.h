/* hk_seq_fill.h - what the walk has placed into a batch and not set yet, and
 * the side job that sets it on all threads (internal to hk_reader.c).
 *
 * The walk only counts what it places: a region's reads (and the batch
 * layout's haplotypes) become spans of index entries here, and their offsets,
 * lines, sequences and the region's results (NaN until scored) are written
 * later by hk_seq_fill_set, one part per thread, beside the scan of the next
 * block (hk_lines_take's side job).
 */
#ifndef HK_SEQ_FILL_H
#define HK_SEQ_FILL_H

#include <stddef.h>
#include <stdint.h>
#include "hk_batch.h"
#include "hk_lines.h"
#include "hk_types.h"

#define HK_SEQ_FILL_PARTS HK_LINES_MAX_PARTS

/* Sequences placed by the walk and not set yet, as entry spans: index entries
 * entry, entry + stride, ... (count of them) hold the batch's reads
 * (haplotypes) index0, index0 + 1, ..., from position pos0 on. Formats place
 * a region's reads one after another, so a span is mostly a region's reads
 * (or haplotypes): the walk extends it with a compare and an add. */
typedef struct {
    size_t   entry;
    uint32_t count, stride;  /* stride: 1 until a second single entry sets it */
    uint32_t field;          /* reads: the bases' field (the qualities follow) */
    uint32_t offsets;        /* haplotypes: 1 when the side job writes their offsets and
                                lines (placed in bulk), 0 when placed one by one */
    size_t   index0;
    uint64_t pos0;
} hk_entry_span_t;

typedef struct {
    hk_entry_span_t *v;
    size_t n, m;
} hk_entry_spans_t;

/* Sequences placed and not set yet, the results to fill with NaN: what the
 * side job does (on all threads). */
typedef struct {
    hk_entry_spans_t        reads, haps;
    uint64_t         read_pos0, hap_pos0;   /* where the first spans start */
    uint64_t         read_end, hap_end;     /* and where the last end, once handed to a job */
    size_t           pair_lo, pair_hi;      /* lk (and expected) [lo, hi) to fill */
    int              fill_expected;         /* expected too (the format never writes it) */
    const hk_seq_rules_t *rules;   /* the reader's */
    hk_batch_t      *batch;
    const hk_line_t *lines;     /* the index they were placed from (see hk_lines_take) */
    long             line0;     /* and its first entry's line */
    hk_batch_error_t err[HK_SEQ_FILL_PARTS];   /* the earliest per part */
    uint32_t         max_len[HK_SEQ_FILL_PARTS];   /* the longest read per part; UINT32_MAX:
                                                   more bases than counted */
    uint32_t         max_hap[HK_SEQ_FILL_PARTS];   /* the same of haplotypes placed in bulk */
} hk_seq_fill_t;

/* Note that entries li, li + 1, ... (count) hold the sequences index0, ...
 * from position pos0 on (reads: from field `field`; haplotypes: offsets 1
 * when the side job writes their offsets and lines). HK_OK or HK_E_NOMEM. */
HK_RESULT_USED hk_status_t hk_seq_fill_add_span(hk_entry_spans_t *q, size_t li, size_t count, size_t index0, uint64_t pos0,
                                             int field, int offsets);
/* Empty q for the sequences placed into b from now on. */
void hk_seq_fill_reset(hk_seq_fill_t *q, hk_batch_t *b);
/* Hand q to a job: the index its spans were placed from, and whether
 * expected[] is filled too (the format never writes it). */
void hk_seq_fill_ready(hk_seq_fill_t *q, const hk_lines_index_t *ix, int fill_expected);
int hk_seq_fill_has_work(const hk_seq_fill_t *q);
/* Bytes of work the side job of q has (for how many threads to start). */
size_t hk_seq_fill_bytes(const hk_seq_fill_t *q);
/* Part `part` of nparts of q's side job. Afterwards, per part: err (the
 * earliest bad character), max_len and max_hap (UINT32_MAX: a format counted
 * fewer bases than its lines hold). */
void hk_seq_fill_set(hk_seq_fill_t *q, int part, int nparts);

#endif
