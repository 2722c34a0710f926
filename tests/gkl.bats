#!/usr/bin/env bats
# libhaplik_gkl.so: GKL's Pair-HMM JNI interface, driven as HaplotypeCaller drives
# it by the Java harness in tests/jni/ (GKL's class and method names, GATK's holder
# classes) on real HaplotypeCaller dumps; by GKL's own Java classes (Debian's
# libgkl-java and libgatk-native-bindings-java, "gkl client" tests) beside GKL's own
# library (libgkl-jni); and haplik-gatk-libs on a fake GATK jar.
# Without a JDK (javac, java) or without the library (configure found no jni.h)
# the harness tests SKIP, saying so; without Debian's GKL packages
# (scripts/setup.sh --tests installs them) the client tests do.

setup_file() {
    load test_helper/common-setup
    _common_setup
    export GKL_SKIP=
    if [ -z "${JAVAC:-}" ] || [ -z "${JAVA:-}" ]; then
        GKL_SKIP="no JDK (javac and java): apt-get install default-jdk-headless, then configure again"
    elif [ ! -f "${HK_GKL_LIB:-}" ]; then
        GKL_SKIP="libhaplik_gkl.so not built (configure found no JDK's jni.h)"
    fi
    [ -n "$GKL_SKIP" ] && { echo "# SKIP gkl.bats harness: $GKL_SKIP" >&3; return 0; }
    export CLASSES="$BATS_FILE_TMPDIR/classes" LIBDIR="$BATS_FILE_TMPDIR/lib"
    mkdir -p "$CLASSES" "$LIBDIR"
    local sources
    mapfile -t sources < <(find "$HK_JNI_SRC" -name '*.java')
    "$JAVAC" -d "$CLASSES" "${sources[@]}"
    ln -s "$HK_GKL_LIB" "$LIBDIR/libgkl_pairhmm_omp.so"
    ln -s "$HK_GKL_LIB" "$LIBDIR/libgkl_pairhmm.so"
    # the CPU backend, so that haplik score's CPU results are the reference
    printf '{"engine": {"backend": "cpu"}}\n' > "$BATS_FILE_TMPDIR/cpu.json"
    # GKL's own classes: the benchmark's client (tests/bench/jni/bench) compiled against them
    export GKL_JARS=${GKL_JARS:-/usr/share/java} GKL_JNI=${GKL_JNI:-/usr/lib/jni} CLIENT_SKIP=
    local j
    for j in "$GKL_JARS/gkl.jar" "$GKL_JARS/gatk-native-bindings.jar" "$GKL_JARS/commons-logging.jar" \
        "$GKL_JNI/libgkl_pairhmm_omp.so" "$GKL_JNI/libgkl_utils.so"; do
        [ -f "$j" ] || CLIENT_SKIP="no $j: Debian's libgkl-java, libgkl-jni, libgatk-native-bindings-java (scripts/setup.sh --tests)"
    done
    if [ -z "$CLIENT_SKIP" ]; then
        export CLIENT_CP="$BATS_FILE_TMPDIR/client:$GKL_JARS/gkl.jar:$GKL_JARS/gatk-native-bindings.jar:$GKL_JARS/commons-logging.jar"
        "$JAVAC" -nowarn -d "$BATS_FILE_TMPDIR/client" -cp "${CLIENT_CP#*:}" \
            "$BATS_TEST_DIRNAME/bench/jni/bench/PairHmmBench.java" 2>/dev/null
    fi
    for d in java avx; do
        for p in mixed double; do
            "$HAPLIK" score --quiet --backend cpu --precision "$p" --min-base-quality 0 --decimals 12 \
                --output-format tsv -o "$BATS_FILE_TMPDIR/$d.$p.tsv" "$DATA/hc-NA12878-20_10000117.$d.hmmresults.txt"
        done
    done
}

setup() {
    load test_helper/common-setup
    _common_setup
    # the harness's tests (named "gkl...") need the JDK and the library
    if [ -n "$GKL_SKIP" ] && [[ "$BATS_TEST_DESCRIPTION" == gkl* ]]; then skip "SKIPPED: $GKL_SKIP"; fi
    if [ -n "$CLIENT_SKIP" ] && [[ "$BATS_TEST_DESCRIPTION" == "gkl client"* ]]; then skip "SKIPPED: $CLIENT_SKIP"; fi
}

