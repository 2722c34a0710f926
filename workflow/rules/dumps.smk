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
        conda:
            "../../envs/haplik.yaml"
        params:
            haplik=HAPLIK,
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
        conda:
            "../../envs/haplik.yaml"
        params:
            haplik=HAPLIK,
            parts=N_SHARDS,
        shell:
            "{params.haplik:q} split --plan {output:q} --parts {params.parts} {input:q} 2> {log:q}"
