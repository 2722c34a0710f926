# score.smk - score each shard on a GPU of its own (or the CPU), then merge the tables.


rule haplik_config:
    output:
        lock="results/haplik/config.json",
        nolock="results/haplik/config-nolock.json",
    log:
        "logs/haplik_config.log",
    params:
        lock=get_haplik_config(lock=True),
        nolock=get_haplik_config(lock=False),
    run:
        import json

        if params.lock["engine"].get("gpu_lock_dir"):
            os.makedirs(params.lock["engine"]["gpu_lock_dir"], exist_ok=True)
        for path, cfg in ((output.lock, params.lock), (output.nolock, params.nolock)):
            with open(path, "w") as f:
                json.dump(cfg, f, indent=2)
                f.write("\n")
        with open(log[0], "w") as f:
            f.write(f"wrote {output.lock} and {output.nolock}\n")


# One job per shard; `gpu=1` makes Snakemake run at most as many at once as --resources
# gpu=N allows (a SLURM job asks for --gpus=1), and haplik's engine.gpu_lock_dir makes
# jobs of one host take different GPUs. In a SLURM job SLURM has allocated the GPU
# (CUDA_VISIBLE_DEVICES), so the config without the lock directory is used there.
rule score_shard:
    input:
        dump=get_score_input,
        config="results/haplik/config.json",
        config_nolock="results/haplik/config-nolock.json",
    output:
        "results/tables/{dump}/{shard}.json",
    log:
        "logs/score/{dump}/{shard}.log",
    benchmark:
        "benchmarks/score/{dump}/{shard}.tsv"
    conda:
        "../../envs/haplik.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
        mem_mb=config["scoring"]["mem_mb"],
        runtime=config["scoring"]["runtime"],
    params:
        haplik=HAPLIK,
    shell:
        "cfg={input.config:q}; if [ -n \"${{SLURM_JOB_ID:-}}\" ]; then cfg={input.config_nolock:q}; fi;"
        " {params.haplik} score -c \"$cfg\" --threads {threads} -o {output:q} {input.dump:q}"
        " 2> {log:q}"


rule merge_tables:
    input:
        get_tables(),
    output:
        "results/likelihoods.json",
    log:
        "logs/merge.log",
    conda:
        "../../envs/haplik.yaml"
    params:
        haplik=HAPLIK,
    shell:
        "{params.haplik} merge {input:q} -o {output:q} 2> {log:q}"
