#!/usr/bin/env bats
# Where the table goes (README "What you can rely on"): standard output streams when it is
# a pipe or a terminal, a closed pipe ends the run quietly, files stay
# complete or absent, write errors name their true cause, an empty output
# name is refused before any work, and the fatal error is the last line.

setup() { load test_helper/common-setup; _common_setup; cd "$BATS_TEST_TMPDIR" || return; }

@test "standard output streams: the first region arrives while the input is still open" {
    # the input stays open 6 s after its last byte; a spooled table would arrive after that
    run -0 bash -c '{ cat "$DATA/1m.in"; sleep 6; } |
        "$HAPLIK" score --backend cpu --quiet --max-batch-pairs 1000 --output-format jsonl - |
        { IFS= read -r line; echo "$SECONDS ${line:0:20}"; cat > /dev/null; }'
    [[ "$output" == [0-3]' {"index": 0, "name"'* ]] || fail "the first region came late: $output"
}

@test "a closed pipe ends the run quietly, by SIGPIPE (status 141 in the shell)" {
    for fmt in json jsonl tsv; do
        run --separate-stderr bash -c 'set -o pipefail; "$HAPLIK" score --backend cpu --quiet \
            --output-format '$fmt' "$DATA/1m.in" | head -c 100 > /dev/null'
        [ "$status" -eq 141 ] || fail "$fmt: status $status, stderr: $stderr"
        [ -z "$stderr" ] || fail "$fmt: stderr: $stderr"
    done
    run --separate-stderr bash -c 'set -o pipefail; "$HAPLIK" score --backend cpu --quiet \
        --compression bgzf "$DATA/1m.in" | head -c 100 > /dev/null'
    [ "$status" -eq 141 ] && [ -z "$stderr" ] || fail "bgzf: status $status, stderr: $stderr"
}

@test "standard output redirected to a file stays spooled: a failed run writes nothing there" {
    printf '1 1\nACGT IIII IIII IIII ++++\nACXT\n' > bad.in
    run -2 bash -c '"$HAPLIK" score --backend cpu --quiet "$DATA/tiny.in" bad.in > out.json'
    [ ! -s out.json ]
    hk score --backend cpu --quiet "$DATA/tiny.in" > out.json
    python3 -c "import json; json.load(open('out.json'))"
}

@test "an empty output name is a usage error before any work" {
    mkdir w && cd w
    run -2 --separate-stderr hk score --backend cpu -o '' "$DATA/tiny.in"
    assert_stderr "haplik: error: score: -o/--output: the output's name is empty"
    run -2 --separate-stderr hk check --backend cpu -o '' "$DATA/pairhmm-testdata.txt"
    assert_stderr "haplik: error: check: -o/--output: the output's name is empty"
    cp "$DATA/tiny.in" d.in
    hk score --backend cpu --quiet d.in -o t.json
    run -2 --separate-stderr hk split d.in s1 ''
    assert_stderr "haplik: error: an output's name is empty"
    run -2 --separate-stderr hk split --plan '' --parts 2 d.in
    assert_stderr "haplik: error: an output's name is empty"
    run -2 --separate-stderr hk merge t.json -o ''
    assert_stderr "haplik: error: an output's name is empty"
    assert_dir_only . d.in t.json
}

@test "write errors name their true cause, and leave nothing behind" {
    # the file size limit (SIGXFSZ ignored: the write fails with EFBIG), plain and BGZF
    mkdir w && cd w
    for out in big.json big.tsv big.json.gz big.tsv.gz; do
        run -3 --separate-stderr bash -c "ulimit -f 64; exec \"\$HAPLIK\" score --backend cpu --quiet -o $out \"\$DATA/1m.in\""
        assert_stderr "haplik: error: $out: write failed: File too large"
    done
    assert_dir_only .
    # a full device, written directly
    run -3 --separate-stderr hk score --backend cpu --quiet -o /dev/full "$DATA/1m.in"
    assert_stderr "haplik: error: /dev/full: write failed: No space left on device"
}

@test "the fatal error is the last line on stderr, after any notice (GPU fallback)" {
    printf '1 1\nACGT IIII IIII IIII ++++\nACXT\n' > bad.in
    for i in $(seq 40); do
        run -2 --separate-stderr "$HAPLIK" score --backend auto -o x.json bad.in
        last=$(tail -n 1 <<< "$stderr")
        [[ "$last" == "haplik: error: bad.in:3: "* ]] || fail "run $i: last line '$last' of: $stderr"
    done
}
