/* cmd_bench.c - `haplik bench`: synthetic benchmark of the CUDA kernels.
 *
 * For each kernel configuration, an equal-length workload whose reads fill
 * the configuration's tile; then equal lengths 128, 256 and 512 (the
 * literature's yardsticks), an NA12878-like mix (the statistics of
 * gen_batches.py's default profile) and long reads (768 and 1024 bases: the
 * multi-tile kernels; in mixed mode reads over HK_MIXED_FLOAT_MAX_READ go to
 * double). --precision double runs the double kernels' configurations. Each workload is timed twice, as the
 * median of --runs runs after a warm-up: the kernels alone (CUDA events, data
 * already on the GPU) and the whole hk_cuda_score call (packing, transfers,
 * kernels, results back; host clock). TCUPS = cells / seconds / 1e12.
 */
#include "config.h"
#include "hk_cli.h"
#include "hk_batch.h"
#include "hk_cuda_bench.h"
#include "hk_log.h"
#include "hk_model.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int    device;
    int    runs;
    double cells;        /* target cells per workload */
    long   max_pairs;
    hk_config_t cfg;     /* the config's defaults; --precision sets model.precision as the
                          * config does; opt: the HK_* knobs (hk_cuda_open's) */
    int    only;         /* -1 all workloads, else configuration index */
    const char *workload; /* NULL all workloads, else only those of this name */
    int    gaps;         /* HK_GAPS_*: which float kernel family the reads use */
    int    calls;        /* --calls: the fixed cost of a call instead of the workloads */
    int    trace;        /* --trace: each workload's chunks (its last call) */
} bench_opts_t;

static void bench_defaults(bench_opts_t *o)
{
    o->device = 0;
    o->runs = 7;
    o->cells = 2e10;
    o->max_pairs = 4000000;
    hk_config_init(&o->cfg);   /* owns nothing: no key bench sets allocates */
    o->only = -1;
    o->workload = NULL;
    o->gaps = HK_GAPS_CONSTANT;
    o->calls = 0;
    o->trace = 0;
}

static void usage(FILE *fp)
{
    bench_opts_t d;
    bench_defaults(&d);
    fprintf(fp,
            "Usage: haplik bench [options]\n\n"
            "Synthetic benchmark of the CUDA kernels: one equal-length workload per kernel\n"
            "configuration (reads as long as its tile, haplotypes of 256 bases), equal lengths\n"
            "128, 256 and 512, an NA12878-like mix, and long reads (768 and 1024 bases, the\n"
            "multi-tile kernels; in mixed mode reads over 800 bases are scored in double).\n"
            "Prints read length, haplotype length, configuration (lanes x rows per lane),\n"
            "pairs and TCUPS (1e12 cell updates per second) of the kernels alone and of the\n"
            "whole GPU phase (packing, transfers, kernels, results back), each the median of\n"
            "--runs runs after a warm-up.\n\n"
            "Options:\n"
            "  -d, --device N      GPU ordinal [%d]\n"
            "  -r, --runs N        timed runs per workload, at least 5 [%d]\n"
            "  -n, --cells N       cell updates per workload [%.0e]\n"
            "  -p, --max-pairs N   most pairs per workload [%ld]\n"
            "      --precision P   mixed, float or double (the double kernels' configurations)\n"
            "                      [%s]\n"
            "      --gaps G        the reads' gap qualities: constant (HaplotypeCaller's\n"
            "                      usual IIII...IN) or varied (per base, as after indel\n"
            "                      recalibration); each has its own kernels [constant]\n"
            "      --config I      only the workload of configuration I (0-based)\n"
            "      --workload W    only the workloads named W (config, equal, na12878, long)\n"
            "      --quick         a short run: --cells 1e9 --runs 5\n"
            "      --calls         instead: the fixed cost of a scoring call, on batches of\n"
            "                      1 to 2097152 NA12878-like pairs (the first call of each\n"
            "                      batch, then the median of 3 x --runs calls), and the\n"
            "                      runtime calls a scoring call makes, each timed alone\n"
            "      --trace         after each workload, the chunks of its last call\n"
            "  -h, --help          this help\n\n"
            "Exit status: 0 success, 2 usage error, 3 no usable GPU or a device failure.\n",
            d.device, d.runs, d.cells, d.max_pairs,
            hk_config_choice_name(HK_KEY_MODEL_PRECISION, d.cfg.model.precision));
}