# client WHO ARGS...: GKL's classes (bench.PairHmmBench) on GKL's library (WHO gkl) or haplik's
# (WHO haplik, in front on java.library.path; GKL's libgkl_utils.so from GKL's folder)
client() {
    local who=$1 path=$GKL_JNI
    shift
    [ "$who" = gkl ] || path=$LIBDIR:$GKL_JNI
    HAPLIK_GKL_CONFIG="${HAPLIK_GKL_CONFIG-$BATS_FILE_TMPDIR/cpu.json}" \
        "$JAVA" -Djava.library.path="$path" -cp "$CLIENT_CP" bench.PairHmmBench "$@"
}

# largest_diff A B: the largest |a - b| of two files of values, a line each (and the same count)
largest_diff() {
    paste -d' ' "$1" "$2" | awk 'NF != 2 { print "unequal counts"; exit 1 }
        { d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d } END { printf "%.3g\n", m }'
}

# client_agrees CLASS DUMP LIMIT [--double]: GKL's library and haplik's through GKL's class
# (maxThreads 4) score DUMP; haplik's values from 1, 4 and 16 Java threads have the same bits
# (each run checks its threads against its first), one run's as another's, and lie within
# LIMIT of GKL's; the library mapped is haplik's
client_agrees() {
    local cls=$1 dump=$2 limit=$3 dbl=${4:-} t
    run --separate-stderr client gkl --class "$cls" --dump "$dump" --max-threads 4 ${dbl:+"$dbl"} --results "$BATS_TEST_TMPDIR/gkl.txt"
    assert_success
    assert_output --partial "mapped=$GKL_JNI/libgkl_pairhmm"
    for t in 1 4 16; do
        run --separate-stderr client haplik --class "$cls" --dump "$dump" --max-threads 4 ${dbl:+"$dbl"} --threads "$t" \
            --results "$BATS_TEST_TMPDIR/hk$t.txt"
        echo "$output"; echo "$stderr" | grep haplik
        assert_success
        assert_output --partial "threads=$t identical=yes"
        assert_output --partial "mapped=$(readlink -f "$HK_GKL_LIB")"
        cmp "$BATS_TEST_TMPDIR/hk1.txt" "$BATS_TEST_TMPDIR/hk$t.txt" || fail "$t Java threads: other values than 1"
    done
    local d
    d=$(largest_diff "$BATS_TEST_TMPDIR/gkl.txt" "$BATS_TEST_TMPDIR/hk1.txt") || fail "$d"
    echo "largest |GKL - haplik|: $d (limit $limit)"
    awk -v d="$d" -v l="$limit" 'BEGIN { exit !(d <= l) }' || fail "$d is over $limit"
}

harness() {
    HAPLIK_GKL_CONFIG="${HAPLIK_GKL_CONFIG-$BATS_FILE_TMPDIR/cpu.json}" \
        "$JAVA" -Xss4m -Djava.library.path="$LIBDIR" -cp "$CLASSES" GklHarness "$@"
}

@test "gkl: the java dump through gkl_pairhmm_omp, mixed: within 2e-5 of GATK, equal to haplik score" {
    run --separate-stderr harness gkl_pairhmm_omp replay "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" \
        2e-5 "$BATS_FILE_TMPDIR/java.mixed.tsv" mixed
    echo "$output"; echo "$stderr"
    assert_success
    assert_output --partial "ok gkl_pairhmm_omp mixed: 2 regions, 284 pairs"
}

@test "gkl: useDouble gives haplik's double precision" {
    run --separate-stderr harness gkl_pairhmm_omp replay "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" \
        2e-5 "$BATS_FILE_TMPDIR/java.double.tsv" double
    echo "$output"; echo "$stderr"
    assert_success
    assert_output --partial "ok gkl_pairhmm_omp double: 2 regions, 284 pairs"
}

@test "gkl: within 2e-5 of GKL's own AVX results (the avx dump), through gkl_pairhmm" {
    run --separate-stderr harness gkl_pairhmm replay "$DATA/hc-NA12878-20_10000117.avx.hmmresults.txt" \
        2e-5 "$BATS_FILE_TMPDIR/avx.mixed.tsv" mixed
    echo "$output"; echo "$stderr"
    assert_success
    assert_output --partial "ok gkl_pairhmm mixed: 2 regions, 284 pairs"
}

@test "gkl: float pairs all across anti-diagonals, or all in lanes (HK_CPU_DIAG): the same values" {
    for mode in all off; do
        HK_CPU_DIAG=$mode run --separate-stderr harness gkl_pairhmm_omp replay \
            "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" 2e-5 "$BATS_FILE_TMPDIR/java.mixed.tsv" mixed
        echo "$mode: $output"; echo "$stderr"
        assert_success
        assert_output --partial "ok gkl_pairhmm_omp mixed: 2 regions, 284 pairs"
    done
}

