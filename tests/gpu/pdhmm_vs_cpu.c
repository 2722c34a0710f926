/* pdhmm_vs_cpu.c - the CUDA engine's PDHMM kernels (kernels/device/hk_pdhmm.cuh)
 * against the CPU reference (src/hk_pdhmm.c, hk_pdhmm_score_pair).
 *
 *   pdhmm_vs_cpu [-v] [-q]
 *
 * Batches are built here directly (PDHMM rules: case kept, qualities as
 * written; PD bytes written into hap_pd): Intel GKL's 990 pairs
 * ($HK_TESTDATA/pdhmm_syn_990_1_2.txt, parsed here), then seeded random PD
 * batches: every PD byte value, DEL_START ... DEL_END spans (at the first
 * and last column, back to back, one base, left open, nested), one-base
 * haplotypes, reads longer than their haplotypes, reads over 1000 bases (the
 * multi-tile kernel), upper and lower case, N and n, Q0 qualities, one
 * region with many reads and haplotypes, small chunks (HK_CUDA_CHUNK_CELLS),
 * and every precision setting (PDHMM is double whatever it is). Every pair
 * must be written and within 1e-9 (absolute, log10) of the CPU; where the
 * GPU's scaled double sum is not a normal double (-inf, for the engine to
 * score on the host) the CPU's value must be below -600 and the engine's host
 * pass on it within the tolerance, and both -inf where the likelihood is
 * truly 0. Pairs of every kernel form (read lengths 70 to 520, varied,
 * SAFE and constant gaps) whose likelihoods fall in -640..-590 are checked
 * the same way. -q: only the GKL pairs and two small random
 * batches, one of them with reads of every kernel (for compute-sanitizer runs); -v says more
 * (the worst pair's read and haplotype, the form of pairs over the tolerance); PDHMM_SHAPE=TEXT
 * runs only the random shapes whose name holds TEXT. Output is TAP. Without a usable
 * GPU it prints a SKIP line and exits 77 (automake's skip code), or 0 under
 * automake's TAP driver.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hk_batch.h"
#include "../unit/tap.h"
#include "hk_cuda.h"
#include "hk_options.h"
#include "hk_pdhmm.h"

#define SENTINEL 1234.5
#define BEYOND_GATK_DOUBLE (-600.0)

static int verbose;

#ifdef HAVE_CUDA

static const hk_seq_rules_t RULES = { .min_base_quality = 0, .gcp = -1, .unknown_as_n = 0, .pdhmm = 1 };

/* What two orders of double arithmetic may differ by: 1e-9 (log10). The
 * kernels give -inf for a sum that is not a normal double (a subnormal sum
 * keeps only the digits above 2^-1074, and which survive depends on the order
 * of every rounding), which the engine scores on the host as the CPU does
 * (checked here the same way): a pair near -629 is the CPU's to the bit. */
#define PD_TOLERANCE 1e-9

/* ---- building batches ---- */

static int add_hap(hk_batch_t *b, const char *bases, const uint8_t *pd, uint32_t len)
{
    hk_batch_error_t bad;
    if (hk_batch_add_hap(b, &RULES, bases, len, &bad)) return -1;
    memcpy(b->hap_pd + b->hap_off[b->n_haps - 1], pd, len);
    return 0;
}

static int add_read(hk_batch_t *b, const char *bases, const char *q, const char *i, const char *d,
                    const char *g, uint32_t len)
{
    hk_batch_error_t bad;
    return hk_batch_add_read(b, &RULES, bases, q, i, d, g, len, &bad) ? -1 : 0;
}

