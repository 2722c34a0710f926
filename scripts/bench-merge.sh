#!/usr/bin/env bash
# bench-merge.sh - `haplik merge` of 8 shard tables against copying the same bytes, for the
# json, jsonl and tsv tables (docs/PERFORMANCE.md, "merge"). The shard tables are those the
# workflow makes: a generated dump planned in 8 parts (haplik split --plan) and each part
# scored in place (score --plan --part; BACKEND). Then, per format and alternating, RUNS
# times each: `cat shards > x` and `haplik merge shards -o y`, wall and CPU (user + system)
# seconds; the medians and their ratios are printed. The merged json table's regions are
# compared with those of the whole dump scored at once (they must be identical).
#
#   bash scripts/bench-merge.sh [RUNS]       # RUNS: 3 by default
#
# Environment: HAPLIK (the binary; ./haplik, else the one on PATH), WORKDIR (/tmp/hk-merge:
# inputs and tables, kept between runs), PAIRS (pairs generated, 2000000), REPEAT (the
# generated dump written this many times into the input, 4: a larger table without a longer
# generation), SEQUENCES (json tables with reads and haplotypes: true or false, false as the
# workflow's large runs write them), BACKEND (what scores the shard tables: cpu, or cuda on a GPU
# host for a large REPEAT), GEN_BATCHES (scripts/gen_batches.py).
set -eo pipefail
runs=${1:-3}
top=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${HAPLIK:-}" ]; then H=$HAPLIK
elif [ -x "$top/haplik" ]; then H=$top/haplik
else H=$(command -v haplik); fi
gen=${GEN_BATCHES:-$top/scripts/gen_batches.py}
work=${WORKDIR:-/tmp/hk-merge}
pairs=${PAIRS:-2000000}
repeat=${REPEAT:-4}
seq=${SEQUENCES:-false}
backend=${BACKEND:-cpu}
mkdir -p "$work"
cd "$work"

# ---- the input and its shard tables (made once, kept) --------------------------------------
tag="p$pairs-r$repeat-s$seq"
if [ ! -s "dump-$tag.in" ]; then
    [ -s "gen-$pairs.in" ] || python3 "$gen" --pairs "$pairs" --seed 1 > "gen-$pairs.in"
    for _ in $(seq "$repeat"); do cat "gen-$pairs.in"; done > "dump-$tag.in.tmp"
    mv "dump-$tag.in.tmp" "dump-$tag.in"
fi
in=dump-$tag.in
mkdir -p "$tag"
if [ ! -e "$tag/done" ]; then
    "$H" split --quiet --plan "$tag/plan.tsv" --parts 8 "$in"
    for k in 1 2 3 4 5 6 7 8; do
        for f in json jsonl tsv; do
            "$H" score --quiet --backend "$backend" --sequences "$seq" --plan "$tag/plan.tsv" --part "$k" \
                -o "$tag/s$k.$f" "$in"
        done
    done
    "$H" score --quiet --backend "$backend" --sequences "$seq" -o "$tag/whole.json" "$in"
    touch "$tag/done"
fi

echo "host: $(nproc) cores, $(uname -srm), load average $(cut -d' ' -f1-3 /proc/loadavg); $("$H" --version 2>/dev/null | head -1) ($H)"
echo "input: $in, $(stat -c %s "$in") bytes; $pairs pairs generated x $repeat; sequences $seq"

# ---- timing -------------------------------------------------------------------------------
# one timed command: "wall cpu" (cpu = user + system of the command and its children)
timed() {
    local TIMEFORMAT='%R %U %S' t
    t=$( { time "$@" >/dev/null 2>"$work/err"; } 2>&1 ) || { cat "$work/err" >&2; exit 1; }
    awk '{printf "%.3f %.3f\n", $1, $2 + $3}' <<< "$t"
}
median() { sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
out=$work/out
mkdir -p "$out"
for f in json jsonl tsv; do
    shards=()
    for k in 1 2 3 4 5 6 7 8; do shards+=("$tag/s$k.$f"); done
    bytes=$(cat "${shards[@]}" | wc -c)
    : > "$out/cat.$f.t"; : > "$out/merge.$f.t"
    for _ in $(seq "$runs"); do
        rm -f "$out/x.$f" "$out/y.$f" "$out/y.$f.meta.json"
        timed sh -c 'f=$1; shift; cat "$@" > "$f"' sh "$out/x.$f" "${shards[@]}" >> "$out/cat.$f.t"
        timed "$H" merge --quiet "${shards[@]}" -o "$out/y.$f" >> "$out/merge.$f.t"
    done
    cw=$(cut -d' ' -f1 "$out/cat.$f.t" | median); cc=$(cut -d' ' -f2 "$out/cat.$f.t" | median)
    mw=$(cut -d' ' -f1 "$out/merge.$f.t" | median); mc=$(cut -d' ' -f2 "$out/merge.$f.t" | median)
    awk -v f="$f" -v b="$bytes" -v cw="$cw" -v cc="$cc" -v mw="$mw" -v mc="$mc" -v r="$runs" 'BEGIN {
        printf "%-5s %6.1f MB: cat %.3f s wall %.3f s cpu; merge %.3f s wall %.3f s cpu (%.0f MB/s); " \
               "merge/cat: %.1fx wall, %.1fx cpu (medians of %d)\n", f, b / 1e6, cw, cc, mw, mc,
               b / 1e6 / (mw > 0 ? mw : 1e-9), mw / (cw > 0 ? cw : 1e-9), mc / (cc > 0 ? cc : 1e-9), r }'
    echo "      runs (wall cpu): cat $(tr '\n' ';' < "$out/cat.$f.t") merge $(tr '\n' ';' < "$out/merge.$f.t")"
done
# the merged table has the regions of the whole dump scored at once, byte for byte
regions() { grep '^{"index"' "$1"; }
if cmp -s <(regions "$tag/whole.json") <(regions "$out/y.json"); then
    echo "merged json regions == the whole dump's table: yes"
else
    echo "merged json regions == the whole dump's table: NO"; exit 1
fi
