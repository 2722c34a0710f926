#!/usr/bin/env bash
# bench-scaleout.sh - scale-out on one multi-GPU host, in one go (under 10 minutes on a 4-GPU,
# 64-core host): the NA12878-like file of 54M pairs (na27, 6.08 GB, as scripts/bench-e2e.sh makes
# it) scored by one process on 1, 2 and 4 GPUs (--no-sequences), then by the workflow in 8 shards
# (each part read in place) with --resources gpu=1 and gpu=4; where the seconds go (planning,
# scoring jobs, merge, Snakemake itself); the tables compared.
#
#   bash scripts/bench-scaleout.sh [REPS]     # from a bundle (scripts/make-bundle.sh) or a build
#
# Snakemake must be importable (offline hosts: wheels in .whl/, installed into /tmp/site).
# WORKDIR (default /tmp/hk-e2e) keeps the inputs; results under $OUT (default /tmp).
set -o pipefail
reps=${1:-3}
OUT=${OUT:-/tmp}
work=${WORKDIR:-/tmp/hk-e2e}
top=$PWD
# shellcheck source=/dev/null # the bundle's own settings, made by scripts/make-bundle.sh
[ -f .bundle/env.sh ] && . .bundle/env.sh
export NCCL_NVLS_ENABLE=0
[ -d .whl ] && python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} PATH=/tmp/site/bin:$PATH
H=${HAPLIK:-$(command -v haplik)}
gen=${GEN_BATCHES:-$top/scripts/gen_batches.py}
n=$(nvidia-smi -L | grep -c '^GPU')
echo "host: $(nproc) cores, $n GPUs ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)); $(snakemake --version 2>/dev/null | sed 's/^/snakemake /')"
mkdir -p "$work"
secs() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.2f", b-a}'; }

# ---- the input: na.in (seeds 1-4, 500k pairs each) 27 times -------------------------------
s=$EPOCHREALTIME
if [ ! -s "$work/na27.in" ]; then
    for k in 1 2 3 4; do [ -s "$work/na$k.in" ] || python3 "$gen" --pairs 500000 --seed $k > "$work/na$k.in" & done
    wait
    [ -s "$work/na.in" ] || cat "$work"/na{1,2,3,4}.in > "$work/na.in"
    for _ in $(seq 27); do cat "$work/na.in"; done > "$work/na27.in"
fi
in=$work/na27.in
echo "input $in: $(stat -c %s "$in") bytes (ready in $(secs "$s") s); cat: $( s=$EPOCHREALTIME; cat "$in" >/dev/null; secs "$s") s"

# ---- one process on 1, 2, 4 GPUs ----------------------------------------------------------
lists=(0); [ "$n" -ge 2 ] && lists+=("0,1"); [ "$n" -ge 4 ] && lists+=("0,1,2,3")
for r in $(seq "$reps"); do
    for l in "${lists[@]}"; do
        s=$EPOCHREALTIME
        "$H" score --backend cuda --devices "$l" --no-sequences -o "$OUT/one-$l.json" "$in" 2> "$OUT/one-$l.log"
        echo "one process, devices $l, round $r: rc $? wall $(secs "$s") s; $(tail -1 "$OUT/one-$l.log")"
    done
done | tee "$OUT/scaleout-one.txt"
# the regions (one line each in a json table), compared as bytes: tables identical
regions() { grep '^{"index"' "$1"; }
for l in "${lists[@]}"; do
    [ "$l" = 0 ] && continue
    cmp -s <(regions "$OUT/one-0.json") <(regions "$OUT/one-$l.json") && same=yes || same=NO
    echo "regions of devices $l == devices 0: $same"
done

# ---- the workflow, 8 shards, gpu=1 and gpu=4 ----------------------------------------------
for g in 1 $([ "$n" -ge 4 ] && echo 4); do
    W=/tmp/hk-wf$g; rm -rf "$W"; mkdir -p "$W"
    printf 'haplik: %s\ndumps: [%s]\nshards: 8\ngenome: null\nscoring: {backend: cuda, devices: all, gpu_lock_dir: %s/locks, threads: %d, mem_mb: 4000, runtime: 60}\nhaplik_config: {output: {sequences: false}}\n' \
        "$H" "$in" "$W" $(( $(nproc) / (g > 1 ? g : 2) )) > "$W/cfg.yaml"
    cd "$W" || exit 1
    s=$EPOCHREALTIME
    snakemake -s "$top/workflow/Snakefile" --configfile cfg.yaml --cores "$(nproc)" --resources "gpu=$g" \
        --until merge_tables > sm.log 2>&1
    rc=$?
    wall=$(secs "$s")
    echo "workflow gpu=$g rc=$rc wall $wall s; written: $(du -sb results | cut -f1) bytes under results/"
    [ $rc = 0 ] || tail -30 sm.log
    # where the seconds go: each rule's jobs from Snakemake's own timestamps and the benchmarks
    python3 - "$wall" <<'PY'
import csv, glob, sys
def bench(pattern):
    out = []
    for p in sorted(glob.glob(pattern)):
        rows = list(csv.DictReader(open(p), delimiter="\t"))
        out.append(float(rows[0]["s"]) if rows else 0.0)
    return out
score = bench("benchmarks/score/*/*.tsv")
print(f"  scoring jobs: {len(score)}, each {min(score):.2f}-{max(score):.2f} s, sum {sum(score):.2f} s" if score else "  no benchmarks")
PY
    grep -h "busy" logs/score/*/*.log | sed 's/^/  job: /'
    for f in logs/plan/*.log logs/merge.log; do [ -e "$f" ] && echo "  $f: $(tail -1 "$f")"; done
    cd "$top" || exit 1
done 2>&1 | tee "$OUT/scaleout-wf.txt"
# rule timings from Snakemake's log: each job's start and finish stamps
for g in 1 4; do
    [ -s /tmp/hk-wf$g/sm.log ] || continue
    python3 - /tmp/hk-wf$g/sm.log "$g" <<'PY'
import re, sys
from datetime import datetime
lines = open(sys.argv[1]).read().splitlines()
stamp, jobs, cur = None, {}, None
for l in lines:
    m = re.match(r"^\[(\w{3} \w{3}\s+\d+ [\d:]+ \d{4})\]$", l)
    if m:
        stamp = datetime.strptime(re.sub(r"\s+", " ", m.group(1)), "%a %b %d %H:%M:%S %Y"); continue
    m = re.match(r"^\s*(local)?rule (\w+):", l)
    if m: cur = m.group(2); jobs.setdefault(cur, [stamp, stamp]); continue
    m = re.match(r"^Finished job", l) or re.match(r"^Finished jobid", l)
    if m and cur: jobs[cur][1] = stamp
first = min(v[0] for v in jobs.values()) if jobs else None
for r, (a, b) in jobs.items():
    print(f"  gpu={sys.argv[2]} {r}: first start +{(a - first).seconds} s, last stamp +{(b - first).seconds} s (1 s stamps)")
PY
done | tee -a "$OUT/scaleout-wf.txt"
for g in 1 4; do
    t=/tmp/hk-wf$g/results/likelihoods.json
    [ -s "$t" ] || continue
    cmp -s <(regions "$OUT/one-0.json") <(regions "$t") && same=yes || same=NO
    echo "regions of the workflow's table, gpu=$g == one process: $same"
done
