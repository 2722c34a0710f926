/* hk_gkl_state.c - see hk_gkl_state.h. */
#include "config.h"
#include "hk_gkl_state.h"
#include "hk_gkl_combine.h"
#ifdef HAVE_CUDA
#include "hk_gkl_small.h"
#endif
#include "hk_engine.h"
#include "hk_log.h"
#include "hk_model.h"
#include "hk_threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The references, counted without the lock so that calls from many threads
 * do not queue on it: initNative's in the high 32 bits, those plus the calls
 * in progress in the low ones. Alone on its cache line, as every call writes
 * it twice. Opening and closing the state (is_open) take the lock. */
#define INIT_REF ((uint64_t)1 << 32)
#define REFS(v)  ((uint32_t)(v))
#define INITS(v) ((uint32_t)((v) >> 32))
static struct {
    _Alignas(64) _Atomic uint64_t n;
    char pad[64 - sizeof(uint64_t)];
} refs;

/* Everything below is guarded by lock, except the atomics. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int is_open;
static hk_config_t cfg;              /* valid while refs > 0; the engine points at it */
static hk_engine_t *gpu;             /* NULL: the CPU only */
static hk_engine_t *more_gpu[HK_GKL_COMBINE_MAX_CTX - 1];   /* gpu's fellow engines on the same devices */
static int n_more_gpu;
static hk_gkl_combine_t *combine;
#ifdef HAVE_CUDA
static hk_cuda_small_t *small;       /* the GPU's small-call path; NULL: none */
#endif
static int gpu_precision;            /* the engine's precision (cfg.model.precision) */
static double cpu_threshold;         /* the config's own float threshold */
static int cpu_precision;            /* the config's own precision (useDouble overrides) */
static atomic_int use_double;        /* GKL's globals: the last initNative's */
static atomic_int max_threads = 1;
static atomic_int gpu_failed;        /* given up after a failure (warned once) */
static size_t region_queue_max;      /* region-sized calls that may wait for a busy GPU (HK_GKL_GPU_QUEUE) */
static uint64_t region_min_cells;    /* and the cells per CPU thread they need (HK_GKL_GPU_MIN_KCELLS) */
static int no_gpu_told;              /* the engine's "no usable GPU" notice was printed */
static atomic_ullong on_cpu, on_gpu, on_small; /* traced: calls scored on each, since the state opened */
static int tracing;                  /* HK_TRACE: time the calls */
static atomic_ullong ns_call, ns_score; /* traced: time in JNI calls, and in scoring them */
static atomic_ullong ns_small[3];    /* traced: the small-call path's packing, round trips, unpacking */

static hk_status_t engine_score(void *e, hk_batch_t *const *b, size_t n, hk_engine_done_fn done, void *arg)
{
    return hk_engine_score(e, b, n, done, arg);
}

/* The small-call path on the engine's GPUs, unless HK_GKL_GPU_SMALL
 * (cfg.opt) turns it off; without it, region-sized calls take the engine's path. */
static void open_small(hk_engine_t *e)
{
#ifdef HAVE_CUDA
    const int *ords;
    char err[256];
    const int n = hk_engine_ordinals(e, &ords);
    if (!cfg.opt.gkl_gpu_small || n < 1) return;
    if (hk_cuda_small_open(ords, n, HK_GKL_SMALL_SLOTS, HK_GKL_SMALL_SLOT_BYTES, &small, err, sizeof err))
        hk_log_notice("warning: the GPU's small-call path is off: %s", err);
#else
    (void)e;
#endif
}

/* The precision the GPU engine scores the GPU's calls in (gpu_precision):
 * mixed-precision calls in double, as a region-sized launch's double tiles
 * finished in half the time of the float ones (docs/PERFORMANCE.md), unless
 * HK_GKL_GPU_PRECISION=config; the CPU's calls keep cpu_precision. */
static int engine_precision(int gpu_prec, const hk_options_t *o)
{
    return gpu_prec == HK_PREC_MIXED && o->gkl_gpu_precision != 1 ? HK_PREC_DOUBLE : gpu_prec;
}

