#!/usr/bin/env bats
# The GKL benchmark (scripts/bench-gkl.sh and its JNI harness, tests/bench/jni/): the harness
# rebuilds the regions haplik rebuilds, and the script runs end to end. GKL's libraries are not
# here: the copy-only binding stands in for both libraries (it answers the same JNI calls).
# Without a JDK (javac) these tests skip, loudly.

setup_file() {
    SRC=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
    KIT="$BATS_FILE_TMPDIR/kit"
    export SRC KIT
    if command -v javac >/dev/null && command -v java >/dev/null; then
        bash "$SRC/tests/bench/jni/build.sh" "$KIT" 2>/dev/null
    fi
}

setup() {
    load test_helper/common-setup
    _common_setup
    [ -f "$KIT/classes/bench/PairHmmBench.class" ] ||
        skip "NO JDK (javac): the GKL benchmark harness is NOT tested (apt-get install default-jdk-headless)"
    cd "$BATS_TEST_TMPDIR" || return
}

# regions FILE: the harness's regions of FILE, "R H" a line
regions() {
    java -Djava.library.path="$KIT" -cp "$KIT/classes" bench.PairHmmBench --library hk_copyonly \
        --dump "$1" --list-regions
}

# haplik_regions FILE: haplik's regions of FILE, "R H" a line
haplik_regions() {
    "$HAPLIK" score --backend cpu --quiet -o t.json "$1" &&
        python3 -c 'import json, sys
for r in json.load(open("t.json"))["regions"]: print(len(r["reads"]), len(r["haplotypes"]))'
}

@test "gen_batches --distinct-haps: a gatk dump's regions are the generator's batches (without it, repeats cut them)" {
    local gen="$SRC/scripts/gen_batches.py"
    python3 "$gen" --pairs 5000 --seed 1 --distinct-haps | awk 'NF == 2 { print }' >batches.txt
    python3 "$gen" --format gatk --pairs 5000 --seed 1 --distinct-haps >d.txt
    run -0 regions d.txt
    [ "$output" = "$(cat batches.txt)" ] || fail "regions differ from the batches ($(wc -l <<<"$output") against $(wc -l <batches.txt))"
    python3 "$gen" --format gatk --pairs 5000 --seed 1 >r.txt
    run -0 regions r.txt
    [ "$(wc -l <<<"$output")" -gt "$(wc -l <batches.txt)" ] || fail "without the flag the regions were not cut"
}

@test "bench-gkl: the harness rebuilds haplik's regions (real dumps, and haplotypes repeated within a batch)" {
    python3 "$SRC/scripts/gen_batches.py" --format gatk --pairs 20000 --seed 1 >na.txt
    for f in "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" "$DATA/hc-NA12878-20_10000117.avx.hmmresults.txt" na.txt; do
        run -0 regions "$f"
        local mine=$output
        run -0 haplik_regions "$f"
        [ "$mine" = "$output" ] || fail "$f: the harness's regions differ from haplik's"
    done
    # the generated file has batches with a repeated haplotype: many one-read regions
    [ "$(wc -l <<<"$mine")" -gt 1000 ]
}

@test "bench-gkl: the script runs its CPU rows end to end and fills the table" {
    mkdir gkl hk
    for n in gkl_pairhmm gkl_pairhmm_omp; do
        ln -s "$KIT/libhk_copyonly.so" "gkl/lib$n.so"
        ln -s "$KIT/libhk_copyonly.so" "hk/lib$n.so"
    done
    run -0 "$SRC/scripts/bench-gkl.sh" --kit "$KIT" --out out --seconds 0.2 --warmup 0 --reps 2 \
        --rows t1,t4,d1,overhead,check,gpu,hc1,omp:2:4:cpu gkl hk "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    assert_line --partial "2 regions, 142.0 pairs a call"
    assert_line --regexp '^t1 +AVX, 1 Java thread\(s\) +cpu, 1 Java thread\(s\) +[0-9]+ \([0-9]+-[0-9]+\) +[0-9]+ \([0-9]+-[0-9]+\)  [0-9.]+x$'
    assert_line --regexp '^t4 '
    assert_line --regexp '^d1 +AVX, 1 Java thread\(s\) +default, 1 Java thread\(s\) +[0-9]+ '
    assert_line --regexp '^omp:2:4:cpu omp, 2 Java thread\(s\) x 4 +cpu, 2 Java thread\(s\) x 4 +[0-9]+ \([0-9]+-[0-9]+\) +[0-9]+ '
    grep -q 'max_threads=4' out/omp-2-4-cpu-haplik-1.log || fail "maxThreads 4 was not passed"
    # GATK loads gkl_pairhmm_omp through IntelPairHmmOMP, whose useOmp field gives a call its maxThreads
    grep -q 'class=IntelPairHmmOMP ' out/omp-2-4-cpu-haplik-1.log || fail "the OpenMP rows did not use IntelPairHmmOMP"
    grep -q 'class=IntelPairHmm ' out/t1-haplik-1.log || fail "the AVX rows did not use IntelPairHmm"
    assert_line --regexp '^overhead +copies in and out: [0-9.]+ us a call \([0-9.]+-[0-9.]+\); .* copies = [0-9.]+ % of the call$'
    # the same binding twice: the same values
    assert_line "check     284 pairs: largest |GKL - haplik| = 0 (log10)"
    if ! nvidia-smi -L >/dev/null 2>&1; then
        assert_line --partial "gpu       skipped: no GPU here"
        assert_line --partial "hc1       skipped: no GPU here"
    fi
    [ -s out/table.txt ]
    local logs=(out/t1-gkl-*.log)
    [ "${#logs[@]}" -eq 2 ] || fail "expected 2 GKL logs: ${logs[*]}"
}

@test "bench-gkl: missing libraries and bad arguments are refused" {
    mkdir empty
    run -2 "$SRC/scripts/bench-gkl.sh" --kit "$KIT" --out out empty empty x.txt
    assert_output --partial "bench-gkl.sh: error: "
    assert_output --partial "no libgkl_pairhmm.so"
    run -1 "$SRC/scripts/bench-gkl.sh" --kit "$KIT" only-one-argument
    assert_output --partial "expected GKL_DIR HAPLIK_DIR DUMP"
    run -2 "$SRC/scripts/bench-gkl.sh" --kit "$KIT" --reps 0 "$KIT" "$KIT" x.txt
    assert_output --partial "--reps"
    mkdir libs
    for n in gkl_pairhmm gkl_pairhmm_omp; do ln -s "$KIT/libhk_copyonly.so" "libs/lib$n.so"; done
    run -2 "$SRC/scripts/bench-gkl.sh" --kit "$KIT" --out out --rows omp:x:4:cpu libs libs \
        "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    assert_output --partial "--rows: 'omp:x:4:cpu' is not CLASS:THREADS:MAXTHREADS:cpu|default|cuda"
    run -2 "$SRC/scripts/bench-gkl.sh" --kit "$KIT" --out out --gkl-classes empty libs libs x.txt
    assert_output --partial "--gkl-classes: no empty/gkl.jar"
}