/* GKL's pairs, one region each (a read against one haplotype). */
static int load_gkl(hk_batch_t *b, const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return -1;
    char *line = NULL;
    size_t cap = 0;
    int n = 0, rc = 0;
    static uint8_t pd[1 << 16];
    while (getline(&line, &cap, fp) > 0 && rc == 0) {
        if (line[0] == '#') continue;
        line[strcspn(line, "\r\n")] = '\0';
        char *f[8], *s = line;
        int k;
        for (k = 0; k < 8 && (f[k] = strsep(&s, "\t")); k++) {}
        if (k < 8) { rc = -1; break; }
        const uint32_t hlen = (uint32_t)strlen(f[0]), rlen = (uint32_t)strlen(f[2]);
        char *p = f[1] + 1;
        for (uint32_t j = 0; j < hlen && j < sizeof pd; j++) {
            pd[j] = (uint8_t)strtol(p, &p, 10);
            p += 2;
        }
        if (hk_batch_begin_region(b, NULL, n + 2) || add_hap(b, f[0], pd, hlen) ||
            add_read(b, f[2], f[3], f[4], f[5], f[6], rlen) || hk_batch_end_region(b))
            rc = -1;
        n++;
    }
    free(line);
    fclose(fp);
    return rc ? -1 : n;
}

static unsigned long long rs = 0x2545f4914f6cdd1dull;
static uint32_t rnd(uint32_t n)
{
    rs ^= rs >> 12; rs ^= rs << 25; rs ^= rs >> 27;
    return (uint32_t)(((rs * 2685821657736338717ull) >> 33) % n);
}

/* A random PD haplotype of length n: some SNP positions, spans of kind
 * `spans` (0 none, 1 the usual, 2 at the ends and back to back, 3 any byte) */
static void random_hap(char *h, uint8_t *pd, uint32_t n, int spans, int lower)
{
    static const char up[] = "ACGTN", lo[] = "acgtn";
    for (uint32_t j = 0; j < n; j++) {
        const uint32_t c = rnd(100) < 2 ? 4 : rnd(4);
        h[j] = lower && rnd(4) == 0 ? lo[c] : up[c];
        pd[j] = 0;
        if (rnd(100) < 4) pd[j] = (uint8_t)(HK_PD_SNP | (HK_PD_A << rnd(4)) | (rnd(3) == 0 ? HK_PD_A << rnd(5) : 0));
    }
    if (spans == 3) {
        for (uint32_t j = 0; j < n; j++) if (rnd(3) == 0) pd[j] = (uint8_t)rnd(256);
        return;
    }
    if (spans == 0) return;
    const uint32_t nsp = 1 + rnd(spans == 2 ? 4 : 2);
    for (uint32_t s = 0; s < nsp; s++) {
        uint32_t a = rnd(n), len = 1 + rnd(n < 12 ? n : 12);
        if (spans == 2) {
            const uint32_t where = rnd(4);
            if (where == 0) a = 0;                              /* at the first column */
            else if (where == 1) a = n > len ? n - len : 0;     /* ending at the last */
        }
        uint32_t e = a + len - 1 < n ? a + len - 1 : n - 1;
        pd[a] |= HK_PD_DEL_START;
        if (rnd(8)) pd[e] |= HK_PD_DEL_END;                     /* sometimes left open */
        if (spans == 2 && e + 1 < n && rnd(2)) {                /* another right after */
            const uint32_t e2 = e + 1 + rnd(3) < n ? e + 1 + rnd(3) : n - 1;
            pd[e + 1] |= HK_PD_DEL_START;
            pd[e2] |= HK_PD_DEL_END;
        }
    }
}

/* A read of length m, mostly copied from h (n bases), with errors. */
static void random_read(char *r, char *q, char *gi, char *gd, char *gg, uint32_t m, const char *h, uint32_t n,
                        int q0, int lower)
{
    static const char up[] = "ACGTN", lo[] = "acgtn";
    const uint32_t off = n > m ? rnd(n - m + 1) : 0;
    /* constant gap qualities but for the last base (the kernels' CG form):
     * HaplotypeCaller's IIII...IN with gcp Q10, or any other values (Q1-93:
     * below Q4 or so not CG) */
    const int const_gaps = rnd(2), hc = rnd(2);
    const char cb[3] = { hc ? 'I' : (char)(34 + rnd(93)), hc ? 'I' : (char)(34 + rnd(93)), hc ? '+' : (char)(33 + rnd(41)) };
    const char cl[3] = { hc ? 'N' : (char)(34 + rnd(93)), hc ? 'N' : (char)(34 + rnd(93)), hc ? '+' : (char)(33 + rnd(41)) };
    for (uint32_t i = 0; i < m; i++) {
        const uint32_t c = rnd(100) < 1 ? 4 : rnd(4);
        if (off + i < n && rnd(100) < 92) r[i] = h[off + i];
        else r[i] = lower && rnd(3) == 0 ? lo[c] : up[c];
        q[i] = (char)(33 + (q0 && rnd(10) == 0 ? 0 : 6 + rnd(36)));
        if (const_gaps) {
            const char *g = i + 1 == m ? cl : cb;
            gi[i] = g[0]; gd[i] = g[1]; gg[i] = g[2];
        } else {
            gi[i] = (char)(33 + (q0 && rnd(20) == 0 ? rnd(3) : 10 + rnd(40)));
            gd[i] = (char)(33 + (q0 && rnd(20) == 0 ? rnd(3) : 10 + rnd(40)));
            gg[i] = (char)(33 + (q0 && rnd(20) == 0 ? 0 : 3 + rnd(40)));
        }
    }
}