/* Open the state: the config, then the engine where it may use a GPU. */
static hk_status_t open_state(int dbl, int threads, char *why, size_t whylen)
{
    hk_status_t rc;
    hk_config_init(&cfg);
    /* GKL's native code applies no base-quality floor (GATK applies its own
     * before the call); a config file may set one */
    cfg.model.min_base_quality = 0;
    const char *path = getenv("HAPLIK_GKL_CONFIG");
    if (path && *path && (rc = hk_config_load(&cfg, path))) {
        snprintf(why, whylen, "HAPLIK_GKL_CONFIG=%s: invalid configuration (the error is on stderr)", path);
        hk_config_free(&cfg);
        return rc;
    }
    hk_options_read(&cfg.opt);   /* the HK_* knobs, read here once for the library */
    hk_options_apply(&cfg.opt);
    cpu_precision = cfg.model.precision;
    cpu_threshold = cfg.model.float_threshold;
    /* HaplotypeCaller's calls are a region each, a fraction of a millisecond
     * apart: its maxThreads threads wait for the next one awake */
    hk_threads_set_spin(HK_GKL_POOL_SPIN_NS);
    /* the GPU scores in the first initNative's precision; calls made in
     * another (a later initNative's useDouble) go to the CPU */
    gpu_precision = dbl ? HK_PREC_DOUBLE : cpu_precision;
    cfg.model.precision = engine_precision(gpu_precision, &cfg.opt);
    region_queue_max = (size_t)cfg.opt.gkl_gpu_queue;
    region_min_cells = (uint64_t)cfg.opt.gkl_gpu_min_kcells << 10;
    gpu = NULL;
    combine = NULL;
    atomic_store(&gpu_failed, 0);
    atomic_store(&on_cpu, 0);
    atomic_store(&on_gpu, 0);
    atomic_store(&on_small, 0);
    for (int i = 0; i < 3; i++) atomic_store(&ns_small[i], 0);
    atomic_store(&ns_call, 0);
    atomic_store(&ns_score, 0);
    tracing = hk_log_tracing();
    if (cfg.backend != HK_BACKEND_CPU) {
        /* the engine's notice on falling back names these threads */
        cfg.threads = threads;
        /* the notice that no GPU is usable: once per process, not per open */
        const int quiet = hk_log_quiet();
        if (no_gpu_told) hk_log_set_quiet(1);
        hk_engine_t *e;
        rc = hk_engine_start(&cfg, &e);
        hk_log_set_quiet(quiet);
        if (rc) {
            snprintf(why, whylen, "engine.backend %s: no usable GPU (the reason is on stderr)",
                     hk_config_choice_name(HK_KEY_ENGINE_BACKEND, cfg.backend));
            hk_config_free(&cfg);
            return rc;
        }
        if (strcmp(hk_engine_backend(e), "cuda")) {
            no_gpu_told = 1;
            hk_engine_close(e);
        } else {
            /* fellow engines, so that one group of calls' launch need not
             * wait for another's, where region-sized calls come to the GPU
             * (backend cuda; with auto only calls large enough alone do, and
             * their launches are bound by the GPU's throughput): as many as
             * open */
            void *ctx[HK_GKL_COMBINE_MAX_CTX] = { e };
            const long long want = cfg.opt.gkl_engines;
            const int n_engines = want ? (int)want : HK_GKL_GPU_ENGINES;
            n_more_gpu = 0;
            while (1 + n_more_gpu < n_engines && hk_engine_start(&cfg, &more_gpu[n_more_gpu]) == HK_OK) {
                hk_engine_share_contexts(more_gpu[n_more_gpu]);   /* closed before e, which resets them */
                ctx[1 + n_more_gpu] = more_gpu[n_more_gpu];
                n_more_gpu++;
            }
            if ((rc = hk_gkl_combine_open(engine_score, ctx, 1 + n_more_gpu, hk_engine_batch_pairs(&cfg), &combine))) {
                for (int i = 0; i < n_more_gpu; i++) hk_engine_close(more_gpu[i]);
                n_more_gpu = 0;
                hk_engine_close(e);
                snprintf(why, whylen, "%s", rc == HK_E_NOMEM ? "out of memory" : "cannot gather the calls");
                hk_config_free(&cfg);
                return rc;
            }
            gpu = e;
            open_small(e);
        }
    }
    return HK_OK;
}

