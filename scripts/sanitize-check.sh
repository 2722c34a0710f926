#!/usr/bin/env bash
# sanitize-check.sh - build haplik with AddressSanitizer and UndefinedBehaviorSanitizer
# out of tree (a temporary build folder; the source tree stays unconfigured) and run
# the whole test suite (`make check`) there. Any sanitizer report fails the run:
# -fno-sanitize-recover=all turns UBSan findings into errors, detect_leaks=1 makes
# leaks fail too.
#
# Usage: scripts/sanitize-check.sh [--keep] [make check arguments, e.g. TESTS=tests/errors.bats]
#   --keep   keep the build folder (its path is printed) to read test-suite.log
# Environment: CC (default: cc), JOBS (default: number of cores), SANITIZE_BUILD_DIR
# (use this folder instead of a temporary one; it is not removed).
set -euo pipefail

keep=0
if [ "${1:-}" = --keep ]; then keep=1; shift; fi
src=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${SANITIZE_BUILD_DIR:-}" ]; then
    build=$SANITIZE_BUILD_DIR; keep=1; mkdir -p "$build"
else
    build=$(mktemp -d "${TMPDIR:-/tmp}/haplik-sanitize.XXXXXX")
fi
copy=
# shellcheck disable=SC2317 # run by the trap below
cleanup() {
    if [ -n "$copy" ]; then rm -rf "$copy"; fi
    if [ "$keep" = 0 ]; then rm -rf "$build"; else echo "sanitize-check: build kept in $build" >&2; fi
}
trap cleanup EXIT

# automake refuses an out-of-tree build of a source tree configured in place (as CI's
# `make check` leaves it): then build from a copy of the working tree (the files git
# tracks or would track, edits included).
if [ -f "$src/config.status" ]; then
    if ! command -v git >/dev/null || ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
        echo "sanitize-check: $src is configured in tree and is no git checkout to copy; run make distclean there" >&2
        exit 2
    fi
    copy=$(mktemp -d "${TMPDIR:-/tmp}/haplik-sanitize-src.XXXXXX")
    echo "sanitize-check: $src is configured in tree; building from a copy in $copy" >&2
    (cd "$src" && git ls-files -z --cached --others --exclude-standard |
        tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$copy"
    src=$copy
    (cd "$src" && autoreconf -fi >/dev/null 2>&1)
elif [ ! -x "$src/configure" ]; then
    (cd "$src" && autoreconf -fi)
fi

flags='-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all'
cd "$build"
echo "sanitize-check: configuring in $build" >&2
# --without-jni: libhaplik_gkl.so runs inside a JVM, which cannot host the sanitizers' runtime
# unless it is preloaded; the normal `make check` runs the library's tests (tests/gkl.bats)
"$src/configure" --disable-cuda --without-jni -q CC="${CC:-cc}" CFLAGS="$flags" LDFLAGS='-fsanitize=address,undefined'
make -j"${JOBS:-$(nproc)}" >/dev/null
# halt_on_error: the first report fails the test; abort_on_error=0 keeps the exit status
# (ASan exits 1, which no test accepts as success) instead of a core dump.
# Reports also go to files (log_path), so that one in a test that expects a failure
# (and so passes whatever the exit status) still fails the run.
reports="$build/sanitizer-reports"
mkdir -p "$reports"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:log_path=$reports/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# htslib 1.16's thread pool can leak one 32-byte job result (malloc in a worker
# thread, every frame inside libhts) when a multithreaded BGZF reader is closed
# on a truncated stream: seen once in CI in errors.bats "a truncated BGZF
# stream", not reproduced in 146 runs since. It is htslib's, not haplik's; the
# price of the suppression is that leaks of objects htslib allocates are not
# reported here (haplik's own allocations still are).
printf 'leak:libhts.so\n' > "$build/lsan.supp"
export LSAN_OPTIONS="suppressions=$build/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# tests/arm.bats runs an aarch64 build under qemu, which these flags do not reach
export HK_ARM_SKIP="the sanitizer run: the aarch64 build under qemu is not instrumented (make check runs tests/arm.bats)"
status=0
make check "$@" || status=$?
# any sanitizer report (also one in a test that tolerated the failure) fails the run
if [ -n "$(ls -A "$reports")" ]; then
    echo "sanitize-check: sanitizer reports:" >&2
    for f in "$reports"/*; do echo "== $f" >&2; cat "$f" >&2; done
    status=1
fi
if [ "$status" -ne 0 ]; then
    [ -f test-suite.log ] && cat test-suite.log >&2
    echo "sanitize-check: FAILED" >&2
else
    echo "sanitize-check: passed (ASan + UBSan, make check)" >&2
fi
exit "$status"
