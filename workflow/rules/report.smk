# report.smk - the figures of the Snakemake report (snakemake --report report.html): per
# shard the pairs, cells, seconds, GCUPS and device; throughput per shard and device; the
# likelihoods; |haplik - GATK| per pair when the dumps carry GATK's values.


rule report_figures:
    input:
        tables=get_tables(),
        sources=get_report_sources(),
        benchmarks=get_score_benchmarks(),
    output:
        **get_gatk_figure(),
        shards_html=report(
            "results/report/shards.html",
            caption="../report/shards.rst",
            category="Scoring",
            labels={"figure": "per shard"},
        ),
        shards=report(
            "results/report/shards.tsv",
            caption="../report/shards.rst",
            category="Scoring",
            labels={"figure": "per shard (TSV)"},
        ),
        throughput=report(
            "results/report/throughput.svg",
            caption="../report/throughput.rst",
            category="Scoring",
            labels={"figure": "throughput"},
        ),
        likelihoods=report(
            "results/report/likelihoods.svg",
            caption="../report/likelihoods.rst",
            category="Likelihoods",
            labels={"figure": "histogram"},
        ),
    log:
        "logs/report_figures.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/report_figures.py"
