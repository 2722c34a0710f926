#!/usr/bin/env bats
# The model's trust cases on the command line: values GATK's double cannot
# reach (rescued, finite), mixed mode within 1e-4 of double on long reads,
# degenerate gap-continuation qualities refused, strict config files.
# shellcheck disable=SC2154 # stderr, stderr_lines: set by bats' run --separate-stderr

setup() { load test_helper/common-setup; _common_setup; cd "$BATS_TEST_TMPDIR" || return; mkdir out; }

# batch_pair FILE READ HAP QUAL GAPOPEN GCP: a one-pair batch file whose
# quality strings repeat the given characters along the read.
batch_pair() {
    python3 - "$@" <<'EOF'
import sys
path, read, hap, q, g, c = sys.argv[1:]
n = len(read)
with open(path, "w") as f:
    f.write("1 1\n%s %s %s %s %s\n%s\n" % (read, q * n, g * n, g * n, c * n, hap))
EOF
}

# random_seq N SEED: N random bases, the same for the same seed.
random_seq() { python3 -c "import random,sys; r=random.Random(int(sys.argv[2])); print(''.join(r.choice('ACGT') for _ in range(int(sys.argv[1]))))" "$1" "$2"; }

# lk FILE: the first pair's log10 likelihood as printed (None for null).
lk() { table get "$1" "t['regions'][0]['log10_likelihoods'][0][0]"; }

@test "a 700-base read against an unrelated haplotype: finite, not null, in mixed and double" {
    batch_pair far.in "$(random_seq 700 1)" "$(random_seq 700 2)" I I +
    for p in mixed double; do
        run -0 hk score --backend cpu --quiet --precision $p -o out/$p.json far.in
        run -0 lk out/$p.json
        [[ "$output" =~ ^-[0-9]+\.[0-9]+$ ]] || fail "$p: expected a finite number, got '$output'"
        # far below GATK's double range (about -631), above what 700 mismatches allow
        python3 -c "import sys; v = float(sys.argv[1]); sys.exit(not (-2000 < v < -631))" "$output" ||
            fail "$p: $output is not in (-2000, -631)"
    done
    run -0 table close out/mixed.json out/double.json 1e-9
}

@test "mixed stays within 1e-4 of double on a long read" {
    # float's rounding error grows with the read's length: a 3000-base exact
    # match with constant qualities (Q75, gap-open Q60) is off by 1.4e-4 in float
    s=$(random_seq 3000 3)
    batch_pair long.in "$s" "$s" l ] +
    run -0 hk score --backend cpu --quiet --precision mixed -o out/mixed.json long.in
    run -0 hk score --backend cpu --quiet --precision double -o out/double.json long.in
    run -0 table close out/mixed.json out/double.json 1e-4
    run -0 table get out/mixed.json "t['summary']['double_recomputed']"
    assert_output 1
}

@test "a gap-continuation quality of Q0 is refused with file and line" {
    printf '1 1\nACGT IIII IIII IIII ++!+\nACGTT\n' > bad.in
    run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json bad.in
    [ "${#stderr_lines[@]}" -eq 1 ] || fail "expected one line on stderr, got: $stderr"
    [[ "${stderr_lines[0]}" == "haplik: error: bad.in:2: "* ]] || fail "stderr: $stderr"
    assert_stderr --partial "gap-continuation quality at position 3 is Q0"
    assert_dir_only out
    echo "ACGTA ACGT IIII IIII IIII !+++ -1.0e+00" > bad.txt
    run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json bad.txt
    [[ "${stderr_lines[0]}" == "haplik: error: bad.txt:1: "* ]] || fail "stderr: $stderr"
    assert_stderr --partial "gap-continuation quality at position 1 is Q0"
    assert_dir_only out
    # model.gcp replaces the per-base qualities: the file's Q0 is then not used
    echo '{"model": {"gcp": 10}}' > c.json
    run -0 hk score --backend cpu --quiet -c c.json -o out/t.json bad.in
}

@test "model.gcp 0 is refused, naming the key" {
    echo '{"model": {"gcp": 0}}' > c.json
    run -2 --separate-stderr "$HAPLIK" score --backend cpu -c c.json -o out/t.json "$DATA/tiny.in"
    assert_stderr "haplik: error: c.json: model.gcp: expected null or an integer from 1 to 93"
    assert_dir_only out
}