static void close_state(void)
{
#ifdef HAVE_CUDA
    hk_cuda_small_close(small);
    small = NULL;
#endif
    if (hk_log_tracing()) {
        size_t calls = 0, batches = 0, declined = 0;
        if (combine) hk_gkl_combine_counts(combine, &calls, &batches, &declined);
        fprintf(stderr, "haplik: trace gkl: %llu calls on the CPU (%zu of them declined by a busy GPU); %llu on the "
                "GPU, in %zu engine calls\n", (unsigned long long)atomic_load(&on_cpu), declined,
                (unsigned long long)atomic_load(&on_gpu), calls);
        const unsigned long long n_small = atomic_load(&on_small);
        const double per = n_small ? 1e-3 / (double)n_small : 0;   /* ns in all -> us a call */
        fprintf(stderr, "haplik: trace gkl: %llu calls on the GPU's small-call path (a call's packing %.1f us, "
                "round trip %.1f, unpacking %.1f)\n", n_small, per * (double)atomic_load(&ns_small[0]),
                per * (double)atomic_load(&ns_small[1]), per * (double)atomic_load(&ns_small[2]));
        const double t_call = 1e-9 * (double)atomic_load(&ns_call), t_score = 1e-9 * (double)atomic_load(&ns_score);
        fprintf(stderr, "haplik: trace gkl: %.3f s in the calls, %.3f s of it scoring: the JNI layer's share %.1f %%\n",
                t_call, t_score, t_call > 0 ? 100 * (t_call - t_score) / t_call : 0.0);
    }
    hk_gkl_combine_close(combine);
    for (int i = 0; i < n_more_gpu; i++) hk_engine_close(more_gpu[i]);
    n_more_gpu = 0;
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
        /* the small-call path scores in the CPU's precision, the engine in its own */
        int small_open = 0;
#ifdef HAVE_CUDA
        small_open = small != NULL;
#endif
        const char *engine_prec = cfg.model.precision == gpu_precision ? ""
                                  : small_open ? ", calls larger than a slot in double" : ", in double";
        hk_log_notice("Pair-HMM %s: cuda on %d GPU%s (%s%s), cpu %s x %d thread%s beside it; %s",
                      PACKAGE_VERSION, n, n == 1 ? "" : "s", n ? names[0] : "?", engine_prec,
                      hk_model_cpu_pass(), threads, threads == 1 ? "" : "s", prec);
    } else {
        hk_log_notice("Pair-HMM %s: cpu %s x %d thread%s; %s", PACKAGE_VERSION, hk_model_cpu_pass(),
                      threads, threads == 1 ? "" : "s", prec);
    }
}

static void *no_job(void *arg) { return arg; }

/* What a first call would make, made here instead (initNative): the CPU
 * pool's threads - 1 workers, the tables the batch and the passes build once,
 * this thread's and the workers' scoring memory (a region-sized batch of 64
 * pairs scored on threads threads), and, on the GPU's small-call path, a
 * slot for each initNative (one per engine object, GATK's one per Java
 * thread). Without it the first region cost 4-5 times a later one on one
 * thread, more with the pool's threads to start (docs/PERFORMANCE.md). A
 * failure here is left to the first call to meet. */