#ifdef HAVE_CUDA

/* ---- a small seeded generator (xorshift64*, gamma/beta by Marsaglia-Tsang) ---- */
static unsigned long long rs = 0x9e3779b97f4a7c15ull;
static double urand(void)
{
    rs ^= rs >> 12; rs ^= rs << 25; rs ^= rs >> 27;
    return ((rs * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}
static double nrand(void)
{
    double u = urand(), v = urand();
    return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}
static double grand(double a)
{
    if (a < 1.0) return grand(a + 1.0) * pow(urand() + 1e-300, 1.0 / a);
    double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = nrand(), v = 1.0 + c * x;
        if (v <= 0) continue;
        v = v * v * v;
        double u = urand();
        if (log(u + 1e-300) < 0.5 * x * x + d - d * v + d * log(v)) return d * v;
    }
}
static double brand(double a, double b)
{
    double x = grand(a), y = grand(b);
    return x / (x + y);
}

/* One region (H <= 32 haplotypes and lengths <= 1024): R reads copied from the haplotypes with quality-driven errors. */
HK_RESULT_USED static hk_status_t add_region(hk_batch_t *b, const hk_model_t *m, int R, int H, const int *hl, const int *rl,
                      int gaps)
{
    const hk_seq_rules_t rules = hk_model_seq_rules(m);
    static char hap[32][1024], seq[1024], q[1024], gi[1024], gd[1024], gg[1024];
    hk_batch_error_t bad;
    hk_status_t rc;
    int maxh = 0;
    for (int h = 0; h < H; h++) if (hl[h] > maxh) maxh = hl[h];
    if ((rc = hk_batch_begin_region(b, NULL, 1))) return rc;
    for (int i = 0; i < maxh; i++) hap[0][i] = "ACGT"[(int)(urand() * 4)];
    for (int h = 0; h < H; h++) {
        memcpy(hap[h], hap[0], (size_t)maxh);
        hap[h][(int)(urand() * hl[h])] = "ACGT"[(int)(urand() * 4)];
        if ((rc = hk_batch_add_hap(b, &rules, hap[h], (uint32_t)hl[h], &bad))) return rc;
    }
    for (int r = 0; r < R; r++) {
        int h = (int)(urand() * H), len = rl[r] < hl[h] ? rl[r] : hl[h];
        int off = (int)(urand() * (hl[h] - len + 1));
        for (int i = 0; i < len; i++) {
            int qq = (int)(32 + 6 * nrand());
            qq = qq < 6 ? 6 : qq > 41 ? 41 : qq;
            double u = urand();
            seq[i] = u < pow(10.0, -qq / 10.0) ? "ACGT"[(int)(urand() * 4)] : u > 0.998 ? 'N' : hap[h][off + i];
            q[i] = (char)(33 + qq);
            if (gaps == HK_GAPS_CONSTANT) {
                gi[i] = gd[i] = i == len - 1 ? 'N' : 'I';
            } else {                                  /* Q30..45, as recalibration writes */
                gi[i] = (char)(33 + 30 + (int)(urand() * 16));
                gd[i] = (char)(33 + 30 + (int)(urand() * 16));
            }
            gg[i] = '+';
        }
        if ((rc = hk_batch_add_read(b, &rules, seq, q, gi, gd, gg, (uint32_t)len, &bad))) return rc;
    }
    return hk_batch_end_region(b);
}

HK_RESULT_USED static hk_status_t make_equal(hk_batch_t *b, const hk_model_t *m, int rl, int hlen, long pairs,
                                             int gaps)
{
    hk_status_t rc;
    int hl[32], rls[32];
    for (int i = 0; i < 32; i++) { hl[i] = hlen; rls[i] = rl; }
    for (long done = 0; done < pairs; done += 32 * 32)
        if ((rc = add_region(b, m, 32, 32, hl, rls, gaps))) return rc;
    return HK_OK;
}

HK_RESULT_USED static hk_status_t make_na12878(hk_batch_t *b, const hk_model_t *m, long pairs, int gaps)
{
    hk_status_t rc;
    for (long done = 0; done < pairs;) {
        int H = 1;
        while (H < 16 && urand() < 0.71) H++;
        int R = (int)lround(exp(log(16.0) - 0.18 + 0.6 * nrand()));
        if (R < 1) R = 1;
        if (R > 1000) R = 1000;
        int hl[16], L = (int)(30 + brand(2.5, 0.8) * 491);
        for (int h = 0; h < H; h++) {
            int x = h ? L + (int)(urand() * 17) - 8 : L;
            hl[h] = x < 30 ? 30 : x > 521 ? 521 : x;
        }
        /* reads come in regions of at most 32 so that the static buffers hold them */
        for (int r0 = 0; r0 < R; r0 += 32) {
            int n = R - r0 < 32 ? R - r0 : 32, rl[32];
            for (int r = 0; r < n; r++) rl[r] = (int)(10 + brand(1.2, 2.2) * 141);
            if ((rc = add_region(b, m, n, H, hl, rl, gaps))) return rc;
            done += (long)n * H;
        }
    }
    return HK_OK;
}

/* The chunks of the last call (--trace), as HK_TRACE prints them. */
static void print_trace(const hk_cuda_t *cu)
{
    hk_cuda_stats_t st;
    hk_cuda_last_stats(cu, &st);
    printf("#   call %.3f ms, %u chunks: pack %.3f, wait %.3f, unpack %.3f ms; GPU: copies in %.3f, kernels %.3f,"
           " span %.3f ms; first chunk handed %.3f ms\n", st.total_s * 1e3, st.chunks, st.pack_s * 1e3,
           st.wait_s * 1e3, st.unpack_s * 1e3, st.h2d_s * 1e3, st.kernel_s * 1e3, st.gpu_span_s * 1e3,
           st.dev_first[0]);
    for (unsigned i = 0; i < st.n_trace; i++) {
        const hk_cuda_chunk_trace_t *c = &st.trace[i];
        printf("#   chunk %2u: host reserve %6.3f pack %6.3f enqueue %6.3f handed %7.3f | GPU copy in %7.3f"
               " kernels %7.3f .. %7.3f\n", i, c->reserve, c->pack, c->enqueue, c->handed, c->gpu_copy_in,
               c->gpu_kernels, c->gpu_done);
    }
}

typedef struct {
    const char *name;
    int read_len, hap_len, config;   /* read_len 0: mixed lengths */
} workload_t;

HK_RESULT_USED static hk_status_t run_workload(hk_cuda_t *cu, const bench_opts_t *o, const workload_t *w, const int *P,
                        const int *K)
{
    hk_batch_t b;
    hk_batch_init(&b);
    char err[512];
    hk_status_t rc;
    if (w->read_len) {
        double per = (double)w->read_len * w->hap_len;
        long pairs = (long)(o->cells / per);
        if (pairs > o->max_pairs) pairs = o->max_pairs;
        if (pairs < 1024) pairs = 1024;
        rc = make_equal(&b, &o->cfg.model, w->read_len, w->hap_len, pairs, o->gaps);
    } else {
        long pairs = (long)(o->cells / (58.0 * 390.0));
        if (pairs > o->max_pairs) pairs = o->max_pairs;
        rc = make_na12878(&b, &o->cfg.model, pairs, o->gaps);
    }
    if (rc) {
        fprintf(stderr, "haplik: error: bench: out of memory building a workload\n");
        hk_batch_free(&b);
        return HK_E_RUNTIME;
    }
    double kernel_s = 0;
    const hk_model_t *m = &o->cfg.model;
    rc = hk_cuda_bench(cu, &b, o->gaps, w->config, m->precision, o->runs, &kernel_s, err, sizeof err);
    double *t = malloc(sizeof *t * (size_t)(o->runs + 1));
    for (int r = -1; rc == HK_OK && t && r < o->runs; r++) {
        double t0 = hk_log_now();
        b.n_recomputed = 0;
        hk_batch_t *one = &b;
        rc = hk_cuda_score(cu, &one, 1, m->precision, m->float_threshold, NULL, NULL, err, sizeof err);
        if (r >= 0) t[r] = hk_log_now() - t0;
    }
    if (rc != HK_OK || !t) {
        fprintf(stderr, "haplik: error: bench: %s\n", t ? err : "out of memory");
        free(t);
        hk_batch_free(&b);
        return HK_E_RUNTIME;
    }
    /* median of the whole-call times (insertion sort: runs is small) */
    for (int i = 1; i < o->runs; i++)
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { double x = t[j]; t[j] = t[j - 1]; t[j - 1] = x; }
    const double total_s = t[o->runs / 2];
    free(t);
    char cfg[32], rl[16], hl[16];
    if (w->config >= 0) snprintf(cfg, sizeof cfg, "%dx%d", P[w->config], K[w->config]);
    else snprintf(cfg, sizeof cfg, "auto");
    if (w->read_len) { snprintf(rl, sizeof rl, "%d", w->read_len); snprintf(hl, sizeof hl, "%d", w->hap_len); }
    else { snprintf(rl, sizeof rl, "10-151"); snprintf(hl, sizeof hl, "30-521"); }
    printf("%-10s %7s %7s %7s %9zu %10.3e %9.3f %7.3f %9.3f %7.3f\n", w->name, rl, hl, cfg,
           b.n_pairs, (double)b.cells, kernel_s * 1e3, b.cells / kernel_s / 1e12, total_s * 1e3,
           b.cells / total_s / 1e12);
    if (o->trace) print_trace(cu);
    fflush(stdout);
    hk_batch_free(&b);
    return HK_OK;
}

/* --calls: what one hk_cuda_score call costs beyond its kernels. For
 * batches from one pair up: the first call on the batch (the process's
 * first call pays the kernels' module loading, the slots' allocation and the
 * packing threads' start), the kernels alone (one chunk, CUDA events), the
 * median call, and when the last call handed its first chunk to the GPU and
 * how long the GPU was busy (first copy in to last kernel end). */
HK_RESULT_USED static hk_status_t run_calls(hk_cuda_t *cu, const bench_opts_t *o)
{
    static const long sizes[] = { 1, 64, 1024, 16384, 131072, 524288, 2097152 };
    const int runs = 3 * o->runs;
    const hk_model_t *m = &o->cfg.model;
    double *t = malloc(sizeof *t * (size_t)runs);
    if (!t) return HK_E_RUNTIME;
    printf("%-8s %9s %10s %9s %9s %9s %9s %9s %9s\n", "batch", "pairs", "cells", "first_ms", "kernel_ms",
           "call_ms", "fixed_ms", "handed_ms", "span_ms");
    hk_status_t rc = HK_OK;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes && rc == HK_OK; i++) {
        hk_batch_t b;
        hk_batch_init(&b);
        char err[512] = "";
        hk_status_t brc;
        if (sizes[i] == 1) {                     /* one read of 100 bases, one haplotype of 300 */
            int hl = 300, rl = 100;
            brc = add_region(&b, m, 1, 1, &hl, &rl, o->gaps);
        } else {
            brc = make_na12878(&b, m, sizes[i], o->gaps);
        }
        hk_batch_t *one = &b;
        double first = 0, kernel_s = 0;
        if (!brc) {
            const double t0 = hk_log_now();
            brc = hk_cuda_score(cu, &one, 1, m->precision, m->float_threshold, NULL, NULL, err, sizeof err);
            first = hk_log_now() - t0;
        }
        if (!brc) brc = hk_cuda_bench(cu, &b, o->gaps, -1, m->precision, o->runs, &kernel_s, err, sizeof err);
        for (int r = 0; !brc && r < runs; r++) {
            const double t0 = hk_log_now();
            brc = hk_cuda_score(cu, &one, 1, m->precision, m->float_threshold, NULL, NULL, err, sizeof err);
            t[r] = hk_log_now() - t0;
        }
        if (brc) {
            fprintf(stderr, "haplik: error: bench: %s\n", *err ? err : "out of memory building a batch");
            rc = HK_E_RUNTIME;
        } else {
            for (int a = 1; a < runs; a++)
                for (int j = a; j > 0 && t[j] < t[j - 1]; j--) { double x = t[j]; t[j] = t[j - 1]; t[j - 1] = x; }
            hk_cuda_stats_t st;
            hk_cuda_last_stats(cu, &st);
            const double med = t[runs / 2];
            printf("%-8s %9zu %10.3e %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", i ? "na12878" : "one", b.n_pairs,
                   (double)b.cells, first * 1e3, kernel_s * 1e3, med * 1e3, (med - kernel_s) * 1e3,
                   st.dev_first[0], st.gpu_span_s * 1e3);
            if (o->trace) print_trace(cu);
        }
        fflush(stdout);
        hk_batch_free(&b);
    }
    free(t);
    if (rc == HK_OK) {
        const char *names[32];
        double us[32];
        const int n = hk_cuda_api_costs(cu, names, us, 32);
        printf("# runtime calls, each timed alone (mean us)\n");
        for (int i = 0; i < n; i++) printf("# %10.2f  %s\n", us[i], names[i]);
    }
    return rc;
}
#endif