typedef struct {
    uint32_t regions, min_reads, max_reads, min_haps, max_haps;
    uint32_t min_rlen, max_rlen, min_hlen, max_hlen;
    int spans, q0, lower;
} shape_t;

static int random_batch(hk_batch_t *b, const shape_t *s)
{
    enum { MAXLEN = 4096 };
    static char h[32][MAXLEN], r[MAXLEN], q[MAXLEN], gi[MAXLEN], gd[MAXLEN], gg[MAXLEN];
    static uint8_t pd[MAXLEN];
    for (uint32_t g = 0; g < s->regions; g++) {
        const uint32_t H = s->min_haps + rnd(s->max_haps - s->min_haps + 1);
        const uint32_t R = s->min_reads + rnd(s->max_reads - s->min_reads + 1);
        if (hk_batch_begin_region(b, NULL, (long)g + 1)) return -1;
        uint32_t hl[32];
        for (uint32_t k = 0; k < H && k < 32; k++) {
            hl[k] = s->min_hlen + rnd(s->max_hlen - s->min_hlen + 1);
            random_hap(h[k], pd, hl[k], s->spans == 4 ? (int)rnd(4) : s->spans, s->lower);
            if (add_hap(b, h[k], pd, hl[k])) return -1;
        }
        for (uint32_t k = 0; k < R; k++) {
            const uint32_t m = s->min_rlen + rnd(s->max_rlen - s->min_rlen + 1), src = rnd(H < 32 ? H : 32);
            random_read(r, q, gi, gd, gg, m, h[src], hl[src], s->q0, s->lower);
            if (add_read(b, r, q, gi, gd, gg, m)) return -1;
        }
        if (hk_batch_end_region(b)) return -1;
    }
    return 0;
}

/* ---- comparing ---- */

/* The region of pair i, and its read. */
static size_t pair_region(const hk_batch_t *b, size_t i)
{
    size_t g = 0;
    while (g + 1 < b->n_regions && b->regions[g + 1].pair0 <= i) g++;
    return g;
}
static size_t pair_read(const hk_batch_t *b, size_t i)
{
    const hk_region_t *rg = &b->regions[pair_region(b, i)];
    return rg->read0 + (i - rg->pair0) / rg->n_haps;
}

static double *cpu_ref(hk_batch_t *b)
{
    if (hk_pdhmm_score_batch(b, 8)) return NULL;
    double *ref = malloc(b->n_pairs * sizeof *ref + 1);
    if (ref) memcpy(ref, b->lk, b->n_pairs * sizeof *ref);
    return ref;
}

