/* test_rescue.c - SPEC 1: a valid pair's likelihood is finite and true,
 * whether GATK's scaled double cells underflow or overflow. Low
 * gap-continuation qualities let a row's deletions carry more than they
 * took in (a deletion continues with its own row's gap-continuation
 * probability and ends with the next row's), so a row of Q1 after a row of
 * Q40, with low deletion qualities, can grow the cells past 2^1024 over a
 * few dozen rows. The whole range of qualities, in mixed and double, through
 * the batch passes, the one-pair scorer and the PDHMM model, against a
 * long-double reference in natural logs. Run by `make check`. */
#include "hk_model.h"
#include "hk_cpu.h"
#include "hk_pdhmm.h"
#include "hk_log.h"
#include "tap.h"
#include "model_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEN 1000

typedef struct {
    uint32_t rlen;
    uint8_t  q[MAX_LEN], ins[MAX_LEN], del[MAX_LEN], gcp[MAX_LEN];
} read_t;

static unsigned rnd(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) & 0x7fff;
}

/* A read whose gap-continuation qualities alternate lo (even rows) and hi
 * (odd rows), with constant base, insertion and deletion qualities. */
static read_t make_read(uint32_t rlen, int q, int ins, int del, int lo, int hi)
{
    read_t r = { .rlen = rlen };
    for (uint32_t i = 0; i < rlen; i++) {
        r.q[i] = (uint8_t)q; r.ins[i] = (uint8_t)ins; r.del[i] = (uint8_t)del;
        r.gcp[i] = (uint8_t)(i % 2 ? hi : lo);
    }
    return r;
}

/* Whether the model takes these gap-open qualities (SPEC 1: their error
 * probabilities must sum to less than 1). */
static int valid(const read_t *r)
{
    return hk_cpu_err_of_q[r->ins[0]] + hk_cpu_err_of_q[r->del[0]] < 1.0;
}

typedef struct {
    hk_batch_t b;
    size_t     reads, refused;
    read_t    *kept;      /* the reads added, in order */
} set_t;

/* Two haplotypes of hlen bases (a homopolymer, where every alignment
 * matches, and a random one); reads of the same letter as the first. */
static int add_read(set_t *s, const hk_model_t *m, const read_t *r)
{
    char text[5][MAX_LEN];
    for (uint32_t i = 0; i < r->rlen; i++) {
        text[0][i] = 'A';
        text[1][i] = (char)(33 + r->q[i]); text[2][i] = (char)(33 + r->ins[i]);
        text[3][i] = (char)(33 + r->del[i]); text[4][i] = (char)(33 + r->gcp[i]);
    }
    const hk_seq_rules_t rules = hk_model_seq_rules(m);
    hk_batch_error_t bad;
    if (hk_batch_add_read(&s->b, &rules, text[0], text[1], text[2], text[3], text[4], r->rlen, &bad)) return 0;
    s->kept[s->reads++] = *r;
    return 1;
}

static int begin(set_t *s, const hk_model_t *m, uint32_t hlen, size_t max_reads, unsigned seed)
{
    hk_batch_init(&s->b);
    s->reads = s->refused = 0;
    s->kept = malloc(max_reads * sizeof *s->kept);
    char *h = malloc(hlen);
    const hk_seq_rules_t rules = hk_model_seq_rules(m);
    hk_batch_error_t bad;
    int ok = s->kept && h && hk_batch_begin_region(&s->b, NULL, 1) == 0;
    memset(h, 'A', hlen);
    ok = ok && hk_batch_add_hap(&s->b, &rules, h, hlen, &bad) == 0;
    for (uint32_t j = 0; j < hlen; j++) h[j] = "ACGT"[rnd(&seed) % 4];
    ok = ok && hk_batch_add_hap(&s->b, &rules, h, hlen, &bad) == 0;
    free(h);
    return ok;
}

typedef struct {
    size_t pairs, nonfinite, gatk_overflow, pd_nonfinite;
    double worst, worst_scalar, worst_pd, highest;
} result_t;

/* Score the set, then compare every pair with the reference: the batch's
 * value, the one-pair scorer's, and (double only) the PDHMM model's with
 * every position determined (the same model, qualities as written). */