static hk_status_t bench_main(int argc, char **argv)
{
    bench_opts_t o;
    bench_defaults(&o);
    static const struct option lopts[] = {
        { "device", required_argument, NULL, 'd' }, { "runs", required_argument, NULL, 'r' },
        { "cells", required_argument, NULL, 'n' },  { "max-pairs", required_argument, NULL, 'p' },
        { "precision", required_argument, NULL, 1 }, { "config", required_argument, NULL, 2 },
        { "quick", no_argument, NULL, 3 },           { "gaps", required_argument, NULL, 4 },
        { "calls", no_argument, NULL, 5 },           { "trace", no_argument, NULL, 6 },
        { "workload", required_argument, NULL, 7 },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "d:r:n:p:h", lopts, NULL)) != -1) {
        char *end = NULL;
        errno = 0;
        switch (c) {
        case 'd': o.device = (int)strtol(optarg, &end, 10); if (o.device < 0) end = optarg; break;
        case 'r': o.runs = (int)strtol(optarg, &end, 10); if (o.runs < 5 || o.runs > 1000) end = optarg; break;
        case 'n': o.cells = strtod(optarg, &end); if (!(o.cells >= 1e6 && o.cells <= 1e14)) end = optarg; break;
        case 'p': o.max_pairs = strtol(optarg, &end, 10); if (o.max_pairs < 1024) end = optarg; break;
        case 1:   /* the config's key and its validator and message */
            if (hk_config_set(&o.cfg, HK_KEY_MODEL_PRECISION, "bench: --precision", optarg)) return HK_E_INPUT;
            end = (char *)"";
            break;
        case 2: o.only = (int)strtol(optarg, &end, 10); if (o.only < 0) end = optarg; break;
        case 3: o.cells = 1e9; o.runs = 5; end = (char *)""; break;
        case 4:
            end = optarg + strlen(optarg);
            if (!strcmp(optarg, "constant")) o.gaps = HK_GAPS_CONSTANT;
            else if (!strcmp(optarg, "varied")) o.gaps = HK_GAPS_VARIED;
            else end = optarg;
            break;
        case 5: o.calls = 1; end = (char *)""; break;
        case 6: o.trace = 1; end = (char *)""; break;
        case 7:
            o.workload = optarg;
            end = optarg + strlen(optarg);
            if (strcmp(optarg, "config") && strcmp(optarg, "equal") && strcmp(optarg, "na12878") &&
                strcmp(optarg, "long"))
                end = optarg;
            break;
        case 'h': usage(stdout); return hk_cli_close_stdout() ? HK_E_RUNTIME : HK_OK;
        default: usage(stderr); return HK_E_INPUT;
        }
        if (!end || *end || errno) {
            hk_log_error("bench: bad option value '%s'; see 'haplik bench --help'",
                    optarg);
            return HK_E_INPUT;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "haplik: error: bench takes no operands; see 'haplik bench --help'\n");
        return HK_E_INPUT;
    }