static void warm_up(int threads, uint32_t inits)
{
    enum { READS = 8, HAPS = 8, RLEN = 150, HLEN = 160 };
    static const char acgt[4] = { 'A', 'C', 'G', 'T' };
    char hap[HLEN], read[RLEN];
    uint8_t q[RLEN], ins[RLEN], gcp[RLEN];
    uint32_t x = 12345;
    for (int i = 0; i < HLEN; i++) hap[i] = acgt[(x = x * 1103515245u + 12345u) >> 30];
    memset(q, 30, sizeof q);
    memset(ins, 45, sizeof ins);
    memset(gcp, 10, sizeof gcp);
    if (threads > 1) hk_threads_run(no_job, NULL, 0, threads);
    hk_batch_t b;
    hk_batch_init(&b);
    hk_batch_set_no_text(&b, 1);
    const hk_seq_rules_t rules = hk_gkl_seq_rules();
    hk_batch_error_t e;
    int ok = hk_batch_begin_region(&b, NULL, 0) == HK_OK;
    for (int h = 0; ok && h < HAPS; h++) {
        hap[h] = acgt[h & 3];   /* distinct haplotypes */
        ok = hk_batch_add_hap(&b, &rules, hap, HLEN, &e) == HK_OK;
    }
    for (int r = 0; ok && r < READS; r++) {
        memcpy(read, hap + r, RLEN);
        ok = hk_batch_add_read_phred(&b, &rules, read, q, ins, ins, gcp, RLEN, &e) == HK_OK;
    }
    if (ok && hk_batch_end_region(&b) == HK_OK) {
        hk_model_t m = cfg.model;
        m.precision = cpu_precision;
        if (hk_model_score_batch(&m, &b, threads) != HK_OK) {
            /* out of memory: the first call meets it again, and says so */
        }
    }
    hk_batch_free(&b);
#ifdef HAVE_CUDA
    if (small) hk_gkl_small_warm(small, inits < HK_GKL_SMALL_SLOTS ? (int)inits : HK_GKL_SMALL_SLOTS);
#else
    (void)inits;
#endif
}

hk_status_t hk_gkl_init(int dbl, int threads, char *why, size_t whylen)
{
    if (threads < 1) threads = 1;
    pthread_mutex_lock(&lock);
    /* a call that let go of the last reference may not have closed yet:
     * it closes only what is open with no reference (close_if_unused) */
    if (!is_open) {
        const hk_status_t rc = open_state(dbl, threads, why, whylen);
        if (rc) {
            pthread_mutex_unlock(&lock);
            return rc;
        }
        is_open = 1;
    }
    const uint64_t was = atomic_fetch_add(&refs.n, INIT_REF + 1);
    atomic_store(&use_double, dbl);
    atomic_store(&max_threads, threads);
    announce(dbl, threads);
    warm_up(threads, INITS(was) + 1);
    pthread_mutex_unlock(&lock);
    return HK_OK;
}

/* Close the state where no reference is left. */
static void close_if_unused(void)
{
    pthread_mutex_lock(&lock);
    if (is_open && REFS(atomic_load(&refs.n)) == 0) {
        close_state();
        is_open = 0;
    }
    pthread_mutex_unlock(&lock);
}

void hk_gkl_done(void)
{
    uint64_t v = atomic_load(&refs.n);
    do {
        if (INITS(v) == 0) return;   /* more gives than takes */
    } while (!atomic_compare_exchange_weak(&refs.n, &v, v - INIT_REF - 1));
    if (REFS(v) == 1) close_if_unused();
}

int hk_gkl_enter(void)
{
    uint64_t v = atomic_load(&refs.n);
    do {
        if (INITS(v) == 0) return -1;
    } while (!atomic_compare_exchange_weak(&refs.n, &v, v + 1));
    return 0;
}

void hk_gkl_leave(void)
{
    if (REFS(atomic_fetch_sub(&refs.n, 1)) == 1) close_if_unused();
}

hk_seq_rules_t hk_gkl_seq_rules(void)
{
    /* cfg does not change while a reference is held */
    return hk_model_seq_rules(&cfg.model);
}

/* The threads a call is scored on: maxThreads, fewer where each would get
 * less than HK_GKL_CPU_MIN_CELLS_PER_THREAD (waking a pool thread and
 * waiting for it costs more than it saves on a small region). */
