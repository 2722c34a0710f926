#!/usr/bin/env bash
# bench-e2e.sh - whole-process timings of `haplik score` on the SPEC section 7 workloads.
#
#   scripts/bench-e2e.sh [-r RUNS] [-d DEVICES] [-w WORKDIR] [WORKLOAD...]
#
# WORKLOADs: eq128 (equal 128x128, 2M pairs, seed 9), na (NA12878-like, seeds 1-4
# concatenated, batch format), na-gatk (the same pairs in HaplotypeCaller's results-file
# layout, four files), or all (default). Inputs are generated once into WORKDIR (default
# /tmp/hk-e2e) with gen_batches.py. For each: the median wall time of RUNS (default 5)
# whole `haplik score` processes writing the full table, the stage busy times haplik
# reports, and, when tests/bench/bench_io is built, the parse and write phases alone.
# Needs haplik on PATH (or $HAPLIK) and python3.
set -euo pipefail
runs=5 devices=all work=/tmp/hk-e2e
while getopts r:d:w: o; do
    case $o in r) runs=$OPTARG ;; d) devices=$OPTARG ;; w) work=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
loads=${*:-all}
[ "$loads" = all ] && loads="eq128 na na-gatk"
hk=${HAPLIK:-haplik}
top=$(cd "$(dirname "$0")/.." && pwd)
gen=${GEN_BATCHES:-$top/scripts/gen_batches.py}
bench_io=${BENCH_IO:-}
mkdir -p "$work"

# Generate every missing input, in parallel (gen_batches.py is pure Python).
prepare() {
    local pids=()
    [ -s "$work/eq128.in" ] || { python3 "$gen" --profile equal --read-len 128 --hap-len 128 \
        --pairs 2000000 --seed 9 > "$work/eq128.in" & pids+=($!); }
    for s in 1 2 3 4; do
        [ -s "$work/na$s.in" ] || { python3 "$gen" --pairs 500000 --seed $s > "$work/na$s.in" & pids+=($!); }
        [ -s "$work/na$s.txt" ] || { python3 "$gen" --format gatk --pairs 500000 --seed $s > "$work/na$s.txt" & pids+=($!); }
    done
    for p in "${pids[@]}"; do wait "$p"; done
    [ -s "$work/na.in" ] || cat "$work"/na[1-4].in > "$work/na.in"
}

inputs() {
    case $1 in
    eq128) echo "$work/eq128.in" ;;
    na) echo "$work/na.in" ;;
    na-gatk) echo "$work/na1.txt $work/na2.txt $work/na3.txt $work/na4.txt" ;;
    *) echo "bench-e2e: unknown workload $1" >&2; exit 2 ;;
    esac
}

prepare
printf '%-8s %9s %8s %9s  %s\n' workload MB runs median_s "stage busy times (one more run)"
for w in $loads; do
    in=$(inputs "$w")
    # shellcheck disable=SC2086
    mb=$(du -cb $in | tail -n 1 | awk '{printf "%.0f", $1 / 1e6}')
    times=()
    for _ in $(seq "$runs"); do
        # a fresh output each time: replacing the last run's table would time
        # the kernel freeing it (~60 ms for the NA file), not haplik's work
        rm -f "$work/out.json"
        t0=$EPOCHREALTIME
        # shellcheck disable=SC2086
        "$hk" score --quiet --devices "$devices" -o "$work/out.json" $in
        t1=$EPOCHREALTIME
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
    done
    med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    # shellcheck disable=SC2086
    rm -f "$work/out.json"
    busy=$("$hk" score --devices "$devices" -o "$work/out.json" $in 2>&1 | tail -n 1)
    printf '%-8s %9s %8s %9.3f  %s\n' "$w" "$mb" "$runs" "$med" "${busy#haplik: }"
    echo "  all runs: ${times[*]}"
    if [ -n "$bench_io" ] && [ "$w" != na-gatk ]; then
        "$bench_io" "$in" "$work/io.json" | sed 's/^/  bench_io: /'
    fi
done
