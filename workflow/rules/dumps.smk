# dumps.smk - dumps mode: plan each dump's shards at region boundaries (read in place by
# the scoring jobs), or cut a compressed dump into shard files.


if SPLIT:

    rule split_dump:
        input:
            get_split_dump,
        output:
            expand("results/split/{{dump}}/{shard}.txt", shard=SHARD_IDS),
        log:
            "logs/split/{dump}.log",
        benchmark:
            "benchmarks/split/{dump}.tsv"
        conda:
            "../envs/haplik.yaml"
        params:
            haplik=HAPLIK,
            stamp=get_dump_stamp,
        shell:
            "{params.haplik:q} split {input:q} {output:q} 2> {log:q}"


if any(IN_PLACE.values()):

    rule plan_dump:
        input:
            get_split_dump,
        output:
            "results/plan/{dump}.tsv",
        log:
            "logs/plan/{dump}.log",
        benchmark:
            "benchmarks/plan/{dump}.tsv"
        conda:
            "../envs/haplik.yaml"
        params:
            haplik=HAPLIK,
            stamp=get_dump_stamp,
            parts=N_SHARDS,
        shell:
            "{params.haplik:q} split --plan {output:q} --parts {params.parts} {input:q} 2> {log:q}"
