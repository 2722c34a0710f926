#!/usr/bin/env bash
# bench-e2e.sh - whole-process timings of `haplik score` on the SPEC section 7 workloads.
#
#   scripts/bench-e2e.sh [-r RUNS] [-d DEVICES] [-w WORKDIR] [-b BACKEND] [WORKLOAD...]
#
# WORKLOADs (inputs made once into WORKDIR, default /tmp/hk-e2e, with gen_batches.py):
#   eq128        equal 128x128, 2M pairs, seed 9
#   na           NA12878-like, seeds 1-4 concatenated (225 MB, batch layout)
#   na27         na 27 times (6.08 GB, 54M pairs), scored with --no-sequences
#   na-gatk      the na pairs in HaplotypeCaller's results-file layout, four files
#   na-gatk1     the same as one file (1.43 GB)
#   na-gatk-gz   that file gzipped by `gzip` (one member)
#   na-gatk-bgzf that file compressed by `bgzip` (BGZF)
#   all          eq128 na na-gatk (default)
# For each: the median wall time of RUNS (default 5) whole `haplik score` processes writing
# the table (fresh each run), its range, how many cores were busy (CPU time / wall time,
# median) and the largest resident memory; then the limit to compare with, reading the
# input from the page cache (`cat > /dev/null`), and the stage busy times haplik reports.
# When $BENCH_IO names tests/bench/bench_io, the parse and write phases alone too.
# Needs haplik on PATH (or $HAPLIK), python3, and gzip/bgzip for the compressed workloads.
set -euo pipefail
runs=5 devices=all work=/tmp/hk-e2e backend=
while getopts r:d:w:b: o; do
    case $o in r) runs=$OPTARG ;; d) devices=$OPTARG ;; w) work=$OPTARG ;; b) backend=$OPTARG ;;
    *) exit 2 ;; esac
done
shift $((OPTIND - 1))
loads=${*:-all}
[ "$loads" = all ] && loads="eq128 na na-gatk"
hk=${HAPLIK:-haplik}
top=$(cd "$(dirname "$0")/.." && pwd)
gen=${GEN_BATCHES:-$top/scripts/gen_batches.py}
bench_io=${BENCH_IO:-}
mkdir -p "$work"
ncpu=$(nproc)

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
    case " $loads " in *" na27 "*)
        [ -s "$work/na27.in" ] || for _ in $(seq 27); do cat "$work/na.in"; done > "$work/na27.in" ;;
    esac
    case " $loads " in *" na-gatk"[1gb]*)
        # gen_batches.py ends a results file without a line end: add one between files
        [ -s "$work/na-gatk.txt" ] || for s in 1 2 3 4; do
            cat "$work/na$s.txt"; [ -z "$(tail -c 1 "$work/na$s.txt")" ] || echo
        done > "$work/na-gatk.txt" ;;
    esac
    pids=()
    case " $loads " in *" na-gatk-gz "*)
        [ "$work/na-gatk.txt.gz" -nt "$work/na-gatk.txt" ] || { gzip -c "$work/na-gatk.txt" > "$work/na-gatk.txt.gz" & pids+=($!); } ;;
    esac
    case " $loads " in *" na-gatk-bgzf "*)
        [ "$work/na-gatk.bgzf.gz" -nt "$work/na-gatk.txt" ] || { bgzip -@ "$ncpu" -c "$work/na-gatk.txt" > "$work/na-gatk.bgzf.gz" & pids+=($!); } ;;
    esac
    for p in "${pids[@]}"; do wait "$p"; done
}

inputs() {
    case $1 in
    eq128) echo "$work/eq128.in" ;;
    na) echo "$work/na.in" ;;
    na27) echo "$work/na27.in" ;;
    na-gatk) echo "$work/na1.txt $work/na2.txt $work/na3.txt $work/na4.txt" ;;
    na-gatk1) echo "$work/na-gatk.txt" ;;
    na-gatk-gz) echo "$work/na-gatk.txt.gz" ;;
    na-gatk-bgzf) echo "$work/na-gatk.bgzf.gz" ;;
    *) echo "bench-e2e: unknown workload $1" >&2; exit 2 ;;
    esac
}

# Run a command; print "WALL_S CORES_BUSY MAXRSS_MB" (CPU time of the process and its
# children over wall time; the peak resident set of the largest).
measure() {
    python3 - "$@" <<'EOF'
import os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit("bench-e2e: %s exited with %d" % (sys.argv[1], os.waitstatus_to_exitcode(status)))
print("%.3f %.1f %.0f" % (wall, (ru.ru_utime + ru.ru_stime) / wall, ru.ru_maxrss / 1024))
EOF
}

prepare
printf '%-12s %7s %5s %9s %15s %6s %7s %9s\n' workload MB runs median_s range cores RSS_MB cat_s
for w in $loads; do
    read -r -a in <<< "$(inputs "$w")"
    extra=()
    [ "$w" = na27 ] && extra+=(--no-sequences)
    [ -n "$backend" ] && extra+=(--backend "$backend")
    mb=$(du -cb "${in[@]}" | tail -n 1 | awk '{printf "%.0f", $1 / 1e6}')
    cat "${in[@]}" > /dev/null     # into the page cache
    walls=() cores=() rss=()
    for _ in $(seq "$runs"); do
        # a fresh output each time: replacing the last run's table would time
        # the kernel freeing it, not haplik's work
        rm -f "$work/out.json"
        read -r t c m <<< "$(measure "$hk" score --quiet --devices "$devices" "${extra[@]}" \
                              -o "$work/out.json" "${in[@]}")"
        walls+=("$t") cores+=("$c") rss+=("$m")
    done
    catt=$(measure sh -c 'cat "$@" > /dev/null' cat "${in[@]}" | cut -d' ' -f1)
    med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
    lo=$(printf '%s\n' "${walls[@]}" | sort -n | head -n 1)
    hi=$(printf '%s\n' "${walls[@]}" | sort -n | tail -n 1)
    printf '%-12s %7s %5s %9s %15s %6s %7s %9s\n' "$w" "$mb" "$runs" "$(med "${walls[@]}")" \
        "$lo-$hi" "$(med "${cores[@]}")" "$(printf '%s\n' "${rss[@]}" | sort -n | tail -n 1)" "$catt"
    rm -f "$work/out.json"
    busy=$("$hk" score --devices "$devices" "${extra[@]}" -o "$work/out.json" "${in[@]}" 2>&1 | tail -n 1)
    echo "  ${busy#haplik: }"
    echo "  all runs: ${walls[*]}"
    if [ -n "$bench_io" ] && [ "${#in[@]}" = 1 ]; then
        "$bench_io" "${in[0]}" /dev/null | sed 's/^/  bench_io: /'
    fi
done
rm -f "$work/out.json"
