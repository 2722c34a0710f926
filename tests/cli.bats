#!/usr/bin/env bats
# The command line: help, version, exit statuses, backends.
# shellcheck disable=SC2154 # stderr, stderr_lines: set by bats' run --separate-stderr

setup() { load test_helper/common-setup; _common_setup; }

@test "haplik --help lists every command and exits 0" {
    run -0 hk --help
    for c in score check split merge devices; do assert_output --partial "  $c "; done
}

@test "--version prints the version and what the build reads gzip with" {
    run -0 hk --version
    assert_line --index 0 --regexp '^haplik [0-9]+\.[0-9]+\.[0-9]+ \(MIT licence\)$'
    assert_line --index 1 --regexp '^built with: htslib [0-9.]+.*; gzip input through (Intel ISA-L|htslib \(zlib\)); (CUDA engine|no CUDA engine \(CPU only\))$'
}

@test "no command and an unknown command are usage errors (2)" {
    run -2 hk
    run -2 --separate-stderr hk frobnicate
    assert_stderr --partial "unknown command 'frobnicate'"
}

@test "every subcommand has --help on stdout with status 0" {
    for c in score check split merge devices; do
        run -0 --separate-stderr hk "$c" --help
        assert_output --partial "Usage: haplik $c"
        [ -z "$stderr" ]
    done
}

@test "bench: --help names both kernel families; bad values are usage errors (2)" {
    run -0 --separate-stderr hk bench --help
    assert_output --partial "Usage: haplik bench"
    assert_output --partial "--gaps G"
    assert_output --partial "[constant]"
    run -2 --separate-stderr hk bench --gaps sometimes
    assert_stderr --partial "bad option value 'sometimes'"
    run -2 --separate-stderr hk bench --runs 2
    assert_stderr --partial "bad option value '2'"
    run -2 --separate-stderr hk bench --workload lng
    assert_stderr --partial "bad option value 'lng'"
    run -2 --separate-stderr hk bench --precision quad   # the config's validator and message
    assert_stderr 'haplik: error: bench: --precision: expected "mixed", "float" or "double"'
    run -2 --separate-stderr hk bench extra
    assert_stderr --partial "takes no operands"
}

@test "score --help prints the live defaults of every config key" {
    run -0 hk score --help
    assert_output --partial '["mixed"] (model.precision)'
    assert_output --partial '[1e-28] (model.float_threshold)'
    assert_output --partial '[6] (model.min_base_quality)'
    assert_output --partial '["auto"] (engine.backend)'
    assert_output --partial '[0.0001] (check.tolerance)'
}

@test "an unknown option is a usage error (2)" {
    run -2 --separate-stderr hk score --frob "$DATA/tiny.in"
    assert_stderr --partial "unknown option '--frob'; see 'haplik score --help'"
}

@test "an unknown option or command gets the nearest known one, and the error is the last line" {
    run -2 --separate-stderr hk score --outptu x.json "$DATA/tiny.in"
    assert_stderr "haplik: error: score: unknown option '--outptu' (did you mean --output?); see 'haplik score --help'"
    run -2 --separate-stderr hk check --tolerence=1 "$DATA/tiny.in"
    assert_stderr --partial "unknown option '--tolerence=1' (did you mean --tolerance?)"
    run -2 --separate-stderr hk split --qiuet x.in a b
    assert_stderr --partial "unknown option '--qiuet' (did you mean --quiet?)"
    run -2 --separate-stderr hk socre "$DATA/tiny.in"
    [[ "${stderr_lines[-1]}" == "haplik: error: unknown command 'socre' (did you mean score?)" ]] || fail "$stderr"
    run -2 --separate-stderr hk frobnicate
    [[ "${stderr_lines[-1]}" == "haplik: error: unknown command 'frobnicate'" ]] || fail "$stderr"
}

@test "score without input is a usage error (2)" {
    run -2 --separate-stderr hk score
    assert_stderr --partial "no INPUT given"
}

@test "bad flag values are refused with the flag's name (2)" {
    run -2 --separate-stderr hk score --threads abc "$DATA/tiny.in"
    assert_stderr --partial "--threads: expected an integer"
    run -2 --separate-stderr hk score --precision quad "$DATA/tiny.in"
    assert_stderr --partial "--precision: expected"
    run -2 --separate-stderr hk score --devices 0,x "$DATA/tiny.in"
    assert_stderr --partial "--devices:"
}

