/* hk_walk.h - the walk over an input's lines in input order, and its
 * services to the formats (hk_format.h): where the walk is, recording errors,
 * beginning and ending regions, placing reads and haplotypes. Below the
 * formats, above the lines: reading runs lines -> walk -> formats -> reader
 * (hk_reader.c owns the walk, calls the formats, and sets what they place).
 */
#ifndef HK_WALK_H
#define HK_WALK_H

#include <stddef.h>
#include <stdint.h>
#include "hk_batch.h"
#include "hk_lines.h"
#include "hk_seq_fill.h"
#include "hk_source.h"

/* Limits every format applies to a region: absurd input becomes a clear
 * error at its line instead of an allocation failure. */
#define HK_MAX_REGION_READS 10000000L
#define HK_MAX_REGION_HAPS  10000L
#define HK_MAX_REGION_PAIRS 20000000L


/* The walk, as a format sees it (hk_walk.c). Its first
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

/* Record an error of kind `kind` at line; returns kind (the reader's errors
 * beside the formats'). */
__attribute__((format(printf, 4, 5)))
hk_status_t hk_walk_error(hk_walk_t *w, hk_status_t kind, long line, const char *fmt, ...);

/* The walk's state: the reader's (hk_reader.c, which owns it) and the
 * services'; a format reads it only through the functions above. */
struct hk_format;
struct hk_walk {
    hk_walk_where_t at;         /* first: the functions above read it in place */
    char          *path;
    hk_source_t   *src;
    hk_lines_t    *lines;
    hk_seq_rules_t rules;
    int            format;      /* HK_FMT_*; AUTO until detected */
    int            want_pdhmm;  /* -1: any; 0 or 1: regions must (not) be PDHMM (hk_reader_expect_pdhmm) */
    const struct hk_format *fmt;     /* NULL until then */
    /* what the services read of it (the reader's use_format sets them) */
    const char    *fmt_name;
    int            fmt_pdhmm;   /* its pairs are PDHMM's */
    int            fmt_no_expected;   /* it never writes b->expected */
    void          *state;       /* the format's walk state */
    char          *name;        /* current region tag, NULL for none */
    long           source_line; /* from "# source-line N", 0 when none */
    int            failed;
    long           err_line;    /* the first error: line (0 if none), kind and text */
    hk_status_t  err_kind;
    char           err_msg[512];
    /* Lists by pointer, into lists[]: the step in flight reads one in place. */
    hk_seq_fill_t    *placed;      /* placed by the walk since the last step began */
    hk_seq_fill_t    *setting;     /* being set by the step in flight */
    /* A full batch handed back before its last sequences were set (see
     * hk_reader_set_ready): `tail` placed in it, not yet given to a step;
     * `tail_setting` given to the step in flight. */
    hk_batch_t    *pending;
    size_t         pending_region0;   /* its first region of this reader's */
    hk_seq_fill_t    *tail, *tail_setting;
    hk_seq_fill_t     lists[4];
    struct { hk_seq_fill_t *q[2]; } job;   /* the step in flight's side job: setting, tail_setting */
    void         (*ready)(hk_batch_t *b, void *arg);   /* NULL: every batch complete on return */
    void          *ready_arg;
    void         (*all_read)(void *arg);   /* see hk_reader_set_all_read */
    void          *all_read_arg;
    int            overlap;     /* hand full batches back before they are set (HK_BATCH_END) */
    uint64_t       region_pos;  /* n_read_pos when the open region began */
    uint64_t       region_hap_pos;   /* and n_hap_pos */
    double         t_walk, t_wait;   /* seconds walking, and waiting for steps (HK_TRACE) */
    double         t_cpu;            /* this thread's CPU seconds in both: beside t_walk, what
                                        other threads on its core took from the walk */
    /* HK_TRACE: of t_wait, at takes (waiting for the step, the take) and at
     * batch ends (waiting for the step's side job, a side job alone) */
    double         t_take_wait, t_take, t_end_wait, t_end_side;
    long           n_ends, n_overlapped;
};

#endif