@test "gkl: a wrong expectation fails the harness (the comparison can fail)" {
    # the double table as the mixed run's reference: they differ by more than 1e-12
    run --separate-stderr harness gkl_pairhmm_omp replay "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" \
        2e-5 "$BATS_FILE_TMPDIR/java.double.tsv" mixed
    assert_failure
    assert_output --partial "FAIL gkl_pairhmm_omp mixed"
}

@test "gkl: initNative logs one line naming haplik, the pass and the threads" {
    run --separate-stderr harness gkl_pairhmm_omp replay "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" \
        2e-5 "$BATS_FILE_TMPDIR/java.mixed.tsv" mixed
    assert_success
    [[ "$stderr" =~ haplik:\ Pair-HMM\ [0-9.]+:\ cpu\ [a-z0-9]+\ x\ 4\ threads\;\ mixed\ precision ]] \
        || fail "no init line in: $stderr"
}

@test "gkl: 8 Java threads, one object each, give one thread's results" {
    run --separate-stderr harness gkl_pairhmm_omp threads "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" 8 20
    echo "$output"; echo "$stderr"
    assert_success
    assert_output --partial "ok gkl_pairhmm_omp: 8 threads"
}

@test "gkl: the default backend (auto) without a GPU: the CPU, and one notice per process" {
    HAPLIK_GKL_CONFIG='' run --separate-stderr harness gkl_pairhmm_omp threads \
        "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" 8 20
    echo "$output"; echo "$stderr"
    assert_success
    if "$HAPLIK" devices 2>/dev/null | grep -q '^0'; then return 0; fi
    [ "$(grep -c 'no usable GPU' <<< "$stderr")" = 1 ] || fail "expected one 'no usable GPU' line: $stderr"
    # no GPU here: one notice for the whole process, though the library opens twice
    HAPLIK_GKL_CONFIG='' run --separate-stderr harness gkl_pairhmm_omp lifecycle \
        "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    assert_success
    [ "$(grep -c 'haplik: Pair-HMM' <<< "$stderr")" -ge 3 ] || fail "expected several opens: $stderr"
    [ "$(grep -c 'no usable GPU' <<< "$stderr")" = 1 ] || fail "expected one 'no usable GPU' line: $stderr"
}

@test "gkl: every bad call raises its Java exception, and the library goes on" {
    run --separate-stderr harness gkl_pairhmm_omp errors "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    echo "$output"; echo "$stderr"
    assert_success
    refute_output --partial FAIL
    assert_output --partial "ok likelihood array one too short: IllegalArgumentException"
    assert_output --partial "ok null overallGCP: NullPointerException"
    assert_output --partial "ok readQuals shorter than the bases: IllegalArgumentException"
    assert_output --partial "ok read base 0x58: IllegalArgumentException"
    # the rule a read broke, and where, as the batch reports them
    assert_output --partial "ok gap-open qualities Q0: IllegalArgumentException: read 0: insertion and deletion gap-open qualities at position 2 leave no probability of staying in match"
    assert_output --partial "ok gap-continuation quality Q0: IllegalArgumentException: read 0: overallGCP[2] is 0 (no way back from a gap)"
    assert_output --partial "ok computeLikelihoodsNative before any initNative: IllegalStateException"
    assert_output --partial "ok good calls after the bad ones"
    assert_output --partial "ok a call with no reads or no haplotypes returns nothing, a thread's first too"
}

@test "gkl: initNative many times, doneNative per object: one object's end spares the others" {
    run --separate-stderr harness gkl_pairhmm_omp lifecycle "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    echo "$output"; echo "$stderr"
    assert_success
    assert_output --partial "ok one object's doneNative leaves another's scoring intact"
    assert_output --partial "ok initNative again after the last doneNative"
}

@test "gkl: a bad HAPLIK_GKL_CONFIG stops initNative with IllegalStateException" {
    printf '{"model": {"precision": "quad"}}\n' > "$BATS_TEST_TMPDIR/bad.json"
    HAPLIK_GKL_CONFIG="$BATS_TEST_TMPDIR/bad.json" run --separate-stderr harness gkl_pairhmm_omp lifecycle \
        "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    assert_failure
    assert_stderr --partial "IllegalStateException: haplik Pair-HMM: HAPLIK_GKL_CONFIG=$BATS_TEST_TMPDIR/bad.json"
    assert_stderr --partial "model.precision"
}

