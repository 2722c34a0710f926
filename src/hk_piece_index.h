/* hk_piece_index.h - indexing the lines of a piece of a block: hk_lines.c's
 * scan, which each thread of a step runs over its piece (kept apart so that
 * hk_lines.c holds the blocks and the steps). Internal to hk_lines.c. */
#ifndef HK_PIECE_INDEX_H
#define HK_PIECE_INDEX_H

#include "hk_line_entry.h"

/* A thread's piece of a block and what it found there. */
typedef struct {
    char      *buf;
    size_t     lo, hi;     /* bytes [lo, hi) of buf: whole lines */
    hk_line_t *lines;
    size_t     n, m;
    void      *state;      /* the format's scan state for this piece */
    int        oom;
} hk_lines_piece_t;

/* Split line L (text s) on single separators: n_fields and field_end. */
void hk_lines_split_fields(hk_line_t *L, const char *s, char sep);
/* Index the lines of the piece; NUL-terminate each in place; then the
 * format's own pass (scan, unless NULL). */
void hk_piece_index_lines(hk_lines_piece_t *p, hk_piece_scan_fn scan, char sep);

#endif
