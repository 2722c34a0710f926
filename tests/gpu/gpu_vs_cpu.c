/* gpu_vs_cpu.c - the CUDA engine against the CPU model's double path.
 *
 *   gpu_vs_cpu [-v] [-q] [PATH...]
 *
 * PATH is an input file or a folder (its *.in and *.txt files); default
 * $HK_TESTDATA, else tests/data. Every input is scored on the CPU in double
 * precision and on the GPU in mixed, double and float mode, with the results
 * poisoned first: every pair must be written; in mixed and double mode every
 * pair must be finite and within 1e-4 (log10) of the CPU's double. Then the
 * same on random batches: reads longer than 1024, Ns, qualities that force
 * the double recompute, extreme gap qualities, constant gap qualities of any
 * value (the constant-gap kernels) and both kinds in one region, one-read
 * and one-haplotype regions, small chunks (HK_CUDA_CHUNK_CELLS) so that the
 * pipeline turns.
 * Last, through the engine as haplik runs it (hk_engine_score): reads longer
 * than HK_MIXED_FLOAT_MAX_READ and haplotypes longer than
 * HK_MIXED_FLOAT_MAX_HAP (straight to double in mixed mode, on both
 * backends: the same recompute count), pairs where double's scaled sum is
 * subnormal (log10 -600 to -631) and pairs beyond GATK's double range
 * (the GPU gives -inf, the engine rescues them on the CPU): every pair
 * finite and as the CPU has it.
 * -q skips the random batches (for compute-sanitizer runs), -v says more;
 * HK_TEST_DEVICES=0,1 scores on several devices at once. Output is TAP.
 * Without a usable GPU it prints a SKIP line and exits 77 (automake's skip
 * code), or 0 under automake's TAP driver, for which "1..0 # SKIP" is the skip.
 */
#include "config.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "hk_batch.h"
#include "../unit/tap.h"
#include "hk_config.h"
#include "hk_cuda.h"
#include "hk_engine.h"
#include "hk_options.h"
#include "hk_model.h"
#include "hk_pdhmm.h"
#include "hk_reader.h"

#define TOL 1e-4
#define SENTINEL 1234.5

static int verbose;

#ifdef HAVE_CUDA

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *prec_name(int p)
{
    return p == HK_PREC_MIXED ? "mixed" : p == HK_PREC_DOUBLE ? "double" : "float";
}

/* Below this log10 GATK's double (scaled by 2^1020) has underflowed to 0. */
#define BEYOND_GATK_DOUBLE (-600.0)

/* Score b on the GPU in mode prec and compare with ref (CPU double). */
static void check_mode(hk_cuda_t *cu, hk_batch_t *b, const double *ref, const char *what, int prec)
{
    char err[512];
    for (size_t i = 0; i < b->n_pairs; i++) b->lk[i] = SENTINEL;
    b->n_recomputed = 0;
    double t0 = now();
    int rc = hk_cuda_score(cu, &b, 1, prec, HK_FLOAT_THRESHOLD, NULL, NULL, err, sizeof err);
    double t1 = now();
    if (rc) {
        tap_result(0, "%s [%s]: hk_cuda_score: %s (%d)", what, prec_name(prec), err, rc);
        return;
    }
    size_t unwritten = 0, nonfinite = 0, over = 0, worst = 0, beyond = 0;
    double maxd = 0;
    for (size_t i = 0; i < b->n_pairs; i++) {
        const double g = b->lk[i];
        if (g == SENTINEL) { unwritten++; continue; }
        if (!isfinite(g)) {
            if (!isfinite(ref[i]) && (g == ref[i] || (isnan(g) && isnan(ref[i])))) continue;
            /* the kernels' contract: -inf where GATK's double underflows (below
             * about log10 -631); the engine rescues those pairs on the CPU
             * (check_engine below), hk_cuda_score alone does not */
            if (g == -INFINITY && ref[i] < BEYOND_GATK_DOUBLE) { beyond++; continue; }
            nonfinite++;
            continue;
        }
        const double d = fabs(g - ref[i]);
        if (d > maxd) { maxd = d; worst = i; }
        if (!(d <= TOL)) over++;
    }
    const int strict = prec != HK_PREC_FLOAT;
    const int bad = unwritten || (strict && (nonfinite || over));
    tap_result(!bad, "%-28s %-6s pairs %9zu  max|diff| %.3g  over %zu  non-finite %zu  unwritten %zu  "
           "recomputed %llu  beyond GATK's range (-inf, for the engine to rescue) %zu  %.3f s",
           what, prec_name(prec), b->n_pairs, maxd, over, nonfinite,
           unwritten, (unsigned long long)b->n_recomputed, beyond, t1 - t0);
    if (bad && b->n_pairs)
        printf("#    worst pair %zu: gpu %.9g cpu %.9g\n", worst, b->lk[worst], ref[worst]);
}