@test "gkl: engine.backend cuda without a usable GPU stops initNative" {
    if "$HAPLIK" devices 2>/dev/null | grep -q '^[0-9]'; then skip "SKIPPED: this machine has a usable GPU"; fi
    printf '{"engine": {"backend": "cuda"}}\n' > "$BATS_TEST_TMPDIR/cuda.json"
    HAPLIK_GKL_CONFIG="$BATS_TEST_TMPDIR/cuda.json" run --separate-stderr harness gkl_pairhmm_omp lifecycle \
        "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    assert_failure
    assert_stderr --partial "IllegalStateException: haplik Pair-HMM: engine.backend cuda: no usable GPU"
}

@test "gkl: the library exports GKL's three natives and nothing else" {
    [ -f "${HK_GKL_LIB:-}" ] || skip "SKIPPED: libhaplik_gkl.so not built"
    run nm -D --defined-only "$HK_GKL_LIB"
    assert_success
    run bash -c "nm -D --defined-only '$HK_GKL_LIB' | awk '{print \$3}' | grep -v '^\$' | sort"
    assert_output "Java_com_intel_gkl_pairhmm_IntelPairHmm_computeLikelihoodsNative
Java_com_intel_gkl_pairhmm_IntelPairHmm_doneNative
Java_com_intel_gkl_pairhmm_IntelPairHmm_initNative"
}

# ---- GKL's own classes (Debian's libgkl-java) beside GKL's own library ----

@test "gkl client: IntelPairHmmOMP on the java dump, float: within 1e-5 of GKL, one result at 1, 4 and 16 Java threads" {
    client_agrees omp "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" 1e-5
}

@test "gkl client: IntelPairHmmOMP on the avx dump, double: within 1e-7 of GKL, one result at 1, 4 and 16 Java threads" {
    client_agrees omp "$DATA/hc-NA12878-20_10000117.avx.hmmresults.txt" 1e-7 --double
}

@test "gkl client: IntelPairHmm on an NA12878-like dump, float and double: within 1e-5 and 1e-7 of GKL" {
    python3 "${GEN_BATCHES:-$BATS_TEST_DIRNAME/../scripts/gen_batches.py}" --format gatk --pairs 3000 --seed 7 > "$BATS_TEST_TMPDIR/na.txt"
    client_agrees avx "$BATS_TEST_TMPDIR/na.txt" 1e-5
    client_agrees avx "$BATS_TEST_TMPDIR/na.txt" 1e-7 --double
}

@test "gkl client: the comparison can fail (GKL's float values against haplik's double are more than 1e-7 apart)" {
    local dump="$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    run -0 --separate-stderr client gkl --class omp --dump "$dump" --max-threads 4 --results "$BATS_TEST_TMPDIR/g.txt"
    run -0 --separate-stderr client haplik --class omp --dump "$dump" --max-threads 4 --double --results "$BATS_TEST_TMPDIR/h.txt"
    d=$(largest_diff "$BATS_TEST_TMPDIR/g.txt" "$BATS_TEST_TMPDIR/h.txt")
    awk -v d="$d" 'BEGIN { exit !(d > 1e-7) }' || fail "float and double agree to $d: the check could not fail"
}

@test "gkl client: IntelPairHmm scores on the calling thread alone, as GKL's does; IntelPairHmmOMP on maxThreads" {
    local dump="$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    HK_TRACE=1 run --separate-stderr client haplik --class avx --dump "$dump" --max-threads 4 --results "$BATS_TEST_TMPDIR/a.txt"
    assert_success
    assert_stderr --partial "Ignoring request for 4 threads"   # GKL's class says so; haplik must mean it
    local lines
    lines=$(grep -E 'haplik: trace cpu: (156|128) pairs,' <<< "$stderr")   # the dump's two regions
    echo "$lines"
    [ "$(wc -l <<< "$lines")" = 2 ] || fail "expected a trace line per region"
    ! grep -v ' 1 threads;' <<< "$lines" || fail "IntelPairHmm's calls used more than one thread"
    HK_TRACE=1 run --separate-stderr client haplik --class omp --dump "$dump" --max-threads 4 --results "$BATS_TEST_TMPDIR/o.txt"
    assert_success
    grep -E 'haplik: trace cpu: (156|128) pairs,' <<< "$stderr" | grep -q ' 4 threads;' ||
        fail "IntelPairHmmOMP's calls never used 4 threads: $stderr"
    cmp "$BATS_TEST_TMPDIR/a.txt" "$BATS_TEST_TMPDIR/o.txt" || fail "one thread or four: other values"
}