static void check_gpu(hk_cuda_t *cu, hk_batch_t *b, const double *ref, const char *what, int prec)
{
    static const char *pname[] = { "mixed", "float", "double" };
    char err[512];
    for (size_t i = 0; i < b->n_pairs; i++) b->lk[i] = SENTINEL;
    b->n_recomputed = 0;
    int rc = hk_cuda_score(cu, &b, 1, prec, HK_FLOAT_THRESHOLD, NULL, NULL, err, sizeof err);
    if (rc) {
        tap_result(0, "%s [%s]: hk_cuda_score: %s (%d)", what, pname[prec], err, rc);
        return;
    }
    size_t unwritten = 0, bad_inf = 0, over = 0, beyond = 0, zero = 0, worst = 0;
    double maxd = 0, maxd_normal = 0;      /* all pairs; those above -600 */
    double *ws = malloc(hk_pdhmm_ws_size(b->max_hap_len));
    for (size_t i = 0; i < b->n_pairs; i++) {
        double g = b->lk[i];
        if (g == SENTINEL) { unwritten++; continue; }
        if (g == -INFINITY && isfinite(ref[i]) && ref[i] < BEYOND_GATK_DOUBLE && ws) {
            /* what the engine does (src/hk_engine.c): the CPU's pass on the host */
            const hk_region_t *rg = &b->regions[pair_region(b, i)];
            const size_t r = pair_read(b, i), h = rg->hap0 + (i - rg->pair0) % rg->n_haps;
            const uint64_t o = b->read_off[r], ho = b->hap_off[h];
            g = b->lk[i] = hk_pdhmm_score_pair(b->read_base + o, b->read_q + o, b->read_i + o, b->read_d + o,
                                                b->read_g + o, hk_batch_read_len(b, r), b->hap_base + ho,
                                                b->hap_pd + ho, hk_batch_hap_len(b, h), ws);
            beyond++;
        }
        if (!isfinite(g) || !isfinite(ref[i])) {
            if (g == -INFINITY && ref[i] == -INFINITY) zero++;
            else bad_inf++;
            continue;
        }
        const double d = fabs(g - ref[i]);
        if (d > maxd) { maxd = d; worst = i; }
        if (ref[i] >= -600 && d > maxd_normal) maxd_normal = d;
        if (!(d <= PD_TOLERANCE) && over++ < 6 && verbose) {
            const size_t r = pair_read(b, i);    /* which kernel form: the read's length and gap rows */
            const uint64_t o = b->read_off[r];
            int safe = 0;
            for (uint32_t k = 0; k < hk_batch_read_len(b, r); k++)
                safe |= pow(10.0, -b->read_i[o + k] / 10.0) + pow(10.0, -b->read_d[o + k] / 10.0) >= 1.0 - 1e-9;
            printf("#    over: pair %zu gpu %.9g cpu %.9g, read of %u bases%s%s\n", i, b->lk[i], ref[i],
                   hk_batch_read_len(b, r), safe ? ", SAFE" : "", b->read_gaps[r].constant ? ", constant gaps" : "");
        }
    }
    free(ws);
    const int bad = unwritten || bad_inf || over || b->n_recomputed;
    tap_result(!bad, "%-30s %-6s pairs %8zu  max|diff| %.3g (above -600: %.3g)  over %zu  unwritten %zu  "
           "wrong -inf/nan %zu  -inf scored on the host as the engine does %zu  truly 0 %zu  recomputed %llu",
           what, pname[prec], b->n_pairs, maxd, maxd_normal, over, unwritten, bad_inf, beyond, zero,
           (unsigned long long)b->n_recomputed);
    if ((bad || verbose) && b->n_pairs) {
        const size_t g = pair_region(b, worst);  /* the worst pair's region, read and haplotype */
        const hk_region_t *rg = &b->regions[g];
        const size_t r = pair_read(b, worst), h = rg->hap0 + (worst - rg->pair0) % rg->n_haps;
        const hk_read_gaps_t q = b->read_gaps[r];
        printf("#    worst pair %zu: gpu %.12g cpu %.12g; read of %u bases, gaps %s (ins %u/%u del %u/%u gcp %u/%u), "
               "haplotype of %u\n", worst, b->lk[worst], ref[worst], hk_batch_read_len(b, r),
               q.constant ? "constant" : "varied", q.ins, q.ins_last, q.del, q.del_last, q.gcp, q.gcp_last,
               hk_batch_hap_len(b, h));
    }
}

static void check_batch(hk_cuda_t *cu, hk_batch_t *b, const char *what, int all_precisions)
{
    b->pdhmm = 1;
    double *ref = cpu_ref(b);
    if (!ref) { tap_result(0, "%s: CPU reference failed", what); return; }
    check_gpu(cu, b, ref, what, HK_PREC_DOUBLE);
    if (all_precisions) {
        check_gpu(cu, b, ref, what, HK_PREC_MIXED);
        check_gpu(cu, b, ref, what, HK_PREC_FLOAT);
    }
    free(ref);
}

