/* hk_line_entry.h - one entry of the lines' index (hk_line_t): where a line
 * is, its length, the ends of its first fields and what a scan found there;
 * below the blocks of lines (hk_lines.h) and the scan that indexes a piece
 * of one (hk_piece_index.h). */
#ifndef HK_LINE_ENTRY_H
#define HK_LINE_ENTRY_H

#include <stddef.h>
#include <stdint.h>
#include "hk_types.h"

/* The longest line that can be valid: a results-file record of the longest
 * sequences (haplotype, read and its four quality strings, HK_MAX_SEQ_LEN
 * each), with room for spaces, the expected value and a line end. Longer
 * lines are refused as soon as they pass it, not held in memory whole. */
#define HK_MAX_LINE_LEN (6 * (size_t)HK_MAX_SEQ_LEN + 4096)
#define HK_MAX_FIELDS   8

/* What a line of the index is. Lines that cannot be read stand for the error
 * found there, which the walk reports when it gets to them. */
enum { HK_LINE_TEXT, HK_LINE_NUL, HK_LINE_TOO_LONG, HK_LINE_READ_ERROR, HK_LINE_NO_EOF_MARKER };

/* hap_back when a hash collision hid the answer: the walk compares itself. */
#define HK_HAP_UNKNOWN UINT32_MAX

/* hk_line_t.flags: the index's bits, then the format scan's own from
 * HK_LINE_SCAN_BIT up (zero before its scan ran). */
enum { HK_LINE_REGULAR = 1,   /* fields 3 .. n_fields - 2 are as long as field 2 */
       HK_LINE_TAB = 2,       /* split on tabs (else spaces) */
       HK_LINE_SCAN_BIT = 4 };

/* HK_LINE_KEPT_FIELDS field ends are kept; the others are computed: every
 * format's valid records repeat one width from field 2 to the last but one
 * (a read, then its qualities), so a line is 48 bytes, not 80 (the index is
 * written by the scan, copied by the take and read by the walk and the side
 * job: na27's 20M lines). */
#define HK_LINE_KEPT_FIELDS 3

typedef struct {
    char    *text;           /* in its block, NUL-terminated there; NULL for an error */
    uint32_t len;            /* bytes, without the line end */
    uint32_t field_end[HK_LINE_KEPT_FIELDS];   /* of fields 0..2; see hk_field_end */
    uint32_t piece_back;     /* lines back to the first line of its piece */
    uint8_t  n_fields;       /* fields split on single separators (a space, or the format's),
                                HK_MAX_FIELDS + 1 for more */
    uint8_t  kind;           /* HK_LINE_* */
    char     first;          /* the line's first byte ('\0' when empty): the walk tells a
                                comment without reading the text (a cache miss per line) */
    uint8_t  flags;          /* HK_LINE_REGULAR, HK_LINE_TAB; the scan's bits */
    /* What a format's scan pass found, by format (zero before it ran). */
    union {
        /* hk_results_regions.c, for records: the expected value (and a bit
         * in flags saying whether it parsed), how far back the record with
         * the same read was (and a bit: whether it has the same read) and
         * the same haplotype; "back" reaches no further than the piece. */
        struct {
            double   expected;
            uint32_t read_back, hap_back;
        };
        /* hk_format_batch.c: the run of read (haplotype) lines from this one
         * to the end of the run or the piece, its kind in flags: how many,
         * and their bases in all. */
        struct {
            uint32_t run, run_bases;
        };
    };
} hk_line_t;

/* Field k's end found in the text, for a line without HK_LINE_REGULAR. */
uint32_t hk_lines_field_end_split(const hk_line_t *L, int k);

/* Where field k (< n_fields) ends: [hk_field_start(L, k), hk_field_end(L, k)). */
static inline uint32_t hk_field_end(const hk_line_t *L, int k)
{
    if (k < HK_LINE_KEPT_FIELDS) return L->field_end[k];
    if (k + 1 >= L->n_fields) return L->len;
    if (!(L->flags & HK_LINE_REGULAR)) return hk_lines_field_end_split(L, k);   /* a bad line */
    return L->field_end[2] + (uint32_t)(k - 2) * (L->field_end[2] - L->field_end[1]);
}
static inline uint32_t hk_field_start(const hk_line_t *L, int k) { return k ? hk_field_end(L, k - 1) + 1 : 0; }
static inline uint32_t hk_field_len(const hk_line_t *L, int k) { return hk_field_end(L, k) - hk_field_start(L, k); }

/* A format's pass over the lines of one piece, on that piece's thread; state
 * is the piece's own (NULL at first), freed with the free function given. */
typedef void (*hk_piece_scan_fn)(hk_line_t *lines, size_t n, void **state);

#endif