@test "gkl client: initialize makes what a first call would (the pool's threads, their memory): a warm-up region before any call" {
    HK_TRACE=1 run --separate-stderr client haplik --class omp --dump "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" \
        --max-threads 4 --first 2
    echo "$output"; echo "$stderr" | grep 'trace cpu'
    assert_success
    local first
    first=$(grep -m1 'haplik: trace cpu:' <<< "$stderr")
    [[ "$first" == *"64 pairs,"*" 4 threads;"* ]] || fail "the first scoring was not initialize's warm-up on 4 threads: $first"
    [ "$(grep -c 'haplik: trace cpu: 64 pairs,' <<< "$stderr")" = 1 ] || fail "expected one warm-up"
}

# ---- haplik-gatk-libs ----

fake_jar() {   # $1: the jar; the rest: members
    python3 - "$@" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for m in sys.argv[2:]:
        z.writestr(m, "dummy " + m)
PY
}

@test "haplik-gatk-libs: puts haplik and the jar's other GKL libraries in DIR, prints the gatk line" {
    fake_jar "$BATS_TEST_TMPDIR/gatk-package-4.6.2.0-local.jar" com/intel/gkl/native/libgkl_utils.so \
        com/intel/gkl/native/libgkl_pairhmm.so com/intel/gkl/native/libgkl_pairhmm_omp.so \
        com/intel/gkl/native/libgkl_smithwaterman.so com/intel/gkl/native/libgkl_compression.so \
        com/intel/gkl/native/libgkl_utils.dylib org/broadinstitute/hellbender/Main.class
    echo "fake library" > "$BATS_TEST_TMPDIR/libhaplik_gkl.so"
    sum=$(md5sum < "$BATS_TEST_TMPDIR/gatk-package-4.6.2.0-local.jar")
    run --separate-stderr "$HK_GATK_LIBS" --lib "$BATS_TEST_TMPDIR/libhaplik_gkl.so" \
        "$BATS_TEST_TMPDIR/gatk-package-4.6.2.0-local.jar" "$BATS_TEST_TMPDIR/out"
    assert_success
    assert_output "USE_LIBRARY_PATH=1 gatk --java-options \"-Djava.library.path=$BATS_TEST_TMPDIR/out\" HaplotypeCaller -R REF.fasta -I READS.bam -O OUT.vcf.gz --pair-hmm-implementation AVX_LOGLESS_CACHING_OMP --native-pair-hmm-threads 4"
    assert_dir_only "$BATS_TEST_TMPDIR/out" libgkl_utils.so libgkl_smithwaterman.so libgkl_compression.so \
        libgkl_pairhmm_omp.so libgkl_pairhmm.so
    [ "$(cat "$BATS_TEST_TMPDIR/out/libgkl_pairhmm_omp.so")" = "fake library" ]
    [ "$(readlink "$BATS_TEST_TMPDIR/out/libgkl_pairhmm.so")" = libgkl_pairhmm_omp.so ]
    [ "$(cat "$BATS_TEST_TMPDIR/out/libgkl_utils.so")" = "dummy com/intel/gkl/native/libgkl_utils.so" ]
    [ "$(md5sum < "$BATS_TEST_TMPDIR/gatk-package-4.6.2.0-local.jar")" = "$sum" ]
    # again into the same folder: replaced in place
    run --separate-stderr "$HK_GATK_LIBS" --lib "$BATS_TEST_TMPDIR/libhaplik_gkl.so" \
        "$BATS_TEST_TMPDIR/gatk-package-4.6.2.0-local.jar" "$BATS_TEST_TMPDIR/out"
    assert_success
    assert_dir_only "$BATS_TEST_TMPDIR/out" libgkl_utils.so libgkl_smithwaterman.so libgkl_compression.so \
        libgkl_pairhmm_omp.so libgkl_pairhmm.so
}