#ifndef HAVE_CUDA
    fprintf(stderr, "haplik: error: bench: this haplik was built without CUDA; nothing to measure\n");
    return HK_E_RUNTIME;
#else
    char err[512];
    int P[64], K[64];
    const int precision = o.cfg.model.precision;
    const int ncfg = precision == HK_PREC_DOUBLE ? hk_cuda_double_configs(P, K, 64) : hk_cuda_configs(o.gaps, P, K, 64);
    if (o.only >= ncfg) {
        fprintf(stderr, "haplik: error: bench: --config %d: there are %d configurations\n", o.only, ncfg);
        return HK_E_INPUT;
    }
    hk_cuda_device_t info;
    if (hk_cuda_device_info(o.device, &info, err, sizeof err) != HK_OK) {
        fprintf(stderr, "haplik: error: bench: %s\n", err);
        return HK_E_RUNTIME;
    }
    hk_cuda_t *cu;
    hk_options_read(&o.cfg.opt);   /* the HK_* knobs, handed to the CUDA engine */
    hk_options_apply(&o.cfg.opt);
    if (hk_cuda_open(&o.device, 1, &o.cfg.opt.cuda, &cu, err, sizeof err) != HK_OK) {
        fprintf(stderr, "haplik: error: bench: %s\n", err);
        return HK_E_RUNTIME;
    }
    printf("# haplik %s bench on GPU %d: %s (%d SMs, cc %d.%d), precision %s, %s gap qualities, "
           "median of %d runs\n", PACKAGE_VERSION, o.device, info.name, info.sm_count, info.cc_major,
           info.cc_minor, hk_config_choice_name(HK_KEY_MODEL_PRECISION, precision),
           o.gaps == HK_GAPS_CONSTANT ? "constant" : "varied", o.runs);
    printf("%-10s %7s %7s %7s %9s %10s %9s %7s %9s %7s\n", "workload", "read", "hap", "config",
           "pairs", "cells", "kernel_ms", "TCUPS", "total_ms", "TCUPS");
    if (o.calls) {
        const hk_status_t crc = run_calls(cu, &o);
        hk_cuda_close(cu);
        if (hk_cli_close_stdout() && crc == HK_OK) return HK_E_RUNTIME;
        return crc;
    }
    workload_t w[64 + 6];
    int nw = 0;
    for (int i = 0; i < ncfg; i++) {
        const int rows = P[i] * K[i];
        w[nw++] = (workload_t){ "config", rows, rows > 256 ? rows : 256, i };
    }
    if (o.only < 0) {
        w[nw++] = (workload_t){ "equal", 128, 128, -1 };
        w[nw++] = (workload_t){ "equal", 256, 256, -1 };
        w[nw++] = (workload_t){ "equal", 512, 512, -1 };
        w[nw++] = (workload_t){ "na12878", 0, 0, -1 };
        w[nw++] = (workload_t){ "long", 768, 768, -1 };
        w[nw++] = (workload_t){ "long", 1024, 1024, -1 };
    }
    hk_status_t rc = HK_OK;
    for (int i = 0; i < nw && rc == HK_OK; i++) {
        if ((o.only >= 0 && w[i].config != o.only) || (o.workload && strcmp(w[i].name, o.workload))) continue;
        rc = run_workload(cu, &o, &w[i], P, K);
    }
    hk_cuda_close(cu);
    if (hk_cli_close_stdout() && rc == HK_OK) rc = HK_E_RUNTIME;
    return rc;
#endif
}

int hk_cmd_bench(int argc, char **argv)
{
    return hk_status_exit(bench_main(argc, argv));
}
