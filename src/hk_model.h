/* hk_model.h - the Pair-HMM model (SPEC section 1) and its CPU scorer.
 *
 * The CPU scorer is the reference for every other backend: `double` mode is
 * the exact recurrence in double precision, `mixed` reproduces GATK/GKL's
 * float-then-double policy, `float` never falls back.
 */
#ifndef HK_MODEL_H
#define HK_MODEL_H

#include <stdint.h>
#include "hk_batch.h"   /* and hk_types.h: HK_PREC_*, hk_seq_rules_t */
#include "hk_model_types.h"

/* The rules by which the model's input is normalised as it enters a batch. */
static inline hk_seq_rules_t hk_model_seq_rules(const hk_model_t *m)
{
    return (hk_seq_rules_t){ .min_base_quality = m->min_base_quality, .gcp = m->gcp,
                             .unknown_as_n = m->unknown_as_n, .pdhmm = 0 };
}

/* Score one pair. Read arrays have rlen entries, hap_base hlen entries; the
 * qualities are the normalised Phred values of hk_batch_t. ws must hold
 * hk_model_ws_size(hlen) bytes, 16-byte aligned. *recomputed is set to 1 when
 * mixed mode fell back to double, or went there at once (a read longer than
 * HK_MIXED_FLOAT_MAX_READ or a haplotype longer than HK_MIXED_FLOAT_MAX_HAP).
 * Returns log10 of the likelihood; where even the double sum underflows or
 * its cells overflow (beyond GATK's range), hk_model_rescue_pair's. */
double hk_model_score_pair(const hk_model_t *m,
                           const uint8_t *read_base, const uint8_t *q,
                           const uint8_t *ins, const uint8_t *del,
                           const uint8_t *gcp, uint32_t rlen,
                           const uint8_t *hap_base, uint32_t hlen,
                           void *ws, int *recomputed);
size_t hk_model_ws_size(uint32_t hlen);

/* The pair's true log10 likelihood where GATK's double sum is 0 (below about
 * log10 -631) or not finite (cells past 2^1024: low gap-continuation
 * qualities let a row's deletions carry more than they took in): the double
 * recurrence with each row rescaled by a power of two. Finite unless a
 * sequence is empty (-inf). Same arguments as hk_model_score_pair; slower
 * than the plain double pass, so scorers call it only for pairs whose double
 * sum is 0 or not finite (the GPU's come back as -inf, inf or NaN). */
double hk_model_rescue_pair(const uint8_t *read_base, const uint8_t *q,
                            const uint8_t *ins, const uint8_t *del,
                            const uint8_t *gcp, uint32_t rlen,
                            const uint8_t *hap_base, uint32_t hlen, void *ws);

/* Score every pair of a batch on the CPU with nthreads threads (>= 1). The
 * threads share the batch's pairs, grouped by length into the vector lanes
 * of the CPU pass (hk_model_cpu_pass); results do not depend on the pass or
 * on the number of threads.
 * HK_OK, or HK_E_NOMEM when memory or threads could not be had (logged). */
HK_RESULT_USED hk_status_t hk_model_score_batch(const hk_model_t *m, hk_batch_t *b, int nthreads);

/* The CPU pass in use: "scalar", "sse2" (4 float / 2 double lanes), "avx2"
 * (8 / 4) or "avx512" (16 / 8) on x86-64, "neon" (4 / 2) on AArch64. Chosen once: the one the environment
 * variable HK_CPU_PASS names where this CPU runs it, else the widest this CPU
 * runs. Every pass gives the same bits. */
const char *hk_model_cpu_pass(void);
/* Use the pass called name from now on (for tests and measurements; not
 * while a batch is being scored). HK_OK, or HK_E_INPUT when there is no such
 * pass or this CPU does not run it. */
HK_RESULT_USED hk_status_t hk_model_set_cpu_pass(const char *name);
/* Batches of at least min_pairs pairs are put in scoring order by all the
 * scoring threads instead of one (default 2^20 pairs; the order is the same).
 * For tests; not while a batch is being scored. Returns the previous value. */
size_t hk_model_set_cpu_parallel_order(size_t min_pairs);

#endif