@test "devices: lists GPUs (0) or says why there is none (3)" {
    run --separate-stderr hk devices
    if [ "$status" -eq 0 ]; then
        assert_output --partial "compute_capability"
    else
        [ "$status" -eq 3 ] || fail "status $status"
        assert_output --partial "no usable GPU: "
    fi
}

@test "--backend cuda without a usable GPU exits 3 and writes nothing" {
    if hk devices >/dev/null 2>&1; then
        skip "SKIPPED: this machine has a usable GPU (the GPU tests cover --backend cuda)"
    fi
    mkdir "$BATS_TEST_TMPDIR/out"
    run -3 --separate-stderr hk score --backend cuda -o "$BATS_TEST_TMPDIR/out/t.json" "$DATA/tiny.in"
    assert_stderr --partial "no usable GPU"
    assert_dir_only "$BATS_TEST_TMPDIR/out"
}

@test "--backend auto without a GPU falls back to the CPU with a notice" {
    if hk devices >/dev/null 2>&1; then
        skip "SKIPPED: this machine has a usable GPU"
    fi
    run -0 --separate-stderr hk score --backend auto -o "$BATS_TEST_TMPDIR/t.json" "$DATA/tiny.in"
    assert_stderr --partial "scoring on the CPU"
    run -0 table get "$BATS_TEST_TMPDIR/t.json" "t['summary']['backend']"
    assert_output cpu
}

@test "--quiet silences notices" {
    run -0 --separate-stderr hk score --quiet -o "$BATS_TEST_TMPDIR/t.json" "$DATA/tiny.in"
    [ -z "$stderr" ] || fail "stderr: $stderr"
}

@test "a progress line on stderr when it is a terminal, none otherwise" {
    command -v script >/dev/null || skip "SKIPPED: no 'script' command to give haplik a terminal"
    cd "$BATS_TEST_TMPDIR" || return
    run -0 script -qec "'$HAPLIK' score --backend cpu -o t.json '$DATA/10s.in' 2>&1 >/dev/null" /dev/null
    assert_output --regexp "haplik: 7 regions, 3550 pairs, [0-9.]+ GCUPS"
    run -0 --separate-stderr "$HAPLIK" score --backend cpu -o t2.json "$DATA/10s.in"
    [[ "$stderr" != *GCUPS* ]] || fail "progress written to a non-terminal: $stderr"
}

@test "make check builds every program under tests/ (the CUDA ones on a CUDA build, the GKL ones with JNI)" {
    # A benchmark that no longer compiles must break make check, not the next GPU run.
    [ -x "$BATS_TEST_DIRNAME/unit/test_model" ] ||
        skip "the programs of make check are not built here (run under make check)"
    local cuda=0 gkl=0 src prog missing=
    "$HAPLIK" --version | grep -q '; CUDA engine$' && cuda=1
    [ -n "${HK_GKL_LIB:-}" ] && [ -e "$HK_GKL_LIB" ] && gkl=1
    while IFS= read -r src; do
        prog=${src%.*}
        [[ $src == *.cu && $cuda == 0 ]] && continue
        [[ $src == */test_gkl_* && $gkl == 0 ]] && continue
        [ -x "$prog" ] || missing="$missing ${prog#"$BATS_TEST_DIRNAME"/}"
    done < <(grep -l '^int main' "$BATS_TEST_DIRNAME"/*/*.c "$BATS_TEST_DIRNAME"/*/*.cu)
    [ -z "$missing" ] || fail "not built by make check:$missing"
}

@test "every citation of a document's section (tests/test_helper/citations.py) names a heading that exists" {
    run -0 python3 "$BATS_TEST_DIRNAME/test_helper/citations.py" "$BATS_TEST_DIRNAME/.."
    # and the check can fail: a tree citing a heading its README lacks
    mkdir -p "$BATS_TEST_TMPDIR/t/src"
    printf '# x\n## Present\n' > "$BATS_TEST_TMPDIR/t/README.md"
    printf '/* see README, %sPresent%s and README, %sAbsent%s */\n' '"' '"' '"' '"' > "$BATS_TEST_TMPDIR/t/src/a.c"
    run -1 --separate-stderr python3 "$BATS_TEST_DIRNAME/test_helper/citations.py" "$BATS_TEST_TMPDIR/t"
    assert_output --regexp '^src/a\.c:1: README, .Absent.: no such heading in README\.md$'
}

