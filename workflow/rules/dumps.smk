# dumps.smk - dumps mode: cut each dump into shards at region boundaries.


if not GENOME_MODE and N_SHARDS > 1:

    rule split_dump:
        input:
            get_dump,
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