@test "haplik-gatk-libs: a jar without GKL's libraries, or no jar, is an error and writes nothing" {
    echo "fake library" > "$BATS_TEST_TMPDIR/lib.so"
    fake_jar "$BATS_TEST_TMPDIR/other.jar" org/example/Main.class
    run --separate-stderr "$HK_GATK_LIBS" --lib "$BATS_TEST_TMPDIR/lib.so" "$BATS_TEST_TMPDIR/other.jar" "$BATS_TEST_TMPDIR/out"
    assert_failure 2
    assert_stderr "haplik: error: $BATS_TEST_TMPDIR/other.jar: no GKL native libraries inside (com/intel/gkl/native/lib*.so): not a GATK local jar?"
    [ ! -e "$BATS_TEST_TMPDIR/out" ]
    fake_jar "$BATS_TEST_TMPDIR/noutils.jar" com/intel/gkl/native/libgkl_compression.so
    mkdir "$BATS_TEST_TMPDIR/out"
    run --separate-stderr "$HK_GATK_LIBS" --lib "$BATS_TEST_TMPDIR/lib.so" "$BATS_TEST_TMPDIR/noutils.jar" "$BATS_TEST_TMPDIR/out"
    assert_failure 2
    assert_stderr --partial "has no com/intel/gkl/native/libgkl_utils.so"
    assert_dir_only "$BATS_TEST_TMPDIR/out"
    echo "not a zip" > "$BATS_TEST_TMPDIR/bad.jar"
    run --separate-stderr "$HK_GATK_LIBS" --lib "$BATS_TEST_TMPDIR/lib.so" "$BATS_TEST_TMPDIR/bad.jar" "$BATS_TEST_TMPDIR/out"
    assert_failure 2
    assert_dir_only "$BATS_TEST_TMPDIR/out"
    run --separate-stderr "$HK_GATK_LIBS" --lib "$BATS_TEST_TMPDIR/lib.so" "$BATS_TEST_TMPDIR/missing.jar" "$BATS_TEST_TMPDIR/out"
    assert_failure 2
    assert_stderr "haplik: error: $BATS_TEST_TMPDIR/missing.jar: cannot read the GATK jar"
    run --separate-stderr "$HK_GATK_LIBS" --lib "$BATS_TEST_TMPDIR/nolib.so" "$BATS_TEST_TMPDIR/noutils.jar" "$BATS_TEST_TMPDIR/out"
    assert_failure 2
    assert_stderr --partial "nolib.so: haplik's library not found"
}

@test "haplik-gatk-libs: --help prints the usage alone; a folder named - or with a ':' is handled, no stray folder" {
    run --separate-stderr "$HK_GATK_LIBS" --help
    assert_success
    assert_output --partial "haplik-gatk-libs [--lib FILE] GATK_JAR DIR"
    refute_output --partial "set -"
    refute_output --partial "prog="
    fake_jar "$BATS_TEST_TMPDIR/gatk.jar" com/intel/gkl/native/libgkl_utils.so com/intel/gkl/native/libgkl_pairhmm_omp.so
    echo "fake library" > "$BATS_TEST_TMPDIR/lib.so"
    cd "$BATS_TEST_TMPDIR" || return
    # Java splits java.library.path at ':': such a folder could never be used
    run --separate-stderr "$HK_GATK_LIBS" --lib lib.so gatk.jar "a:b"
    assert_failure 2
    assert_stderr "haplik: error: a:b: a folder whose name holds ':' cannot be on java.library.path (Java splits it there)"
    [ ! -e "a:b" ] || fail "a folder was left"
    # a folder named -: made and filled like any other, quietly
    run --separate-stderr "$HK_GATK_LIBS" --lib lib.so gatk.jar -
    assert_success
    [ -z "$stderr" ] || [[ "$stderr" == "haplik-gatk-libs: $BATS_TEST_TMPDIR/- ready:"* ]] || fail "noise: $stderr"
    assert_dir_only ./- libgkl_utils.so libgkl_pairhmm_omp.so libgkl_pairhmm.so
    # a failure leaves no folder it made
    run --separate-stderr "$HK_GATK_LIBS" --lib missing.so gatk.jar new-dir
    assert_failure 2
    [ ! -e new-dir ] || fail "a folder was left"
}

@test "haplik-gatk-libs: after make install prefix=X it finds the library beside itself; X/lib/haplik/gkl alone is not enough for GKL" {
    [ -z "$GKL_SKIP" ] || skip "SKIPPED: $GKL_SKIP"
    local top="$BATS_TEST_DIRNAME/.."
    [ -f "$top/Makefile" ] || skip "SKIPPED: not in a build tree (a bundle of tests has no make install)"
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top" install prefix="$BATS_TEST_TMPDIR/x" >/dev/null 2>&1 ||
        fail "make install failed"
    fake_jar "$BATS_TEST_TMPDIR/gatk.jar" com/intel/gkl/native/libgkl_utils.so com/intel/gkl/native/libgkl_pairhmm_omp.so
    run --separate-stderr "$BATS_TEST_TMPDIR/x/bin/haplik-gatk-libs" "$BATS_TEST_TMPDIR/gatk.jar" "$BATS_TEST_TMPDIR/dir"
    echo "$stderr"
    assert_success
    cmp "$BATS_TEST_TMPDIR/x/lib/haplik/gkl/libhaplik_gkl.so" "$BATS_TEST_TMPDIR/dir/libgkl_pairhmm_omp.so"
}

