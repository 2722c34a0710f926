package com.intel.gkl.pairhmm;

import org.broadinstitute.gatk.nativebindings.pairhmm.HaplotypeDataHolder;
import org.broadinstitute.gatk.nativebindings.pairhmm.ReadDataHolder;

/**
 * The test's stand-in for GKL's class of this name: the same package, class
 * and native methods (static initNative; computeLikelihoodsNative and
 * doneNative on the object), so that the library binds exactly as it does
 * inside HaplotypeCaller. The library is loaded by the caller
 * (System.loadLibrary("gkl_pairhmm") or "gkl_pairhmm_omp").
 */
public class IntelPairHmm {
    /** As GATK calls it for each Pair-HMM engine it creates. */
    public void initialize(boolean useDoublePrecision, int maxThreads) {
        initNative(ReadDataHolder.class, HaplotypeDataHolder.class, useDoublePrecision, maxThreads);
    }

    public void computeLikelihoods(ReadDataHolder[] reads, HaplotypeDataHolder[] haps, double[] out) {
        computeLikelihoodsNative(reads, haps, out);
    }

    public void done() {
        doneNative();
    }

    /** initNative with any classes, for the tests of bad calls. */
    public static void initializeWith(Class<?> readHolder, Class<?> hapHolder, boolean useDouble, int maxThreads) {
        initNative(readHolder, hapHolder, useDouble, maxThreads);
    }

    /** computeLikelihoodsNative with any arrays (GKL's own wrapper checks for null first; this does not). */
    public void computeUnchecked(Object[] reads, Object[] haps, double[] out) {
        computeLikelihoodsNative(reads, haps, out);
    }

    private native static void initNative(Class<?> readDataHolderClass, Class<?> haplotypeDataHolderClass,
                                          boolean doublePrecision, int maxThreads);

    private native void computeLikelihoodsNative(Object[] readDataArray, Object[] haplotypeDataArray,
                                                 double[] likelihoodArray);

    private native void doneNative();
}
