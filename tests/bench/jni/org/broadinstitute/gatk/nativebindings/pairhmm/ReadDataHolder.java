package org.broadinstitute.gatk.nativebindings.pairhmm;

/** One read as a Pair-HMM native binding receives it: bases, and qualities as raw Phred values. */
public final class ReadDataHolder {
    public byte[] readBases;
    public byte[] readQuals;
    public byte[] insertionGOP;
    public byte[] deletionGOP;
    public byte[] overallGCP;
}
