/* hk_engine.c - see hk_engine.h. */
#include "hk_engine.h"
#include "hk_gpu_claim.h"
#include "hk_log.h"
#include "hk_model.h"
#include "hk_pdhmm.h"
#include "config.h"
#include "hk_cuda_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The default batch, for either backend. A GPU batch must fill the device
 * (2^18 NA12878-like pairs are ~6e9 cells) yet be small against the input,
 * so that parsing the next batch and writing the last overlap with it. Many
 * CPU threads lost to smaller batches: each batch's fork-join waited for its
 * last worker while reading and writing held cores (docs/PERFORMANCE.md,
 * CPU path). */
#define BATCH_PAIRS (1u << 18)

struct hk_engine {
    const hk_config_t *c;
    int         cuda;              /* 1: CUDA backend */
    int         threads;
    hk_cuda_t  *cu;
    int         lock_fd;           /* held GPU lock, -1 if none */
    int         locked;            /* the ordinal it locks */
    int         n_ordinals;
    int         ordinals[HK_MAX_DEVICES];      /* the GPUs as the host numbers them (the table's) */
    int         cuda_ordinals[HK_MAX_DEVICES]; /* and as CUDA does in this process */
    int         n_names;
    char       *names[HK_MAX_DEVICES];
    uint64_t    rescued;           /* GPU pairs rescued on the CPU (beyond GATK's range) */
    int         pin_traced;        /* the staging memory's pinning time is printed once */
    int         shares_contexts;   /* another engine uses the CUDA contexts too: release leaves them */
    int         missing;           /* a GPU of the user's list is not there (a usage error) */
};

/* A GPU the user listed (engine.devices) is not there: why names it and
 * those there are (n of them, numbered as `as` says), or says there is none,
 * with cause. HK_E_NODEV, e->missing set: hk_engine_start refuses the run. */
static hk_status_t gpu_missing(hk_engine_t *e, int gpu, int n, const char *as, const char *cause,
                               char *why, size_t whylen)
{
    char was[400];   /* cause may be why itself */
    snprintf(was, sizeof was, "%s", cause ? cause : "");
    e->missing = 1;
    if (n > 1) snprintf(why, whylen, "GPU %d is not there: %s GPUs 0-%d", gpu, as, n - 1);
    else if (n == 1) snprintf(why, whylen, "GPU %d is not there: %s GPU 0 alone", gpu, as);
    else snprintf(why, whylen, "GPU %d is not there: there is no GPU%s%s%s", gpu, *was ? " (" : "", was,
                  *was ? ")" : "");
    return HK_E_NODEV;
}

static char *cpu_model_name(void)
{
    char line[256], *name = NULL;
    FILE *fp = fopen("/proc/cpuinfo", "r");
    while (fp && fgets(line, sizeof line, fp)) {
        if (!strncmp(line, "model name", 10)) {
            char *v = strchr(line, ':');
            if (v) {
                v += 1 + (v[1] == ' ');
                v[strcspn(v, "\n")] = '\0';
                name = strdup(v);
            }
            break;
        }
    }
    if (fp) fclose(fp);
    return name ? name : strdup("CPU");
}

#ifdef HAVE_CUDA
/* HK_TRACE=1 (for performance work) also prints the engine's own timeline:
 * CUDA start-up, each scoring call's first chunks, the release. */

/* The candidates of a process that did not narrow CUDA's view: the ordinals
 * of --devices among the count CUDA found, or all; claimed by lock. HK_OK,
 * or a failure as open_cuda's. */
