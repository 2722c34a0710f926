/* hk_pdhmm.c - see hk_pdhmm.h. The recurrence follows GATK's Java
 * (LoglessPDPairHMM) step for step, including the order of its sums, so that
 * values agree with GATK's to the last digits it prints. */
#include "hk_pdhmm.h"
#include "hk_cpu.h"      /* err of a quality, the scale constant */
#include "hk_log.h"
#include "hk_threads.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { NORMAL, INSIDE, AFTER };

/* The values of one DP row: the three states and their branch values. */
enum { RM, RI, RD, RBM, RBI, RBD, NVAL };

size_t hk_pdhmm_ws_size(uint32_t hlen)
{
    return 2 * NVAL * ((size_t)hlen + 1) * sizeof(double);
}

static inline double max2(double a, double b) { return a > b ? a : b; }

/* One forward pass: the scaled sum of the last row, or with `rescale` the
 * sum with each row kept near 2^1000 by powers of two (exact), the exponent
 * taken out in *shift (the true sum is the result times 2^*shift). */
static double forward(const uint8_t *rb, const uint8_t *q, const uint8_t *ins,
                      const uint8_t *del, const uint8_t *gcp, uint32_t rlen,
                      const uint8_t *hb, const uint8_t *pd, uint32_t hlen, void *ws,
                      int rescale, int64_t *shift)
{
    const size_t w = (size_t)hlen + 1;
    double *prev = ws, *cur = prev + NVAL * w;
    memset(prev, 0, NVAL * w * sizeof *prev);
    for (size_t j = 0; j < w; j++) prev[RD * w + j] = HK_SCALE_D / (double)hlen;
    *shift = 0;
    int state = NORMAL;   /* carried along the sweep, never reset (as GATK's Java) */
    for (uint32_t i = 0; i < rlen; i++) {
        const double e = hk_cpu_err_of_q[q[i]], ei = hk_cpu_err_of_q[ins[i]];
        const double ed = hk_cpu_err_of_q[del[i]], eg = hk_cpu_err_of_q[gcp[i]];
        const double mm = 1.0 - (ei + ed < 1.0 ? ei + ed : 1.0), gm = 1.0 - eg;
        const double match_p = 1.0 - e, mism_p = e / 3.0;
        const double *pM = prev + RM * w, *pI = prev + RI * w, *pD = prev + RD * w;
        const double *pBM = prev + RBM * w, *pBI = prev + RBI * w, *pBD = prev + RBD * w;
        double *M = cur + RM * w, *I = cur + RI * w, *D = cur + RD * w;
        double *BM = cur + RBM * w, *BI = cur + RBI * w, *BD = cur + RBD * w;
        M[0] = I[0] = D[0] = BM[0] = BI[0] = BD[0] = 0;
        double top = 0;
        for (uint32_t j = 1; j <= hlen; j++) {
            const uint8_t p = pd[j - 1];
            const double prior = hk_pdhmm_matches(rb[i], hb[j - 1], p) ? match_p : mism_p;
            double dM = pM[j - 1], dI = pI[j - 1], dD = pD[j - 1], lM = M[j - 1], lD = D[j - 1];
            if (state == NORMAL) {
                BM[j] = M[j - 1]; BD[j] = D[j - 1]; BI[j] = I[j - 1];
            } else if (state == INSIDE) {
                BM[j] = BM[j - 1]; BD[j] = BD[j - 1]; BI[j] = BI[j - 1];
            } else {
                BM[j] = max2(BM[j - 1], M[j - 1]);
                BD[j] = max2(BD[j - 1], D[j - 1]);
                BI[j] = I[j - 1];   /* SPEC 1b; the Java we could read takes max(BI, I) here:
                                       GKL's 990 pairs agree with both to 7 digits */
                dM = max2(pBM[j - 1], dM); dI = max2(pBI[j - 1], dI); dD = max2(pBD[j - 1], dD);
                lM = max2(BM[j - 1], lM); lD = max2(BD[j - 1], lD);
                state = NORMAL;
            }
            M[j] = prior * (dM * mm + dI * gm + dD * gm);
            D[j] = lM * ed + lD * eg;
            if (p & HK_PD_DEL_END)
                I[j] = max2(pBM[j], pM[j]) * ei + max2(pBI[j], pI[j]) * eg;
            else
                I[j] = pM[j] * ei + pI[j] * eg;
            if (p & HK_PD_DEL_START) state = INSIDE;
            if (p & HK_PD_DEL_END) state = AFTER;   /* wins: a one-base span has both */
            if (rescale) top = max2(top, max2(M[j], max2(I[j], D[j])));
        }
        if (rescale) {
            if (top == 0) return 0;   /* truly 0: Q0 qualities can make it so */
            if (top < 0x1p500 || top > 0x1p1010) {
                int ex;
                frexp(top, &ex);
                const double f = ldexp(1.0, 1000 - ex);
                for (size_t k = 0; k < NVAL * w; k++) cur[k] *= f;
                *shift -= 1000 - ex;
            }
        }
        double *t = prev; prev = cur; cur = t;
    }
    double sum = 0;
    for (uint32_t j = 1; j <= hlen; j++) sum += prev[RM * w + j] + prev[RI * w + j];
    return sum;
}

