package org.broadinstitute.gatk.nativebindings.pairhmm;

/** A haplotype as HaplotypeCaller hands it to a native Pair-HMM. */
public final class HaplotypeDataHolder {
    public byte[] haplotypeBases = null;
}