/* The same results, bit for bit, whether or not the chunks' constant-gap
 * kernels take a set's coefficients as a parameter (HK_CUDA_CGAP_SET=0: each
 * read's, computed by the same expression), so that a pair's result does
 * not depend on the chunk it falls in. */
/* The HK_* knobs (HK_CUDA_* on the command line), read once in main. */
static hk_options_t opt;

static void check_same_without_set(hk_cuda_t *cu, hk_batch_t *b, const char *what)
{
    char err[512];
    double *with = malloc((b->n_pairs + 1) * sizeof *with);
    int rc = !with || hk_cuda_score(cu, &b, 1, HK_PREC_MIXED, HK_FLOAT_THRESHOLD, NULL, NULL, err, sizeof err);
    if (!rc) memcpy(with, b->lk, b->n_pairs * sizeof *with);
    hk_cuda_opts_t no_set = opt.cuda;
    no_set.cgap_set = 0;
    hk_cuda_set_opts(cu, &no_set);
    rc = rc || hk_cuda_score(cu, &b, 1, HK_PREC_MIXED, HK_FLOAT_THRESHOLD, NULL, NULL, err, sizeof err);
    hk_cuda_set_opts(cu, &opt.cuda);
    size_t differ = 0;
    for (size_t i = 0; !rc && i < b->n_pairs; i++) differ += memcmp(&with[i], &b->lk[i], sizeof *with) != 0;
    tap_result(!rc && !differ, "%-28s mixed, each read's constant-gap coefficients: %zu of %zu pairs differ",
               what, differ, b->n_pairs);
    free(with);
}

/* CPU references in double (returned) and mixed (recompute count). A PDHMM
 * dump (SPEC 1b: tests/data/pdhmm_syn_990_1_2.txt) has its own model, double
 * only (tests/gpu/pdhmm_vs_cpu tests its kernels in depth). */
static double *cpu_ref(hk_batch_t *b, unsigned long long *cpu_mixed_recomputed)
{
    if (b->pdhmm) {
        *cpu_mixed_recomputed = 0;
        if (hk_pdhmm_score_batch(b, 8)) return NULL;
        double *ref = malloc(b->n_pairs * sizeof *ref + 1);
        if (ref) memcpy(ref, b->lk, b->n_pairs * sizeof *ref);
        return ref;
    }
    hk_model_t m = { HK_PREC_DOUBLE, HK_FLOAT_THRESHOLD, 6, -1, 0 };
    if (hk_model_score_batch(&m, b, 8)) return NULL;
    double *ref = malloc(b->n_pairs * sizeof *ref + 1);
    if (!ref) return NULL;
    memcpy(ref, b->lk, b->n_pairs * sizeof *ref);
    m.precision = HK_PREC_MIXED;
    b->n_recomputed = 0;
    if (hk_model_score_batch(&m, b, 8)) { free(ref); return NULL; }
    *cpu_mixed_recomputed = b->n_recomputed;
    return ref;
}

