/* hk_pdhmm.h - the partially determined Pair-HMM (SPEC 1b) on the CPU.
 *
 * DRAGEN-GATK's model for haplotypes with undetermined positions, in double
 * precision exactly as GATK's Java LoglessPDPairHMM computes it: the state
 * NORMAL / INSIDE / AFTER carried along the sweep (row by row, left to right,
 * never reset between rows), branch values BM, BI, BD, the larger of "span
 * present" and "span skipped" at the column after a flagged span. This is
 * the reference every other PDHMM backend (kernels/device/hk_kernel_pdhmm.cu) is checked
 * against.
 *
 * Sequences come as in a PDHMM batch (hk_batch.h): case-keeping base codes
 * (HK_BASE_LOWER), Phred qualities as written, and the haplotype's PD bytes
 * (HK_PD_* flags).
 */
#ifndef HK_PDHMM_H
#define HK_PDHMM_H

#include <stddef.h>
#include <stdint.h>
#include "hk_batch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of workspace one pair needs (16-byte aligned). */
size_t hk_pdhmm_ws_size(uint32_t hlen);

/* log10 of the pair's likelihood. GATK's arithmetic (C = 2^1020); where that
 * double sum is 0, the true value from the same recurrence with each row
 * rescaled by a power of two (SPEC 1: the rescue); -inf only when the
 * likelihood is truly 0 (qualities of Q0 can make it so). */
double hk_pdhmm_score_pair(const uint8_t *read_base, const uint8_t *q, const uint8_t *ins,
                           const uint8_t *del, const uint8_t *gcp, uint32_t rlen,
                           const uint8_t *hap_base, const uint8_t *hap_pd, uint32_t hlen,
                           void *ws);
/* The rescue alone: for pairs another backend found to underflow. */
double hk_pdhmm_rescue_pair(const uint8_t *read_base, const uint8_t *q, const uint8_t *ins,
                            const uint8_t *del, const uint8_t *gcp, uint32_t rlen,
                            const uint8_t *hap_base, const uint8_t *hap_pd, uint32_t hlen,
                            void *ws);

/* Whether the read base code matches the haplotype position (code hb, PD
 * byte pd) in the PDHMM emission: the same letter and case, either an
 * upper-case N, or an undetermined SNP whose alternatives include it. */
static inline int hk_pdhmm_matches(uint8_t rb, uint8_t hb, uint8_t pd)
{
    if (rb == hb || rb == HK_BASE_N || hb == HK_BASE_N) return 1;
    const unsigned letter = rb >= HK_BASE_LOWER ? rb - HK_BASE_LOWER : rb;
    return (pd & HK_PD_SNP) && letter < 4 && (pd & (HK_PD_A << letter));
}

/* Score every pair of a PDHMM batch with nthreads threads. HK_OK, or
 * HK_E_NOMEM when memory ran out (logged). */
HK_RESULT_USED hk_status_t hk_pdhmm_score_batch(hk_batch_t *b, int nthreads);

/* GATK refuses a read letter other than A, C, G, T (either case) or N that it
 * must compare with an undetermined SNP position (SPEC 1b): in a batch whose
 * sequences are set, the first such read of region rg (in input order), or
 * -1. *hap, *read_pos and *hap_pos say where. */
long hk_pdhmm_unmatchable_read(const hk_batch_t *b, const hk_region_t *rg, size_t *hap,
                               uint32_t *read_pos, uint32_t *hap_pos);

#ifdef __cplusplus
}
#endif
#endif
