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
    if (cfg.backend != HK_BACKEND_CPU) {
        /* the engine's notice on falling back names these threads */
        cfg.threads = threads;
        int status = 0;
        hk_engine_t *e = hk_engine_open(&cfg, &status);
        if (!e) {
            snprintf(why, whylen, "engine.backend %s: no usable GPU (the reason is on stderr)",
                     hk_config_choice_name(HK_KEY_ENGINE_BACKEND, cfg.backend));
            hk_config_free(&cfg);
            return -1;
        }
        if (strcmp(hk_engine_backend(e), "cuda")) {
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

/* Whether b goes to the GPU: a call that many others are gathered with, or
 * one big enough alone. */
static int worth_gpu(const hk_batch_t *b, int precision, int threads)
{
    if (!gpu || atomic_load(&gpu_failed) || precision != gpu_precision) return 0;
    return b->cells >= HK_GKL_GPU_MIN_CELLS_PER_THREAD * (uint64_t)threads || hk_gkl_combine_busy(combine);
}

int hk_gkl_score(hk_batch_t *b)
{
    hk_model_t m = cfg.model;
    m.precision = atomic_load(&use_double) ? HK_PREC_DOUBLE : cpu_precision;
    const int threads = atomic_load(&max_threads);
    if (worth_gpu(b, m.precision, threads)) {
        if (hk_gkl_combine_score(combine, b) == 0) return 0;
        if (!atomic_exchange(&gpu_failed, 1))
            hk_log_notice("warning: the GPU failed (the error is above); scoring on the CPU from now on");
    }
    return hk_model_score_batch(&m, b, threads);
}