@test "no module of src/ or kernels/ depends on itself through others (tests/test_helper/cycles.py)" {
    # the objects are beside the binary: the tree itself, or an out-of-tree build (the sanitizers')
    run -0 python3 "$BATS_TEST_DIRNAME/test_helper/cycles.py" "$BATS_TEST_DIRNAME/.." "$(dirname "$HAPLIK")"
    # and the check can fail: headers that include each other's module, and
    # two objects that call each other
    local t=$BATS_TEST_TMPDIR/t
    mkdir -p "$t/src"
    printf '#include "b.h"\n' > "$t/src/a.h"
    printf '#include "a.h"\n' > "$t/src/b.h"
    printf 'int d_f(void);\nint c_f(void) { return d_f(); }\n' > "$t/src/c.c"
    printf 'int c_f(void);\nint d_f(void) { return c_f() + 1; }\n' > "$t/src/d.c"
    ${CC:-cc} -c -o "$t/src/c.o" "$t/src/c.c"
    ${CC:-cc} -c -o "$t/src/d.o" "$t/src/d.c"
    run -1 python3 "$BATS_TEST_DIRNAME/test_helper/cycles.py" "$t"
    assert_line 'cycle: src/a -> src/b -> src/a'
    assert_line '    src/a.h includes src/b.h'
    assert_line 'cycle: src/c -> src/d -> src/c'
    assert_line '    src/c.o uses d_f, defined in src/d'
}

# half_checks FILE...: the lines "[ A ] && [ B ]" (or [[ ]]) that a test goes on past: bats's
# errexit skips a false A there (a && list fails a test only at its last command), so such a
# line checks B alone. FILE:LINE: TEXT a line.
half_checks() {
    awk '
        function report() { if (held != "") print held; held = "" }
        /^[ \t]*$/ { next }
        { if (held != "" && $0 !~ /^[ \t]*}/) report(); held = "" }
        /^[ \t]*\[\[? .*\]\]? && \[\[? .*\]\]?[ \t]*$/ && !/\|\|/ { held = FILENAME ":" FNR ": " $0 }
    ' "$@"
}

@test "no test goes on past '[ A ] && [ B ]' (a false A would not fail it)" {
    run -0 half_checks "$BATS_TEST_DIRNAME"/*.bats
    assert_output ""
    # and the check can fail
    cd "$BATS_TEST_TMPDIR"
    printf '@test "x" {\n    [ -e a ] && [ -e b ]\n    true\n}\n@test "y" {\n    [ -e a ] && [ -e b ]\n}\n' > x.bats
    run -0 half_checks x.bats
    assert_output "x.bats:2:     [ -e a ] && [ -e b ]"
}

# shell_sources TOP: the shell scripts of scripts/ and tests/ (not the bats files), one a line
shell_sources() {
    (cd "$1" && find scripts tests -path tests/data -prune -o -type f \( -name '*.sh' -o -name '*.bash' \) -print
        grep -l '^#!.*\(bash\|/sh\)' scripts/*.in) | sort
}

@test "shellcheck finds nothing in the tests and the shell scripts (.shellcheckrc says what it skips)" {
    if ! command -v shellcheck >/dev/null; then
        [ "${HK_REQUIRE_SHELLCHECK:-0}" != 1 ] || fail "shellcheck not found (HK_REQUIRE_SHELLCHECK=1)"
        skip "SHELLCHECK NOT FOUND: the tests and scripts are NOT checked (apt-get install shellcheck, or scripts/setup.sh --tests)"
    fi
    local top=$BATS_TEST_DIRNAME/.. scripts
    mapfile -t scripts < <(shell_sources "$top")
    [ "${#scripts[@]}" -ge 10 ] || fail "too few shell scripts found: ${scripts[*]}"
    run -0 bash -c 'cd "$1" && shellcheck --shell=bats -f gcc tests/*.bats' sh "$top"
    assert_output ""
    run -0 bash -c 'cd "$1" && shift && shellcheck -f gcc "$@"' sh "$top" "${scripts[@]}"
    assert_output ""
    # and the check can fail: a bats test whose bare `! cmd` is not its last line
    mkdir -p "$BATS_TEST_TMPDIR/t/tests"
    printf '#!/usr/bin/env bats\n@test "x" {\n    ! true\n    true\n}\n' > "$BATS_TEST_TMPDIR/t/tests/x.bats"
    run -1 bash -c 'cd "$1" && shellcheck --shell=bats -f gcc tests/*.bats' sh "$BATS_TEST_TMPDIR/t"
    assert_output --partial "[SC2314]"
}
