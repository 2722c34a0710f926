package org.broadinstitute.gatk.nativebindings.pairhmm;

/** One haplotype as a Pair-HMM native binding receives it. */
public final class HaplotypeDataHolder {
    public byte[] haplotypeBases;
}
