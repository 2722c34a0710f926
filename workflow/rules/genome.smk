# genome.smk - genome mode: cut the reference into shards and run HaplotypeCaller on each,
# writing its Pair-HMM dump (--pair-hmm-results-file) for scoring.


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
            "../envs/haplik.yaml"
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
            "../envs/gatk4.yaml"
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
