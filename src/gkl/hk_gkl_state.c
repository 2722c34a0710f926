/* hk_gkl_state.c - see hk_gkl_state.h. */
#include "hk_gkl_state.h"
#include "hk_gkl_combine.h"
#include "hk_engine.h"
#include "hk_log.h"
#include "hk_model.h"
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Everything below is guarded by lock, except the atomics. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long refs;                    /* initNative's references plus calls in progress */
static long inits;                   /* initNative's references alone */
static hk_config_t cfg;              /* valid while refs > 0; the engine points at it */
static hk_engine_t *gpu;             /* NULL: the CPU only */
static hk_gkl_combine_t *combine;
static int gpu_precision;            /* the engine's precision (cfg.model.precision) */
static double cpu_threshold;         /* the config's own float threshold */
static int cpu_precision;            /* the config's own precision (useDouble overrides) */
static atomic_int use_double;        /* GKL's globals: the last initNative's */
static atomic_int max_threads = 1;
static atomic_int gpu_failed;        /* given up after a failure (warned once) */
static int no_gpu_told;              /* the engine's "no usable GPU" notice was printed */
static atomic_int in_flight;         /* hk_gkl_score calls in progress */
static atomic_ullong on_cpu, on_gpu; /* calls scored on each, since the state opened */
static int tracing;                  /* HK_TRACE: time the calls */
static atomic_ullong ns_call, ns_score; /* traced: time in JNI calls, and in scoring them */

static int engine_score(void *e, hk_batch_t *const *b, size_t n, hk_engine_done_fn done, void *arg)
{
    return hk_engine_score(e, b, n, done, arg);
}

/* Open the state: the config, then the engine where it may use a GPU. */
static int open_state(int dbl, int threads, char *why, size_t whylen)
{
    hk_config_init(&cfg);
    /* GKL's native code applies no base-quality floor (GATK applies its own
     * before the call); a config file may set one */
    cfg.model.min_base_quality = 0;
    const char *path = getenv("HAPLIK_GKL_CONFIG");
    if (path && *path && hk_config_load(&cfg, path)) {
        snprintf(why, whylen, "HAPLIK_GKL_CONFIG=%s: invalid configuration (the error is on stderr)", path);
        hk_config_free(&cfg);
        return -1;
    }
    cpu_precision = cfg.model.precision;
    cpu_threshold = cfg.model.float_threshold;
    /* the GPU scores in the first initNative's precision; calls made in
     * another (a later initNative's useDouble) go to the CPU */
    if (dbl) cfg.model.precision = HK_PREC_DOUBLE;
    gpu_precision = cfg.model.precision;
    gpu = NULL;
    combine = NULL;
    atomic_store(&gpu_failed, 0);
    atomic_store(&on_cpu, 0);
    atomic_store(&on_gpu, 0);
    atomic_store(&ns_call, 0);
    atomic_store(&ns_score, 0);
    tracing = hk_log_tracing();
    if (cfg.backend != HK_BACKEND_CPU) {
        /* the engine's notice on falling back names these threads */
        cfg.threads = threads;
        int status = 0;
        /* the notice that no GPU is usable: once per process, not per open */
        const int quiet = hk_log_quiet();
        if (no_gpu_told) hk_log_set_quiet(1);
        hk_engine_t *e = hk_engine_open(&cfg, &status);
        hk_log_set_quiet(quiet);
        if (!e) {
            snprintf(why, whylen, "engine.backend %s: no usable GPU (the reason is on stderr)",
                     hk_config_choice_name(HK_KEY_ENGINE_BACKEND, cfg.backend));
            hk_config_free(&cfg);
            return -1;
        }
        if (strcmp(hk_engine_backend(e), "cuda")) {
            no_gpu_told = 1;
            hk_engine_close(e);
        } else if (!(combine = hk_gkl_combine_open(engine_score, e, hk_engine_batch_pairs(&cfg)))) {
            hk_engine_close(e);
            snprintf(why, whylen, "out of memory");
            hk_config_free(&cfg);
            return -1;
        } else {
            gpu = e;
        }
    }
    return 0;
}

static void close_state(void)
{
    if (hk_log_tracing()) {
        size_t calls = 0, batches = 0;
        if (combine) hk_gkl_combine_counts(combine, &calls, &batches);
        fprintf(stderr, "haplik: trace gkl: %llu calls on the CPU; %llu on the GPU, in %zu engine calls\n",
                (unsigned long long)atomic_load(&on_cpu), (unsigned long long)atomic_load(&on_gpu), calls);
        const double t_call = 1e-9 * (double)atomic_load(&ns_call), t_score = 1e-9 * (double)atomic_load(&ns_score);
        fprintf(stderr, "haplik: trace gkl: %.3f s in the calls, %.3f s of it scoring: the JNI layer's share %.1f %%\n",
                t_call, t_score, t_call > 0 ? 100 * (t_call - t_score) / t_call : 0.0);
    }
    hk_gkl_combine_close(combine);
    hk_engine_close(gpu);
    combine = NULL;
    gpu = NULL;
    hk_config_free(&cfg);
}

