/* hk_table_read_internal.h - what the table reader's json part
 * (hk_table_read.c) shares with its tsv part (hk_table_read_tsv.c) and the
 * checks of both (hk_table_read_check.c): below them all. */
#ifndef HK_TABLE_READ_INTERNAL_H
#define HK_TABLE_READ_INTERNAL_H

#include "hk_table_read_types.h"

#include <htslib/bgzf.h>

/* Where a table is in its layout. */
enum { AT_HEADER, AT_OPEN, AT_REGIONS, AT_SUMMARY, AT_END };

struct hk_tread {
    const char *path;
    BGZF       *bg;           /* compressed files and pipes */
    int         fd;           /* a plain file read with read(2) (bg NULL), or -1 */
    int         spool;        /* the temporary copy of a pipe, or -1 */
    char       *buf;          /* text read, [pos, len) not yet taken */
    size_t      cap, pos, len;
    int         eof;
    char       *s;            /* the current line, NUL-terminated, n bytes */
    char       *cut;          /* where its NUL was put, and the byte it replaced */
    char        cut_byte;
    size_t      n;
    long        line;
    int         pending;      /* the current line is still to be taken by hk_tread_next */
    char       *fixed;        /* a line with ill-formed UTF-8 repaired */
    int         fixed_told;
    int         format;       /* HK_OUT_* */
    int         at;           /* AT_* (json, jsonl) */
    int         comma;        /* json: the region line before ended with a comma */
    uint64_t    regions, pairs;
    cJSON      *header_doc, *ahead_doc, *summary_doc;
    const cJSON *header, *summary;
    const char *header_where, *summary_where;
    long        header_line, summary_line;
    char       *sidecar;      /* tsv: the sidecar's path */
    /* tsv */
    int         expected;     /* the expected and difference columns are there */
    int         columns;      /* fields per row */
    uint64_t    read, hap, n_haps;   /* the last row's read and haplotype; haplotypes per read (0: unknown) */
    char       *name;         /* the region's name, as escaped in its rows */
    size_t      name_len, name_cap;
    char       *input;        /* the last row's input, checked */
    size_t      input_len, input_cap;
};

/* The next line into t->s: *got 1, or 0 at the end. */
HK_RESULT_USED hk_status_t hk_tread_getline(hk_tread_t *t, int *got);
/* tsv: the sidecar read and its header checked. */
HK_RESULT_USED hk_status_t hk_tread_sidecar(hk_tread_t *t);
/* tsv: the column names on the current line; then the sidecar. */
HK_RESULT_USED hk_status_t hk_tread_tsv_start(hk_tread_t *t);
/* tsv: the current line as a row into *rec. */
HK_RESULT_USED hk_status_t hk_tread_tsv_row(hk_tread_t *t, hk_tread_rec_t *rec);
/* tsv: the end of the table, its summary checked. */
HK_RESULT_USED hk_status_t hk_tread_tsv_end(hk_tread_t *t);

#endif
