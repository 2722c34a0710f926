/* hk_gkl_jni.c - Intel GKL's Pair-HMM JNI interface on haplik's engine.
 *
 * GATK's HaplotypeCaller loads `gkl_pairhmm_omp` (IntelPairHmmOMP) or
 * `gkl_pairhmm` (IntelPairHmm) and calls three natives declared in
 * com.intel.gkl.pairhmm.IntelPairHmm (IntelPairHmmOMP inherits them, so one
 * library serves both names):
 *   static void initNative(Class<?> readHolder, Class<?> hapHolder, boolean useDouble, int maxThreads)
 *   void computeLikelihoodsNative(Object[] reads, Object[] haps, double[] out)
 *   void doneNative()
 * A read holder has byte[] readBases, readQuals, insertionGOP, deletionGOP,
 * overallGCP (qualities as Phred values, not +33); a haplotype holder byte[]
 * haplotypeBases. out[r * H + h] receives read r's log10 likelihood against
 * haplotype h. One call is one active region: its reads and haplotypes
 * become one region of a batch (the same layout as `haplik score`'s), and
 * the batch is scored by hk_gkl_score (hk_gkl_state.h).
 *
 * Bad calls raise Java exceptions and leave out untouched: NullPointerException
 * (a null array, holder or field), IllegalArgumentException (out of the wrong
 * size, a quality array shorter than its bases, a base outside ACGTN, a
 * negative quality or gap qualities the model cannot take, a holder of
 * another class), OutOfMemoryError, IllegalStateException (no initNative, or a
 * configuration that cannot be used).
 */
#include <jni.h>

#include "hk_gkl_state.h"
#include "hk_batch.h"
#include "hk_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPE "java/lang/NullPointerException"
#define IAE "java/lang/IllegalArgumentException"
#define OOM "java/lang/OutOfMemoryError"
#define ISE "java/lang/IllegalStateException"

/* The highest quality a batch holds (as Phred+33 text ends at '~'). Higher ones
 * (GKL takes up to 127) are used as this: for base qualities an error
 * probability below 10^-9.3 either way, which moves a read of a few hundred
 * bases by less than 1e-7 in log10; for gap qualities only alignments that
 * open a gap there weigh differently (README). */
#define HK_GKL_MAX_QUAL 93

/* The holder classes and their fields, set by initNative. */
enum { F_BASES, F_QUALS, F_INS, F_DEL, F_GCP, N_READ_FIELDS };
static const char *const read_field_names[N_READ_FIELDS] = {
    "readBases", "readQuals", "insertionGOP", "deletionGOP", "overallGCP" };
typedef struct {
    jclass   read_cls, hap_cls;        /* global references, never deleted (see set_holders) */
    jfieldID read_f[N_READ_FIELDS];
    jfieldID hap_bases;
} holders_t;

/* The last initNative's holders, read by every call without a lock: each
 * distinct pair of classes gets a holders_t of its own that is never freed
 * or changed (GATK has one pair), and initNative publishes it. */
static pthread_mutex_t holders_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(const holders_t *) holders;

/* GKL's IntelPairHmm has a field boolean useOmp, true in IntelPairHmmOMP:
 * GKL's library for IntelPairHmm (gkl_pairhmm, AVX_LOGLESS_CACHING) scores
 * on the calling thread alone, "Ignoring request for N threads", and so does
 * this one for an object whose useOmp is false. NULL: the class has no such
 * field (another client), and every object gets maxThreads. */
static _Atomic(jfieldID) use_omp_field;