static void check_batch(hk_cuda_t *cu, hk_batch_t *b, const char *what)
{
    unsigned long long cpu_rec = 0;
    double *ref = cpu_ref(b, &cpu_rec);
    if (!ref) { tap_result(0, "%s: CPU reference failed", what); return; }
    if (verbose) printf("#    %s: CPU mixed recomputed %llu\n", what, cpu_rec);
    check_mode(cu, b, ref, what, HK_PREC_MIXED);
    check_mode(cu, b, ref, what, HK_PREC_DOUBLE);
    check_mode(cu, b, ref, what, HK_PREC_FLOAT);
    /* the engine registers a batch's arrays from its second call on (rows
     * copied and results returned without the host): mixed once more */
    char again[160];
    snprintf(again, sizeof again, "%s, again", what);
    check_mode(cu, b, ref, again, HK_PREC_MIXED);
    if (!b->pdhmm) check_same_without_set(cu, b, what);
    free(ref);
}

static void check_file(hk_cuda_t *cu, const char *path)
{
    hk_model_t m = { HK_PREC_MIXED, HK_FLOAT_THRESHOLD, 6, -1, 0 };
    hk_reader_t *r;
    if (hk_reader_open(path, HK_FMT_AUTO, hk_model_seq_rules(&m), NULL, &r)) { tap_result(0, "%s: cannot read", path); return; }
    hk_batch_t b;
    hk_batch_init(&b);
    size_t got;
    hk_status_t rc;
    while (!(rc = hk_reader_next(r, &b, (size_t)1 << 30, &got)) && got > 0) {}
    hk_reader_close(r);
    if (rc) { tap_result(0, "%s: read error", path); hk_batch_free(&b); return; }
    const char *base = strrchr(path, '/');
    check_batch(cu, &b, base ? base + 1 : path);
    hk_batch_free(&b);
}

static void check_path(hk_cuda_t *cu, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) { tap_result(0, "%s: no such file or folder", path); return; }
    if (!S_ISDIR(st.st_mode)) { check_file(cu, path); return; }
    struct dirent **list;
    int n = scandir(path, &list, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const char *nm = list[i]->d_name;
        size_t l = strlen(nm);
        if ((l > 3 && !strcmp(nm + l - 3, ".in")) || (l > 4 && !strcmp(nm + l - 4, ".txt"))) {
            char full[4096];
            snprintf(full, sizeof full, "%s/%s", path, nm);
            check_file(cu, full);
        }
        free(list[i]);
    }
    free(list);
}

/* ---- random batches ---- */

static unsigned long long rng_state = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

typedef struct {
    int min_read, max_read, min_hap, max_hap, max_reads, max_haps;
    int n_rate;        /* per mille of N bases */
    int mutate;        /* per mille of read bases changed (high: tiny likelihoods) */
    int gaps;          /* GAPS_* */
} rand_spec;

/* Gap qualities of the random reads: HaplotypeCaller's Q40 with Q45 on the
 * last base and Q10 continuation; anything on every position (open from Q4,
 * so that mm = 1 - ei - ed stays positive; continuation from Q1, as Q0 is
 * refused); constant per read but drawn
 * anywhere, the last position apart (most go to the general kernels: a
 * chunk's constant-gap kernels take one set); a mix of the three in every
 * region (chunks with both kinds); constant, one set drawn anywhere for the
 * whole batch (shared_gaps, the constant-gap kernels' parameter) but for one
 * read in 8, which has its own. */
enum { GAPS_GATK, GAPS_WILD, GAPS_CONSTANT, GAPS_MIXED, GAPS_SHARED };
static char shared_gaps[6];

static void draw_shared_gaps(void)
{
    for (int k = 0; k < 6; k++) shared_gaps[k] = (char)(k % 3 == 2 ? 34 + rnd(93) : 37 + rnd(90));
}