/* Pairs whose likelihood falls where double's scaled sums turn subnormal
 * (log10 -598 to -634): reads of C against a haplotype of A, each base a
 * mismatch or a gap at Q56-64, with constant gap qualities (the CG form) and
 * with gap qualities that vary (the others). */
static int subnormal_batch(hk_batch_t *b)
{
    static char hs[128], r[128], q[128], gi[128], gd[128], gg[128];
    static uint8_t pd[128];
    for (int form = 0; form < 2; form++) {
        memset(hs, 'A', 120);
        if (hk_batch_begin_region(b, NULL, form + 1) || add_hap(b, hs, pd, 120)) return -1;
        for (int m = 100; m <= 107; m++)
            for (int qv = 56; qv <= 64; qv += 2) {
                for (int i = 0; i < m; i++) {
                    r[i] = 'C';
                    q[i] = (char)(33 + qv);
                    gi[i] = gd[i] = (char)(33 + (i + 1 == m ? 40 : form && i % 2 ? qv - 1 : qv));
                    gg[i] = (char)(33 + qv);
                }
                if (add_read(b, r, q, gi, gd, gg, (uint32_t)m)) return -1;
            }
        if (hk_batch_end_region(b)) return -1;
    }
    return 0;
}

/* The kernel forms a read of length m and gap kind goes to (hk_configs.h):
 * varied gap qualities take the per-row tiles (65..256 bases) or the
 * multi-tile kernel (over 256), a row of Q2 gaps the SAFE form, constant gaps
 * the CG tiles, each length here a tile of its own. Shorter reads cannot
 * fall below -590. */
enum { GAPS_VARIED, GAPS_SAFE, GAPS_CONSTANT, GAP_KINDS };
static const char *const gap_kind_name[GAP_KINDS] = { "varied gaps", "a Q2 gap row (SAFE)", "constant gaps (CG)" };
static const uint32_t deep_lengths[] = { 80, 90, 110, 120, 150, 180, 220, 300, 520 };
enum { DEEP_LENGTHS = sizeof deep_lengths / sizeof deep_lengths[0], DEEP_TRIES = 8 };

/* The CPU's likelihood of one pair, through a batch of its own. */
static double cpu_pair(const char *h, const uint8_t *pd, uint32_t n, const char *r, const char *q, const char *gi,
                       const char *gd, const char *gg, uint32_t m)
{
    hk_batch_t t;
    hk_batch_init(&t);
    t.pdhmm = 1;
    double v = NAN;
    if (!hk_batch_begin_region(&t, NULL, 1) && !add_hap(&t, h, pd, n) && !add_read(&t, r, q, gi, gd, gg, m) &&
        !hk_batch_end_region(&t) && !hk_pdhmm_score_batch(&t, 1))
        v = t.lk[0];
    hk_batch_free(&t);
    return v;
}

/* Pairs whose CPU likelihood lands between -590 and -640 (the CPU's scaled
 * sum about 1e-283 to 1e-333: normal, subnormal, and 0 on the way), in every
 * kernel form: a read of C against a random PD haplotype of A, G and T (its
 * SNP flags may still let a C match), so that every base costs a mismatch
 * (Phred/10 + log10 3) or an indel (gap opens Q70-93, continuations Q75-93:
 * dearer); base qualities spread by +-4 around what puts the pair near a
 * random target in -630..-600, then all moved together until the CPU's value
 * is within 8 of it. Region k*DEEP_TRIES+t holds one pair, read length
 * deep_lengths[k / GAP_KINDS], gap kind k % GAP_KINDS. */