double hk_pdhmm_rescue_pair(const uint8_t *rb, const uint8_t *q, const uint8_t *ins,
                            const uint8_t *del, const uint8_t *gcp, uint32_t rlen,
                            const uint8_t *hb, const uint8_t *pd, uint32_t hlen, void *ws)
{
    if (rlen == 0 || hlen == 0) return -INFINITY;
    int64_t shift;
    const double sum = forward(rb, q, ins, del, gcp, rlen, hb, pd, hlen, ws, 1, &shift);
    if (sum == 0) return -INFINITY;
    return log10(sum) + (double)shift * HK_LOG10_2 - HK_LOG10_SCALE_D;
}

double hk_pdhmm_score_pair(const uint8_t *rb, const uint8_t *q, const uint8_t *ins,
                           const uint8_t *del, const uint8_t *gcp, uint32_t rlen,
                           const uint8_t *hb, const uint8_t *pd, uint32_t hlen, void *ws)
{
    int64_t shift;
    const double sum = forward(rb, q, ins, del, gcp, rlen, hb, pd, hlen, ws, 0, &shift);
    if (sum > 0 && isfinite(sum)) return log10(sum) - HK_LOG10_SCALE_D;
    return hk_pdhmm_rescue_pair(rb, q, ins, del, gcp, rlen, hb, pd, hlen, ws);
}

/* ---- a batch on threads: reads handed out one at a time ---- */

typedef struct {
    hk_batch_t      *b;
    atomic_size_t   *next;      /* the next read to score */
    const uint32_t  *region_of; /* read -> its region */
    int              oom;
} job_t;

static void *score_reads(void *arg)
{
    job_t *j = arg;
    hk_batch_t *b = j->b;
    void *ws = NULL;
    size_t ws_size = 0;
    uint8_t *gap_rows = malloc(3 * (size_t)b->max_read_len + 1);   /* where the batch has a summary */
    if (!gap_rows) { j->oom = 1; return NULL; }
    for (;;) {
        const size_t r = atomic_fetch_add(j->next, 1);
        if (r >= b->n_reads) break;
        const hk_region_t *rg = &b->regions[j->region_of[r]];
        const size_t ro = b->read_off[r];
        const uint32_t rlen = hk_batch_read_len(b, r);
        const uint8_t *gap[3];
        hk_batch_gap_rows(b, r, gap_rows, gap);
        for (uint32_t h = 0; h < rg->n_haps; h++) {
            const size_t k = rg->hap0 + h, ho = b->hap_off[k];
            const uint32_t hlen = hk_batch_hap_len(b, k);
            if (hk_pdhmm_ws_size(hlen) > ws_size) {
                free(ws);
                ws_size = hk_pdhmm_ws_size(hlen);
                if (!(ws = aligned_alloc(16, (ws_size + 15) & ~(size_t)15))) {
                    j->oom = 1;
                    free(gap_rows);
                    return NULL;
                }
            }
            b->lk[rg->pair0 + (size_t)(r - rg->read0) * rg->n_haps + h] =
                hk_pdhmm_score_pair(b->read_base + ro, b->read_q + ro, gap[0], gap[1], gap[2], rlen,
                                    b->hap_base + ho, b->hap_pd + ho, hlen, ws);
        }
    }
    free(ws);
    free(gap_rows);
    return NULL;
}

