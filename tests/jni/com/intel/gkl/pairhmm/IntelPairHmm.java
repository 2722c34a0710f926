package com.intel.gkl.pairhmm;

import org.broadinstitute.gatk.nativebindings.pairhmm.HaplotypeDataHolder;
import org.broadinstitute.gatk.nativebindings.pairhmm.PairHMMNativeArguments;
import org.broadinstitute.gatk.nativebindings.pairhmm.ReadDataHolder;

import java.io.File;

/**
 * The test's stand-in for GKL's class of this name: the same package, class
 * and native methods (static initNative; computeLikelihoodsNative and
 * doneNative on the object), so that the library binds exactly as it does
 * inside HaplotypeCaller. The library is loaded by the caller
 * (System.loadLibrary("gkl_pairhmm") or "gkl_pairhmm_omp"), or by load() as
 * GKL's class loads it. Like GKL's, the class has a field useOmp, false here
 * and true in IntelPairHmmOMP, and the methods load(File) and
 * initialize(PairHMMNativeArguments), so that a client written against GKL's
 * classes compiles against these too.
 */
public class IntelPairHmm {
    boolean useOmp = false;
    String nativeLibraryName = "gkl_pairhmm";

    /** As GKL's: loads the library of the class's name from java.library.path. */
    public boolean load(File tempDir) {
        System.loadLibrary(nativeLibraryName);
        return true;
    }

    /** As GKL's (null: float, one thread). */
    public void initialize(PairHMMNativeArguments args) {
        if (args == null) args = new PairHMMNativeArguments();
        initialize(args.useDoublePrecision, args.maxNumberOfThreads);
    }

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
