package org.broadinstitute.gatk.nativebindings.pairhmm;

/** A read as HaplotypeCaller hands it to a native Pair-HMM (the class and field names it uses). */
public final class ReadDataHolder {
    public byte[] readBases = null;
    public byte[] readQuals = null;
    public byte[] insertionGOP = null;
    public byte[] deletionGOP = null;
    public byte[] overallGCP = null;
}
