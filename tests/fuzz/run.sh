#!/usr/bin/env bash
# run.sh - build the fuzz targets with clang (libFuzzer + ASan + UBSan) against
# the project's C sources and run each for its share of SECONDS (default 90).
# Fails (exit 1) on any crash, sanitizer report, hang (an input running over 10 s)
# or failed check, and says where the input that caused it was saved. Before
# fuzzing, each target runs every input of its seed corpus (tests/fuzz/corpus/),
# so the crashes found so far stay fixed.
#
# Usage: tests/fuzz/run.sh [SECONDS]
#        tests/fuzz/run.sh --repro TARGET FILE...   run the given inputs once
# Targets: reader (hk_reader_open/next, every format, plain/gzip/BGZF; see
# fuzz_reader.c for the option byte that starts each input, and the round trip
# through split), format_NAME (the same with the format forced: one target per
# format module of src/hk_formats.h), config (hk_config_load and the flags' setters), args (the
# option parser of score and check, hk_cli_parse_score_opts), table_read (merge's
# table reader, hk_table_read.h, and its JSON scanner checked against cJSON; see
# fuzz_table_read.c), tsv_write (the tsv writer, read back by merge's reader: see
# fuzz_tsv_write.c). Each target's
# stderr is closed (-close_fd_mask=2): the library's error messages are noise
# there; libFuzzer's own reports still come through.
# Environment: CC (default clang, else clang-14), FUZZ_TARGETS (run only these,
# e.g. "table_read tsv_write"; each then gets SECONDS / their number), FUZZ_WORK (keep the build,
# the grown corpora and any crash there instead of a temporary folder),
# FUZZ_ARGS (more libFuzzer flags).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
repro=0
if [ "${1:-}" = --repro ]; then repro=1; shift; target=${1:?TARGET}; shift; fi
total=${1:-90}
case $total in ''|*[!0-9]*) [ "$repro" = 1 ] || { echo "usage: $0 [SECONDS]" >&2; exit 2; } ;; esac

cc=${CC:-}
if [ -z "$cc" ]; then
    for c in clang clang-14 clang-15 clang-16; do command -v "$c" >/dev/null && { cc=$c; break; }; done
fi
[ -n "$cc" ] || { echo "fuzz: clang not found (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 2; }
pkg-config --exists htslib libcjson || { echo "fuzz: pkg-config finds no htslib or libcjson" >&2; exit 2; }

keep=0
if [ -n "${FUZZ_WORK:-}" ]; then work=$FUZZ_WORK; keep=1; mkdir -p "$work"
else work=$(mktemp -d "${TMPDIR:-/tmp}/haplik-fuzz.XXXXXX"); fi
# shellcheck disable=SC2317 # run by the trap below
cleanup() { if [ "$keep" = 0 ]; then rm -rf "$work"; else echo "fuzz: work folder kept: $work" >&2; fi; }
trap cleanup EXIT

# ---- build ----
t0=$(date +%s)
mkdir -p "$work/obj" "$work/bin"
echo '#define PACKAGE_VERSION "fuzz"' > "$work/obj/config.h"
isal_libs=
if pkg-config --exists libisal; then   # gzip through ISA-L, as configure builds it
    echo '#define HAVE_ISAL 1' >> "$work/obj/config.h"
    isal_libs=$(pkg-config --libs libisal)
fi
san='-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer'
cflags="-g -O1 -std=c11 -D_GNU_SOURCE $san -I$work/obj -I$src/src -I$src/kernels $(pkg-config --cflags htslib libcjson)"
libs="$(pkg-config --libs htslib libcjson) $isal_libs -lz -lm -lpthread"
# one target per format module: fuzz_reader.c with the format forced
formats=$(sed -n 's/^ *X(\([a-z0-9_]*\), *\([A-Z0-9_]*\)).*/\1:\2/p' "$src/src/hk_formats.h")
targets="reader"
for f in $formats; do targets="$targets format_${f%%:*}"; done
targets="$targets config args table_read tsv_write"
objs=()
# shellcheck disable=SC2086 # $cflags and $libs: compiler flags, split on purpose
for f in "$src"/src/*.c; do
    b=$(basename "$f" .c)
    case $b in haplik|cmd_*) continue ;; esac
    "$cc" $cflags -fsanitize=fuzzer-no-link -c "$f" -o "$work/obj/$b.o" &
    objs+=("$work/obj/$b.o")
    # two at a time
    if (( ${#objs[@]} % 2 == 0 )); then wait; fi
done
wait
# shellcheck disable=SC2086 # $cflags and $libs: compiler flags, split on purpose
for t in reader config args table_read tsv_write; do
    "$cc" $cflags -fsanitize=fuzzer -I"$here" "$here/fuzz_$t.c" "${objs[@]}" $libs -o "$work/bin/fuzz_$t"
done
# shellcheck disable=SC2086 # $cflags and $libs: compiler flags, split on purpose
for f in $formats; do
    "$cc" $cflags -fsanitize=fuzzer -DFUZZ_FORMAT="HK_FMT_${f##*:}" -I"$here" "$here/fuzz_reader.c" \
        "${objs[@]}" $libs -o "$work/bin/fuzz_format_${f%%:*}"
done
echo "fuzz: built with $cc in $(( $(date +%s) - t0 )) s" >&2

export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
common=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -close_fd_mask=2 -print_final_stats=1)

if [ "$repro" = 1 ]; then
    keep=0
    "$work/bin/fuzz_$target" "${common[@]}" -runs=1 "$@"; exit $?
fi

# ---- fuzz: every target an equal share of the time (the readers: 3 of 5 with two formats) ----
status=0
[ -z "${FUZZ_TARGETS:-}" ] || targets=$FUZZ_TARGETS
n_targets=$(wc -w <<< "$targets")
for t in $targets; do
    secs=$(( total / n_targets ))
    (( secs >= 1 )) || secs=1
    seeds=$t
    case $t in format_*) seeds=reader ;; esac   # the format targets share the reader's seeds
    rm -rf "$work/crashes/$t"
    mkdir -p "$work/corpus/$t" "$work/crashes/$t"
    echo "fuzz: $t for $secs s (seeds: tests/fuzz/corpus/$seeds)" >&2
    rc=0
    # shellcheck disable=SC2086 # FUZZ_ARGS: libFuzzer's flags, split on purpose
    "$work/bin/fuzz_$t" "${common[@]}" -max_len=8192 -max_total_time="$secs" \
        -artifact_prefix="$work/crashes/$t/" ${FUZZ_ARGS:-} \
        "$work/corpus/$t" "$here/corpus/$seeds" > "$work/$t.log" 2>&1 || rc=$?
    grep -E '^(#[0-9]+ *DONE|Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/$t.log" >&2 || true
    if [ "$rc" -ne 0 ] || [ -n "$(ls -A "$work/crashes/$t")" ]; then
        status=1
        keep=1
        echo "fuzz: $t FAILED (exit $rc); last lines of its log ($work/$t.log):" >&2
        tail -n 60 "$work/$t.log" >&2
        for f in "$work/crashes/$t"/*; do
            [ -e "$f" ] || continue
            echo "fuzz: input saved: $f (reproduce: tests/fuzz/run.sh --repro $t $f)" >&2
        done
    fi
done
echo "fuzz: total $(( $(date +%s) - t0 )) s; $([ "$status" = 0 ] && echo passed || echo FAILED)" >&2
exit "$status"
