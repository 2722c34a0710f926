#!/usr/bin/env bash
# bench-gkl.sh - haplik's GKL-compatible Pair-HMM library against Intel GKL's, through the same
# JNI harness (tests/bench/jni/): region-sized calls replayed from a HaplotypeCaller results
# file, pairs per second. Prints a table (and writes it, with every run's log, under --out).
#
#   scripts/bench-gkl.sh [options] GKL_DIR HAPLIK_DIR DUMP
#
# GKL_DIR holds GKL's libgkl_pairhmm.so and libgkl_pairhmm_omp.so (built from its source);
# HAPLIK_DIR holds haplik's libraries under the same names (the folder `make install` puts
# them in) or libhaplik_gkl.so (a build folder); DUMP is a --pair-hmm-results-file (.gz too),
# written by gen_batches.py when it does not exist (--generate). Rows (--rows, comma-separated):
#   t1, t4, t16  1, 4 or 16 Java threads, each with its own object and maxThreads 1:
#                GKL's AVX library vs haplik on the CPU
#   d1, d4, d16  the same with haplik's default configuration (auto: the GPU where usable)
#   gpu          GKL's OpenMP library, one object with maxThreads 16, vs haplik with the
#                GPU on and 16 Java threads (each its own object, maxThreads 1)
#   hc1, hc4     HaplotypeCaller's defaults on a GPU host: 1 or 4 Java threads, maxThreads 4,
#                GKL's OpenMP library vs haplik's default configuration (auto: the GPU on)
#   overhead     the JNI layer's copies (KIT's copy-only binding: every holder's arrays in,
#                a result per pair out, no scoring) as a fraction of haplik's 1-thread call
#   check        both libraries score every region once: the largest |difference|
#   CLASS:T:M:CFG  GKL's CLASS (omp: IntelPairHmmOMP, avx: IntelPairHmm) from T Java threads, each
#                with its own object and maxThreads M, GKL's library vs haplik with config CFG
#                (cpu, default: the GPU where usable, cuda); e.g. omp:1:4:cpu is HaplotypeCaller's
#                default with haplik on the CPU alone
# --gkl-classes drives both libraries through GKL's own Java classes (GKL's jar and
# gatk-native-bindings, e.g. Debian's libgkl-java; GKL_DIR then also gives haplik GKL's
# libgkl_utils.so) instead of the harness's stand-ins.
# Each timed pair of runs alternates GKL and haplik, --reps times; the table gives the median
# and the range. See docs/PERFORMANCE.md for results.
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    cat <<EOF
Options:
  --rows LIST       rows to run [$ROWS]
  --reps N          alternating runs per library and row [$REPS]
  --seconds S       timed seconds per run [$SECONDS_RUN]
  --warmup S        untimed seconds per run first [$WARMUP]
  --double          useDouble (all double precision) instead of GKL's float-then-double
  --gkl-classes DIR GKL's own classes: DIR holds gkl.jar, gatk-native-bindings.jar and
                    commons-logging.jar (Debian: /usr/share/java)
  --kit DIR         the harness, built there by tests/bench/jni/build.sh when absent [$KIT]
  --java PATH       the java launcher [java on PATH, else KIT/jre/bin/java]
  --out DIR         logs and table.txt [$OUT_DIR]
  --generate PAIRS  when DUMP does not exist, write it: gen_batches.py --format gatk
                    --pairs PAIRS --seed 1 [$GEN_PAIRS]
  --distinct-haps   and with --distinct-haps (each region's haplotypes differ, as
                    HaplotypeCaller's do: 53.6 pairs a call at 100k pairs, not 17.1)
  --gen PATH        gen_batches.py to use [$GEN]
  -h, --help
EOF
    exit "${1:-0}"
}
die() { echo "bench-gkl.sh: error: $*" >&2; exit 2; }
# on a failure (a run fails inside $(...), which set -e turns into the script's end) the
# rows measured so far are still shown
table=
show_rows_so_far() {
    local rc=$?
    [ "$rc" = 0 ] || [ -z "$table" ] || [ ! -s "$table" ] || { echo "(stopped: the rows so far)"; cat "$table"; }
}
trap show_rows_so_far EXIT

