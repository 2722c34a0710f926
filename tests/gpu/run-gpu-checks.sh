#!/bin/bash
# run-gpu-checks.sh - the checks that need a GPU, in a built tree (./configure && make -j
# && make check-programs, or `make check` once). Run from the top of the tree:
#   bash tests/gpu/run-gpu-checks.sh
# Prints one line per check and exits non-zero when any failed. compute-sanitizer must be on
# PATH (or in /usr/local/cuda/bin) for the memcheck and racecheck lines; without it they are
# reported as skipped.
set -u
export HK_TESTDATA=${HK_TESTDATA:-$PWD/tests/data}
PATH=$PATH:/usr/local/cuda/bin
fails=0
check() {   # check NAME COMMAND...: run it, its output to $log
    local name=$1; shift
    local log; log=$(mktemp "${TMPDIR:-/tmp}/hk-gpu-check.XXXXXX")
    if "$@" > "$log" 2>&1; then echo "ok   $name"; else echo "FAIL $name (output: $log)"; fails=$((fails + 1)); return; fi
    rm -f "$log"
}
make -s tests/unit/test_pack tests/unit/test_pdhmm_emu tests/unit/test_status tests/gpu/gpu_vs_cpu tests/gpu/pdhmm_vs_cpu \
    tests/gpu/small_vs_cpu || exit 2
check "gpu_vs_cpu" tests/gpu/gpu_vs_cpu
check "pdhmm_vs_cpu" tests/gpu/pdhmm_vs_cpu
check "small_vs_cpu (the GKL library's small-call path)" tests/gpu/small_vs_cpu
check "test_pack (on the GPU too)" tests/unit/test_pack
check "test_pdhmm_emu" tests/unit/test_pdhmm_emu
check "test_status (GPU 0 asked for its limits)" tests/unit/test_status
if command -v compute-sanitizer > /dev/null; then
    check "memcheck gpu_vs_cpu -q" compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 tests/gpu/gpu_vs_cpu -q
    check "memcheck pdhmm_vs_cpu -q" compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 tests/gpu/pdhmm_vs_cpu -q
    check "racecheck gpu_vs_cpu -q" compute-sanitizer --tool racecheck --error-exitcode 1 tests/gpu/gpu_vs_cpu -q
    check "racecheck pdhmm_vs_cpu -q" compute-sanitizer --tool racecheck --error-exitcode 1 tests/gpu/pdhmm_vs_cpu -q
    check "memcheck small_vs_cpu" compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 tests/gpu/small_vs_cpu
    check "racecheck small_vs_cpu" compute-sanitizer --tool racecheck --error-exitcode 1 tests/gpu/small_vs_cpu
else
    echo "skip memcheck and racecheck: no compute-sanitizer"
fi
# the bundled files with expected results, scored on the GPU against them
for f in pairhmm-testdata.txt hc-NA12878-20_10000117.java.hmmresults.txt hc-NA12878-20_10000117.avx.hmmresults.txt \
         pdhmm_syn_990_1_2.txt; do
    check "haplik check --backend cuda $f" ./haplik check --quiet --backend cuda "$HK_TESTDATA/$f"
done
echo "$fails failed"
[ "$fails" = 0 ]
