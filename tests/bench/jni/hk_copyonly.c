/* hk_copyonly.c - a GKL-compatible Pair-HMM binding that only moves the data: each call
 * copies every holder's arrays into one native buffer and writes a result per pair back,
 * and scores nothing. Timed through the same harness as a real library, it gives the
 * cost of the JNI layer's copies, to set against a region-sized call that scores
 * (scripts/bench-gkl.sh). */
#include <jni.h>
#include <stdlib.h>
#include <string.h>

static jfieldID read_fid[5], hap_fid;

JNIEXPORT void JNICALL Java_com_intel_gkl_pairhmm_IntelPairHmm_initNative(JNIEnv *env, jclass cls, jclass rd,
                                                                          jclass hd, jboolean dbl, jint thr)
{
    static const char *names[5] = {"readBases", "readQuals", "insertionGOP", "deletionGOP", "overallGCP"};
    (void)cls, (void)dbl, (void)thr;
    for (int k = 0; k < 5; k++)
        if (!(read_fid[k] = (*env)->GetFieldID(env, rd, names[k], "[B"))) return;
    hap_fid = (*env)->GetFieldID(env, hd, "haplotypeBases", "[B");
}

/* Appends the byte array `fid` of holder `o` to buf at *at (grown as needed). */
static int take(JNIEnv *env, jobject o, jfieldID fid, jbyte **buf, size_t *cap, size_t *at)
{
    jbyteArray a = (jbyteArray)(*env)->GetObjectField(env, o, fid);
    if (!a) return -1;
    jsize n = (*env)->GetArrayLength(env, a);
    if (*at + (size_t)n > *cap) {
        size_t c = 2 * (*cap + (size_t)n);
        jbyte *b = realloc(*buf, c);
        if (!b) return -1;
        *buf = b, *cap = c;
    }
    (*env)->GetByteArrayRegion(env, a, 0, n, *buf + *at);
    *at += (size_t)n;
    (*env)->DeleteLocalRef(env, a);
    return 0;
}

/* Takes the n_fids arrays of holder i of arr. */
static int take_holder(JNIEnv *env, jobjectArray arr, jsize i, const jfieldID *fids, int n_fids, jbyte **buf,
                       size_t *cap, size_t *at)
{
    jobject o = (*env)->GetObjectArrayElement(env, arr, i);
    if (!o) return -1;
    int bad = 0;
    for (int k = 0; k < n_fids && !bad; k++) bad = take(env, o, fids[k], buf, cap, at) < 0;
    (*env)->DeleteLocalRef(env, o);
    return bad ? -1 : 0;
}

JNIEXPORT void JNICALL Java_com_intel_gkl_pairhmm_IntelPairHmm_computeLikelihoodsNative(JNIEnv *env, jobject self,
                                                                                        jobjectArray reads,
                                                                                        jobjectArray haps,
                                                                                        jdoubleArray out)
{
    (void)self;
    jsize R = (*env)->GetArrayLength(env, reads), H = (*env)->GetArrayLength(env, haps);
    size_t cap = 1 << 16, at = 0;
    jbyte *buf = malloc(cap);
    double *res = malloc(sizeof(double) * ((size_t)R * (size_t)H + 1));
    int bad = !buf || !res;
    for (jsize h = 0; h < H && !bad; h++) bad = take_holder(env, haps, h, &hap_fid, 1, &buf, &cap, &at) < 0;
    for (jsize r = 0; r < R && !bad; r++) bad = take_holder(env, reads, r, read_fid, 5, &buf, &cap, &at) < 0;
    if (!bad) {
        /* a value that depends on the bytes read, so no copy is dead code */
        double v = -(double)(unsigned char)buf[at ? at - 1 : 0];
        for (size_t p = 0; p < (size_t)R * (size_t)H; p++) res[p] = v;
        (*env)->SetDoubleArrayRegion(env, out, 0, R * H, res);
    } else if (!(*env)->ExceptionCheck(env)) {
        jclass e = (*env)->FindClass(env, "java/lang/NullPointerException");
        if (e) (*env)->ThrowNew(env, e, "hk_copyonly: a holder or field is null, or no memory");
    }
    free(buf);
    free(res);
}

JNIEXPORT void JNICALL Java_com_intel_gkl_pairhmm_IntelPairHmm_doneNative(JNIEnv *env, jobject self)
{
    (void)env, (void)self;
}
