# score.smk - score each shard on a GPU of its own (or the CPU), then merge the tables.


# One job per shard. `gpu=1` lets Snakemake run at most as many at once as --resources
# gpu=N allows (a SLURM job asks for --gpus=1), and haplik's engine.gpu_lock_dir makes the
# jobs of one host take different GPUs (haplik waits while all are taken). The job gives
# haplik its settings as flags (logged first), the lock folder with --gpu-lock-dir:
# scoring.gpu_lock_dir, or inside a SLURM allocation, a node-local directory of that allocation, since SLURM has
# already chosen the GPUs it sees (CUDA_VISIBLE_DEVICES): jobs of one allocation (a local
# run inside salloc) share them through it, jobs of their own allocation (the SLURM
# executor) find theirs free.
rule score_shard:
    input:
        unpack(get_score_input),
    output:
        f"results/tables/{{dump}}/{{shard}}.{TABLE_EXT}",
    log:
        "logs/score/{dump}/{shard}.log",
    benchmark:
        "benchmarks/score/{dump}/{shard}.tsv"
    conda:
        "../envs/haplik.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
        mem_mb=config["scoring"]["mem_mb"],
        runtime=config["scoring"]["runtime"],
    params:
        haplik=HAPLIK,
        flags=get_haplik_flags(),
        part=get_part_flags,
        lock_dir=get_gpu_lock_dir(),
    shell:
        """
        (
            lock={params.lock_dir:q}
            if [ -n "$lock" ] && [ -n "${{SLURM_JOB_ID:-}}" ]; then
                lock="${{TMPDIR:-/tmp}}/haplik-gpu-locks-slurm-$SLURM_JOB_ID"
            fi
            if [ -n "$lock" ]; then mkdir -p "$lock"; fi
            # the temporary files of a job killed before it could remove them
            rm -f "$(dirname {output:q})/.$(basename {output:q})"*.tmp??????
            echo "haplik flags: {params.flags} --gpu-lock-dir ${{lock:-null}}" >&2
            {params.haplik:q} score {params.flags:q} --gpu-lock-dir "${{lock:-null}}" \
                --threads {threads} {params.part:q} -o {output:q} {input.dump:q}
        ) 2>{log:q}
        """


rule merge_tables:
    input:
        get_tables(),
    output:
        RESULT,
    log:
        "logs/merge.log",
    benchmark:
        "benchmarks/merge.tsv"
    localrule: True
    conda:
        "../envs/haplik.yaml"
    params:
        haplik=HAPLIK,
        format=OUTPUT_FORMAT.removesuffix(".gz"),
        others=get_other_results(),
    shell:
        """
        (
            rm -f "$(dirname {output:q})/.$(basename {output:q})"*.tmp??????
            for old in {params.others:q}; do
                if [ -e "$old" ]; then
                    echo "haplik workflow: removed $old, the merged table of an earlier run in another output_format" >&2
                    rm -f "$old" "$old.meta.json"
                fi
            done
            {params.haplik:q} merge --output-format {params.format} {input:q} -o {output:q}
        ) 2> {log:q}
        """
