/* test_pdhmm.c - the PDHMM model on the CPU (src/hk_pdhmm.c) against Intel
 * GKL's 990 synthetic pairs and their expected values, read here with a
 * parser of its own so that the model is tested apart from the reader
 * (tests/pdhmm.bats tests the whole path). Run by `make check` with
 * HK_TESTDATA set. */
#include "hk_pdhmm.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *data_dir(void)
{
    const char *d = getenv("HK_TESTDATA");
    return d ? d : "tests/data";
}

static uint8_t code_of(char c)
{
    static const char up[] = "ACGTN", low[] = "acgtn";
    for (int k = 0; k < 5; k++) {
        if (c == up[k]) return (uint8_t)k;
        if (c == low[k]) return (uint8_t)(k + HK_BASE_LOWER);
    }
    return 255;
}

typedef struct {
    uint8_t  hb[512], pd[512], rb[512], q[512], ins[512], del[512], gcp[512];
    uint32_t hlen, rlen;
    double   expected;
} pair_t;

/* One tab-separated record; 0 on success. */
static int parse(char *line, pair_t *p)
{
    char *f[8];
    for (int k = 0; k < 8; k++) {
        f[k] = strsep(&line, "\t");
        if (!f[k]) return -1;
    }
    p->hlen = (uint32_t)strlen(f[0]);
    p->rlen = (uint32_t)strlen(f[2]);
    if (p->hlen > 512 || p->rlen > 512) return -1;
    for (uint32_t j = 0; j < p->hlen; j++) p->hb[j] = code_of(f[0][j]);
    char *s = f[1] + 1;
    for (uint32_t j = 0; j < p->hlen; j++) p->pd[j] = (uint8_t)strtol(s, &s, 10), s += 2;
    for (uint32_t i = 0; i < p->rlen; i++) {
        p->rb[i] = code_of(f[2][i]);
        p->q[i] = (uint8_t)(f[3][i] - 33);
        p->ins[i] = (uint8_t)(f[4][i] - 33);
        p->del[i] = (uint8_t)(f[5][i] - 33);
        p->gcp[i] = (uint8_t)(f[6][i] - 33);
    }
    p->expected = strtod(f[7], NULL);
    return 0;
}

static double score(const pair_t *p, int rescue_only)
{
    static _Alignas(16) unsigned char ws[1 << 16];
    return (rescue_only ? hk_pdhmm_rescue_pair : hk_pdhmm_score_pair)(
        p->rb, p->q, p->ins, p->del, p->gcp, p->rlen, p->hb, p->pd, p->hlen, ws);
}

static void test_gkl_pairs(void)
{
    char path[4096], line[8192];
    snprintf(path, sizeof path, "%s/pdhmm_syn_990_1_2.txt", data_dir());
    FILE *fp = fopen(path, "r");
    TAP_OK(fp != NULL, "open %s", path);
    if (!fp) return;
    size_t n = 0, bad = 0, digits7 = 0, inf_expected = 0, inf_agree = 0;
    double worst = 0, worst_rescue = 0;
    static pair_t p;
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#') continue;
        line[strcspn(line, "\r\n")] = '\0';
        if (parse(line, &p)) { bad++; continue; }
        n++;
        const double v = score(&p, 0);
        if (isinf(p.expected)) {
            inf_expected++;
            inf_agree += isinf(v) && v < 0;
            continue;
        }
        const double d = fabs(v - p.expected);
        if (!(d <= worst)) worst = d;
        digits7 += d <= 5e-7 * fabs(p.expected) + 1e-12;
        /* the rescue gives the same value where GATK's double does not underflow */
        const double r = fabs(score(&p, 1) - v);
        if (!(r <= worst_rescue)) worst_rescue = r;
    }
    fclose(fp);
    TAP_OK(n == 990 && bad == 0, "990 records parsed (%zu, %zu bad)", n, bad);
    TAP_OK(worst <= 1e-4, "every pair within 1e-4 of GKL's expected value (largest %.3g)", worst);
    TAP_OK(digits7 + inf_expected == n, "%zu of %zu finite pairs agree to the 7 digits printed", digits7,
           n - inf_expected);
    TAP_OK(inf_agree == inf_expected, "%zu of %zu -Infinity expectations are -inf here too", inf_agree,
           inf_expected);
    TAP_OK(worst_rescue <= 1e-9, "the rescue agrees with GATK's arithmetic (largest %.3g)", worst_rescue);
}

/* A pair far below GATK's range: its double sum is 0, the rescue's is not. */
static void test_rescue(void)
{
    static pair_t p;
    p.rlen = p.hlen = 400;
    for (uint32_t i = 0; i < 400; i++) {
        p.rb[i] = 1;
        p.hb[i] = 0;                        /* C against A everywhere */
        p.pd[i] = i % 50 == 7 ? HK_PD_DEL_START : i % 50 == 9 ? HK_PD_DEL_END : 0;
        p.q[i] = 40;
        p.ins[i] = p.del[i] = 45;
        p.gcp[i] = 40;
    }
    const double v = score(&p, 0);
    TAP_OK(isfinite(v) && v < -700, "a 400-base mismatch read is finite beyond GATK's range (%.2f)", v);
    /* the same pair shorter, where GATK's double is enough, agrees with the rescue */
    p.rlen = p.hlen = 150;
    const double a = score(&p, 0), b = score(&p, 1);
    TAP_OK(isfinite(a) && fabs(a - b) <= 1e-9 * fabs(a), "150 bases: %.9f plain, %.9f rescued", a, b);
}

static void test_matches(void)
{
    TAP_OK(hk_pdhmm_matches(0, 0, 0) && !hk_pdhmm_matches(0, HK_BASE_LOWER, 0),
           "equality is case-sensitive (A = A, A != a)");
    TAP_OK(hk_pdhmm_matches(HK_BASE_N, 3, 0) && hk_pdhmm_matches(2, HK_BASE_N, 0) &&
           !hk_pdhmm_matches(HK_BASE_N + HK_BASE_LOWER, 3, 0),
           "upper-case N matches anything, lower-case n does not");
    TAP_OK(hk_pdhmm_matches(1, 0, HK_PD_SNP | HK_PD_C) &&
           hk_pdhmm_matches(1 + HK_BASE_LOWER, 0, HK_PD_SNP | HK_PD_C) &&
           !hk_pdhmm_matches(2, 0, HK_PD_SNP | HK_PD_C) && !hk_pdhmm_matches(1, 0, HK_PD_C),
           "an SNP alternative matches in either case; its bit alone does not");
}

int main(void)
{
    test_matches();
    test_gkl_pairs();
    test_rescue();
    return TAP_DONE();
}