/* Throw cls with a formatted message; returns -1 for the caller to pass on. */
static int throwf(JNIEnv *env, const char *cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int throwf(JNIEnv *env, const char *cls, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
    jclass c = (*env)->FindClass(env, cls);
    if (c) (*env)->ThrowNew(env, c, msg);
    return -1;
}

/* The field name of cls as byte[], or NULL with an exception thrown. */
static jfieldID byte_field(JNIEnv *env, jclass cls, const char *name, const char *holder)
{
    jfieldID f = (*env)->GetFieldID(env, cls, name, "[B");
    if (!f) throwf(env, IAE, "%s class has no field byte[] %s", holder, name);
    return f;
}

/* Record the holder classes. A class seen before keeps its global reference
 * and its holders_t: a call in another thread may be using them. */
static int set_holders(JNIEnv *env, jclass read_cls, jclass hap_cls)
{
    holders_t h;
    for (int f = 0; f < N_READ_FIELDS; f++)
        if (!(h.read_f[f] = byte_field(env, read_cls, read_field_names[f], "read holder"))) return -1;
    if (!(h.hap_bases = byte_field(env, hap_cls, "haplotypeBases", "haplotype holder"))) return -1;
    pthread_mutex_lock(&holders_lock);
    const holders_t *old = atomic_load(&holders);
    if (old && (*env)->IsSameObject(env, old->read_cls, read_cls) &&
        (*env)->IsSameObject(env, old->hap_cls, hap_cls)) {
        pthread_mutex_unlock(&holders_lock);
        return 0;
    }
    holders_t *n = malloc(sizeof *n);
    h.read_cls = old && (*env)->IsSameObject(env, old->read_cls, read_cls)
                 ? old->read_cls : (*env)->NewGlobalRef(env, read_cls);
    h.hap_cls = old && (*env)->IsSameObject(env, old->hap_cls, hap_cls)
                ? old->hap_cls : (*env)->NewGlobalRef(env, hap_cls);
    const int ok = n && h.read_cls && h.hap_cls;
    if (ok) {
        *n = h;
        atomic_store(&holders, n);
    } else {
        free(n);
    }
    pthread_mutex_unlock(&holders_lock);
    if (!ok) return throwf(env, OOM, "no memory for a global reference");
    return 0;
}

JNIEXPORT void JNICALL Java_com_intel_gkl_pairhmm_IntelPairHmm_initNative(
    JNIEnv *env, jclass cls, jclass read_cls, jclass hap_cls, jboolean use_double, jint max_threads)
{
    if (!read_cls || !hap_cls) {
        throwf(env, NPE, "initNative: the %s holder class is null", read_cls ? "haplotype" : "read");
        return;
    }
    if (set_holders(env, read_cls, hap_cls)) return;
    jfieldID omp = cls ? (*env)->GetFieldID(env, cls, "useOmp", "Z") : NULL;
    if (!omp) (*env)->ExceptionClear(env);   /* NoSuchFieldError: not GKL's class */
    atomic_store(&use_omp_field, omp);
    char why[512] = "";
    if (hk_gkl_init(use_double == JNI_TRUE, max_threads, why, sizeof why))
        throwf(env, ISE, "haplik Pair-HMM: %s", why);
}

JNIEXPORT void JNICALL Java_com_intel_gkl_pairhmm_IntelPairHmm_doneNative(JNIEnv *env, jobject self)
{
    (void)env;
    (void)self;
    hk_gkl_done();
}

/* ---- one call ---- */

/* A thread's batch and scratch, kept between its calls (freed as it exits). */
typedef struct {
    hk_batch_t b;
    char      *scratch;       /* one read's five fields: bases, then raw Phred values */
    size_t     cap;
} call_mem_t;

static pthread_key_t mem_key;
static pthread_once_t mem_once = PTHREAD_ONCE_INIT;

static void mem_free(void *p)
{
    call_mem_t *m = p;
    hk_gkl_batch_free(&m->b);
    free(m->scratch);
    free(m);
}

static void mem_key_init(void) { (void)pthread_key_create(&mem_key, mem_free); }

static call_mem_t *thread_mem(void)
{
    pthread_once(&mem_once, mem_key_init);
    call_mem_t *m = pthread_getspecific(mem_key);
    if (m) return m;
    if (!(m = calloc(1, sizeof *m))) return NULL;
    hk_batch_init(&m->b);
    hk_batch_set_no_text(&m->b, 1);
    if (pthread_setspecific(mem_key, m)) { free(m); return NULL; }
    return m;
}

static int reserve(call_mem_t *m, size_t n)
{
    if (n <= m->cap) return 0;
    size_t cap = m->cap ? m->cap : 1024;
    while (cap < n) cap *= 2;
    char *p = realloc(m->scratch, cap);
    if (!p) return -1;
    m->scratch = p;
    m->cap = cap;
    return 0;
}

/* 1 for the bytes GKL's model knows as bases: A, C, G, T, N. */
static const unsigned char is_base[256] = { ['A'] = 1, ['C'] = 1, ['G'] = 1, ['T'] = 1, ['N'] = 1 };

/* The first byte of s[0..n) that is not a base, or -1. A read is scanned
 * without a branch a byte first (a byte at a time with five compares, the
 * scan took 1.4 % of a call on the bundled dump's 41-base reads). */
static long bad_base(const jbyte *s, jsize n)
{
    unsigned all = 1;
    for (jsize i = 0; i < n; i++) all &= is_base[(unsigned char)s[i]];
    if (all) return -1;
    for (jsize i = 0; i < n; i++)
        if (!is_base[(unsigned char)s[i]]) return i;
    return -1;
}

/* Element k of arr as an instance of cls (a local reference), or NULL with
 * an exception thrown. */
static jobject element(JNIEnv *env, jobjectArray arr, jsize k, jclass cls, const char *what)
{
    jobject o = (*env)->GetObjectArrayElement(env, arr, k);   /* k < its length: cannot throw */
    if (!o) { throwf(env, NPE, "%s %d is null", what, (int)k); return NULL; }
    if (!(*env)->IsInstanceOf(env, o, cls)) {
        (*env)->DeleteLocalRef(env, o);
        throwf(env, IAE, "%s %d is not an instance of the holder class given to initNative", what, (int)k);
        return NULL;
    }
    return o;
}

/* Field f of o (a byte[]; local reference) and its length, or NULL with an
 * exception thrown. */
static jbyteArray bytes_of(JNIEnv *env, jobject o, jfieldID f, jsize *len, const char *what, int k,
                           const char *name)
{
    jbyteArray a = (*env)->GetObjectField(env, o, f);
    if (!a) { throwf(env, NPE, "%s %d: %s is null", what, k, name); return NULL; }
    *len = (*env)->GetArrayLength(env, a);
    return a;
}

static int add_haps(JNIEnv *env, const holders_t *h, jobjectArray haps, jsize n, call_mem_t *m,
                    const hk_seq_rules_t *rules)
{
    for (jsize k = 0; k < n; k++) {
        jobject o = element(env, haps, k, h->hap_cls, "haplotype");
        if (!o) return -1;
        jsize len;
        jbyteArray a = bytes_of(env, o, h->hap_bases, &len, "haplotype", (int)k, "haplotypeBases");
        (*env)->DeleteLocalRef(env, o);
        if (!a) return -1;
        if (reserve(m, (size_t)len + 1)) return throwf(env, OOM, "no memory for haplotype %d", (int)k);
        (*env)->GetByteArrayRegion(env, a, 0, len, (jbyte *)m->scratch);
        (*env)->DeleteLocalRef(env, a);
        const long bad = bad_base((const jbyte *)m->scratch, len);
        if (bad >= 0)
            return throwf(env, IAE, "haplotype %d: base %ld is byte %d, not one of A, C, G, T, N", (int)k,
                          bad, (int)(signed char)m->scratch[bad]);
        hk_batch_error_t e = { 0 };
        const hk_status_t rc = hk_batch_add_hap(&m->b, rules, m->scratch, (uint32_t)len, &e);
        if (rc && rc != HK_E_INPUT) return throwf(env, OOM, "no memory for haplotype %d", (int)k);
        if (rc) return throwf(env, IAE, "haplotype %d: cannot be scored (length %d)", (int)k, (int)len);
    }
    return 0;
}

/* Read k's fields into m->scratch as the batch takes them: bases, then the
 * four quality rows as raw Phred values (hk_batch_add_read_phred), len bytes
 * each. The qualities are looked at only where the batch refuses them
 * (fix_quals): GKL's holders have them as the batch takes them. */
static int fetch_read(JNIEnv *env, const holders_t *h, jobject o, int k, call_mem_t *m, jsize *rlen)
{
    jbyteArray a[N_READ_FIELDS] = { NULL };
    jsize len[N_READ_FIELDS];
    int rc = -1;
    for (int f = 0; f < N_READ_FIELDS; f++)
        if (!(a[f] = bytes_of(env, o, h->read_f[f], &len[f], "read", k, read_field_names[f]))) goto out;
    const jsize n = len[F_BASES];
    for (int f = 1; f < N_READ_FIELDS; f++)
        if (len[f] < n) {
            throwf(env, IAE, "read %d: %s has %d entries for %d bases", k, read_field_names[f], (int)len[f], (int)n);
            goto out;
        }
    if (reserve(m, (size_t)N_READ_FIELDS * (size_t)n + 1)) { throwf(env, OOM, "no memory for read %d", k); goto out; }
    for (int f = 0; f < N_READ_FIELDS; f++)
        (*env)->GetByteArrayRegion(env, a[f], 0, n, (jbyte *)m->scratch + (size_t)f * (size_t)n);
    const long bad = bad_base((const jbyte *)m->scratch, n);
    if (bad >= 0) {
        throwf(env, IAE, "read %d: base %ld is byte %d, not one of A, C, G, T, N", k, bad,
               (int)(signed char)m->scratch[bad]);
        goto out;
    }
    *rlen = n;
    rc = 0;
out:   /* the arrays' local references go with the caller's frame */
    return rc;
}

/* After the batch refused a quality of read k (n positions in m->scratch):
 * a negative one is an error (-1, thrown); those above HK_GKL_MAX_QUAL are
 * lowered to it (0: try again). */
static int fix_quals(JNIEnv *env, int k, call_mem_t *m, jsize n)
{
    for (int f = 1; f < N_READ_FIELDS; f++) {
        signed char *q = (signed char *)m->scratch + (size_t)f * (size_t)n;
        for (jsize i = 0; i < n; i++) {
            if (q[i] < 0)
                return throwf(env, IAE, "read %d: %s[%d] is %d, a negative Phred quality", k, read_field_names[f],
                              (int)i, q[i]);
            if (q[i] > HK_GKL_MAX_QUAL) q[i] = HK_GKL_MAX_QUAL;
        }
    }
    return 0;
}

/* Reads whose local references (the holder and its five arrays) one local
 * frame holds: freeing them a frame at a time instead of one by one takes
 * six JNI calls a read off the copies (docs/PERFORMANCE.md). */
#define READS_PER_FRAME 32

/* Read k (holder o) into the batch; -1 with an exception thrown. */
static int add_read(JNIEnv *env, const holders_t *h, jobject o, jsize k, call_mem_t *m,
                    const hk_seq_rules_t *rules)
{
    jsize len = 0;
    if (fetch_read(env, h, o, (int)k, m, &len)) return -1;
    const char *s = m->scratch;
    const uint8_t *q = (const uint8_t *)s;
    const size_t L = (size_t)len;
    hk_batch_error_t e = { 0 };
    hk_status_t rc = hk_batch_add_read_phred(&m->b, rules, s, q + L, q + 2 * L, q + 3 * L, q + 4 * L,
                                             (uint32_t)len, &e);
    if (rc == HK_E_INPUT && e.code == HK_BATCH_BAD_QUAL) {
        if (fix_quals(env, (int)k, m, len)) return -1;
        rc = hk_batch_add_read_phred(&m->b, rules, s, q + L, q + 2 * L, q + 3 * L, q + 4 * L, (uint32_t)len, &e);
    }
    if (rc && rc != HK_E_INPUT) return throwf(env, OOM, "no memory for read %d", (int)k);
    if (rc && e.code == HK_BATCH_BAD_GAP)
        return throwf(env, IAE, "read %d: insertion and deletion gap-open qualities at position %ld "
                      "leave no probability of staying in match", (int)k, (long)e.pos);
    if (rc && e.code == HK_BATCH_BAD_GCP)
        return throwf(env, IAE, "read %d: overallGCP[%ld] is 0 (no way back from a gap)", (int)k,
                      (long)e.pos);
    if (rc) return throwf(env, IAE, "read %d: cannot be scored (length %d)", (int)k, (int)len);
    return 0;
}

static int add_reads(JNIEnv *env, const holders_t *h, jobjectArray reads, jsize n, call_mem_t *m,
                     const hk_seq_rules_t *rules)
{
    int rc = 0, framed = 0;
    for (jsize k = 0; k < n && rc == 0; k++) {
        if (k % READS_PER_FRAME == 0) {
            if (framed) (*env)->PopLocalFrame(env, NULL);
            framed = (*env)->PushLocalFrame(env, READS_PER_FRAME * (1 + N_READ_FIELDS)) == 0;
            if (!framed) return -1;   /* OutOfMemoryError thrown */
        }
        jobject o = element(env, reads, k, h->read_cls, "read");
        rc = o ? add_read(env, h, o, k, m, rules) : -1;
    }
    if (framed) (*env)->PopLocalFrame(env, NULL);
    return rc;
}

JNIEXPORT void JNICALL Java_com_intel_gkl_pairhmm_IntelPairHmm_computeLikelihoodsNative(
    JNIEnv *env, jobject self, jobjectArray reads, jobjectArray haps, jdoubleArray out)
{
    if (!reads || !haps || !out) {
        throwf(env, NPE, "computeLikelihoodsNative: the %s array is null",
               !reads ? "read" : !haps ? "haplotype" : "likelihood");
        return;
    }
    if (hk_gkl_enter()) {
        throwf(env, ISE, "haplik Pair-HMM: computeLikelihoodsNative without initNative (or after doneNative)");
        return;
    }
    const double t0 = hk_gkl_tracing() ? hk_log_now() : 0;
    const holders_t h = *atomic_load(&holders);
    const jsize nr = (*env)->GetArrayLength(env, reads), nh = (*env)->GetArrayLength(env, haps);
    const jsize no = (*env)->GetArrayLength(env, out);
    const long long pairs = (long long)nr * nh;
    call_mem_t *m = NULL;
    if (pairs != no) {
        throwf(env, IAE, "the likelihood array has %d entries for %d reads x %d haplotypes", (int)no, (int)nr,
               (int)nh);
        goto out;
    }
    if (!(m = thread_mem())) { throwf(env, OOM, "no memory for a call's batch"); goto out; }
    hk_batch_clear(&m->b);
    const hk_seq_rules_t rules = hk_gkl_seq_rules();
    if (hk_batch_begin_region(&m->b, NULL, 0)) { throwf(env, OOM, "no memory for a call's batch"); goto out; }
    if (add_haps(env, &h, haps, nh, m, &rules) || add_reads(env, &h, reads, nr, m, &rules)) goto out;
    if (hk_batch_end_region(&m->b)) { throwf(env, OOM, "no memory for a call's results"); goto out; }
    const jfieldID omp = atomic_load(&use_omp_field);
    const int one_thread = omp && self && !(*env)->GetBooleanField(env, self, omp);
    if (pairs && hk_gkl_score(&m->b, one_thread)) { throwf(env, OOM, "no memory or threads to score a call"); goto out; }
    if (pairs) (*env)->SetDoubleArrayRegion(env, out, 0, no, m->b.lk);
    if (hk_gkl_tracing()) hk_gkl_note_call(hk_log_now() - t0);
out:
    hk_gkl_leave();
}
