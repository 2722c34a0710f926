/* hk_gkl_utils.c - libgkl_utils.so for aarch64: the natives of GKL's
 * com.intel.gkl.IntelGKLUtils, which GKL ships for x86-64 alone.
 *
 * HaplotypeCaller's native Pair-HMM loads gkl_utils and asks it
 * isAvxSupported() before it loads gkl_pairhmm_omp (haplik's library under
 * GKL's name); without this library GATK falls back to its Java Pair-HMM.
 * The answers, for a host where haplik is the Pair-HMM:
 *   isAvxSupported     true: "the vector Pair-HMM runs here" (haplik's NEON pass)
 *   isAvx2Supported    false, and
 *   isAvx512Supported  false: GKL's Smith-Waterman and compression, which
 *                      have no aarch64 library, stay in Java
 *   get/setFlushToZero the calling thread's FPCR.FZ (MXCSR.FZ's counterpart)
 *   getAvailableOmpThreads  OMP_NUM_THREADS's first value where it is a
 *                      positive number, else the CPUs of the affinity mask
 *                      (what OpenMP's omp_get_max_threads gives GKL on x86)
 * Needs libc alone (no JVM library): jni.h for the types.
 */
#include <jni.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#if !defined(__aarch64__)
#error "libgkl_utils.so is for aarch64: on x86-64 GKL's own is used"
#endif

#define FPCR_FZ ((uint64_t)1 << 24)

static uint64_t fpcr_get(void)
{
    uint64_t v;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
    return v;
}

static void fpcr_set(uint64_t v)
{
    __asm__ __volatile__("msr fpcr, %0" : : "r"(v));
}

JNIEXPORT jboolean JNICALL Java_com_intel_gkl_IntelGKLUtils_isAvxSupportedNative(JNIEnv *env, jobject self)
{
    (void)env; (void)self;
    return JNI_TRUE;
}

JNIEXPORT jboolean JNICALL Java_com_intel_gkl_IntelGKLUtils_isAvx2SupportedNative(JNIEnv *env, jobject self)
{
    (void)env; (void)self;
    return JNI_FALSE;
}

JNIEXPORT jboolean JNICALL Java_com_intel_gkl_IntelGKLUtils_isAvx512SupportedNative(JNIEnv *env, jobject self)
{
    (void)env; (void)self;
    return JNI_FALSE;
}

JNIEXPORT jboolean JNICALL Java_com_intel_gkl_IntelGKLUtils_getFlushToZeroNative(JNIEnv *env, jobject self)
{
    (void)env; (void)self;
    return (fpcr_get() & FPCR_FZ) ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT void JNICALL Java_com_intel_gkl_IntelGKLUtils_setFlushToZeroNative(JNIEnv *env, jobject self,
                                                                              jboolean on)
{
    (void)env; (void)self;
    const uint64_t v = fpcr_get();
    fpcr_set(on ? v | FPCR_FZ : v & ~FPCR_FZ);
}

/* OMP_NUM_THREADS's first value ("8" or "8,4": the outermost level's). */
static int omp_num_threads(void)
{
    const char *s = getenv("OMP_NUM_THREADS");
    if (!s) return 0;
    while (*s == ' ' || *s == '\t') s++;
    char *end;
    const long n = strtol(s, &end, 10);
    while (*end == ' ' || *end == '\t') end++;
    if (end == s || (*end != '\0' && *end != ',') || n < 1 || n > 1 << 20) return 0;
    return (int)n;
}

JNIEXPORT jint JNICALL Java_com_intel_gkl_IntelGKLUtils_getAvailableOmpThreadsNative(JNIEnv *env, jobject self)
{
    (void)env; (void)self;
    const int omp = omp_num_threads();
    if (omp > 0) return omp;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (jint)n : 1;
}
