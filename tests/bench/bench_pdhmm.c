/* bench_pdhmm.c - PDHMM throughput: the GPU kernels alone (TCUPS) and the
 * CPU reference on one thread (GCUPS per core), on a seeded NA12878-like PD
 * workload built here with the logic of `scripts/gen_batches.py --format
 * pdhmm` (the same distributions, not the same bytes): regions of R reads x
 * H haplotypes (H geometric up to 16, R log-normal around 16), haplotypes of
 * 30-521 bases sharing one random sequence, reads of 10-151 bases copied
 * from them with quality-driven errors and rare Ns, HaplotypeCaller's
 * constant gap qualities ("IIII...IN", gcp Q10); 3% of haplotype positions
 * undetermined SNPs (SNP + an alternative base's bit), and on 30% of the
 * haplotypes one flagged deletion span of 1-10 bases (DEL_START ... DEL_END).
 *
 *   bench_pdhmm [--pairs N] [--runs N] [--seed S] [--cpu-pairs N] [--configs] [--no-cpu]
 *               [--input FILE]
 *
 * --input FILE times a PDHMM dump instead of the built workload, read through
 * hk_reader (e.g. `scripts/gen_batches.py --format pdhmm --pairs 1000000`,
 * the same distributions in the dump's layout); the CPU lines then score its
 * first --cpu-pairs pairs' regions.
 *
 * Prints one line per measurement: the workload, pairs, cells, the median
 * kernel time of --runs runs after a warm-up (hk_cuda_bench: data already on
 * the GPU, CUDA events) and TCUPS; the whole hk_cuda_score call (packing,
 * copies, kernels, results back); with --configs, one equal-length workload
 * per kernel configuration (reads as long as its tile, haplotypes of 256
 * bases), the per-row form's and then the constant-gap form's ("cg"; with
 * HK_PD_CG=0, in a build with --enable-tuning-knobs, the mix runs without
 * that form); and the CPU reference (hk_pdhmm_score_batch, one thread) on the
 * first --cpu-pairs pairs' worth of the same generator, whose results are
 * also compared with the GPU's.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hk_batch.h"
#include "hk_cuda_bench.h"
#include "hk_options.h"
#include "hk_pdhmm.h"
#include "hk_reader.h"

static unsigned long long rs;
#ifdef HAVE_CUDA   /* all but main serves the GPU's benchmark */
static double urand(void)
{
    rs ^= rs >> 12; rs ^= rs << 25; rs ^= rs >> 27;
    return ((rs * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}
static double nrand(void)
{
    const double u = urand(), v = urand();
    return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}
static double grand(double a)
{
    if (a < 1.0) return grand(a + 1.0) * pow(urand() + 1e-300, 1.0 / a);
    const double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = nrand(), v = 1.0 + c * x;
        if (v <= 0) continue;
        v = v * v * v;
        if (log(urand() + 1e-300) < 0.5 * x * x + d - d * v + d * log(v)) return d * v;
    }
}
static double brand(double a, double b) { const double x = grand(a), y = grand(b); return x / (x + y); }

static const hk_seq_rules_t RULES = { .min_base_quality = 0, .gcp = -1, .unknown_as_n = 0, .pdhmm = 1 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One region; hl[h] haplotype lengths, rl[r] read lengths (0: NA-like draw). */
static int add_region(hk_batch_t *b, int R, int H, const int *hl, int read_len)
{
    static char hap[16][1024], seq[1024], q[1024], gi[1024], gg[1024];
    static uint8_t pd[16][1024];
    hk_batch_error_t bad;
    int maxh = 0;
    for (int h = 0; h < H; h++) if (hl[h] > maxh) maxh = hl[h];
    if (hk_batch_begin_region(b, NULL, 1)) return -1;
    for (int i = 0; i < maxh; i++) hap[0][i] = "ACGT"[(int)(urand() * 4)];
    for (int h = 0; h < H; h++) {
        memcpy(hap[h], hap[0], (size_t)maxh);
        for (int k = (int)(urand() * 3); k > 0; k--) hap[h][(int)(urand() * hl[h])] = "ACGT"[(int)(urand() * 4)];
        for (int j = 0; j < hl[h]; j++) {
            pd[h][j] = 0;
            if (urand() < 0.03) {          /* an undetermined SNP: an alternative other than the base */
                int alt = (int)(urand() * 3);
                const int ref = hap[h][j] == 'A' ? 0 : hap[h][j] == 'C' ? 1 : hap[h][j] == 'G' ? 2 : 3;
                if (alt >= ref) alt++;
                pd[h][j] = (uint8_t)(HK_PD_SNP | (HK_PD_A << alt));
            }
        }
        if (urand() < 0.3) {               /* a flagged deletion span */
            const int len = 1 + (int)(urand() * 10), a = (int)(urand() * (hl[h] - len + 1));
            pd[h][a] |= HK_PD_DEL_START;
            pd[h][a + len - 1] |= HK_PD_DEL_END;
        }
        if (hk_batch_add_hap(b, &RULES, hap[h], (uint32_t)hl[h], &bad)) return -1;
        memcpy(b->hap_pd + b->hap_off[b->n_haps - 1], pd[h], (size_t)hl[h]);
    }
    for (int r = 0; r < R; r++) {
        const int h = (int)(urand() * H);
        int len = read_len ? read_len : (int)(10 + brand(1.2, 2.2) * 141);
        if (len > hl[h]) len = hl[h];
        const int off = (int)(urand() * (hl[h] - len + 1));
        for (int i = 0; i < len; i++) {
            int qq = (int)(32 + 6 * nrand());
            qq = qq < 6 ? 6 : qq > 41 ? 41 : qq;
            const double u = urand();
            seq[i] = u < pow(10.0, -qq / 10.0) ? "ACGT"[(int)(urand() * 4)] : u > 0.998 ? 'N' : hap[h][off + i];
            q[i] = (char)(33 + qq);
            gi[i] = i == len - 1 ? 'N' : 'I';
            gg[i] = '+';
        }
        if (hk_batch_add_read(b, &RULES, seq, q, gi, gi, gg, (uint32_t)len, &bad)) return -1;
    }
    return hk_batch_end_region(b);
}

static int make_na12878(hk_batch_t *b, long pairs)
{
    for (long done = 0; done < pairs;) {
        int H = 1;
        while (H < 16 && urand() < 0.71) H++;
        int R = (int)lround(exp(log(16.0) - 0.18 + 0.6 * nrand()));
        R = R < 1 ? 1 : R > 1000 ? 1000 : R;
        int hl[16], L = (int)(30 + brand(2.5, 0.8) * 491);
        for (int h = 0; h < H; h++) {
            const int x = h ? L + (int)(urand() * 17) - 8 : L;
            hl[h] = x < 30 ? 30 : x > 521 ? 521 : x;
        }
        if (add_region(b, R, H, hl, 0)) return -1;
        done += (long)R * H;
    }
    b->pdhmm = 1;
    return 0;
}

static int make_equal(hk_batch_t *b, int rl, int hlen, long pairs)
{
    int hl[16];
    for (int i = 0; i < 16; i++) hl[i] = hlen;
    for (long done = 0; done < pairs; done += 16 * 16)
        if (add_region(b, 16, 16, hl, rl)) return -1;
    b->pdhmm = 1;
    return 0;
}

/* Regions of a PDHMM dump into b, until it holds at least max_pairs pairs
 * (all of it with SIZE_MAX); 0, or -1 (logged). */
static int read_dump(const char *path, hk_batch_t *b, size_t max_pairs)
{
    hk_reader_t *r;
    if (hk_reader_open(path, hk_reader_parse_format("pdhmm"), RULES, NULL, &r)) return -1;
    hk_reader_set_threads(r, 8);
    size_t got;
    hk_status_t rc;
    do rc = hk_reader_next(r, b, max_pairs, &got); while (!rc && got > 0 && b->n_pairs < max_pairs);
    hk_reader_close(r);
    if (rc || !b->pdhmm) { fprintf(stderr, "bench_pdhmm: %s: not a PDHMM dump\n", path); return -1; }
    return 0;
}

static void line(const char *name, const char *cfg, const hk_batch_t *b, double s, const char *what)
{
    printf("%-14s %-7s %9zu %10.3e %10.3f %8.3f  %s\n", name, cfg, b->n_pairs, (double)b->cells, s * 1e3,
           b->cells / s / 1e12, what);
    fflush(stdout);
}

/* gaps: HK_GAPS_CONSTANT with a config indexes the constant-gap form's list */
static int kernels(hk_cuda_t *cu, hk_batch_t *b, int gaps, int config, int runs, const char *name, const char *cfg)
{
    char err[512];
    double s = 0;
    if (hk_cuda_bench(cu, b, gaps, config, HK_PREC_DOUBLE, runs, &s, err, sizeof err)) {
        fprintf(stderr, "bench_pdhmm: %s: %s\n", name, err);
        return -1;
    }
    line(name, cfg, b, s, "kernels alone (median)");
    return 0;
}

#endif

int main(int argc, char **argv)
{
    long pairs = 1100000, cpu_pairs = 20000;
    int runs = 7, configs = 0, cpu = 1;
    unsigned long long seed = 1;
    const char *input = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pairs") && i + 1 < argc) pairs = atol(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--cpu-pairs") && i + 1 < argc) cpu_pairs = atol(argv[++i]);
        else if (!strcmp(argv[i], "--configs")) configs = 1;
        else if (!strcmp(argv[i], "--no-cpu")) cpu = 0;
        else if (!strcmp(argv[i], "--input") && i + 1 < argc) input = argv[++i];
        else {
            fprintf(stderr, "usage: bench_pdhmm [--pairs N] [--runs N] [--seed S] [--cpu-pairs N] [--configs] [--no-cpu] "
                    "[--input FILE]\n");
            return 2;
        }
    }
    if (pairs < 1 || runs < 1 || cpu_pairs < 1) { fprintf(stderr, "bench_pdhmm: bad value\n"); return 2; }
    rs = 0x9e3779b97f4a7c15ull ^ (seed * 0xbf58476d1ce4e5b9ull);