has_gpu() { "$HAPLIK" devices 2>/dev/null | grep -q '^[0-9]'; }

# shellcheck disable=SC2030 # bats runs each test in a subshell; its helpers run in that same subshell
@test "gkl GPU: the dumps through the GPU are within 2e-5 of GATK and 1e-5 of haplik's CPU" {
    [ -z "$GKL_SKIP" ] || skip "SKIPPED: $GKL_SKIP"
    has_gpu || skip "SKIPPED: no usable GPU here (run on a GPU host: bats tests/gkl.bats)"
    printf '{"engine": {"backend": "cuda"}}\n' > "$BATS_TEST_TMPDIR/cuda.json"
    HAPLIK_GKL_CONFIG="$BATS_TEST_TMPDIR/cuda.json" run --separate-stderr harness gkl_pairhmm_omp replay \
        "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" 2e-5 "$BATS_FILE_TMPDIR/java.mixed.tsv" mixed 1e-5
    echo "$output"; echo "$stderr"
    assert_success
    assert_stderr --partial "cuda on"
}

# gkl_trace LINE: the trace's counts into cpu_calls, declined, gpu_calls, launches
gkl_trace() {
    [[ "$1" =~ ([0-9]+)\ calls\ on\ the\ CPU\ \(([0-9]+)\ of\ them\ declined\ by\ a\ busy\ GPU\)\;\ ([0-9]+)\ on\ the\ GPU,\ in\ ([0-9]+)\ engine\ calls ]] ||
        fail "no trace line: $1"
    cpu_calls=${BASH_REMATCH[1]} declined=${BASH_REMATCH[2]} gpu_calls=${BASH_REMATCH[3]} launches=${BASH_REMATCH[4]}
}