static int add_random_region(hk_batch_t *b, const hk_model_t *m, const rand_spec *s, int nr, int nh)
{
    const hk_seq_rules_t rules = hk_model_seq_rules(m);
    static char seq[8192], qb[8192], qi[8192], qd[8192], qg[8192], hap[8192];
    hk_batch_error_t bad;
    if (hk_batch_begin_region(b, NULL, 1)) return -1;
    int hl0 = s->min_hap + rnd(s->max_hap - s->min_hap + 1);
    for (int i = 0; i < hl0; i++) hap[i] = "ACGT"[rnd(4)];
    for (int h = 0; h < nh; h++) {
        int hl = hl0 + (int)rnd(17) - 8;
        if (hl < 1) hl = 1;
        if (hl > 8000) hl = 8000;
        char tmp[8192];
        for (int i = 0; i < hl; i++) tmp[i] = i < hl0 ? hap[i] : "ACGT"[rnd(4)];
        for (int k = 0; k < 2; k++) tmp[rnd(hl)] = "ACGTN"[rnd(rnd(50) ? 4 : 5)];
        if (hk_batch_add_hap(b, &rules, tmp, (uint32_t)hl, &bad)) return -1;
    }
    for (int r = 0; r < nr; r++) {
        int rl = s->min_read + rnd(s->max_read - s->min_read + 1);
        int off = rnd(hl0);
        int gaps = s->gaps == GAPS_MIXED ? (int)rnd(3) : s->gaps;
        char ci = (char)(37 + rnd(90)), cd = (char)(37 + rnd(90)), cg = (char)(34 + rnd(93));
        char li = (char)(37 + rnd(90)), ld = (char)(37 + rnd(90)), lg = (char)(34 + rnd(93));
        if (gaps == GAPS_SHARED) {
            gaps = GAPS_CONSTANT;
            if (rnd(8)) {
                ci = shared_gaps[0]; cd = shared_gaps[1]; cg = shared_gaps[2];
                li = shared_gaps[3]; ld = shared_gaps[4]; lg = shared_gaps[5];
            }
        }
        for (int i = 0; i < rl; i++) {
            char c = hap[(off + i) % hl0];
            if ((int)rnd(1000) < s->mutate) c = "ACGT"[rnd(4)];
            if ((int)rnd(1000) < s->n_rate) c = rnd(2) ? 'N' : 'n';
            seq[i] = c;
            qb[i] = (char)(33 + rnd(42));
            if (gaps == GAPS_WILD) {
                qi[i] = (char)(37 + rnd(90)); qd[i] = (char)(37 + rnd(90)); qg[i] = (char)(34 + rnd(93));
            } else if (gaps == GAPS_CONSTANT) {
                const int last = i == rl - 1;
                qi[i] = last ? li : ci; qd[i] = last ? ld : cd; qg[i] = last ? lg : cg;
            } else {
                qi[i] = qd[i] = (char)(33 + 40 + (i == rl - 1) * 5); qg[i] = '+';
            }
        }
        if (hk_batch_add_read(b, &rules, seq, qb, qi, qd, qg, (uint32_t)rl, &bad)) return -1;
    }
    return hk_batch_end_region(b);
}

static void check_random(hk_cuda_t *cu, const char *what, const rand_spec *s, int regions)
{
    hk_model_t m = { HK_PREC_MIXED, HK_FLOAT_THRESHOLD, 6, -1, 0 };
    hk_batch_t b;
    hk_batch_init(&b);
    draw_shared_gaps();
    for (int g = 0; g < regions; g++) {
        int nr = 1 + rnd(s->max_reads), nh = 1 + rnd(s->max_haps);
        if (g % 5 == 1) nr = 1;
        if (g % 7 == 2) nh = 1;
        if (add_random_region(&b, &m, s, nr, nh)) {
            tap_result(0, "%s: building the batch", what);
            hk_batch_free(&b);
            return;
        }
    }
    check_batch(cu, &b, what);
    hk_batch_free(&b);
}

