/* hk_gkl_small.c - see hk_gkl_small.h. */
#include "hk_gkl_small.h"
#include "hk_log.h"
#include "hk_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lay b out in block by lay: pairs in lk[] order, reads with their rows,
 * haplotypes. scratch: 3 * max_read_len bytes for a read's gap rows. */
static void pack(const hk_batch_t *b, const hk_small_layout_t *lay, unsigned char *block, uint8_t *scratch)
{
    hk_small_pair_t *pairs = (hk_small_pair_t *)(block + lay->pairs);
    hk_small_seq_t *reads = (hk_small_seq_t *)(block + lay->reads), *haps = (hk_small_seq_t *)(block + lay->haps);
    for (size_t g = 0; g < b->n_regions; g++) {
        const hk_region_t *rg = &b->regions[g];
        for (uint32_t r = 0; r < rg->n_reads; r++)
            for (uint32_t h = 0; h < rg->n_haps; h++)
                pairs[rg->pair0 + (uint64_t)r * rg->n_haps + h] = (hk_small_pair_t){ rg->read0 + r, rg->hap0 + h };
    }
    const uint64_t r0 = b->read_off[0], h0 = b->hap_off[0];
    hk_small_row_t *rows = (hk_small_row_t *)(block + lay->rows);
    for (size_t k = 0; k < b->n_reads; k++) {
        const uint64_t at = b->read_off[k] - r0;
        const uint32_t len = hk_batch_read_len(b, k);
        reads[k] = (hk_small_seq_t){ (uint32_t)at, len };
        const uint8_t *gap[3], *q = b->read_q + b->read_off[k];
        hk_batch_gap_rows(b, k, scratch, gap);
        for (uint32_t i = 0; i < len; i++) rows[at + i] = (hk_small_row_t){ q[i], gap[0][i], gap[1][i], gap[2][i] };
    }
    for (size_t k = 0; k < b->n_haps; k++)
        haps[k] = (hk_small_seq_t){ (uint32_t)(b->hap_off[k] - h0), hk_batch_hap_len(b, k) };
    memcpy(block + lay->rbase, b->read_base + r0, b->read_off[b->n_reads] - r0);
    memcpy(block + lay->hbase, b->hap_base + h0, b->hap_off[b->n_haps] - h0);
}

/* The sums of block's pairs into b->lk as the CPU turns them
 * (hk_model_score_pair, hk_cpu_double_score): log10 without float's or
 * double's scale, or, for a double sum of 0 or not finite (cells past
 * DBL_MAX), the CPU's rescue (beyond GATK's double range; -inf for an empty
 * sequence); b->n_recomputed counts the pairs that went on to double in
 * mixed precision. scratch: as pack's. */
static hk_status_t unpack(hk_batch_t *b, const hk_small_layout_t *lay, const unsigned char *block, uint8_t *scratch,
                          char *err, size_t errlen)
{
    const hk_small_pair_t *pairs = (const hk_small_pair_t *)(block + lay->pairs);
    const double *sums = (const double *)(block + lay->sums);
    const uint8_t *in_float = block + lay->in_float;
    void *ws = NULL;
    for (size_t p = 0; p < lay->n_pairs; p++) {
        if (in_float[p]) {      /* kept by hk_cpu_float_kept's rule: finite but in float mode */
            b->lk[p] = log10(sums[p]) - HK_LOG10_SCALE_F;   /* float's sum, widened exactly */
            continue;
        }
        if (lay->precision == HK_PREC_MIXED) b->n_recomputed++;
        if (sums[p] != 0 && isfinite(sums[p])) {
            b->lk[p] = log10(sums[p]) - HK_LOG10_SCALE_D;
            continue;
        }
        if (!ws && !(ws = malloc(hk_model_ws_size(b->max_hap_len)))) {
            snprintf(err, errlen, "out of memory rescuing a pair beyond GATK's double range");
            return HK_E_NOMEM;
        }
        const size_t rk = pairs[p].read, hk = pairs[p].hap;
        const uint8_t *gap[3];
        hk_batch_gap_rows(b, rk, scratch, gap);
        b->lk[p] = hk_model_rescue_pair(b->read_base + b->read_off[rk], b->read_q + b->read_off[rk], gap[0], gap[1],
                                        gap[2], hk_batch_read_len(b, rk), b->hap_base + b->hap_off[hk],
                                        hk_batch_hap_len(b, hk), ws);
    }
    free(ws);
    return HK_OK;
}

/* Lay b out for m's precision: 0, or -1 when b does not fit the path (a
 * PDHMM batch, a read longer than HK_SMALL_MAX_READ, more than a slot). */
static int plan(const hk_batch_t *b, int precision, double float_threshold, hk_small_layout_t *lay)
{
    const size_t most = HK_GKL_SMALL_SLOT_BYTES / sizeof(double);   /* of pairs, reads or haplotypes */
    if (b->pdhmm || !b->n_pairs || b->n_pairs > most || b->n_reads > most || b->n_haps > most ||
        b->max_read_len > HK_SMALL_MAX_READ)
        return -1;
    return hk_small_layout(lay, precision, float_threshold, (uint32_t)b->n_pairs, (uint32_t)b->n_reads,
                           (uint32_t)b->n_haps, b->read_off[b->n_reads] - b->read_off[0],
                           b->hap_off[b->n_haps] - b->hap_off[0], b->max_hap_len, HK_GKL_SMALL_SLOT_BYTES);
}

int hk_gkl_small_fits(const hk_batch_t *b)
{
    hk_small_layout_t lay;
    return plan(b, HK_PREC_MIXED, 0, &lay) == 0;
}

hk_status_t hk_gkl_small_score(hk_cuda_small_t *s, hk_batch_t *b, const hk_model_t *m, hk_gkl_small_times_t *times,
                               char *err, size_t errlen)
{
    hk_small_layout_t lay;
    if (plan(b, m->precision, m->float_threshold, &lay)) return HK_E_NODEV;
    int slot;
    unsigned char *block = hk_cuda_small_take(s, &slot);
    if (!block) return HK_E_NODEV;
    uint8_t scratch[3 * HK_SMALL_MAX_READ];
    const double t0 = times ? hk_log_now() : 0;
    pack(b, &lay, block, scratch);
    const double t1 = times ? hk_log_now() : 0;
    hk_status_t rc = hk_cuda_small_run(s, slot, &lay, err, errlen);
    const double t2 = times ? hk_log_now() : 0;
    if (rc == HK_OK) rc = unpack(b, &lay, block, scratch, err, errlen);
    hk_cuda_small_give(s, slot);
    if (times) *times = (hk_gkl_small_times_t){ t1 - t0, t2 - t1, hk_log_now() - t2 };
    return rc;
}

void hk_gkl_small_warm(hk_cuda_small_t *s, int n)
{
    int taken[64], k = 0;
    if (n > 64) n = 64;
    while (k < n && hk_cuda_small_take(s, &taken[k])) k++;
    while (k > 0) hk_cuda_small_give(s, taken[--k]);
}