# gpu_threads [VAR=VALUE...]: with those set, 16 Java threads (engine.backend cuda, HK_TRACE)
# replay the java dump 50 times each, within 1e-5 of one thread's; the trace's counts into
# cpu_calls, declined, gpu_calls, launches and small_calls
# shellcheck disable=SC2031 # a helper runs in the subshell of the test that calls it: what that test set is seen
gpu_threads() {
    local kv
    for kv in "$@"; do export "${kv?}"; done
    printf '{"engine": {"backend": "cuda"}}\n' > "$BATS_TEST_TMPDIR/gpu.json"
    HK_TRACE=1 HAPLIK_GKL_CONFIG="$BATS_TEST_TMPDIR/gpu.json" run --separate-stderr harness gkl_pairhmm_omp \
        threads "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" 16 50 1e-5
    echo "$output"; echo "$stderr" | grep -v 'trace engine'
    assert_success
    [[ "$stderr" =~ trace\ gkl:\ ([0-9]+)\ calls\ on\ the\ GPU\'s\ small-call\ path\ \( ]] || fail "no small-call trace line"
    small_calls=${BASH_REMATCH[1]}
    gkl_trace "$(grep 'haplik: trace gkl: .* engine calls' <<< "$stderr" | tail -1)"
}

@test "gkl GPU: 16 Java threads: every region-sized call takes the small-call path; results agree" {
    [ -z "$GKL_SKIP" ] || skip "SKIPPED: $GKL_SKIP"
    has_gpu || skip "SKIPPED: no usable GPU here (run on a GPU host: bats tests/gkl.bats)"
    gpu_threads
    [ "$small_calls" -gt 0 ] && [ "$launches" -eq 0 ] || fail "expected the small-call path alone ($small_calls calls, $launches engine calls)"
}

@test "gkl GPU: the engine's path (HK_GKL_GPU_SMALL=0), 16 Java threads: a call finding both engines busy is scored on the CPU" {
    [ -z "$GKL_SKIP" ] || skip "SKIPPED: $GKL_SKIP"
    has_gpu || skip "SKIPPED: no usable GPU here (run on a GPU host: bats tests/gkl.bats)"
    gpu_threads HK_GKL_GPU_SMALL=0
    [ "$small_calls" -eq 0 ] || fail "the small-call path was not off"
    [ "$gpu_calls" -gt 0 ] || fail "no call went to the GPU"
    [ "$declined" -gt 0 ] && [ "$cpu_calls" -ge "$declined" ] || fail "no call was declined to the CPU"
    [ "$launches" -eq "$gpu_calls" ] || fail "region-sized calls waited to be gathered ($launches launches)"
}

@test "gkl GPU: the engine's path (HK_GKL_GPU_SMALL=0), auto, one Java thread: region-sized calls go to the free GPU" {
    [ -z "$GKL_SKIP" ] || skip "SKIPPED: $GKL_SKIP"
    has_gpu || skip "SKIPPED: no usable GPU here (run on a GPU host: bats tests/gkl.bats)"
    HAPLIK_GKL_CONFIG='' HK_GKL_GPU_SMALL=0 HK_TRACE=1 run --separate-stderr harness gkl_pairhmm_omp replay \
        "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" 2e-5 "$BATS_FILE_TMPDIR/java.mixed.tsv" mixed 1e-5
    echo "$output"; echo "$stderr" | grep -v 'trace engine'
    assert_success
    assert_stderr --partial "in double"
    gkl_trace "$(grep 'haplik: trace gkl: .* engine calls' <<< "$stderr" | tail -1)"
    [ "$cpu_calls" -eq 0 ] && [ "$gpu_calls" -gt 0 ] || fail "expected every call on the GPU"
}

@test "gkl GPU: the engine's path with a queue allowed (HK_GKL_GPU_QUEUE), 16 Java threads' calls are gathered" {
    [ -z "$GKL_SKIP" ] || skip "SKIPPED: $GKL_SKIP"
    has_gpu || skip "SKIPPED: no usable GPU here (run on a GPU host: bats tests/gkl.bats)"
    gpu_threads HK_GKL_GPU_SMALL=0 HK_GKL_GPU_QUEUE=1000
    [ "$gpu_calls" -gt 0 ] && [ "$cpu_calls" -eq 0 ] || fail "expected every call on the GPU"
    [ "$launches" -lt "$gpu_calls" ] || fail "no calls were gathered"
}

@test "gkl GPU client: the GPU's calls have the CPU's bits, float and double, from 1 to 64 Java threads" {
    [ -z "$CLIENT_SKIP" ] || skip "SKIPPED: $CLIENT_SKIP"
    has_gpu || skip "SKIPPED: no usable GPU here (run on a GPU host: bats tests/gkl.bats)"
    printf '{"engine": {"backend": "cuda"}}\n' > "$BATS_TEST_TMPDIR/cuda.json"
    python3 "${GEN_BATCHES:-$BATS_TEST_DIRNAME/../scripts/gen_batches.py}" --format gatk --pairs 3000 --seed 7 > "$BATS_TEST_TMPDIR/na.txt"
    local dbl t
    for dbl in "" --double; do
        run -0 --separate-stderr client haplik --class omp --dump "$BATS_TEST_TMPDIR/na.txt" --max-threads 4 $dbl \
            --results "$BATS_TEST_TMPDIR/cpu.txt"
        for t in 1 64; do
            HK_TRACE=1 HAPLIK_GKL_CONFIG="$BATS_TEST_TMPDIR/cuda.json" run --separate-stderr client haplik --class omp \
                --dump "$BATS_TEST_TMPDIR/na.txt" --max-threads 4 ${dbl:+"$dbl"} --threads "$t" --results "$BATS_TEST_TMPDIR/gpu$t.txt"
            echo "$output"; grep 'trace gkl' <<< "$stderr"
            assert_success
            assert_output --partial "threads=$t identical=yes"
            [[ "$stderr" =~ trace\ gkl:\ ([0-9]+)\ calls\ on\ the\ GPU\'s\ small-call\ path ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] ||
                fail "no call took the GPU's small-call path"
            cmp "$BATS_TEST_TMPDIR/cpu.txt" "$BATS_TEST_TMPDIR/gpu$t.txt" ||
                fail "${dbl:-float}, $t Java threads: the GPU's values are not the CPU's bits"
        done
    done
}

@test "haplik-gatk-libs: the folder it prepares serves HaplotypeCaller's Pair-HMM classes" {
    [ -z "$GKL_SKIP" ] || skip "SKIPPED: $GKL_SKIP"
    fake_jar "$BATS_TEST_TMPDIR/gatk.jar" com/intel/gkl/native/libgkl_utils.so com/intel/gkl/native/libgkl_pairhmm_omp.so
    run --separate-stderr "$HK_GATK_LIBS" --lib "$HK_GKL_LIB" "$BATS_TEST_TMPDIR/gatk.jar" "$BATS_TEST_TMPDIR/dir"
    assert_success
    for lib in gkl_pairhmm_omp gkl_pairhmm; do
        LIBDIR="$BATS_TEST_TMPDIR/dir" run --separate-stderr harness "$lib" replay \
            "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" 2e-5 "$BATS_FILE_TMPDIR/java.mixed.tsv" mixed
        echo "$output"; echo "$stderr"
        assert_success
        assert_output --partial "ok $lib mixed: 2 regions, 284 pairs"
    done
}