/* ---- several batches in one call ---- */

typedef struct { hk_batch_t *seen[16]; int n; } done_log;

static void note_done(hk_batch_t *b, void *arg)
{
    done_log *l = arg;
    if (l->n < 16) l->seen[l->n] = b;
    l->n++;
}

/* Batches of every kind (one empty) scored in one call must give exactly what
 * each gives alone, and be reported once each, in order. */
static void check_multi(hk_cuda_t *cu, const char *what, const rand_spec *const *specs, int nb)
{
    char err[512];
    hk_model_t m = { HK_PREC_MIXED, HK_FLOAT_THRESHOLD, 6, -1, 0 };
    hk_batch_t b[8], *bp[8];
    double *alone[8] = { 0 };
    unsigned long long rec[8];
    int ok = 1;
    for (int i = 0; i < nb; i++) {
        hk_batch_init(&b[i]);
        bp[i] = &b[i];
        for (int g = 0; specs[i] && g < 20; g++)
            if (add_random_region(&b[i], &m, specs[i], 1 + rnd(specs[i]->max_reads),
                                  1 + rnd(specs[i]->max_haps))) ok = 0;
        hk_batch_t *one = &b[i];
        b[i].n_recomputed = 0;
        if (hk_cuda_score(cu, &one, 1, HK_PREC_MIXED, HK_FLOAT_THRESHOLD, NULL, NULL, err, sizeof err)) ok = 0;
        rec[i] = b[i].n_recomputed;
        alone[i] = malloc(sizeof(double) * (b[i].n_pairs + 1));
        if (alone[i]) memcpy(alone[i], b[i].lk, sizeof(double) * b[i].n_pairs);
        for (size_t j = 0; j < b[i].n_pairs; j++) b[i].lk[j] = SENTINEL;
        b[i].n_recomputed = 0;
    }
    done_log log = { { 0 }, 0 };
    hk_status_t rc = ok ? hk_cuda_score(cu, bp, (size_t)nb, HK_PREC_MIXED, HK_FLOAT_THRESHOLD, note_done, &log, err, sizeof err)
                        : HK_E_NOMEM;
    int in_order = log.n == nb, same = 1;
    for (int i = 0; i < nb && i < 16; i++) in_order &= log.seen[i] == &b[i];
    for (int i = 0; i < nb; i++) {
        same &= alone[i] && b[i].n_recomputed == rec[i] &&
                !memcmp(alone[i], b[i].lk, sizeof(double) * b[i].n_pairs);
        free(alone[i]);
    }
    size_t pairs = 0;
    for (int i = 0; i < nb; i++) { pairs += b[i].n_pairs; hk_batch_free(&b[i]); }
    tap_result(ok && rc == 0 && in_order && same,
           "%s: %d batches (%zu pairs) in one call: %s, reported %d times%s, results %s",
           what, nb, pairs, rc ? err : "scored", log.n, in_order ? " in order" : " OUT OF ORDER",
           same ? "identical to one call each" : "DIFFER from one call each");
}

/* A region of one read against nh haplotypes: the read a copy of the first
 * haplotype (exact: constant qualities Q37, gap-open Q40) or unrelated to
 * all (random: far below GATK's double range from about 650 bases on). */