HK_RESULT_USED static hk_status_t choose_seen(hk_engine_t *e, int count, int *cand, int *n_cand, char *why, size_t whylen)
{
    const hk_config_t *c = e->c;
    int n = 0;
    if (c->n_devices < 0) {
        for (int d = 0; d < count && n < HK_MAX_DEVICES; d++) cand[n++] = d;
    } else {
        for (int i = 0; i < c->n_devices; i++) {
            if (c->devices[i] >= count)
                return gpu_missing(e, c->devices[i], count, "CUDA sees", NULL, why, whylen);
            cand[n++] = c->devices[i];
        }
    }
    if (c->gpu_lock_dir) {
        int d = hk_gpu_claim_lock(c->gpu_lock_dir, cand, n, &e->lock_fd);
        if (d < 0) return HK_E_INPUT;
        char when[64];
        hk_log_notice("claimed GPU %d (%s/gpu%d.lock) at %s", d, c->gpu_lock_dir, d,
                      hk_gpu_claim_timestamp(when, sizeof when));
        e->locked = d;
        cand[0] = d;
        n = 1;
    }
    *n_cand = n;
    return HK_OK;
}

/* Open CUDA per the config. HK_OK; HK_E_NODEV when no GPU is usable, with
 * the reason in why; another failure (logged) stops the run. A device that
 * cannot run this build's kernels (hk_cuda_device_fits) is not usable. */
HK_RESULT_USED static hk_status_t open_cuda(hk_engine_t *e, char *why, size_t whylen)
{
    int count = 0;
    const hk_gpu_chosen_t *chosen = hk_gpu_claim_chosen();
    if (chosen->failed) return HK_E_INPUT;
    hk_gpu_claim_take_lock(&e->lock_fd, &e->locked);   /* the engine releases it, whatever happens next */
    const double t0 = hk_log_now();
    if (hk_cuda_device_count(&count, why, whylen) != HK_OK || count == 0) {
        if (count == 0 && !*why) snprintf(why, whylen, "no CUDA device found");
        if (e->c->n_devices < 0) return HK_E_NODEV;
        /* a list: past the GPUs the host has (counted by their device
         * nodes where CUDA sees only those listed), or none at all */
        const int host = chosen->narrowed ? hk_gpu_claim_count_nodes() : 0;
        for (int i = 0; i < e->c->n_devices; i++)
            if (e->c->devices[i] >= host)
                return gpu_missing(e, e->c->devices[i], host, "this host has", why, why, whylen);
        return HK_E_NODEV;   /* they are there, and CUDA does not start: not usable */
    }
    int cand[HK_MAX_DEVICES], cuda[HK_MAX_DEVICES], n = 0;
    if (chosen->narrowed) {   /* CUDA sees the chosen ones only, as 0, 1, ... */
        if (count < chosen->n) {   /* CUDA stops at the first that is not there */
            const int host = hk_gpu_claim_count_nodes();
            return gpu_missing(e, chosen->phys[count], host > count ? host : count, "this host has", NULL,
                               why, whylen);
        }
        n = chosen->n;
        for (int i = 0; i < n; i++) { cand[i] = chosen->phys[i]; cuda[i] = i; }
    } else {
        const hk_status_t rc = choose_seen(e, count, cand, &n, why, whylen);
        if (rc) return rc;
        memcpy(cuda, cand, (size_t)n * sizeof *cand);
    }
    const double t_init = hk_log_now() - t0;
    char err[512] = "";
    if (hk_cuda_open(cuda, n, &e->c->opt.cuda, &e->cu, err, sizeof err) != HK_OK) {
        snprintf(why, whylen, "%s", err);
        return HK_E_NODEV;
    }
    for (int i = 0; i < n; i++)   /* asked once the contexts exist: they are made side by side */
        if (hk_cuda_device_fits(cuda[i], err, sizeof err) != HK_OK) {
            snprintf(why, whylen, "%s", err);
            hk_cuda_close(e->cu);
            e->cu = NULL;
            return HK_E_NODEV;
        }
    if (hk_log_tracing()) {
        hk_cuda_open_stats_t os;
        hk_cuda_open_stats(e->cu, &os);
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt);
        fprintf(stderr, "haplik: trace engine: driver initialised in %.1f ms, contexts created in %.1f ms "
                "(cudaSetDevice %.1f, properties %.2f, streams and events %.2f ms; staging memory faulted "
                "in beside in %.1f ms); open began at %.4f s of the epoch\n", t_init * 1e3,
                (hk_log_now() - t0 - t_init) * 1e3, os.context, os.props, os.streams, os.fill,
                (double)rt.tv_sec + 1e-9 * (double)rt.tv_nsec - (hk_log_now() - t0));
    }
    for (int i = 0; i < n; i++) {
        hk_cuda_device_t info;
        if (hk_cuda_device_info(cuda[i], &info, err, sizeof err) != HK_OK)
            snprintf(info.name, sizeof info.name, "GPU %d", cand[i]);
        e->names[e->n_names++] = strdup(info.name);
        e->cuda_ordinals[e->n_ordinals] = cuda[i];
        e->ordinals[e->n_ordinals++] = cand[i];
    }
    e->cuda = 1;
    return HK_OK;
}
#endif

