#!/usr/bin/env bats
# haplik on aarch64, under emulation: the cross build (scripts/cross-aarch64.sh:
# Debian's gcc-aarch64-linux-gnu and an arm64 sysroot unpacked from Debian's
# packages) run with qemu-aarch64. The NEON pass's checks and tables against the
# x86 build's, NEON against scalar, and HaplotypeCaller's loading path: GKL's own
# classes (Debian's gkl.jar) in an arm64 OpenJDK load haplik through
# libgkl_utils.so. Without the cross compiler or qemu-aarch64 every test SKIPs,
# saying which is missing (scripts/setup.sh --tests installs both), or why HK_ARM_SKIP says.
# The cross build goes to HK_ARM_DIR [build-aarch64 beside the haplik tested].
# shellcheck disable=SC2154 # stderr, stderr_lines: set by bats' run --separate-stderr

setup_file() {
    load test_helper/common-setup
    _common_setup
    export ARM_SKIP=
    if [ -n "${HK_ARM_SKIP:-}" ]; then
        ARM_SKIP=$HK_ARM_SKIP     # scripts/sanitize-check.sh: nothing of the aarch64 build is instrumented
    elif ! command -v aarch64-linux-gnu-gcc >/dev/null; then
        ARM_SKIP="no aarch64 cross compiler: apt-get install gcc-aarch64-linux-gnu"
    elif ! command -v qemu-aarch64 >/dev/null; then
        ARM_SKIP="no qemu-aarch64: apt-get install qemu-user"
    elif [ -z "${JAVAC:-}" ]; then
        ARM_SKIP="no javac (for GKL's classes' driver): apt-get install default-jdk-headless, then configure again"
    fi
    if [ -n "$ARM_SKIP" ]; then
        echo "# SKIP arm.bats: $ARM_SKIP" >&3
        return 0
    fi
    local src
    src=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
    export ARM_DIR=${HK_ARM_DIR:-$(dirname "$HAPLIK")/build-aarch64}
    # GNU C mode, as a user's CFLAGS may ask: GCC then fuses a*b+c into FMA, which AArch64
    # always has, unless the project's -ffp-contract=off holds (without it 3147 of the 3550
    # pairs of 10s.in differ from x86 in mixed mode: the tables test below)
    CFLAGS="-g -O2 -std=gnu11" bash "$src/scripts/cross-aarch64.sh" --jvm --dir "$ARM_DIR" >&3 2>&1
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ARM_DIR/src" -j2 tests/unit/test_model >/dev/null
    export QEMU_LD_PREFIX="$ARM_DIR/sysroot" ARM_HAPLIK="$ARM_DIR/src/haplik"
    export JAVA_ARM="$QEMU_LD_PREFIX/usr/lib/jvm/java-17-openjdk-arm64/bin/java"
    local jars="$QEMU_LD_PREFIX/usr/share/java"
    export ARM_CP="$BATS_FILE_TMPDIR/classes:$jars/gkl.jar:$jars/gatk-native-bindings.jar:$jars/commons-logging.jar"
    "$JAVAC" --release 17 -d "$BATS_FILE_TMPDIR/classes" -cp "$ARM_CP" "$BATS_TEST_DIRNAME/arm/GklReal.java"
    # the folder HaplotypeCaller loads from, as haplik-gatk-libs makes it for aarch64
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1], "w").writestr("com/intel/gkl/native/libgkl_utils.so", "x86-64")' \
        "$BATS_FILE_TMPDIR/gatk-local.jar"
    "$ARM_DIR/src/haplik-gatk-libs" --lib "$ARM_DIR/src/libhaplik_gkl.so" \
        "$BATS_FILE_TMPDIR/gatk-local.jar" "$BATS_FILE_TMPDIR/libs" >/dev/null
}

setup() {
    load test_helper/common-setup
    _common_setup
    [ -z "$ARM_SKIP" ] || skip "SKIPPED: $ARM_SKIP"
}

arm() { qemu-aarch64 "$ARM_HAPLIK" "$@"; }

# GKL's classes in the arm64 JVM, libraries from DIR ($1)
gkl_java() {
    local dir=$1; shift
    qemu-aarch64 "$JAVA_ARM" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.library.path="$dir" \
        -cp "$ARM_CP" GklReal "$@"
}