static int add_trust_region(hk_batch_t *b, const hk_model_t *m, int rl, int hl, int nh, int exact)
{
    const hk_seq_rules_t rules = hk_model_seq_rules(m);
    static char seq[8192], q[8192], gi[8192], gd[8192], gc[8192], hap[8192];
    hk_batch_error_t bad;
    if (hk_batch_begin_region(b, NULL, 1)) return -1;
    for (int h = 0; h < nh; h++) {
        for (int i = 0; i < hl; i++) hap[i] = "ACGT"[rnd(4)];
        if (h == 0) memcpy(seq, hap, (size_t)hl);
        if (h > 0 && exact) hap[rnd(hl)] = 'N';
        if (hk_batch_add_hap(b, &rules, hap, (uint32_t)hl, &bad)) return -1;
    }
    for (int i = 0; i < rl; i++) {
        if (!exact) seq[i] = "ACGT"[rnd(4)];
        q[i] = exact ? 'F' : (char)(33 + 10 + rnd(31));
        gi[i] = gd[i] = 'I';
        gc[i] = '+';
    }
    if (hk_batch_add_read(b, &rules, seq, q, gi, gd, gc, (uint32_t)rl, &bad)) return -1;
    return hk_batch_end_region(b);
}

/* A region of reads of C, of rl0..rl1 bases, against a haplotype of hl A:
 * every base a mismatch or a gap at Q60, so that the likelihood falls about
 * 5.9 log10 per base (-598 to -634 from 100 to 106 bases: where double's
 * scaled sums turn subnormal). varied: gap qualities Q59 and Q60 by turns
 * (the per-row kernels, not the constant-gap ones). */
static int add_mismatch_region(hk_batch_t *b, const hk_model_t *m, int rl0, int rl1, int hl, int varied)
{
    const hk_seq_rules_t rules = hk_model_seq_rules(m);
    static char seq[256], q[256], g[256], hap[256];
    hk_batch_error_t bad;
    if (rl1 > 256 || hl > 256 || hk_batch_begin_region(b, NULL, 1)) return -1;
    memset(hap, 'A', (size_t)hl);
    if (hk_batch_add_hap(b, &rules, hap, (uint32_t)hl, &bad)) return -1;
    for (int rl = rl0; rl <= rl1; rl++) {
        memset(seq, 'C', (size_t)rl);
        memset(q, ']', (size_t)rl);
        memcpy(g, q, (size_t)rl);
        for (int i = 0; varied && i < rl; i += 2) g[i] = '\\';
        if (hk_batch_add_read(b, &rules, seq, q, g, g, q, (uint32_t)rl, &bad)) return -1;
    }
    return hk_batch_end_region(b);
}