top=$(cd "$(dirname "$0")/.." && pwd)
ROWS=t1,t4,t16,overhead,check,gpu REPS=1 SECONDS_RUN=3 WARMUP=2 DOUBLE='' KIT=${TMPDIR:-/tmp}/hk-gkl-kit
JAVA='' OUT_DIR=${TMPDIR:-/tmp}/hk-gkl-bench GEN_PAIRS=100000 GEN=$top/scripts/gen_batches.py GKL_JARS=''
GEN_DISTINCT=''
CLASSES=''   # the benchmark's classes and class path, set below
args=()
while [ $# -gt 0 ]; do
    case $1 in
        -h|--help) usage 0 ;;
        --rows) ROWS=$2; shift 2 ;;
        --reps) REPS=$2; shift 2 ;;
        --seconds) SECONDS_RUN=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --double) DOUBLE=--double; shift ;;
        --gkl-classes) GKL_JARS=$2; shift 2 ;;
        --kit) KIT=$2; shift 2 ;;
        --java) JAVA=$2; shift 2 ;;
        --out) OUT_DIR=$2; shift 2 ;;
        --generate) GEN_PAIRS=$2; shift 2 ;;
        --distinct-haps) GEN_DISTINCT=--distinct-haps; shift ;;
        --gen) GEN=$2; shift 2 ;;
        -*) echo "bench-gkl.sh: unknown option $1" >&2; usage 1 >&2 ;;
        *) args+=("$1"); shift ;;
    esac
