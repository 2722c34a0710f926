/* hk_run.h - the scoring run of `score` and `check`: read the inputs, score
 * every pair, write the table (and compare with the inputs' expected values),
 * in overlapping stages (hk_run.c). cmd_score.c handles the arguments.
 */
#ifndef HK_RUN_H
#define HK_RUN_H

#include <stdint.h>
#include "hk_config.h"
#include "hk_split.h"

/* What a run scored, and check's comparison. */
typedef struct {
    uint64_t regions, pairs;
    uint64_t compared;           /* pairs with an expected value compared */
    uint64_t over;               /* of them, differing by more than the tolerance */
    uint64_t no_expected;        /* pairs without an expected value */
    uint64_t expected_neg_inf;   /* pairs the input gives as -Infinity (not compared) */
    double   max_diff;           /* the largest difference, at: */
    long     max_line;           /*   the input line of its region */
    uint64_t max_region;
    uint32_t max_read, max_hap;
} hk_run_stats_t;

/* Score inputs[0, n_inputs) with c (c->output_format already picked: see
 * hk_table_pick_format), writing the table to output (NULL or "-": standard
 * output); with check and no output, no table is written and the expected
 * values are compared into *stats; part (NULL: whole inputs) is the one
 * input's shard read in place (--plan). Returns HK_OK or the run's first
 * failure (hk_status_exit gives the exit status); every failure is logged,
 * the fatal error last on stderr. */
HK_RESULT_USED hk_status_t hk_run(const hk_config_t *c, char **inputs, int n_inputs,
                                  const hk_split_part_t *part, const char *output, int check,
                                  hk_run_stats_t *stats);

#endif