hk_status_t hk_engine_start(const hk_config_t *c, hk_engine_t **out)
{
    *out = NULL;
    const long delay_ms = c->opt.open_delay_ms;   /* tests: a start-up as slow as many GPUs' */
    if (delay_ms > 0) nanosleep(&(struct timespec){ delay_ms / 1000, delay_ms % 1000 * 1000000L }, NULL);
    hk_engine_t *e = calloc(1, sizeof *e);
    if (!e) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    e->c = c;
    e->lock_fd = -1;
    e->threads = c->threads > 0 ? c->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (e->threads < 1) e->threads = 1;
    if (c->backend != HK_BACKEND_CPU) {
        char why[512] = "";
#ifdef HAVE_CUDA
        const hk_status_t rc = open_cuda(e, why, sizeof why);
        if (rc != HK_OK && rc != HK_E_NODEV) { hk_engine_close(e); return rc; }
#else
        snprintf(why, sizeof why, "haplik was built without CUDA (configure found no CUDA "
                 "toolkit, or --disable-cuda was given)");
        if (c->n_devices > 0)
            (void)gpu_missing(e, c->devices[0], 0, "", "this haplik was built without CUDA", why, sizeof why);
#endif
        if (e->missing) {   /* a GPU the user listed: a usage error, whatever the backend */
            hk_log_error("engine.devices: %s", why);
            hk_engine_close(e);
            return HK_E_INPUT;
        }
        if (!e->cuda) {
            if (c->backend == HK_BACKEND_CUDA) {
                hk_log_error("--backend cuda: no usable GPU: %s", why);
                hk_engine_close(e);
                return HK_E_NODEV;
            }
            hk_log_notice("no usable GPU (%s); scoring on the CPU with %d thread%s", why,
                          e->threads, e->threads == 1 ? "" : "s");
        }
    }
    if (!e->cuda) e->names[e->n_names++] = cpu_model_name();
    *out = e;
    return HK_OK;
}

#ifdef HAVE_CUDA
static void trace_chunks(hk_engine_t *e)
{
    const hk_cuda_t *cu = e->cu;
    hk_cuda_stats_t st;
    hk_cuda_last_stats(cu, &st);
    hk_cuda_open_stats_t os;
    hk_cuda_open_stats(cu, &os);
    if (os.pin >= 0 && !e->pin_traced) {
        fprintf(stderr, "haplik: trace engine: staging memory pinned in %.1f ms after open\n", os.pin);
        e->pin_traced = 1;
    }
    fprintf(stderr, "haplik: trace engine: call of %.1f ms (arrays pinned in %.1f, GPU span %.1f), %u chunks; "
            "the first device's first chunks, ms (host from the call's start, GPU from the first copy in):\n",
            st.total_s * 1e3, st.pin_s * 1e3, st.gpu_span_s * 1e3, st.chunks);
    for (unsigned i = 0; i < st.n_trace; i++) {
        const hk_cuda_chunk_trace_t *c = &st.trace[i];
        fprintf(stderr, "haplik: trace engine:   chunk %2u: host reserve %6.2f pack %5.2f enqueue %5.2f "
                "handed %7.2f | GPU copy in %7.2f kernels %7.2f .. %7.2f\n", i, c->reserve, c->pack,
                c->enqueue, c->handed, c->gpu_copy_in, c->gpu_kernels, c->gpu_done);
    }
}
#endif