#ifndef HAVE_CUDA
    (void)input, (void)cpu, (void)configs;
    fprintf(stderr, "bench_pdhmm: built without CUDA\n");
    return 77;
#else
    char err[512];
    hk_cuda_device_t info;
    hk_cuda_t *cu;
    int dev = 0;
    hk_options_t opt;   /* the HK_* knobs of the command line */
    hk_options_read(&opt);
    if (hk_cuda_device_info(0, &info, err, sizeof err) || hk_cuda_open(&dev, 1, &opt.cuda, &cu, err, sizeof err)) {
        fprintf(stderr, "bench_pdhmm: %s\n", err);
        return 3;
    }
    printf("# bench_pdhmm on %s (%d SMs, cc %d.%d), seed %llu, median of %d runs, constant-gap form %s\n",
           info.name, info.sm_count, info.cc_major, info.cc_minor, seed, runs,
           opt.cuda.pd_cg ? "on" : "off (HK_PD_CG=0)");
    printf("%-14s %-7s %9s %10s %10s %8s\n", "workload", "config", "pairs", "cells", "ms", "TCUPS");
    hk_batch_t b;
    hk_batch_init(&b);
    hk_batch_set_no_text(&b, 1);
    if (input ? read_dump(input, &b, SIZE_MAX) : make_na12878(&b, pairs)) {
        fprintf(stderr, "bench_pdhmm: %s\n", input ? "cannot read the input" : "out of memory");
        return 3;
    }
    uint64_t flagged = 0, snp = 0;
    for (size_t x = 0; x < b.n_hap_pos; x++) {
        snp += b.hap_pd[x] & HK_PD_SNP;
        flagged += (b.hap_pd[x] & (HK_PD_DEL_START | HK_PD_DEL_END)) != 0;
    }
    printf("# %s: %zu regions, %zu reads, %zu haplotypes, %.2f%% SNP positions, %.3f%% span flags\n",
           input ? input : "NA12878-like PD", b.n_regions, b.n_reads, b.n_haps, 100.0 * snp / b.n_hap_pos,
           100.0 * flagged / b.n_hap_pos);
    int rc = kernels(cu, &b, HK_GAPS_VARIED, -1, runs, "na12878-pd", "auto");
    if (rc == 0) {                              /* the whole call, median */
        double t[64];
        const int n = runs < 64 ? runs : 64;
        for (int r = -1; r < n && rc == 0; r++) {
            hk_batch_t *one = &b;
            const double t0 = now();
            rc = hk_cuda_score(cu, &one, 1, HK_PREC_DOUBLE, HK_FLOAT_THRESHOLD, NULL, NULL, err, sizeof err);
            if (r >= 0) t[r] = now() - t0;
        }
        if (rc) fprintf(stderr, "bench_pdhmm: hk_cuda_score: %s\n", err);
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { const double x = t[j]; t[j] = t[j - 1]; t[j - 1] = x; }
        if (rc == 0) line("na12878-pd", "auto", &b, t[n / 2], "hk_cuda_score, whole call (median)");
    }
    hk_batch_free(&b);
    for (int form = 0; rc == 0 && configs && form < 2; form++) {   /* per row, then constant gaps ("cg") */
        int P[64], K[64];
        const int nc = form ? hk_cuda_pdhmm_cg_configs(P, K, 64) : hk_cuda_pdhmm_configs(P, K, 64);
        for (int c = 0; c < nc && rc == 0; c++) {
            char name[32], cfg[16];
            const int rows = P[c] * K[c];
            snprintf(name, sizeof name, "equal-%d-256", rows);
            snprintf(cfg, sizeof cfg, "%s%dx%d", form ? "cg" : "", P[c], K[c]);
            hk_batch_init(&b);
            hk_batch_set_no_text(&b, 1);
            rc = make_equal(&b, rows, 256, (long)(4e9 / (rows * 256.0)));
            if (rc == 0) rc = kernels(cu, &b, form ? HK_GAPS_CONSTANT : HK_GAPS_VARIED, c, runs, name, cfg);
            hk_batch_free(&b);
        }
    }
    if (rc == 0 && cpu) {                       /* the CPU reference, one thread */
        hk_batch_init(&b);
        hk_batch_set_no_text(&b, 1);
        rs = 0x9e3779b97f4a7c15ull ^ (seed * 0xbf58476d1ce4e5b9ull);
        rc = input ? read_dump(input, &b, (size_t)cpu_pairs) : make_na12878(&b, cpu_pairs);
        double *gpu = rc ? NULL : malloc(b.n_pairs * sizeof *gpu + 1);
        hk_batch_t *one = &b;
        if (gpu && hk_cuda_score(cu, &one, 1, HK_PREC_DOUBLE, HK_FLOAT_THRESHOLD, NULL, NULL, err, sizeof err) == 0) {
            memcpy(gpu, b.lk, b.n_pairs * sizeof *gpu);
            const double t0 = now();
            rc = hk_pdhmm_score_batch(&b, 1);
            const double s = now() - t0;
            double maxd = 0;
            size_t ninf = 0;
            for (size_t i = 0; i < b.n_pairs; i++) {
                if (!isfinite(gpu[i])) { ninf++; continue; }
                const double d = fabs(gpu[i] - b.lk[i]);
                if (!(d <= maxd)) maxd = d;
            }
            printf("%-14s %-7s %9zu %10.3e %10.3f %8.3f  CPU hk_pdhmm_score_batch, 1 thread: %.3f GCUPS per core "
                   "(GPU vs CPU max|diff| %.3g, %zu non-finite on the GPU)\n",
                   "na12878-pd", "cpu", b.n_pairs, (double)b.cells, s * 1e3, b.cells / s / 1e12,
                   b.cells / s / 1e9, maxd, ninf);
        } else {
            fprintf(stderr, "bench_pdhmm: CPU comparison: %s\n", gpu ? err : "out of memory");
            rc = -1;
        }
        free(gpu);
        hk_batch_free(&b);
    }
    hk_cuda_close(cu);
    return rc ? 3 : 0;
#endif
}