done
[ ${#args[@]} -eq 3 ] || { echo "bench-gkl.sh: expected GKL_DIR HAPLIK_DIR DUMP" >&2; usage 1 >&2; }
GKL_DIR=$(cd "${args[0]}" && pwd) || die "no folder ${args[0]}"
HK_DIR=$(cd "${args[1]}" && pwd) || die "no folder ${args[1]}"
DUMP=${args[2]}
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "--reps: expected a positive integer, got '$REPS'"
mkdir -p "$OUT_DIR"
HK_DEPS=$HK_DIR   # libraries haplik's needs may sit beside it (a copy for a host without them)
# a build folder holds libhaplik_gkl.so only: GKL's names for it, as `make install` makes them
if [ ! -e "$HK_DIR/libgkl_pairhmm.so" ] && [ -e "$HK_DIR/libhaplik_gkl.so" ]; then
    mkdir -p "$OUT_DIR/haplik-libs"
    for lib in gkl_pairhmm gkl_pairhmm_omp; do ln -sf "$HK_DIR/libhaplik_gkl.so" "$OUT_DIR/haplik-libs/lib$lib.so"; done
    HK_DIR=$OUT_DIR/haplik-libs
fi
for lib in gkl_pairhmm gkl_pairhmm_omp; do
    [ -e "$GKL_DIR/lib$lib.so" ] || die "$GKL_DIR: no lib$lib.so"
    [ -e "$HK_DIR/lib$lib.so" ] || die "$HK_DIR: no lib$lib.so (nor libhaplik_gkl.so)"
done

if [ ! -f "$KIT/classes/bench/PairHmmBench.class" ] || [ ! -f "$KIT/libhk_copyonly.so" ]; then
    bash "$top/tests/bench/jni/build.sh" "$KIT"
fi
if [ -z "$JAVA" ]; then
    if command -v java >/dev/null; then JAVA=java
    elif [ -x "$KIT/jre/bin/java" ]; then JAVA=$KIT/jre/bin/java
    else die "no java on PATH and no $KIT/jre (build one here with tests/bench/jni/build.sh KIT --runtime)"
    fi
fi
CLASSES=$KIT/classes
if [ -n "$GKL_JARS" ]; then
    for j in gkl gatk-native-bindings commons-logging; do
        [ -f "$GKL_JARS/$j.jar" ] || die "--gkl-classes: no $GKL_JARS/$j.jar"
    done
    jars=$GKL_JARS/gkl.jar:$GKL_JARS/gatk-native-bindings.jar:$GKL_JARS/commons-logging.jar
    mkdir -p "$KIT/gkl-classes"
    javac -nowarn --release 11 -cp "$jars" -d "$KIT/gkl-classes" "$top/tests/bench/jni/bench/PairHmmBench.java" 2>/dev/null ||
        die "PairHmmBench does not compile against $GKL_JARS's classes"
    CLASSES=$KIT/gkl-classes:$jars
fi
if [ ! -e "$DUMP" ]; then
    echo "bench-gkl.sh: writing $DUMP ($GEN_PAIRS pairs)" >&2
    python3 "$GEN" --format gatk --pairs "$GEN_PAIRS" --seed 1 $GEN_DISTINCT >"$DUMP.tmp" && mv "$DUMP.tmp" "$DUMP"
fi
printf '{"engine": {"backend": "cpu"}}\n' >"$OUT_DIR/cpu.json"
printf '{"engine": {"backend": "cuda"}}\n' >"$OUT_DIR/cuda.json"
printf '{}\n' >"$OUT_DIR/default.json"

# run NAME LIBDIR LIBRARY CONFIG ARGS...: one JVM; its line of key=value pairs in NAME.log
run() {
    local name=$1 dir=$2 lib=$3 cfg=$4 cp=$KIT/classes which
    shift 4
    which=(--library "$lib")
    if [ -n "$GKL_JARS" ] && [ "$lib" != hk_copyonly ]; then
        # GKL's classes load the library of their class's name; haplik's finds GKL's gkl_utils behind it
        cp=$CLASSES
        which=(--class avx)
        [ "$lib" != gkl_pairhmm_omp ] || which=(--class omp)
        [ "$dir" = "$GKL_DIR" ] || dir=$dir:$GKL_DIR
    fi
    # GKL's OpenMP library finds libgomp beside it when the host has none
    if ! HAPLIK_GKL_CONFIG=$cfg LD_LIBRARY_PATH=$dir:$HK_DEPS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
        "$JAVA" -Djava.library.path="$dir" -cp "$cp" bench.PairHmmBench \
        "${which[@]}" --dump "$DUMP" $DOUBLE "$@" >"$OUT_DIR/$name.log" 2>&1; then
        tail -5 "$OUT_DIR/$name.log" >&2
        die "run $name failed (log: $OUT_DIR/$name.log)"
    fi
    grep '^library=' "$OUT_DIR/$name.log" | tail -1
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
# stats V...: "median min max" of the values (FMT: their printf format, %.0f unless set)
stats() { printf '%s\n' "$@" | sort -g | awk -v f="${FMT:-%.0f}" '{v[NR] = $1} END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf f " " f " " f "\n", m, v[1], v[NR] }'; }

timed=(--seconds "$SECONDS_RUN" --warmup "$WARMUP")
table=$OUT_DIR/table.txt
{
    echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -n): $(nproc) cores," \
        "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    if command -v nvidia-smi >/dev/null; then echo "# GPUs: $(nvidia-smi -L 2>/dev/null | tr '\n' ';')"; fi
    run regions "$KIT" hk_copyonly "" --seconds 0.001 --warmup 0 | awk -v d="$DUMP" '{
        for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        printf "# dump: %s: %d regions, %.1f pairs a call\n", d, f["regions"], f["pairs_per_pass"] / f["regions"] }'
    echo "# $REPS run(s) each, alternating, ${SECONDS_RUN} s timed after ${WARMUP} s;" \
        "pairs/s as median (min-max)${DOUBLE:+; useDouble}"
    printf '%-9s %-28s %-28s %-26s %s\n' row GKL haplik "pairs/s GKL" "pairs/s haplik  haplik/GKL"
} >"$table"

row_line() {  # ROW GKL-DESC HAPLIK-DESC then the two lists of rates in G[] and H[]
    local g h
    read -r -a g <<<"$(stats "${G[@]}")"
    read -r -a h <<<"$(stats "${H[@]}")"
    printf '%-9s %-28s %-28s %-26s %s\n' "$1" "$2" "$3" "${g[0]} (${g[1]}-${g[2]})" \
        "${h[0]} (${h[1]}-${h[2]})  $(awk -v a="${h[0]}" -v b="${g[0]}" 'BEGIN { printf "%.2fx", a / b }')" >>"$table"
}

for row in ${ROWS//,/ }; do
    case $row in
        t1|t4|t16|d1|d4|d16)
            n=${row:1} cfg=cpu
            [ "${row:0:1}" = t ] || cfg=default
            G=() H=()
            for ((k = 1; k <= REPS; k++)); do
                G+=("$(run "$row-gkl-$k" "$GKL_DIR" gkl_pairhmm "" --threads "$n" "${timed[@]}" | field pairs_per_s)")
                H+=("$(run "$row-haplik-$k" "$HK_DIR" gkl_pairhmm "$OUT_DIR/$cfg.json" --threads "$n" \
                    "${timed[@]}" | field pairs_per_s)")
            done
            row_line "$row" "AVX, $n Java thread(s)" "$cfg, $n Java thread(s)"
            grep -v '^library=' "$OUT_DIR/$row-haplik-1.log" | sort -u | sed 's/^/#   haplik: /' >>"$table" || true ;;
        gpu)
            if ! nvidia-smi -L >/dev/null 2>&1; then
                echo "gpu       skipped: no GPU here (nvidia-smi -L)" >>"$table"
                continue
            fi
            G=() H=()
            for ((k = 1; k <= REPS; k++)); do
                G+=("$(run "gpu-gkl-$k" "$GKL_DIR" gkl_pairhmm_omp "" --threads 1 --max-threads 16 "${timed[@]}" |
                    field pairs_per_s)")
                H+=("$(run "gpu-haplik-$k" "$HK_DIR" gkl_pairhmm_omp "$OUT_DIR/cuda.json" --threads 16 \
                    "${timed[@]}" | field pairs_per_s)")
            done
            row_line gpu "OMP, 1 object x 16 threads" "GPU on, 16 Java threads"
            # what the library said (its engine line, or a fall-back to the CPU), and, from a
            # short traced run (HK_TRACE: not timed, it logs every engine call), where calls went
            grep -v '^library=' "$OUT_DIR/gpu-haplik-1.log" | sort -u | sed 's/^/#   haplik: /' >>"$table" || true
            HK_TRACE=1 run gpu-haplik-trace "$HK_DIR" gkl_pairhmm_omp "$OUT_DIR/cuda.json" --threads 16 \
                --seconds 1 --warmup 0.5 >/dev/null
            grep 'trace gkl' "$OUT_DIR/gpu-haplik-trace.log" >"$OUT_DIR/gpu-haplik-trace.txt" || true
            rm -f "$OUT_DIR/gpu-haplik-trace.log"
            sed 's/^/#   haplik (traced run): /' "$OUT_DIR/gpu-haplik-trace.txt" >>"$table" ;;
        hc1|hc4)
            if ! nvidia-smi -L >/dev/null 2>&1; then
                echo "$row       skipped: no GPU here (nvidia-smi -L)" >>"$table"
                continue
            fi
            n=${row#hc}
            G=() H=()
            for ((k = 1; k <= REPS; k++)); do
                G+=("$(run "$row-gkl-$k" "$GKL_DIR" gkl_pairhmm_omp "" --threads "$n" --max-threads 4 "${timed[@]}" |
                    field pairs_per_s)")
                H+=("$(run "$row-haplik-$k" "$HK_DIR" gkl_pairhmm_omp "$OUT_DIR/default.json" --threads "$n" \
                    --max-threads 4 "${timed[@]}" | field pairs_per_s)")
            done
            row_line "$row" "OMP, $n Java thread(s) x 4" "default, $n Java thread(s) x 4" ;;
        overhead)
            C=() P=()
            for ((k = 1; k <= REPS; k++)); do
                C+=("$(run "overhead-copy-$k" "$KIT" hk_copyonly "" "${timed[@]}" | field us_per_call)")
                P+=("$(run "overhead-haplik-$k" "$HK_DIR" gkl_pairhmm "$OUT_DIR/cpu.json" "${timed[@]}" |
                    field us_per_call)")
            done
            read -r -a c <<<"$(FMT=%.1f stats "${C[@]}")"
            read -r -a p <<<"$(FMT=%.1f stats "${P[@]}")"
            printf '%-9s copies in and out: %s us a call (%s-%s); haplik cpu, 1 thread: %s us a call (%s-%s);' \
                overhead "${c[@]}" "${p[@]}" >>"$table"
            awk -v c="${c[0]}" -v p="${p[0]}" 'BEGIN { printf " copies = %.1f %% of the call\n", 100 * c / p }' >>"$table" ;;
        check)
            run check-gkl "$GKL_DIR" gkl_pairhmm "" --results "$OUT_DIR/check-gkl.txt" >/dev/null
            run check-haplik "$HK_DIR" gkl_pairhmm "$OUT_DIR/cpu.json" --results "$OUT_DIR/check-haplik.txt" >/dev/null
            paste -d' ' "$OUT_DIR/check-gkl.txt" "$OUT_DIR/check-haplik.txt" | awk '
                { d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d; n++ }
                END { printf "%-9s %d pairs: largest |GKL - haplik| = %.3g (log10)\n", "check", n, m }' >>"$table" ;;
        omp:*|avx:*)
            IFS=: read -r cls n m cfg <<<"$row"
            [[ $n =~ ^[1-9][0-9]*$ && $m =~ ^[1-9][0-9]*$ && $cfg =~ ^(cpu|default|cuda)$ ]] ||
                die "--rows: '$row' is not CLASS:THREADS:MAXTHREADS:cpu|default|cuda"
            lib=gkl_pairhmm
            [ "$cls" = avx ] || lib=gkl_pairhmm_omp
            tag=${row//:/-}
            G=() H=()
            for ((k = 1; k <= REPS; k++)); do
                G+=("$(run "$tag-gkl-$k" "$GKL_DIR" "$lib" "" --threads "$n" --max-threads "$m" "${timed[@]}" |
                    field pairs_per_s)")
                H+=("$(run "$tag-haplik-$k" "$HK_DIR" "$lib" "$OUT_DIR/$cfg.json" --threads "$n" --max-threads "$m" \
                    "${timed[@]}" | field pairs_per_s)")
            done
            row_line "$row" "$cls, $n Java thread(s) x $m" "$cfg, $n Java thread(s) x $m"
            grep 'mapped=' "$OUT_DIR/$tag-haplik-1.log" | sed 's/.*mapped=/#   haplik mapped: /' >>"$table" || true ;;
        *) die "--rows: unknown row '$row' (t1, t4, t16, d1, d4, d16, gpu, hc1, hc4, overhead, check, CLASS:T:M:CFG)" ;;
    esac
done
cat "$table"
