# report.smk - the Snakemake report (snakemake --report report.html): a digest of each shard
# (report_shard: a few kB, whatever the shard's pairs), then the figures and tables from the
# digests (report_figures): where the time went, whether to trust the numbers, per shard the
# pairs, cells, times and device, the throughput, the likelihoods and |haplik - GATK|.


rule report_shard:
    input:
        unpack(get_digest_input),
    output:
        "results/report/shards/{dump}/{shard}.json",
    log:
        "logs/report_shard/{dump}/{shard}.log",
    benchmark:
        "benchmarks/report_shard/{dump}/{shard}.tsv"
    conda:
        "../envs/report.yaml"
    params:
        part=lambda wildcards: int(wildcards.shard),
        gatk=GATK_VALUES,
    script:
        "../scripts/report_shard.py"


rule report_figures:
    input:
        unpack(get_figures_input),
    output:
        summary=report(
            "results/report/summary.html",
            caption="../report/summary.rst",
            category="1. The run",
            labels={"figure": "where the time went; can I trust it"},
        ),
        time=report(
            "results/report/time.svg",
            caption="../report/time.rst",
            category="1. The run",
            labels={"figure": "time per step"},
        ),
        shards_html=report(
            "results/report/shards.html",
            caption="../report/shards.rst",
            category="2. Scoring",
            labels={"figure": "per shard"},
        ),
        shards=report(
            "results/report/shards.tsv",
            caption="../report/shards.rst",
            category="2. Scoring",
            labels={"figure": "per shard (TSV)"},
        ),
        throughput=report(
            "results/report/throughput.svg",
            caption="../report/throughput.rst",
            category="2. Scoring",
            labels={"figure": "throughput"},
        ),
        likelihoods=report(
            "results/report/likelihoods.svg",
            caption="../report/likelihoods.rst",
            category="3. Likelihoods",
            labels={"figure": "histogram"},
        ),
        gatk=report(
            "results/report/gatk_difference.svg",
            caption="../report/gatk_difference.rst",
            category="3. Likelihoods",
            labels={"figure": "|haplik - GATK|"},
        ),
        run_config=RUN_CONFIG,
    log:
        "logs/report_figures.log",
    localrule: True
    conda:
        "../envs/report.yaml"
    params:
        names=[f"{d}/{s}" for d in DUMPS for s in SHARD_IDS],
    script:
        "../scripts/report_figures.py"
