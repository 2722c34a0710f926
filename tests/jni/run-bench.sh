#!/usr/bin/env bash
# run-bench.sh - pairs per second through libhaplik_gkl.so, driven by the Java harness
# as HaplotypeCaller drives it (one call per region, T Java threads with an object each,
# maxThreads 1), on an NA12878-like dump in HaplotypeCaller's layout; with HK_TRACE, the
# JNI layer's share of each call. Run from the build folder after `make`:
#
#   bash tests/jni/run-bench.sh [PAIRS] [SECONDS]      (defaults 200000 and 10)
#
# CPU rows (engine.backend cpu) for 1, 4 and 16 Java threads; where `haplik devices`
# lists a GPU, GPU rows (engine.backend auto and cuda) for 16 Java threads.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
pairs=${1:-200000} secs=${2:-10}
lib=$top/libhaplik_gkl.so
[ -f "$lib" ] || { echo "run-bench.sh: $lib not built (configure found no jni.h?)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/classes" "$work/lib"
mapfile -t sources < <(find "$top/tests/jni" -name '*.java')
javac -d "$work/classes" "${sources[@]}"
ln -s "$lib" "$work/lib/libgkl_pairhmm_omp.so"
python3 "$top/scripts/gen_batches.py" --format gatk --pairs "$pairs" --seed 1 > "$work/na.txt"
run() {   # backend threads
    printf '{"engine": {"backend": "%s"}}\n' "$1" > "$work/cfg.json"
    HK_TRACE=1 HAPLIK_GKL_CONFIG="$work/cfg.json" java -Djava.library.path="$work/lib" -cp "$work/classes" \
        GklHarness gkl_pairhmm_omp bench "$work/na.txt" "$2" "$secs" 2> "$work/err" | sed "s/^/$1: /"
    grep -E 'Pair-HMM|trace gkl' "$work/err" | sort | uniq -c | sed "s/^/$1: /"
}
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; $(date -u +%F)"
for t in 1 4 16; do run cpu "$t"; done
if "$top/haplik" devices 2>/dev/null | grep -q '^[0-9]'; then
    run auto 16
    run cuda 16
else
    echo "no usable GPU: GPU rows skipped"
fi