# score FILE in PRECISION with haplik ($1: arm or hk) into OUT, less the input's path
score_table() {
    local who=$1 file=$2 prec=$3 out=$4
    "$who" score --quiet --backend cpu --threads 2 --precision "$prec" --decimals 12 \
        --output-format tsv -o "$out.full" "$file"
    cut -f2- "$out.full" > "$out"
}

@test "arm: the build is aarch64 code and picks the NEON pass" {
    run file -L "$ARM_HAPLIK"
    assert_output --partial "ARM aarch64"
    HK_TRACE=1 run --separate-stderr arm score --backend cpu -o /dev/null "$DATA/tiny.in"
    assert_success
    assert_stderr --partial "CPU pass neon: 4 float lanes, 2 double lanes"
    # an x86 pass named on ARM: a notice, and NEON
    HK_CPU_PASS=avx2 run --separate-stderr arm score --backend cpu -o /dev/null "$DATA/tiny.in"
    assert_success
    assert_stderr --partial "HK_CPU_PASS=avx2: this CPU does not run it; using neon"
}

@test "arm: haplik check on the bundled dumps with the NEON pass" {
    export HK_CPU_PASS=neon
    for p in mixed double; do
        run -0 arm check --backend cpu --precision $p --tolerance 1e-5 "$DATA/pairhmm-testdata.txt"
        assert_output --partial "over tolerance 1e-05: 0"
        run -0 arm check --backend cpu --precision $p --tolerance 2e-5 "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
        assert_output --partial "pairs compared: 284"
    done
    run -0 arm check --backend cpu "$DATA/pdhmm_syn_990_1_2.txt"
    assert_output --partial "pairs compared: 990"
    # the check can fail: float alone is not within 1e-9
    run -1 arm check --backend cpu --precision float --tolerance 1e-9 "$DATA/pairhmm-testdata.txt"
}

@test "arm: NEON's tables equal the x86 build's bit for bit (no FMA; float's subnormals flushed as on x86)" {
    for f in tiny.in 10s.in hc-NA12878-20_10000117.java.hmmresults.txt; do
        for p in mixed double float; do
            score_table arm "$DATA/$f" $p "$BATS_TEST_TMPDIR/arm.tsv"
            score_table hk "$DATA/$f" $p "$BATS_TEST_TMPDIR/x86.tsv"
            [ "$(wc -l < "$BATS_TEST_TMPDIR/x86.tsv")" -gt 1 ]
            cmp "$BATS_TEST_TMPDIR/arm.tsv" "$BATS_TEST_TMPDIR/x86.tsv" || fail "$f $p: ARM and x86 differ"
        done
    done
    # 1m.in in float: 8 pairs have subnormal cells, which FPCR.FZ flushes as MXCSR.FZ does
    score_table arm "$DATA/1m.in" float "$BATS_TEST_TMPDIR/arm.tsv"
    score_table hk "$DATA/1m.in" float "$BATS_TEST_TMPDIR/x86.tsv"
    [ "$(wc -l < "$BATS_TEST_TMPDIR/x86.tsv")" -eq 29308 ]
    cmp "$BATS_TEST_TMPDIR/arm.tsv" "$BATS_TEST_TMPDIR/x86.tsv" || fail "1m.in float: ARM and x86 differ"
}

@test "arm: the passes neon and scalar give the same bits (test_model, and tables)" {
    # test_model passes: every pass this CPU runs, lanes and anti-diagonals, against the scalar pass
    HK_TESTDATA=$DATA run qemu-aarch64 "$ARM_DIR/src/tests/unit/test_model" passes
    echo "$output" | grep -v '^ok' | head -n 20
    assert_success
    assert_output --partial "mixed: neon pass (neon, 4 threads, ordered on all) equals the scalar pass bit for bit"
    assert_output --partial "float: neon anti-diagonal pass (every float pair, 4 threads) equals the scalar pass"
    refute_output --partial "not ok"
    for p in mixed double float; do
        HK_CPU_PASS=neon score_table arm "$DATA/10s.in" $p "$BATS_TEST_TMPDIR/neon.tsv"
        HK_CPU_PASS=scalar score_table arm "$DATA/10s.in" $p "$BATS_TEST_TMPDIR/scalar.tsv"
        cmp "$BATS_TEST_TMPDIR/neon.tsv" "$BATS_TEST_TMPDIR/scalar.tsv" || fail "10s.in $p: neon and scalar differ"
    done
}

