package com.intel.gkl.pairhmm;

import org.broadinstitute.gatk.nativebindings.pairhmm.HaplotypeDataHolder;
import org.broadinstitute.gatk.nativebindings.pairhmm.ReadDataHolder;

/**
 * The benchmark's view of the Pair-HMM native binding: the class name and the three native
 * methods are the ones a GKL-compatible library exports its JNI symbols for, so that one class
 * drives GKL's libraries and haplik's alike. The library itself is loaded by the caller
 * (System.loadLibrary), as GKL's loader does with USE_LIBRARY_PATH set.
 */
public class IntelPairHmm {
    /** Configures the library for this object, as HaplotypeCaller's initialize() does. */
    public void initialize(boolean useDoublePrecision, int maxThreads) {
        initNative(ReadDataHolder.class, HaplotypeDataHolder.class, useDoublePrecision, maxThreads);
    }

    /** Scores every read against every haplotype: out[r * haps.length + h], log10. */
    public void computeLikelihoods(ReadDataHolder[] reads, HaplotypeDataHolder[] haps, double[] out) {
        computeLikelihoodsNative(reads, haps, out);
    }

    public void done() {
        doneNative();
    }

    private static native void initNative(Class<?> readDataHolderClass, Class<?> haplotypeDataHolderClass,
                                          boolean doublePrecision, int maxThreads);

    private native void computeLikelihoodsNative(Object[] readDataArray, Object[] haplotypeDataArray,
                                                 double[] likelihoodArray);

    private native void doneNative();
}
