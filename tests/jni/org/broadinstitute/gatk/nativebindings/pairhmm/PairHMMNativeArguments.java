package org.broadinstitute.gatk.nativebindings.pairhmm;

/** What GATK hands a native Pair-HMM's initialize (the class and field names it uses). */
public class PairHMMNativeArguments {
    public int maxNumberOfThreads = 1;
    public boolean useDoublePrecision = false;
}