hk_status_t hk_pdhmm_score_batch(hk_batch_t *b, int nthreads)
{
    if (b->n_reads == 0) return HK_OK;
    uint32_t *region_of = malloc(b->n_reads * sizeof *region_of);
    if (!region_of) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    for (size_t g = 0; g < b->n_regions; g++)
        for (uint32_t r = 0; r < b->regions[g].n_reads; r++)
            region_of[b->regions[g].read0 + r] = (uint32_t)g;
    if (nthreads < 1) nthreads = 1;
    if ((size_t)nthreads > b->n_reads) nthreads = (int)b->n_reads;
    atomic_size_t next = 0;
    job_t *jobs = calloc((size_t)nthreads, sizeof *jobs);
    if (!jobs) { free(region_of); hk_log_error("out of memory"); return HK_E_NOMEM; }
    for (int t = 0; t < nthreads; t++) jobs[t] = (job_t){ .b = b, .next = &next, .region_of = region_of };
    hk_threads_run(score_reads, jobs, sizeof *jobs, nthreads);
    int oom = 0;
    for (int t = 0; t < nthreads; t++) oom |= jobs[t].oom;
    free(jobs);
    free(region_of);
    if (oom) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    return HK_OK;
}

/* ---- the input rule GATK enforces by throwing ---- */

long hk_pdhmm_unmatchable_read(const hk_batch_t *b, const hk_region_t *rg, size_t *hap,
                               uint32_t *read_pos, uint32_t *hap_pos)
{
    /* only 'n' gets here (other letters are refused, or read as N, when set) */
    const uint8_t bad = HK_BASE_N + HK_BASE_LOWER;
    int any_snp = 0;
    for (uint32_t h = 0; h < rg->n_haps && !any_snp; h++) {
        const size_t k = rg->hap0 + h;
        for (size_t x = b->hap_off[k]; x < b->hap_off[k + 1] && !any_snp; x++)
            any_snp = b->hap_pd[x] & HK_PD_SNP;
    }
    if (!any_snp) return -1;
    for (uint32_t r = 0; r < rg->n_reads; r++) {
        const size_t k = rg->read0 + r, ro = b->read_off[k];
        const uint32_t rlen = hk_batch_read_len(b, k);
        const uint8_t *n = memchr(b->read_base + ro, bad, rlen);
        if (!n) continue;
        /* GATK compares it with every position of every haplotype: it
         * throws at an SNP position unless the letters are equal or the
         * haplotype's is N */
        for (uint32_t h = 0; h < rg->n_haps; h++) {
            const size_t hk = rg->hap0 + h, ho = b->hap_off[hk];
            for (uint32_t x = 0; x < hk_batch_hap_len(b, hk); x++) {
                const uint8_t hb = b->hap_base[ho + x];
                if (!(b->hap_pd[ho + x] & HK_PD_SNP) || hb == bad || hb == HK_BASE_N) continue;
                *hap = h;
                *read_pos = (uint32_t)(n - (b->read_base + ro));
                *hap_pos = x;
                return (long)r;
            }
        }
    }
    return -1;
}