@test "a config file with content after its JSON object is refused" {
    for tail in 'x' '{}' '{"model": {}}' ', {}' '// comment'; do
        printf '{"model": {"precision": "double"}}\n%s\n' "$tail" > c.json
        run -2 --separate-stderr "$HAPLIK" score --backend cpu -c c.json -o out/t.json "$DATA/tiny.in"
        [ "${#stderr_lines[@]}" -eq 1 ] || fail "'$tail': expected one line on stderr, got: $stderr"
        assert_stderr --partial "haplik: error: c.json:2: "
        assert_stderr --partial "content after the JSON object"
        assert_dir_only out
    done
    printf '{"model": {"precision": "double"}}\n \t\r\n\n' > c.json   # whitespace only: fine
    run -0 hk score --backend cpu --quiet -c c.json -o out/t.json "$DATA/tiny.in"
}

@test "mixed stays within 1e-4 of double on a long haplotype" {
    # along the haplotype float's error grows too: a 400-base read that fits a 32,000-base
    # repeat at every period (Q60, gap-open Q45) is off by 1.8e-4 in float
    python3 - <<'PY'
hap = ("ACGTTG" * 6000)[:32000]
read = hap[7:407]
n = len(read)
with open("longhap.in", "w") as f:
    f.write("1 1\n%s %s %s %s %s\n%s\n" % (read, "]" * n, "N" * n, "N" * n, "+" * n, hap))
PY
    run -0 hk score --backend cpu --quiet --precision mixed -o out/mixed.json longhap.in
    run -0 hk score --backend cpu --quiet --precision double -o out/double.json longhap.in
    run -0 table close out/mixed.json out/double.json 1e-4
    run -0 table get out/mixed.json "t['summary']['double_recomputed']"
    assert_output 1
}

@test "a float threshold of 0, which the validator accepts, gives the double value, not null" {
    # float's sum underflows to 0 on this pair (far below float's range); with a threshold
    # of 0 it was kept, and its log10 was -inf (null in the table)
    batch_pair far.in "$(random_seq 700 1)" "$(random_seq 700 2)" I I +
    for t in 0 1e-300 1e-28; do
        run -0 hk score --backend cpu --quiet --precision mixed --float-threshold $t -o out/mixed.json far.in
        run -0 lk out/mixed.json
        [[ "$output" =~ ^-[0-9]+\.[0-9]+$ ]] || fail "threshold $t: expected a finite number, got '$output'"
    done
    run -0 hk score --backend cpu --quiet --precision double -o out/double.json far.in
    run -0 table close out/mixed.json out/double.json 1e-9
    # the same from a config file
    echo '{"model": {"float_threshold": 0}}' > c.json
    run -0 hk score --backend cpu --quiet -c c.json -o out/file.json far.in
    run -0 table close out/file.json out/double.json 1e-9
}

@test "pairs whose cells overflow GATK's double get their true values, in mixed and double" {
    # reads of A against haplotypes of A (every alignment matches); gap-continuation Q1 and Q40
    # alternating, deletion Q3: a row's deletions carry more than they took in, and the double
    # cells pass 2^1024. The values are the long-double reference's (tests/unit/model_ref.h).
    python3 - <<'PY'
rows = [(30, 100, 2.30905), (100, 100, -29.7437), (1000, 1000, -268.779)]
with open("ovf.in", "w") as f, open("want.txt", "w") as w:
    for rl, hl, want in rows:
        gcp = "".join('"' if i % 2 == 0 else "I" for i in range(rl))
        f.write("1 1\n%s %s %s %s %s\n%s\n" % ("A" * rl, "I" * rl, "I" * rl, "$" * rl, gcp, "A" * hl))
        w.write("%s\n" % want)
PY
    local p
    for p in mixed double; do
        run -0 hk score --backend cpu --quiet --precision "$p" -o "$p.json" ovf.in
        run -0 python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
got = [r["log10_likelihoods"][0][0] for r in t["regions"]]
want = [float(x) for x in open("want.txt")]
assert all(g is not None for g in got), ("null", got)
assert all(abs(g - w) <= 1e-4 * max(1, abs(w)) for g, w in zip(got, want)), (got, want)' "$p.json"
    done
}