#ifdef HAVE_CUDA
/* The GPU's double kernels give -inf where GATK's double underflows (SPEC 1,
 * beyond GATK's range, below about log10 -631), and inf or NaN where its
 * cells overflow (low gap-continuation qualities). Such pairs are rare, so they
 * are rescued here on the CPU before their batch is reported, rather than in
 * the kernels. Float mode is for measuring: it keeps what the GPU gave. */
typedef struct {
    hk_engine_t      *e;
    hk_engine_done_fn done;
    void             *arg;
    int               failed;   /* out of memory: batches from there on are not reported */
} rescue_ctx_t;

/* Rescue batch b's non-finite pairs, adding how many to *n: HK_OK, or
 * HK_E_NOMEM (logged). */
HK_RESULT_USED static hk_status_t rescue_batch(hk_batch_t *b, uint64_t *n_rescued)
{
    const size_t ws_size = b->pdhmm ? hk_pdhmm_ws_size(b->max_hap_len) : hk_model_ws_size(b->max_hap_len);
    void *ws = NULL;
    uint8_t *gap_rows = NULL;   /* a read's gap rows where the batch has only their summary */
    uint64_t n = 0;
    for (size_t g = 0; g < b->n_regions; g++) {
        const hk_region_t *rg = &b->regions[g];
        for (uint32_t r = 0; r < rg->n_reads; r++) {
            double *lk = b->lk + rg->pair0 + (uint64_t)r * rg->n_haps;
            const size_t rk = rg->read0 + r;
            const uint64_t o = b->read_off[rk];
            const uint32_t rlen = hk_batch_read_len(b, rk);
            for (uint32_t h = 0; h < rg->n_haps; h++) {
                const size_t hk = rg->hap0 + h;
                const uint32_t hlen = hk_batch_hap_len(b, hk);
                if (isfinite(lk[h]) || rlen == 0 || hlen == 0) continue;   /* empty: truly -inf */
                if (!ws && (!(ws = malloc(ws_size)) || !(gap_rows = malloc(3 * (size_t)b->max_read_len)))) {
                    hk_log_error("out of memory rescuing a pair beyond GATK's double range");
                    free(ws);
                    *n_rescued += n;
                    return HK_E_NOMEM;
                }
                const uint64_t ho = b->hap_off[hk];
                const uint8_t *gap[3];
                hk_batch_gap_rows(b, rk, gap_rows, gap);
                /* PDHMM: the CPU's own value (GATK's double where it is not 0, so
                 * also where the GPU's constant-gap form, scaled lower, gave up) */
                lk[h] = b->pdhmm
                    ? hk_pdhmm_score_pair(b->read_base + o, b->read_q + o, gap[0], gap[1], gap[2], rlen,
                                          b->hap_base + ho, b->hap_pd + ho, hlen, ws)
                    : hk_model_rescue_pair(b->read_base + o, b->read_q + o, gap[0], gap[1], gap[2], rlen,
                                           b->hap_base + ho, hlen, ws);
                n++;
            }
        }
    }
    free(ws);
    free(gap_rows);
    *n_rescued += n;
    return HK_OK;
}

static void rescue_then_done(hk_batch_t *b, void *arg)
{
    rescue_ctx_t *x = arg;
    if (x->failed) return;
    if (rescue_batch(b, &x->e->rescued)) { x->failed = 1; return; }
    if (x->done) x->done(b, x->arg);
}
#endif