static int deep_batch(hk_batch_t *b)
{
    enum { MAXLEN = 640 };
    static char h[MAXLEN], r[MAXLEN], q[MAXLEN], gi[MAXLEN], gd[MAXLEN], gg[MAXLEN];
    static uint8_t pd[MAXLEN];
    static double dq[MAXLEN];
    for (uint32_t k = 0; k < DEEP_LENGTHS * GAP_KINDS; k++)
        for (uint32_t t = 0; t < DEEP_TRIES; t++) {
            const uint32_t m = deep_lengths[k / GAP_KINDS], n = m + 20 + rnd(40);
            const int kind = (int)(k % GAP_KINDS);
            random_hap(h, pd, n, 1, 0);
            for (uint32_t j = 0; j < n; j++) if (h[j] == 'C' || h[j] == 'N') h[j] = "AGT"[rnd(3)];
            const char cgi = (char)(33 + 70 + rnd(24)), cgd = (char)(33 + 70 + rnd(24)), cgg = (char)(33 + 75 + rnd(19));
            const double target = -600.0 - rnd(31);
            double base = 10 * (-target / m - 0.4771);
            for (uint32_t i = 0; i < m; i++) {
                r[i] = 'C';
                dq[i] = rnd(801) / 100.0 - 4;
                gi[i] = kind == GAPS_CONSTANT ? cgi : (char)(33 + 70 + rnd(24));
                gd[i] = kind == GAPS_CONSTANT ? cgd : (char)(33 + 70 + rnd(24));
                gg[i] = kind == GAPS_CONSTANT ? cgg : (char)(33 + 75 + rnd(19));
            }
            if (kind == GAPS_SAFE) gi[m / 2] = gd[m / 2] = (char)(33 + 2);
            for (int tries = 0; tries < 8; tries++) {
                for (uint32_t i = 0; i < m; i++) {
                    const int qv = (int)lround(base + dq[i]);
                    q[i] = (char)(33 + (qv < 1 ? 1 : qv > 93 ? 93 : qv));
                }
                const double v = cpu_pair(h, pd, n, r, q, gi, gd, gg, m);
                if (!(fabs(v - target) > 8)) break;
                base += (v - target) * 10 / m;     /* v above the target: dearer bases */
            }
            if (hk_batch_begin_region(b, NULL, (long)(k * DEEP_TRIES + t) + 1) || add_hap(b, h, pd, n) ||
                add_read(b, r, q, gi, gd, gg, m) || hk_batch_end_region(b))
                return -1;
        }
    return 0;
}

/* deep_batch's pairs against the CPU, and how many of each kernel form landed
 * in -640..-590: at least a few of each must, or the check proves nothing. */
static void check_deep(hk_cuda_t *cu)
{
    hk_batch_t b;
    hk_batch_init(&b);
    b.pdhmm = 1;
    double *ref = deep_batch(&b) ? NULL : cpu_ref(&b);
    if (!ref) {
        tap_result(0, "deep likelihoods: building the batch or the CPU reference failed");
        hk_batch_free(&b);
        return;
    }
    check_gpu(cu, &b, ref, "likelihoods of -590 to -640", HK_PREC_DOUBLE);
    uint32_t landed[DEEP_LENGTHS * GAP_KINDS] = { 0 };
    for (size_t i = 0; i < b.n_pairs; i++)
        if (ref[i] >= -640 && ref[i] <= -590) landed[i / DEEP_TRIES]++;
    int enough = 1;
    for (uint32_t k = 0; k < DEEP_LENGTHS * GAP_KINDS; k++) {
        if (verbose || landed[k] < 3)
            printf("#    %u of %d pairs of %u bases, %s, in -640..-590\n", landed[k], DEEP_TRIES,
                   deep_lengths[k / GAP_KINDS], gap_kind_name[k % GAP_KINDS]);
        if (landed[k] < 3) enough = 0;
    }
    tap_result(enough, "likelihoods of -590 to -640: at least 3 pairs of each read length (70 to 520) and gap kind");
    free(ref);
    hk_batch_free(&b);
}

static void run_shape(hk_cuda_t *cu, const char *what, const shape_t *s, int all_precisions)
{
    const char *only = getenv("PDHMM_SHAPE");     /* run only the shapes whose name has this */
    if (only && !strstr(what, only)) return;
    hk_batch_t b;
    hk_batch_init(&b);
    if (random_batch(&b, s)) tap_result(0, "%s: building the batch failed", what);
    else check_batch(cu, &b, what, all_precisions);
    hk_batch_free(&b);
}
#endif

int main(int argc, char **argv)
{
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) verbose = 1;
        else if (!strcmp(argv[i], "-q")) quick = 1;
        else { fprintf(stderr, "usage: pdhmm_vs_cpu [-v] [-q]\n"); return 2; }
    }
