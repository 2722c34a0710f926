# genome.smk - genome mode: cut the reference into shards and run HaplotypeCaller on each,
# writing its Pair-HMM dump (--pair-hmm-results-file) for scoring.


def _hc_haplik_libs():
    """genome.pair_hmm_libs as an absolute path when HaplotypeCaller runs haplik's Pair-HMM
    (genome.pair_hmm: haplik), else None."""
    if config["genome"]["pair_hmm"] != "haplik":
        return None
    return os.path.abspath(config["genome"]["pair_hmm_libs"])


def get_hc_pair_hmm_libs():
    """The libraries HaplotypeCaller loads first from genome.pair_hmm_libs, so that a folder
    not prepared is reported before anything runs."""
    libs = _hc_haplik_libs()
    return [os.path.join(libs, f"lib{n}.so") for n in ("gkl_utils", "gkl_pairhmm_omp")] if libs else []


def get_hc_launcher():
    """gatk; with haplik's Pair-HMM, GKL's loader told to take every GKL library from
    java.library.path instead of GATK's jar."""
    return "USE_LIBRARY_PATH=1 gatk" if _hc_haplik_libs() else "gatk"


def get_hc_java_options():
    libs = _hc_haplik_libs()
    opts = config["genome"]["java_options"]
    return f"{opts} -Djava.library.path={libs}" if libs else opts


def get_hc_pair_hmm():
    """With haplik's Pair-HMM, GKL's OpenMP implementation by name: a library that fails to
    load then stops HaplotypeCaller instead of leaving it on its Java Pair-HMM."""
    return "--pair-hmm-implementation AVX_LOGLESS_CACHING_OMP" if _hc_haplik_libs() else ""


if GENOME_MODE:

    rule genome_shards:
        input:
            fai=get_reference_fai(),
        output:
            expand("results/genome/shards/{shard}.bed", shard=SHARD_IDS),
        log:
            "logs/genome/shards.log",
        localrule: True
        conda:
            "../../envs/haplik.yaml"
        params:
            haplik=HAPLIK,
            n=N_SHARDS,
            window=config["genome"]["window"],
            prefix=lambda wildcards, output: os.path.join(
                os.path.dirname(output[0]), ""
            ),
        shell:
            "{params.haplik:q} shard --fai {input.fai:q} -n {params.n} --window {params.window}"
            " {params.prefix:q} 2> {log:q}"

    rule haplotype_caller:
        input:
            bed="results/genome/shards/{shard}.bed",
            ref=get_reference(),
            fai=get_reference_fai(),
            bams=get_bams(),
            pair_hmm_libs=get_hc_pair_hmm_libs(),
        output:
            dump="results/genome/dumps/{shard}.txt",
            vcf="results/genome/vcf/{shard}.vcf.gz",
        log:
            "logs/genome/haplotypecaller/{shard}.log",
        benchmark:
            "benchmarks/genome/haplotypecaller/{shard}.tsv"
        conda:
            "../../envs/gatk4.yaml"
        threads: config["genome"]["threads"]
        resources:
            mem_mb=config["genome"]["mem_mb"],
        params:
            launcher=get_hc_launcher(),
            java_options=get_hc_java_options(),
            inputs=get_hc_inputs(),
            pair_hmm=get_hc_pair_hmm(),
            extra=config["genome"]["extra"],
        shell:
            "{params.launcher} --java-options {params.java_options:q} HaplotypeCaller"
            " -R {input.ref:q} {params.inputs} -L {input.bed:q} -O {output.vcf:q}"
            " --pair-hmm-results-file {output.dump:q} --native-pair-hmm-threads {threads}"
            " {params.pair_hmm} {params.extra} > {log:q} 2>&1"
