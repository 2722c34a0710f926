#!/usr/bin/env bash
# bench_merge.sh - how close `haplik merge` comes to copying the same bytes.
#
# Makes a dump with the generator given (the NA12878-like profile), scores it
# once per format, takes that table as each of 8 shards, then times `cp` of the
# 8 tables and `haplik merge` of them, alternately, RUNS times each, and prints
# the range of each and their ratio. With REF set to another haplik binary,
# also merges with it and checks that both merged tables are byte-identical.
#
# Usage: tests/bench/bench_merge.sh GENERATOR [PAIRS [FORMATS]]
#   GENERATOR  a gen_batches.py (writes the batch format)
#   PAIRS      pairs in the dump [400000]: 8 json shards of ~70 bytes a pair
#   FORMATS    [json jsonl tsv]
# Environment: HAPLIK (the binary [./haplik]), REF (a reference binary),
#   RUNS [3], BENCH_DIR (keep the tables there instead of a temporary folder),
#   REPEAT (each shard is the scored table merged with itself REPEAT times [1]:
#   large shards from a smaller dump).
set -euo pipefail

gen=${1:?usage: $0 GENERATOR [PAIRS [FORMATS]]}
pairs=${2:-400000}
formats=${3:-json jsonl tsv}
haplik=$(realpath "${HAPLIK:-./haplik}")
ref=${REF:+$(realpath "$REF")}
runs=${RUNS:-3}
shards=8

if [ -n "${BENCH_DIR:-}" ]; then dir=$BENCH_DIR; mkdir -p "$dir"
else dir=$(mktemp -d "${TMPDIR:-/tmp}/haplik-bench-merge.XXXXXX"); trap 'rm -rf "$dir"' EXIT; fi
cd "$dir"

now() { date +%s.%N; }
# elapsed CMD...: run it, print its wall seconds
elapsed() { local t0; t0=$(now); "$@"; echo "$(now) - $t0" | bc; }
range() { sort -g | sed -n '1p;$p' | paste -sd' ' | awk '{printf "%.3f-%.3f", $1, $2}'; }

[ -s dump.in ] || python3 "$gen" --pairs "$pairs" --seed 1 > dump.in
echo "dump: $(stat -c %s dump.in) bytes, $pairs pairs, shards of ${REPEAT:-1} copies; host: $(nproc) cores; $(date -u +%FT%TZ)"
for fmt in $formats; do
    if [ ! -s "shard.$fmt" ]; then
        "$haplik" score --backend cpu --quiet --output-format "$fmt" -o "one.$fmt" dump.in
        copies=()
        for i in $(seq 1 "${REPEAT:-1}"); do copies+=("one.$fmt"); done
        "$haplik" merge --quiet --output-format "$fmt" -o "shard.$fmt" "${copies[@]}"
    fi
    tables=()
    for i in $(seq 1 $shards); do
        cp "shard.$fmt" "s$i.$fmt"
        [ ! -e "shard.$fmt.meta.json" ] || cp "shard.$fmt.meta.json" "s$i.$fmt.meta.json"
        tables+=("s$i.$fmt")
    done
    bytes=$(cat "${tables[@]}" | wc -c)
    # warm the page cache, then alternate
    cat "${tables[@]}" > /dev/null
    cps=() merges=()
    for _ in $(seq 1 "$runs"); do
        mkdir -p copy
        cps+=("$(elapsed cp "${tables[@]}" copy/)")
        merges+=("$(elapsed "$haplik" merge --quiet --output-format "$fmt" -o "merged.$fmt" "${tables[@]}")")
        rm -rf copy
    done
    cp_range=$(printf '%s\n' "${cps[@]}" | range)
    merge_range=$(printf '%s\n' "${merges[@]}" | range)
    best_cp=$(printf '%s\n' "${cps[@]}" | sort -g | head -1)
    best_merge=$(printf '%s\n' "${merges[@]}" | sort -g | head -1)
    ratio=$(echo "scale=2; $best_merge / $best_cp" | bc)
    echo "$fmt: $shards tables, $bytes bytes: cp $cp_range s, merge $merge_range s (best merge / best cp: $ratio)"
    if [ -n "$ref" ]; then
        if ! "$ref" merge --quiet --output-format "$fmt" -o "ref.$fmt" "${tables[@]}" 2> ref.err; then
            echo "$fmt: REF cannot merge these tables: $(head -1 ref.err)"
        elif cmp -s "merged.$fmt" "ref.$fmt"; then echo "$fmt: merged table identical to REF's"
        else echo "$fmt: merged table DIFFERS from REF's"; fi
    fi
done