/* The trust cases through hk_engine_score on the GPUs ords[0..nord). */
static void check_engine(const int *ords, int nord)
{
    hk_model_t m = { HK_PREC_MIXED, HK_FLOAT_THRESHOLD, 6, -1, 0 };
    hk_batch_t b;
    hk_batch_init(&b);
    int ok = !add_trust_region(&b, &m, 700, 700, 3, 0) &&      /* log10 about -690: rescued */
             !add_trust_region(&b, &m, 1500, 1400, 2, 0) &&    /* about -1400 */
             !add_trust_region(&b, &m, 3000, 3000, 3, 1) &&    /* long: double at once */
             !add_trust_region(&b, &m, 801, 900, 2, 1) &&      /* just over the limit */
             !add_trust_region(&b, &m, HK_MIXED_FLOAT_MAX_READ, 900, 2, 1) &&   /* still float */
             !add_trust_region(&b, &m, 150, 300, 4, 1) &&
             !add_trust_region(&b, &m, 150, HK_MIXED_FLOAT_MAX_HAP + 1, 2, 1) &&   /* long haplotype: double */
             !add_trust_region(&b, &m, 150, HK_MIXED_FLOAT_MAX_HAP, 2, 1) &&       /* still float */
             !add_mismatch_region(&b, &m, 96, 110, 120, 0) &&                     /* subnormal sums */
             !add_mismatch_region(&b, &m, 96, 110, 120, 1);                       /* varied gaps */
    unsigned long long cpu_rec = 0;
    double *ref = ok ? cpu_ref(&b, &cpu_rec) : NULL;
    for (int prec = HK_PREC_MIXED; ref && prec <= HK_PREC_DOUBLE; prec += 2) {
        hk_config_t c;
        hk_config_init(&c);
        c.opt = opt;
        c.backend = HK_BACKEND_CUDA;
        c.n_devices = nord;
        memcpy(c.devices, ords, sizeof *ords * (size_t)nord);
        c.model.precision = prec;
        hk_engine_t *e;
        const hk_status_t started = hk_engine_start(&c, &e);
        for (size_t i = 0; i < b.n_pairs; i++) b.lk[i] = SENTINEL;
        b.n_recomputed = 0;
        hk_batch_t *bp = &b;
        const hk_status_t rc = started ? started : hk_engine_score(e, &bp, 1, NULL, NULL);
        hk_engine_close(e);
        size_t nonfinite = 0;
        double maxd = 0, lowest = 0;
        for (size_t i = 0; i < b.n_pairs; i++) {
            if (!isfinite(b.lk[i]) || b.lk[i] == SENTINEL) { nonfinite++; continue; }
            const double d = fabs(b.lk[i] - ref[i]);
            if (!(d <= maxd)) maxd = d;
            if (ref[i] < lowest) lowest = ref[i];
        }
        const int rec_ok = prec != HK_PREC_MIXED || b.n_recomputed == cpu_rec;
        tap_result(rc == 0 && nonfinite == 0 && maxd <= TOL && rec_ok,
               "engine %-6s long reads and pairs beyond GATK's range (down to %.0f): pairs %zu  "
               "max|diff| %.3g  non-finite %zu  recomputed %llu (CPU %llu)", prec_name(prec), lowest,
               b.n_pairs, maxd, nonfinite, (unsigned long long)b.n_recomputed,
               prec == HK_PREC_MIXED ? cpu_rec : 0ull);
        hk_config_free(&c);
    }
    if (!ref) tap_result(0, "engine: building the batch or the CPU reference failed");
    free(ref);
    hk_batch_free(&b);
}

static void check_api(void)
{
    char err[512];
    hk_cuda_t *cu = NULL;
    int twice[2] = { 0, 0 }, bad[1] = { 9999 };
    int rc1 = hk_cuda_open(twice, 2, NULL, &cu, err, sizeof err);
    hk_cuda_close(cu);
    cu = NULL;
    int rc2 = hk_cuda_open(bad, 1, NULL, &cu, err, sizeof err);
    hk_cuda_close(cu);
    int ok = rc1 == HK_E_INVAL && rc2 == HK_E_NODEV;
    tap_result(ok, "api: duplicate ordinal -> %d, missing ordinal -> %d (%s)", rc1, rc2, err);
}
#endif

int main(int argc, char **argv)
{
    int a = 1, quick = 0;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "-v")) verbose = 1;
        else if (!strcmp(argv[a], "-q")) quick = 1;
        else { fprintf(stderr, "usage: gpu_vs_cpu [-v] [-q] [PATH...]\n"); return 2; }
    }
#ifndef HAVE_CUDA
    (void)argc; (void)argv; (void)quick;
    return tap_skip_all("gpu_vs_cpu: haplik was built without CUDA, the CUDA engine is NOT tested");