static int check(set_t *s, const hk_model_t *m, result_t *res)
{
    memset(res, 0, sizeof *res);
    res->highest = -INFINITY;
    hk_batch_t *b = &s->b;
    if (hk_batch_end_region(b) || hk_model_score_batch(m, b, 2)) return 0;
    const hk_region_t *rg = &b->regions[0];
    void *ws = malloc(hk_model_ws_size(b->max_hap_len) + hk_pdhmm_ws_size(b->max_hap_len));
    uint8_t *scratch = malloc(3 * (size_t)b->max_read_len + 1), *pd = calloc(b->max_hap_len, 1);
    if (!ws || !scratch || !pd) return 0;
    const double tol = m->precision == HK_PREC_DOUBLE ? 1e-9 : 1e-5;
    for (uint32_t r = 0; r < rg->n_reads; r++) {
        const size_t rk = rg->read0 + r, o = b->read_off[rk];
        const uint32_t rl = hk_batch_read_len(b, rk);
        const uint8_t *g[3];
        hk_batch_gap_rows(b, rk, scratch, g);
        const read_t *raw = &s->kept[r];
        for (uint32_t h = 0; h < rg->n_haps; h++) {
            const size_t hk = rg->hap0 + h;
            const uint8_t *hb = b->hap_base + b->hap_off[hk];
            const uint32_t hl = hk_batch_hap_len(b, hk);
            const double got = b->lk[rg->pair0 + (size_t)r * rg->n_haps + h];
            const double want = log10_reference(b->read_base + o, b->read_q + o, g[0], g[1], g[2], rl, hb, hl);
            int rc;
            const double one = hk_model_score_pair(m, b->read_base + o, b->read_q + o, g[0], g[1], g[2], rl,
                                                   hb, hl, ws, &rc);
            double *d = ws;
            const double gatk = hk_cpu_forward_d(b->read_base + o, b->read_q + o, g[0], g[1], g[2], rl, hb, hl,
                                                 d, d + hl + 1, d + 2 * (hl + 1));
            res->pairs++;
            res->gatk_overflow += !isfinite(gatk);
            if (want > res->highest) res->highest = want;
            if (!isfinite(got) || !isfinite(one)) { res->nonfinite++; continue; }
            const double scale = fabs(want) > 1 ? fabs(want) : 1;
            if (fabs(got - want) / scale > res->worst) res->worst = fabs(got - want) / scale;
            if (fabs(one - want) / scale > res->worst_scalar) res->worst_scalar = fabs(one - want) / scale;
            if (m->precision != HK_PREC_DOUBLE) continue;
            /* PDHMM: qualities as written (no base-quality floor) */
            const double pdv = hk_pdhmm_score_pair(b->read_base + o, raw->q, raw->ins, raw->del, raw->gcp, rl,
                                                   hb, pd, hl, ws);
            const double pwant = log10_reference(b->read_base + o, raw->q, raw->ins, raw->del, raw->gcp, rl,
                                                 hb, hl);
            if (!isfinite(pdv)) { res->pd_nonfinite++; continue; }
            const double ps = fabs(pwant) > 1 ? fabs(pwant) : 1;
            if (fabs(pdv - pwant) / ps > res->worst_pd) res->worst_pd = fabs(pdv - pwant) / ps;
        }
    }
    free(ws);
    free(scratch);
    free(pd);
    return res->worst <= tol && res->worst_scalar <= tol;
}

static const char *name_of(int precision) { return precision == HK_PREC_MIXED ? "mixed" : "double"; }

/* A grid of gap-continuation (low, high), deletion and insertion qualities,
 * plus each quality alone swept over Q1..Q93 with the others at their most
 * growing values. */
