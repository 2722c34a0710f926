# score.smk - score each shard on a GPU of its own (or the CPU), then merge the tables.


rule haplik_config:
    output:
        lock="results/haplik/config.json",
        nolock="results/haplik/config-nolock.json",
    log:
        "logs/haplik_config.log",
    conda:
        "../../envs/haplik.yaml"
    localrule: True
    params:
        lock=json.dumps(get_haplik_config(lock=True), indent=2),
        nolock=json.dumps(get_haplik_config(lock=False), indent=2),
        lock_dir=get_gpu_lock_dir(),
    shell:
        "(if [ -n {params.lock_dir:q} ]; then mkdir -p {params.lock_dir:q}; fi"
        " && printf '%s\\n' {params.lock:q} > {output.lock:q}"
        " && printf '%s\\n' {params.nolock:q} > {output.nolock:q}) 2> {log:q}"


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
    localrule: True
    conda:
        "../../envs/haplik.yaml"
    params:
        haplik=HAPLIK,
    shell:
        "{params.haplik} merge {input:q} -o {output:q} 2> {log:q}"