@test "arm: haplik-gatk-libs on aarch64 installs libgkl_utils.so, not the jar's x86-64 libraries" {
    run --separate-stderr "$ARM_DIR/src/haplik-gatk-libs" --lib "$ARM_DIR/src/libhaplik_gkl.so" \
        "$BATS_FILE_TMPDIR/gatk-local.jar" "$BATS_TEST_TMPDIR/out"
    assert_success
    assert_output --partial "USE_LIBRARY_PATH=1 gatk --java-options \"-Djava.library.path=$BATS_TEST_TMPDIR/out\""
    assert_dir_only "$BATS_TEST_TMPDIR/out" libgkl_utils.so libgkl_pairhmm_omp.so libgkl_pairhmm.so
    cmp "$BATS_TEST_TMPDIR/out/libgkl_utils.so" "$ARM_DIR/src/libgkl_utils.so"
    run file -L "$BATS_TEST_TMPDIR/out/libgkl_utils.so"
    assert_output --partial "ARM aarch64"
    # its exports: IntelGKLUtils's six natives, nothing else
    run bash -c "aarch64-linux-gnu-nm -D --defined-only '$ARM_DIR/src/libgkl_utils.so' | awk '{print \$3}' | grep . | sort"
    assert_output "Java_com_intel_gkl_IntelGKLUtils_getAvailableOmpThreadsNative
Java_com_intel_gkl_IntelGKLUtils_getFlushToZeroNative
Java_com_intel_gkl_IntelGKLUtils_isAvx2SupportedNative
Java_com_intel_gkl_IntelGKLUtils_isAvx512SupportedNative
Java_com_intel_gkl_IntelGKLUtils_isAvxSupportedNative
Java_com_intel_gkl_IntelGKLUtils_setFlushToZeroNative"
}

@test "arm: GKL's IntelGKLUtils (arm64 JVM) answers from libgkl_utils.so" {
    OMP_NUM_THREADS=3 run --separate-stderr gkl_java "$BATS_FILE_TMPDIR/libs" utils
    echo "$stderr"
    assert_success
    assert_output "avx true
avx2 false
avx512 false
ftz set true cleared false
threads 3"
    # no OMP_NUM_THREADS: the affinity mask's CPUs
    command -v taskset >/dev/null || skip "SKIPPED: no taskset for the affinity case"
    run --separate-stderr env -u OMP_NUM_THREADS taskset -c 0 qemu-aarch64 "$JAVA_ARM" -XX:+UseSerialGC \
        -XX:TieredStopAtLevel=1 -Djava.library.path="$BATS_FILE_TMPDIR/libs" -cp "$ARM_CP" GklReal utils
    assert_success
    assert_line "threads 1"
}

@test "arm: GKL's IntelPairHmmOMP (arm64 JVM) loads haplik and scores the dump within 1e-5" {
    for p in mixed double; do
        run --separate-stderr gkl_java "$BATS_FILE_TMPDIR/libs" replay \
            "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" 1e-5 $p
        echo "$output"; echo "$stderr"
        assert_success
        assert_output --partial "ok replay $p: 284 pairs"
        assert_stderr --partial "Pair-HMM 0.2.0: cpu neon"
    done
}

@test "arm: without libgkl_utils.so GKL does not load haplik (why aarch64 needs it)" {
    mkdir "$BATS_TEST_TMPDIR/no-utils"
    cp "$BATS_FILE_TMPDIR/libs/libgkl_pairhmm_omp.so" "$BATS_TEST_TMPDIR/no-utils/"
    run --separate-stderr gkl_java "$BATS_TEST_TMPDIR/no-utils" replay \
        "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" 1e-5 mixed
    assert_failure
    assert_output --partial "FAIL IntelPairHmmOMP.load refused"
}