static void test_quality_sweep(void)
{
    static const int grid[] = { 1, 2, 3, 4, 6, 10, 20, 40, 93 };
    const int ng = (int)(sizeof grid / sizeof *grid);
    for (int precision = HK_PREC_MIXED; precision <= HK_PREC_DOUBLE; precision += 2) {
        const hk_model_t m = { .precision = precision, .float_threshold = HK_FLOAT_THRESHOLD, .min_base_quality = 6,
                               .gcp = -1 };
        set_t s;
        int ok = begin(&s, &m, 100, (size_t)ng * ng * ng + 4 * 93, 17);
        size_t skipped = 0;
        for (int a = 0; ok && a < ng; a++)
            for (int c = 0; c < ng; c++)
                for (int d = 0; d < ng; d++) {
                    const read_t r = make_read(50, 40, d % 2 ? 2 : 40, grid[d], grid[a], grid[c]);
                    if (!valid(&r)) { skipped++; continue; }
                    ok &= add_read(&s, &m, &r);
                }
        for (int v = 1; ok && v <= 93; v++) {
            const read_t sweep[4] = {
                make_read(50, 40, 40, 4, v, 40),   /* the low gap-continuation quality */
                make_read(50, 40, 40, 4, 1, v),    /* the high one */
                make_read(50, 40, 40, v, 1, 40),   /* the deletion quality */
                make_read(50, v, v, 4, 1, 40),     /* base and insertion qualities */
            };
            for (int k = 0; k < 4; k++) {
                if (!valid(&sweep[k])) { skipped++; continue; }
                ok &= add_read(&s, &m, &sweep[k]);
            }
        }
        result_t res;
        const int agree = ok && check(&s, &m, &res);
        TAP_OK(ok && res.pairs > 1500 && res.gatk_overflow > 100,
               "%s: %zu pairs over qualities Q1-Q93 (%zu gap-open pairs refused as SPEC 1 says), %zu of them past "
               "GATK's double range (cells beyond 2^1024), highest log10 %.1f", name_of(precision), res.pairs,
               skipped, res.gatk_overflow, res.highest);
        TAP_OK(ok && res.nonfinite == 0, "%s: every pair's likelihood is finite (%zu not)", name_of(precision),
               res.nonfinite);
        TAP_OK(agree, "%s: batch and one-pair scorer agree with the long-double reference (relative %.2g, %.2g)",
               name_of(precision), res.worst, res.worst_scalar);
        if (precision == HK_PREC_DOUBLE)
            TAP_OK(ok && res.pd_nonfinite == 0 && res.worst_pd <= 1e-9,
                   "PDHMM: the same pairs, every position determined, are finite (%zu not) and agree with the "
                   "reference (relative %.2g)", res.pd_nonfinite, res.worst_pd);
        hk_batch_free(&s.b);
        free(s.kept);
    }
}

/* Long pairs whose cells would pass 2^1024 many times over (the rescue
 * rescales row after row), some of likelihoods above 1. */
static void test_far_overflow(void)
{
    for (int precision = HK_PREC_MIXED; precision <= HK_PREC_DOUBLE; precision += 2) {
        const hk_model_t m = { .precision = precision, .float_threshold = HK_FLOAT_THRESHOLD, .min_base_quality = 6,
                               .gcp = -1 };
        set_t s;
        int ok = begin(&s, &m, 600, 3, 5);
        const read_t r[3] = { make_read(600, 40, 40, 3, 1, 40), make_read(400, 30, 30, 2, 1, 93),
                              make_read(30, 93, 93, 1, 2, 60) };
        for (int k = 0; k < 3; k++) ok &= add_read(&s, &m, &r[k]);
        result_t res;
        const int agree = ok && check(&s, &m, &res);
        TAP_OK(agree && res.nonfinite == 0 && res.gatk_overflow >= 2 && res.highest > 0 &&
               (precision != HK_PREC_DOUBLE || (res.pd_nonfinite == 0 && res.worst_pd <= 1e-9)),
               "%s: %zu long pairs (%zu past GATK's double range) up to log10 %.1f are finite (%zu not; PDHMM %zu not) and agree with the "
               "reference (relative %.2g, %.2g, PDHMM %.2g)", name_of(precision), res.pairs, res.gatk_overflow,
               res.highest, res.nonfinite, res.pd_nonfinite, res.worst, res.worst_scalar, res.worst_pd);
        hk_batch_free(&s.b);
        free(s.kept);
    }
}

/* PDHMM takes qualities as written: a gap-continuation quality of Q0 keeps
 * a deletion going at no cost, so a row's deletions sum its whole length
 * (a 100000-base haplotype). */
static void test_pdhmm_q0(void)
{
    const uint32_t hl = 100000;
    uint8_t *hb = calloc(hl, 1), *pd = calloc(hl, 1);
    void *ws = malloc(hk_pdhmm_ws_size(hl));
    const read_t r = make_read(12, 40, 40, 1, 40, 0);
    uint8_t rb[12] = { 0 };
    const double got = hb && pd && ws ? hk_pdhmm_score_pair(rb, r.q, r.ins, r.del, r.gcp, r.rlen, hb, pd, hl, ws) : NAN;
    const double want = hb ? log10_reference(rb, r.q, r.ins, r.del, r.gcp, r.rlen, hb, hl) : NAN;
    TAP_OK(isfinite(got) && fabs(got - want) <= 1e-9 * fabs(want),
           "PDHMM: Q0 gap continuation on every other row, 100000-base haplotype: %.6f (reference %.6f)", got, want);
    free(hb);
    free(pd);
    free(ws);
}

int main(void)
{
    hk_log_set_quiet(1);
    test_quality_sweep();
    test_far_overflow();
    test_pdhmm_q0();
    return TAP_DONE();
}