hk_status_t hk_engine_score(hk_engine_t *e, hk_batch_t *const *b, size_t n, hk_engine_done_fn done, void *arg)
{
#ifdef HAVE_CUDA
    if (e->cuda) {
        char err[512] = "";
        /* a run scores one model (the reader sees to it): PDHMM is always double */
        const int rescue = e->c->model.precision != HK_PREC_FLOAT || (n && b[0]->pdhmm);
        rescue_ctx_t x = { .e = e, .done = done, .arg = arg };
        const uint64_t rescued0 = e->rescued;
        hk_status_t rc = HK_E_INVAL;
        if (!e->cu) snprintf(err, sizeof err, "hk_engine_score: the GPUs were already released");
        else if ((rc = hk_cuda_score(e->cu, b, n, e->c->model.precision, e->c->model.float_threshold,
                                     rescue ? rescue_then_done : done, rescue ? (void *)&x : arg,
                                     err, sizeof err)) == HK_OK) {
            if (x.failed) return HK_E_NOMEM;
            if (hk_log_tracing()) {
                trace_chunks(e);
                fprintf(stderr, "haplik: trace engine: %llu pairs beyond GATK's double range rescued on the CPU\n",
                        (unsigned long long)(e->rescued - rescued0));
            }
            return HK_OK;
        }
        hk_log_error("%s", err);
        return rc;
    }
#endif
    for (size_t i = 0; i < n; i++) {
        const hk_status_t rc = b[i]->pdhmm ? hk_pdhmm_score_batch(b[i], e->threads)
                                           : hk_model_score_batch(&e->c->model, b[i], e->threads);
        if (rc) return rc;
        if (done) done(b[i], arg);
    }
    return HK_OK;
}

void hk_engine_release(hk_engine_t *e)
{
    if (!e) return;
#ifdef HAVE_CUDA
    if (e->cu) {
        const double t0 = hk_log_now();
        hk_cuda_close(e->cu);
        e->cu = NULL;
        const double t_close = hk_log_now() - t0;
        if (!e->shares_contexts) hk_cuda_reset(e->cuda_ordinals, e->n_ordinals);
        if (hk_log_tracing())
            fprintf(stderr, "haplik: trace engine: buffers freed in %.1f ms, contexts destroyed in %.1f ms\n",
                    t_close * 1e3, (hk_log_now() - t0 - t_close) * 1e3);
    }
#endif
    if (e->lock_fd >= 0) {
        char when[64];
        hk_log_notice("releasing GPU %d at %s", e->locked, hk_gpu_claim_timestamp(when, sizeof when));
        close(e->lock_fd);
        e->lock_fd = -1;
    }
}

const char *hk_engine_backend(const hk_engine_t *e) { return e->cuda ? "cuda" : "cpu"; }

int hk_engine_devices(const hk_engine_t *e, const char *const **names)
{
    *names = (const char *const *)e->names;
    return e->n_names;
}

int hk_engine_ordinals(const hk_engine_t *e, const int **ordinals)
{
    *ordinals = e->ordinals;
    return e->n_ordinals;
}

size_t hk_engine_batch_pairs(const hk_config_t *c)
{
    return c->max_batch_pairs > 0 ? (size_t)c->max_batch_pairs : BATCH_PAIRS;
}

void hk_engine_share_contexts(hk_engine_t *e)
{
    e->shares_contexts = 1;
}

void hk_engine_close(hk_engine_t *e)
{
    if (!e) return;
    hk_engine_release(e);
    for (int i = 0; i < e->n_names; i++) free(e->names[i]);
    free(e);
}

int hk_engine_list_devices(FILE *fp)
{
#ifdef HAVE_CUDA
    char err[512] = "";
    int count = 0;
    if (hk_cuda_device_count(&count, err, sizeof err) != HK_OK || count == 0) {
        fprintf(fp, "no usable GPU: %s\n", *err ? err : "no CUDA device found");
        return 0;
    }
    fprintf(fp, "ordinal\tname\tmemory_GiB\tcompute_capability\tmultiprocessors\n");
    for (int d = 0; d < count; d++) {
        hk_cuda_device_t info;
        if (hk_cuda_device_info(d, &info, err, sizeof err) != HK_OK) {
            fprintf(fp, "%d\t(unreadable: %s)\n", d, err);
            continue;
        }
        fprintf(fp, "%d\t%s\t%.1f\t%d.%d\t%d\n", d, info.name, info.total_mem / 1073741824.0,
                info.cc_major, info.cc_minor, info.sm_count);
    }
    return count;
#else
    fprintf(fp, "no usable GPU: haplik was built without CUDA (configure found no CUDA toolkit, "
            "or --disable-cuda was given)\n");
    return 0;
#endif
}