static int cpu_threads(const hk_batch_t *b, int threads)
{
    const uint64_t most = b->cells / HK_GKL_CPU_MIN_CELLS_PER_THREAD;
    if ((uint64_t)threads > most) threads = most > 1 ? (int)most : 1;
    return threads;
}

/* Whether b goes to the GPU (hk_gkl_state.h), and how many calls it may
 * wait behind there (*queue_max). */
static int gpu_route(const hk_batch_t *b, int precision, int threads, size_t *queue_max)
{
    if (!gpu || atomic_load(&gpu_failed) || precision != gpu_precision) return 0;
    if (b->cells >= HK_GKL_GPU_MIN_CELLS_PER_THREAD * (uint64_t)threads) {
        *queue_max = SIZE_MAX;
        return 1;
    }
    *queue_max = region_queue_max;
    return !region_min_cells || b->cells / (uint64_t)cpu_threads(b, threads) >= region_min_cells;
}

#ifdef HAVE_CUDA
/* b on the small-call path (a round trip of its own, in m's precision, the
 * CPU's bits): HK_OK; HK_E_NODEV, not taken (every slot busy); else a
 * failure, logged: a CUDA error gives the GPU up, with one warning. */
static hk_status_t score_small(hk_batch_t *b, const hk_model_t *m)
{
    char err[512];
    hk_gkl_small_times_t t;
    const hk_status_t rc = hk_gkl_small_score(small, b, m, tracing ? &t : NULL, err, sizeof err);
    if (rc == HK_OK && tracing) {
        atomic_fetch_add(&on_small, 1);
        atomic_fetch_add(&ns_small[0], (unsigned long long)(t.pack_s * 1e9));
        atomic_fetch_add(&ns_small[1], (unsigned long long)(t.trip_s * 1e9));
        atomic_fetch_add(&ns_small[2], (unsigned long long)(t.unpack_s * 1e9));
    } else if (rc == HK_E_RUNTIME && !atomic_exchange(&gpu_failed, 1)) {
        hk_log_notice("warning: the GPU failed (%s); scoring on the CPU from now on", err);
    } else if (rc == HK_E_NOMEM) {
        hk_log_error("%s", err);
    }
    return rc;
}
#endif

hk_status_t hk_gkl_score(hk_batch_t *b, int one_thread)
{
    hk_model_t m = cfg.model;
    m.precision = atomic_load(&use_double) ? HK_PREC_DOUBLE : cpu_precision;
    const int threads = one_thread ? 1 : atomic_load(&max_threads);
    const double t0 = tracing ? hk_log_now() : 0;
    hk_status_t rc = HK_E_NODEV;   /* not on the GPU (yet) */
    size_t queue_max;
    /* A call's values must not depend on the load: a call the small-call
     * path takes gets the CPU's bits there, so with every slot busy it is
     * scored on the CPU; one it does not take (long reads, more than a slot)
     * never goes to the CPU while the engine works, but waits for it. */
    int small_fits = 0;
#ifdef HAVE_CUDA
    small_fits = small && !atomic_load(&gpu_failed) && hk_gkl_small_fits(b);
    if (small_fits) rc = score_small(b, &m);
#endif
    if (rc && !small_fits && gpu_route(b, m.precision, threads, &queue_max)) {
#ifdef HAVE_CUDA
        if (small) queue_max = SIZE_MAX;
#endif
        if ((rc = hk_gkl_combine_score(combine, b, queue_max)) == HK_OK) {
            if (tracing) atomic_fetch_add(&on_gpu, 1);
        } else if (rc != HK_E_NODEV && !atomic_exchange(&gpu_failed, 1)) {
            hk_log_notice("warning: the GPU failed (the error is above); scoring on the CPU from now on");
        }
    }
    if (rc) {
        rc = hk_model_score_batch(&m, b, cpu_threads(b, threads));
        if (tracing) atomic_fetch_add(&on_cpu, 1);
    }
    /* the counters below are shared by every thread: only a traced run pays for them */
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
