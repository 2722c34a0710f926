/* hk_results_regions.h - the part of HaplotypeCaller's results files that the
 * `gatk` and `pdhmm` formats share (hk_results_regions.c): records of
 *
 *   HAP READ QUALS INS DELS GCPS EXPECTED
 *
 * in fields 0..6, and regions rebuilt from runs of records that share one
 * list of haplotypes (field 0 is a haplotype's whole identity). A format
 * checks each record and hands it over with hk_results_push; the other
 * functions fill its hk_format_t.
 */
#ifndef HK_RESULTS_REGIONS_H
#define HK_RESULTS_REGIONS_H

#include "hk_format.h"

/* A format's walk state; it may embed this first. */
typedef struct {
    size_t *recs;            /* index entries of the open region's records */
    size_t  n, m, n_done, n_haps;
    /* places the haplotype of entry li (and what else it carries); NULL: hk_walk_place_hap */
    hk_status_t (*place_hap)(hk_walk_t *w, hk_batch_t *b, size_t li);
} hk_results_state_t;

/* The scan pass (hk_piece_scan_fn): records' expected values, and which
 * records repeat the read before them or an earlier record's haplotype. */
void   hk_results_scan(hk_line_t *lines, size_t n, void **state);
void   hk_results_scan_free(void *state);
/* The checks every results record needs once its fields are known: the
 * haplotype (hap_len bases) and read not empty nor too long, the four
 * quality strings as long as the read, the expected value a number. Field
 * k is named k + first_field in messages (1-based, as the user counts);
 * HK_OK or the error recorded. */
HK_RESULT_USED hk_status_t hk_results_check(hk_walk_t *w, const hk_line_t *L, long line, uint32_t hap_len,
                                            int first_field);
/* Append the checked record on entry i (input line `line`) to the open
 * region, placing the region in b when the record closes it. */
HK_RESULT_USED hk_status_t hk_results_push(hk_walk_t *w, hk_results_state_t *s, hk_batch_t *b, size_t i,
                                           long line);
HK_RESULT_USED hk_status_t hk_results_close(hk_walk_t *w, void *st, hk_batch_t *b);
void   hk_results_place_open(hk_walk_t *w, void *st, hk_batch_t *b);
size_t hk_results_first_needed(const void *st, size_t n);
void   hk_results_shift(void *st, size_t by);
void   hk_results_free(void *st);

#endif