#else
    char err[512];
    int n;
    if (hk_cuda_device_count(&n, err, sizeof err) != HK_OK || n == 0) {
        char why[700];
        snprintf(why, sizeof why, "gpu_vs_cpu: no usable GPU, the CUDA engine is NOT tested here (%s)", err);
        return tap_skip_all(why);
    }
    hk_cuda_device_t info;
    if (hk_cuda_device_info(0, &info, err, sizeof err) == HK_OK)
        printf("# device 0: %s, %d SMs, cc %d.%d\n", info.name, info.sm_count, info.cc_major, info.cc_minor);
    /* HK_TEST_DEVICES=0,1,...: score on several devices at once (the split by cells) */
    int ords[64], nord = 0;
    const char *dl = getenv("HK_TEST_DEVICES");
    for (char *p = (char *)(dl ? dl : ""); *p && nord < 64;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p) break;
        ords[nord++] = (int)v;
        p = *end == ',' ? end + 1 : end;
    }
    if (nord == 0) ords[nord++] = 0;
    printf("# scoring on %d device%s\n", nord, nord == 1 ? "" : "s");
    hk_cuda_t *cu;
    hk_options_read(&opt);
    if (hk_cuda_open(ords, nord, &opt.cuda, &cu, err, sizeof err) != HK_OK) {
        tap_result(0, "hk_cuda_open: %s", err);
        printf("1..%d\n", tap_n);
        return 1;
    }
    check_api();
    if (a < argc)
        for (; a < argc; a++) check_path(cu, argv[a]);
    else {
        const char *d = getenv("HK_TESTDATA");
        check_path(cu, d && *d ? d : "tests/data");
    }
    /*                         read       hap       reads haps N   mut gaps */
    rand_spec typical  = {   1, 151,  30, 521,  20, 16,  2,  10, GAPS_GATK };
    rand_spec longread = { 513, 3000, 50, 3000,  3,  3,  5,  20, GAPS_GATK };
    rand_spec tiny     = { 900, 1100, 800, 1200, 4,  6, 30,  60, GAPS_GATK };  /* float underflows */
    rand_spec wild     = {   1, 700,   1, 700,   6,  6, 50, 100, GAPS_WILD };
    rand_spec shorts   = {   1,  20,   1,  40,  40, 40, 10,  50, GAPS_GATK };
    rand_spec constant = {   1, 520,   1, 600,   8,  6, 20,  60, GAPS_CONSTANT };
    rand_spec mixed    = {   1, 300,   1, 400,  12,  6, 10,  30, GAPS_MIXED };
    /* many short haplotypes of odd and even lengths: the column-pair kernels'
     * padding and a boundary in nearly every pair */
    rand_spec tinyhaps = {   1, 520,   1,   3,  10, 40, 10,  30, GAPS_SHARED };
    rand_spec shared   = {   1, 520,   1, 600,   8,  6, 20,  60, GAPS_SHARED };
    if (quick) goto done;
    check_random(cu, "random typical", &typical, 300);
    check_random(cu, "random long reads (>1024)", &longread, 12);
    check_random(cu, "random underflow -> double", &tiny, 10);
    check_random(cu, "random wild qualities", &wild, 60);
    check_random(cu, "random short", &shorts, 200);
    check_random(cu, "random constant gaps, any values", &constant, 150);
    check_random(cu, "random constant gaps, one set of any values", &shared, 150);
    check_random(cu, "random constant and varied gaps in one region", &mixed, 150);
    check_random(cu, "random constant gaps, haplotypes of 1-11 bases", &tinyhaps, 100);
    const rand_spec *mix[] = { &typical, NULL, &tiny, &shorts, &longread, &mixed };
    check_multi(cu, "multi", mix, 6);
    /* the same with chunks of about 2e6 cells: many chunks, both slots */
    hk_cuda_opts_t small = opt.cuda;
    small.chunk_cells = 2000000;
    hk_cuda_set_opts(cu, &small);
    check_random(cu, "random typical, small chunks", &typical, 300);
    check_random(cu, "random long, small chunks", &longread, 6);
    check_random(cu, "random mixed gaps, small chunks", &mixed, 150);
    check_multi(cu, "multi, small chunks", mix, 6);
    hk_cuda_set_opts(cu, &opt.cuda);
done:
    hk_cuda_close(cu);
    check_engine(ords, nord);       /* after: the engine's release resets the devices */
    printf("1..%d\n# %s: %d failure%s\n", tap_n, tap_failed ? "FAIL" : "PASS", tap_failed, tap_failed == 1 ? "" : "s");
    return tap_failed ? 1 : 0;
#endif
}