/* The one line that tells a HaplotypeCaller log that haplik scores its pairs. */
static void announce(int dbl, int threads)
{
    char prec[96];
    if (dbl || cpu_precision == HK_PREC_DOUBLE) snprintf(prec, sizeof prec, "double precision");
    else snprintf(prec, sizeof prec, "%s precision (double below %g)",
                  hk_config_choice_name(HK_KEY_MODEL_PRECISION, cpu_precision), cpu_threshold);
    if (gpu) {
        const char *const *names;
        const int n = hk_engine_devices(gpu, &names);
        hk_log_notice("Pair-HMM %s: cuda on %d GPU%s (%s), cpu %s x %d thread%s for small calls; %s",
                      PACKAGE_VERSION, n, n == 1 ? "" : "s", n ? names[0] : "?", hk_model_cpu_pass(),
                      threads, threads == 1 ? "" : "s", prec);
    } else {
        hk_log_notice("Pair-HMM %s: cpu %s x %d thread%s; %s", PACKAGE_VERSION, hk_model_cpu_pass(),
                      threads, threads == 1 ? "" : "s", prec);
    }
}

int hk_gkl_init(int dbl, int threads, char *why, size_t whylen)
{
    if (threads < 1) threads = 1;
    pthread_mutex_lock(&lock);
    if (refs == 0 && open_state(dbl, threads, why, whylen)) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    refs++;
    inits++;
    atomic_store(&use_double, dbl);
    atomic_store(&max_threads, threads);
    announce(dbl, threads);
    pthread_mutex_unlock(&lock);
    return 0;
}

/* Give back one reference, closing the state with the last. Lock held. */
static void unref(void)
{
    if (--refs == 0) close_state();
}

void hk_gkl_done(void)
{
    pthread_mutex_lock(&lock);
    if (inits > 0) {
        inits--;
        unref();
    }
    pthread_mutex_unlock(&lock);
}

int hk_gkl_enter(void)
{
    pthread_mutex_lock(&lock);
    const int ok = inits > 0;
    if (ok) refs++;
    pthread_mutex_unlock(&lock);
    return ok ? 0 : -1;
}

void hk_gkl_leave(void)
{
    pthread_mutex_lock(&lock);
    unref();
    pthread_mutex_unlock(&lock);
}

hk_seq_rules_t hk_gkl_seq_rules(void)
{
    /* cfg does not change while a reference is held */
    return hk_model_seq_rules(&cfg.model);
}

/* Whether b goes to the GPU: always with engine.backend cuda (calls made at
 * once are gathered into shared launches); with auto only a call big enough
 * alone. Gathering HaplotypeCaller's region-sized calls measured slower than
 * the CPU passes on the same host (docs/PERFORMANCE.md), so auto leaves them
 * on the CPU. */
static int worth_gpu(const hk_batch_t *b, int precision, int threads)
{
    if (!gpu || atomic_load(&gpu_failed) || precision != gpu_precision) return 0;
    return cfg.backend == HK_BACKEND_CUDA ||
           b->cells >= HK_GKL_GPU_MIN_CELLS_PER_THREAD * (uint64_t)threads;
}

int hk_gkl_score(hk_batch_t *b)
{
    hk_model_t m = cfg.model;
    m.precision = atomic_load(&use_double) ? HK_PREC_DOUBLE : cpu_precision;
    const int threads = atomic_load(&max_threads);
    atomic_fetch_add(&in_flight, 1);
    const double t0 = tracing ? hk_log_now() : 0;
    int rc = 1;
    if (worth_gpu(b, m.precision, threads)) {
        if ((rc = hk_gkl_combine_score(combine, b)) == 0) atomic_fetch_add(&on_gpu, 1);
        else if (!atomic_exchange(&gpu_failed, 1))
            hk_log_notice("warning: the GPU failed (the error is above); scoring on the CPU from now on");
    }
    if (rc) {
        rc = hk_model_score_batch(&m, b, threads);
        atomic_fetch_add(&on_cpu, 1);
    }
    atomic_fetch_sub(&in_flight, 1);
    if (tracing) atomic_fetch_add(&ns_score, (unsigned long long)((hk_log_now() - t0) * 1e9));
    return rc;
}

int hk_gkl_tracing(void) { return tracing; }

void hk_gkl_note_call(double total_s)
{
    atomic_fetch_add(&ns_call, (unsigned long long)(total_s * 1e9));
}

void hk_gkl_batch_free(hk_batch_t *b)
{
    /* the engine closes under the lock, clearing the hooks of the batches it pinned */
    pthread_mutex_lock(&lock);
    hk_batch_free(b);
    pthread_mutex_unlock(&lock);
}