#ifndef HAVE_CUDA
    (void)quick;
    return tap_skip_all("pdhmm_vs_cpu: haplik was built without CUDA, the PDHMM kernels are NOT tested");
#else
    char err[512];
    int n = 0;
    if (hk_cuda_device_count(&n, err, sizeof err) != HK_OK || n == 0) {
        char why[700];
        snprintf(why, sizeof why, "pdhmm_vs_cpu: %s: the PDHMM kernels are NOT tested", err);
        return tap_skip_all(why);
    }
    int ords[16];
    if (n > 16) n = 16;
    for (int i = 0; i < n; i++) ords[i] = i;
    hk_cuda_t *cu;
    hk_options_t opt;   /* the HK_* knobs of the command line */
    hk_options_read(&opt);
    if (hk_cuda_open(ords, n, &opt.cuda, &cu, err, sizeof err) != HK_OK) {
        tap_result(0, "hk_cuda_open: %s", err);
        printf("1..%d\n", tap_n);
        return 1;
    }
    printf("# %d device(s)\n", n);

    const char *dir = getenv("HK_TESTDATA") ? getenv("HK_TESTDATA") : "tests/data";
    char path[4096];
    snprintf(path, sizeof path, "%s/pdhmm_syn_990_1_2.txt", dir);
    hk_batch_t b;
    hk_batch_init(&b);
    const int np = load_gkl(&b, path);
    if (np != 990) tap_result(0, "GKL's pairs from %s: %d read", path, np);
    else check_batch(cu, &b, "GKL's 990 pairs", !quick);
    hk_batch_free(&b);

    hk_batch_init(&b);
    if (subnormal_batch(&b)) tap_result(0, "building the subnormal-range batch");
    else check_batch(cu, &b, "likelihoods of -598 to -634", 0);
    hk_batch_free(&b);
    check_deep(cu);

    /* regions, reads min..max, haps min..max, read len, hap len, spans, q0, lower */
    const shape_t small = { 20, 1, 6, 1, 5, 1, 60, 1, 80, 4, 1, 1 };
    run_shape(cu, "random PD, small", &small, !quick);
    /* every kernel: the larger tiles and the multi-tile kernel (reads over 256) */
    const shape_t tiles = { 6, 1, 3, 1, 3, 100, 700, 1, 400, 4, 1, 1 };
    run_shape(cu, "random PD, every tile size", &tiles, 0);
    if (!quick) {
        const shape_t every = { 200, 1, 8, 1, 8, 1, 300, 1, 300, 3, 1, 1 };
        const shape_t ends = { 200, 1, 8, 1, 8, 1, 260, 1, 40, 2, 0, 1 };
        const shape_t onebase = { 100, 1, 16, 1, 4, 1, 200, 1, 1, 3, 0, 1 };
        const shape_t na = { 500, 4, 32, 1, 8, 10, 151, 30, 521, 1, 0, 0 };
        /* long reads mostly within their haplotypes, so that most are finite */
        const shape_t longr = { 12, 1, 3, 1, 3, 1001, 1600, 1500, 2600, 4, 0, 1 };
        const shape_t longer = { 6, 1, 2, 1, 2, 1001, 2600, 100, 1400, 4, 0, 1 };
        const shape_t bigreg = { 2, 200, 300, 28, 32, 50, 250, 100, 300, 4, 1, 1 };
        run_shape(cu, "every PD byte", &every, 1);
        run_shape(cu, "spans at the ends, back to back", &ends, 0);
        run_shape(cu, "one-base haplotypes", &onebase, 0);
        run_shape(cu, "NA12878-like", &na, 0);
        run_shape(cu, "reads over 1000 bases", &longr, 0);
        run_shape(cu, "long reads, longer than haps", &longer, 0);
        run_shape(cu, "large regions", &bigreg, 0);
        hk_cuda_opts_t small = opt.cuda;
        small.chunk_cells = 20000;                       /* many small chunks: the pipeline turns */
        hk_cuda_set_opts(cu, &small);
        run_shape(cu, "small chunks", &every, 0);
        hk_cuda_set_opts(cu, &opt.cuda);
    }
    hk_cuda_close(cu);
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
#endif
}
