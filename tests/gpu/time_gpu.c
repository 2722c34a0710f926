/* time_gpu.c - time the GPU phase of scoring whole inputs.
 *
 *   time_gpu [-r RUNS] [-p mixed|float|double] [-d DEV[,DEV...]] FILE...
 *
 * Reads every FILE with the project's reader into one batch (parsing is not
 * timed), then times hk_cuda_score on it: packing, copies in, kernels,
 * recomputes, copies out, results in place. One warm-up call, then RUNS
 * calls (default 5); prints each, the median, and TCUPS = cells / median.
 * Exit 77 without a usable GPU.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hk_batch.h"
#include "hk_cuda_bench.h"
#include "hk_model.h"
#include "hk_reader.h"

#ifdef HAVE_CUDA
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
#endif

int main(int argc, char **argv)
{
    int runs = 5, prec = HK_PREC_MIXED, a = 1, devs[64], nd = 0;
    for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
        if (!strcmp(argv[a], "-r") && a + 1 < argc) runs = atoi(argv[++a]);
        else if (!strcmp(argv[a], "-p") && a + 1 < argc) {
            const char *p = argv[++a];
            prec = !strcmp(p, "float") ? HK_PREC_FLOAT : !strcmp(p, "double") ? HK_PREC_DOUBLE : HK_PREC_MIXED;
        } else if (!strcmp(argv[a], "-d") && a + 1 < argc) {
            for (char *s = argv[++a]; *s && nd < 64;) {
                devs[nd++] = (int)strtol(s, &s, 10);
                if (*s == ',') s++;
            }
        } else {
            fprintf(stderr, "usage: time_gpu [-r RUNS] [-p mixed|float|double] [-d DEVS] FILE...\n");
            return 2;
        }
    }
    if (a >= argc || runs < 1) {
        fprintf(stderr, "usage: time_gpu [-r RUNS] [-p mixed|float|double] [-d DEVS] FILE...\n");
        return 2;
    }
#ifndef HAVE_CUDA
    (void)prec; (void)devs;
    printf("SKIP: time_gpu: built without CUDA\n");
    return 77;
#else
    char err[512];
    int n;
    if (hk_cuda_device_count(&n, err, sizeof err) != HK_OK) {
        printf("SKIP: time_gpu: %s\n", err);
        return 77;
    }
    if (nd == 0) devs[nd++] = 0;
    hk_model_t m = { prec, HK_FLOAT_THRESHOLD, 6, -1, 0 };
    hk_batch_t b;
    hk_batch_init(&b);
    double t0 = now();
    for (int f = a; f < argc; f++) {
        hk_reader_t *r;
        if (hk_reader_open(argv[f], HK_FMT_AUTO, hk_model_seq_rules(&m), NULL, &r)) return 2;
        size_t got;
        hk_status_t rc;
        while (!(rc = hk_reader_next(r, &b, (size_t)1 << 30, &got)) && got > 0) {}
        hk_reader_close(r);
        if (rc) return 2;
    }
    double t_read = now() - t0;
    hk_cuda_t *cu;
    hk_options_t opt;   /* the HK_* knobs of the command line */
    hk_options_read(&opt);
    hk_options_apply(&opt);
    if (hk_cuda_open(devs, nd, &opt.cuda, &cu, err, sizeof err) != HK_OK) {
        fprintf(stderr, "hk_cuda_open: %s\n", err);
        return 3;
    }
    hk_cuda_device_t info;
    if (hk_cuda_device_info(devs[0], &info, err, sizeof err) != HK_OK) return 3;
    printf("# %s x%d; %zu regions, %zu reads, %zu haps, %zu pairs, %.4g cells; parsing %.3f s\n",
           info.name, nd, b.n_regions, b.n_reads, b.n_haps, b.n_pairs, (double)b.cells, t_read);
    double *t = malloc(sizeof *t * (size_t)runs);
    hk_batch_t *one = &b;
    for (int r = -1; r < runs; r++) {
        b.n_recomputed = 0;
        double s = now();
        if (hk_cuda_score(cu, &one, 1, prec, HK_FLOAT_THRESHOLD, NULL, NULL, err, sizeof err) != HK_OK) {
            fprintf(stderr, "hk_cuda_score: %s\n", err);
            return 3;
        }
        double e = now() - s;
        if (r >= 0) t[r] = e;
        printf("  run %2d: %.4f s  %.3f TCUPS  recomputed %llu\n", r, e, b.cells / e / 1e12,
               (unsigned long long)b.n_recomputed);
    }
    hk_cuda_stats_t st;
    hk_cuda_last_stats(cu, &st);
    printf("  last run: total %.4f s = pack %.4f + wait %.4f + unpack %.4f + rest; %u chunks;"
           " GPU: copies in %.4f s, kernels %.4f s, span %.4f s\n",
           st.total_s, st.pack_s, st.wait_s, st.unpack_s, st.chunks, st.h2d_s, st.kernel_s, st.gpu_span_s);
    for (unsigned i = 0; i < st.n_trace; i++) {
        const hk_cuda_chunk_trace_t *c = &st.trace[i];
        printf("    chunk %2u: host reserve %.3f, pack %.3f, enqueue %.3f; issued %7.3f, handed %7.3f, collected"
               " %7.3f ms; GPU copy in %7.3f, kernels %7.3f .. %7.3f ms\n", i, c->reserve, c->pack, c->enqueue,
               c->issued, c->handed, c->collected, c->gpu_copy_in, c->gpu_kernels, c->gpu_done);
    }
    for (unsigned i = 0; i < st.n_dev_trace; i++)
        printf("    device %u: first chunk handed %.3f ms, share done %.3f ms, GPU span %.3f ms\n", i,
               st.dev_first[i], st.dev_done[i], st.dev_span[i]);
    qsort(t, (size_t)runs, sizeof *t, cmp);
    printf("median %.4f s  %.3f TCUPS (%s, GPU phase: packing, transfers, kernels, results)\n",
           t[runs / 2], b.cells / t[runs / 2] / 1e12,
           prec == HK_PREC_MIXED ? "mixed" : prec == HK_PREC_FLOAT ? "float" : "double");
    double ks;
    if (prec != HK_PREC_DOUBLE && hk_cuda_bench(cu, &b, HK_GAPS_CONSTANT, -1, prec, runs, &ks, err, sizeof err) == HK_OK)
        printf("kernels alone: median %.4f s  %.3f TCUPS\n", ks, b.cells / ks / 1e12);
    else if (prec != HK_PREC_DOUBLE)
        printf("kernels alone: %s\n", err);
    free(t);
    hk_cuda_close(cu);
    hk_batch_free(&b);
    return 0;
#endif
}
