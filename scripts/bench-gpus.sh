#!/usr/bin/env bash
# bench-gpus.sh - multi-GPU measurements, run from a bundle (scripts/make-bundle.sh) on a GPU host:
# haplik on GPU 0 vs GPUs 0,1 (whole process and GPU phase), then the workflow with the
# NA12878-like file in 4 shards on --resources gpu=1 vs gpu=2. Snakemake must be importable
# (offline hosts: wheels in .whl/, installed into /tmp/site). Output under $OUT (default /tmp).
set -o pipefail
OUT=${OUT:-/tmp}
. .bundle/env.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
[ -d .whl ] && python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
nvidia-smi -L; snakemake --version
H=$(command -v haplik); export HAPLIK=$H GEN_BATCHES=$PWD/scripts/gen_batches.py
for d in 0 0,1; do bash scripts/bench-e2e.sh -r 5 -d $d na eq128 na-gatk; done 2>&1 | tee $OUT/e2e.txt
for d in 0 0,1; do .bundle/tests/gpu/time_gpu -r 7 -d $d /tmp/hk-e2e/na.in; .bundle/tests/gpu/time_gpu -r 7 -d $d /tmp/hk-e2e/eq128.in; done 2>&1 | tee $OUT/gpuphase.txt | grep -iE "tcups|median|devices" | tail -12
top=$PWD
for g in 1 2; do
    W=/tmp/wf$g; rm -rf $W; mkdir -p $W
    printf 'haplik: %s\ndumps: [/tmp/hk-e2e/na.in]\nshards: 4\ngenome: null\nscoring: {backend: cuda, devices: all, gpu_lock_dir: %s/locks, threads: 8, mem_mb: 4000, runtime: 60}\nhaplik_config: {}\n' "$H" "$W" > $W/cfg.yaml
    cd $W
    s=$EPOCHREALTIME
    snakemake -s $top/workflow/Snakefile --configfile cfg.yaml --cores 16 --resources gpu=$g > sm.log 2>&1
    rc=$?
    echo "workflow gpu=$g rc=$rc wall $(awk -v a=$s -v b=$EPOCHREALTIME 'BEGIN{printf "%.2f", b-a}') s"
    grep -h "claimed\|releasing" logs/score/*/*.log | awk '{print $NF, $0}' | sort | cut -d' ' -f2-
    python3 -c "import json;t=json.load(open('results/likelihoods.json'));print(t['summary']['regions'], [(p['table'],p['device_ordinals'],p['seconds']) for p in t['summary']['parts']])"
    ls -la locks; cat locks/*
    [ $rc = 0 ] || tail -30 sm.log
    cd $top
done 2>&1 | tee $OUT/wf.txt
cmp /tmp/wf1/results/likelihoods.json /tmp/wf2/results/likelihoods.json >/dev/null; echo "tables differ only in summary: $(python3 -c "import json;a=json.load(open('/tmp/wf1/results/likelihoods.json'));b=json.load(open('/tmp/wf2/results/likelihoods.json'));print(a['regions']==b['regions'])")"
