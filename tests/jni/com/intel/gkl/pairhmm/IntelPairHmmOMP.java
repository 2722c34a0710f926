package com.intel.gkl.pairhmm;

/** The OpenMP class of GKL: it inherits IntelPairHmm's natives, so one library serves both. */
public final class IntelPairHmmOMP extends IntelPairHmm {
    public IntelPairHmmOMP() {
        useOmp = true;
        nativeLibraryName = "gkl_pairhmm_omp";
    }
}
