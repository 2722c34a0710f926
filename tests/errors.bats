#!/usr/bin/env bats
# Bad input: a one-line error naming file and line, exit status 2, no output left.
# shellcheck disable=SC2154 # stderr, stderr_lines: set by bats' run --separate-stderr

setup_file() {
    # a batch input of several of the reader's blocks (1 MB per thread): 106250 lines, 9 MB
    python3 "${GEN_BATCHES:-$BATS_TEST_DIRNAME/../scripts/gen_batches.py}" --profile equal \
        --read-len 16 --hap-len 16 --haps-per-batch 1 --pairs 100000 --seed 11 \
        > "$BATS_FILE_TMPDIR/many.in"
}

setup() { load test_helper/common-setup; _common_setup; cd "$BATS_TEST_TMPDIR" || return; mkdir out; }

# expect_input_error FILE LINE TEXT [OPTION...]: scoring FILE (with the options) fails
# with 2, one stderr line "haplik: error: FILE:LINE: ...TEXT...", and out/ stays empty.
expect_input_error() {
    local file=$1 line=$2 text=$3
    shift 3
    run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet "$@" -o out/t.json "$file"
    [ "${#stderr_lines[@]}" -eq 1 ] || fail "expected one line on stderr, got: $stderr"
    [[ "${stderr_lines[0]}" == "haplik: error: $file:$line: "* ]] ||
        fail "stderr does not start with 'haplik: error: $file:$line: ': $stderr"
    [[ "$stderr" == *"$text"* ]] || fail "stderr lacks '$text': $stderr"
    assert_dir_only out
    [ -z "$output" ] || fail "stdout not empty"
}

rec() { echo "ACGTA ACGT IIII IIII IIII IIII -1.0e+00"; }

@test "several inputs: the first error in input order is the one reported, whatever is opened early" {
    # the input after a bad one is opened (and its first block read) before
    # the walk reaches the bad line: its own failure must not be reported
    { rec; rec; } > good.txt
    { rec; echo "ACGTA ACGT IIII IIII IIII IIII -1.0e+00 extra"; } > bad.txt
    printf 'BAM\1binary' > binary.txt
    for next in missing.txt binary.txt good.txt; do
        run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json good.txt bad.txt "$next"
        [ "${#stderr_lines[@]}" -eq 1 ] || fail "after bad.txt, $next: expected one line on stderr, got: $stderr"
        [[ "${stderr_lines[0]}" == "haplik: error: bad.txt:2: "* ]] || fail "not bad.txt's error: $stderr"
        assert_dir_only out
    done
    # an input that cannot be opened is still reported, in its turn
    run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json good.txt missing.txt
    assert_equal "$stderr" "haplik: error: missing.txt: cannot open: No such file or directory"
    run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json good.txt binary.txt
    [[ "$stderr" == "haplik: error: binary.txt:1: binary content"* ]] || fail "$stderr"
    assert_dir_only out
}

@test "gatk: wrong field count" {
    { rec; echo "ACGTA ACGT IIII IIII IIII -1.0e+00"; } > bad.txt
    expect_input_error bad.txt 2 "expected 7 space-separated fields"
}

@test "gatk: quality strings of another length than the read" {
    { rec; echo "ACGTA ACGT IIII III IIII IIII -1.0e+00"; } > bad.txt
    expect_input_error bad.txt 2 "field 4 has 3 characters but the read has 4 bases"
}

@test "gatk: a bad base and a bad quality character" {
    echo "ACGTA AXGT IIII IIII IIII IIII -1.0e+00" > bad.txt
    expect_input_error bad.txt 1 "invalid base 'X'"
    printf 'ACGTA ACGT II\x7fI IIII IIII IIII -1.0e+00\n' > bad.txt
    expect_input_error bad.txt 1 "invalid quality character"
}

@test "gatk: expected-result that is not a number" {
    echo "ACGTA ACGT IIII IIII IIII IIII minus-one" > bad.txt
    expect_input_error bad.txt 1 "is not a number"
}

@test "batch: counts that are not positive numbers" {
    for h in "0 2" "-1 2" "a 2" "2" "2 3 4" "1.5 2"; do
        printf '%s\nACGT IIII IIII IIII IIII\nACGTT\n' "$h" > bad.in
        expect_input_error bad.in 1 "expected a batch header"
    done
}

@test "batch: absurdly large counts" {
    printf '100000000000 2\nACGT IIII IIII IIII IIII\n' > bad.in
    expect_input_error bad.in 1 "larger than haplik accepts"
}

@test "batch: a read line with a wrong field count" {
    printf '1 1\nACGT IIII IIII IIII\nACGTT\n' > bad.in
    expect_input_error bad.in 2 "expected a read line"
}

@test "batch: a truncated file" {
    head -n 50 "$DATA/tiny.in" > bad.in
    expect_input_error bad.in 50 "truncated input: the batch at line 1 expects 53 reads"
}

@test "an error after good regions still leaves no output" {
    { cat "$DATA/10s.in"; printf '1 1\nACGT IIII IIII IIII IIII\nAC!T\n'; } > bad.in
    expect_input_error bad.in 489 "invalid base '!'"
}

@test "a truncated gzip stream (inflated as read, and ahead)" {
    gzip -c "$DATA/1m.in" | head -c 300000 > bad.gz
    local t
    for t in 1 4; do
        run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet --threads $t -o out/t.json bad.gz
        assert_stderr --regexp "^haplik: error: bad.gz:[0-9]+: read error \(truncated or corrupt compressed stream\?\)$"
        assert_dir_only out
    done
}

@test "a truncated BGZF stream" {
    bgzip -c "$DATA/1m.in" | head -c 300000 > bad.bgz
    run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json bad.bgz
    assert_stderr --regexp "^haplik: error: bad.bgz:[0-9]+: read error"
    assert_dir_only out
}

@test "content of neither format" {
    echo "hello big world" > bad.txt
    expect_input_error bad.txt 1 "cannot tell the format"
}

@test "binary input" {
    printf '1 1\nAC\0T IIII IIII IIII IIII\nACGTT\n' > bad.in
    expect_input_error bad.in 1 "binary content"
    printf '1 1\nACGT IIII IIII IIII IIII\n%s\n' "$(head -c 3000 /dev/zero | tr '\0' A)" > late.in
    printf 'A\0C\n' >> late.in
    expect_input_error late.in 4 "NUL byte"
}

@test "a missing input file" {
    run -2 --separate-stderr "$HAPLIK" score --backend cpu -o out/t.json no-such-file.txt
    assert_stderr --partial "no-such-file.txt: cannot open"
    assert_dir_only out
}

@test "standard output gets nothing when the input is bad" {
    printf '1 1\nACGT IIII IIII IIII IIII\nAC!T\n' > bad.in
    run -2 --separate-stderr "$HAPLIK" score --backend cpu bad.in
    [ -z "$output" ] || fail "stdout: $output"
}

@test "an unwritable output folder is a runtime error (3)" {
    run -3 --separate-stderr "$HAPLIK" score --backend cpu -o /nonexistent-dir/t.json "$DATA/tiny.in"
    assert_stderr --partial "/nonexistent-dir/t.json: cannot create a temporary file"
}

@test "the error earliest in the input is reported, also across parallel parsing" {
    printf '1 1\nACGT IIII IIII IIII IIII\nAXGT\n1 1\nACGT III IIII IIII IIII\nACGT\n' > bad.in
    expect_input_error bad.in 3 "haplotype: invalid base 'X' at position 2"
    # a big input (parsed by several threads): a bad quality on line 5000, a bad line on 7000
    awk 'NR == 5000 { $2 = "\x01" substr($2, 2) } NR == 7000 { $0 = $0 " extra" } { print }' \
        "$DATA/1m.in" > big.in
    expect_input_error big.in 5000 "read base qualities: invalid quality character 0x01 at position 1"
    run -2 --separate-stderr "$HAPLIK" score --backend cpu --threads 1 -o out/t.json big.in
    assert_stderr --partial "big.in:5000: read base qualities"
}

@test "-o to a device or FIFO writes into it, never replaces it" {
    run -0 "$HAPLIK" score --backend cpu --quiet -o /dev/null "$DATA/tiny.in"
    [ -c /dev/null ] || fail "/dev/null is no longer a character device"
    mkfifo out/fifo
    cat out/fifo > got.json &
    run -0 "$HAPLIK" score --backend cpu --quiet -o out/fifo "$DATA/tiny.in"
    wait
    [ -p out/fifo ] || fail "the FIFO was replaced"
    run -0 table valid got.json
}

@test "gap-open qualities that leave match-to-match no probability are refused" {
    printf '1 1\nACGT IIII !III !III ++++\nACGTT\n' > bad.in
    expect_input_error bad.in 2 "gap-open qualities at position 1 have error probabilities that sum to 1 or more"
    printf '1 1\nACGT IIII %%III %%III ++++\nACGTT\n' > ok.in     # Q4 + Q4: defined
    run -0 "$HAPLIK" score --backend cpu --quiet -o out/t.json ok.in
}

# break_read_lines IN OUT FROM1 EDIT1 FROM2 EDIT2: copy IN with the first read line (5
# fields) at or after line FROMk changed by EDITk: "qual" puts a bad quality character
# first, "fields" adds a field, "nul" a NUL byte; prints the two line numbers.
break_read_lines() {
    awk -v f1="$3" -v e1="$4" -v f2="$5" -v e2="$6" '
        function edit(e) {
            if (e == "qual") $2 = "\x01" substr($2, 2)
            else if (e == "fields") $0 = $0 " extra"
            else $0 = $0 "\x00"
            print NR > "/dev/stderr"
        }
        NF == 5 && !d1 && NR >= f1 { edit(e1); d1 = 1 }
        NF == 5 && !d2 && NR >= f2 { edit(e2); d2 = 1 }
        { print }' "$1" 2> lines.txt > "$2"
    cat lines.txt
}

@test "the earliest error wins across blocks and the threads' pieces" {
    local l
    # a bad quality in the first block, a wrong field count in a later one
    mapfile -t l < <(break_read_lines "$BATS_FILE_TMPDIR/many.in" big.in 20000 qual 90000 fields)
    for t in 1 4; do
        expect_input_error big.in "${l[0]}" "read base qualities: invalid quality character 0x01" --threads $t
    done
    # the other way round: the structural error is the earlier one
    mapfile -t l < <(break_read_lines "$BATS_FILE_TMPDIR/many.in" big.in 20000 fields 90000 qual)
    for t in 1 4; do
        expect_input_error big.in "${l[0]}" "expected a read line" --threads $t
    done
    # both in one block, in the second thread's piece before the first's (4 threads)
    mapfile -t l < <(break_read_lines "$BATS_FILE_TMPDIR/many.in" big.in 30000 fields 31000 qual)
    expect_input_error big.in "${l[0]}" "expected a read line" --threads 4
}

@test "a NUL byte far into the input is reported at its line" {
    local l
    mapfile -t l < <(break_read_lines "$BATS_FILE_TMPDIR/many.in" nul.in 95000 nul 99999999 nul)
    for t in 1 3; do
        expect_input_error nul.in "${l[0]}" "NUL byte in text" --threads $t
    done
}

@test "gatk: a bad character in a region not complete yet wins over a later structural error" {
    { rec; echo "ACGTA AXGT IIII IIII IIII IIII -1.0e+00"; echo "ACGTA ACGT IIII III IIII IIII -1.0e+00"; } > bad.txt
    expect_input_error bad.txt 2 "read: invalid base 'X'"
}

@test "a read one base longer than the longest accepted is refused at its line" {
    local a q
    a=$(head -c 1000001 /dev/zero | tr '\0' A)
    q=$(head -c 1000001 /dev/zero | tr '\0' I)
    { echo "1 1"; echo "ACGT IIII IIII IIII IIII"; echo "ACGTA"; echo "1 1"; echo "$a $q $q $q $q"; echo "ACGTA"; } > long.in
    expect_input_error long.in 5 "read longer than 1000000 bases" --threads 1
    { echo "# hap-bases read-bases read-qual read-ins-qual read-del-qual gcp expected-result"
      echo "$a ACGT IIII IIII IIII IIII -1.0e+00"; } > long.txt
    expect_input_error long.txt 2 "haplotype longer than 1000000 bases" --threads 2
}

@test "a BGZF stream without its end-of-file marker that ends at a block end, at its last line" {
    # 256 regions in 4 KB each (a comment and the header, 14 reads, a haplotype: 256 bytes
    # a line or two): exactly a block of the reader with one thread (1 MB), 4352 lines
    python3 - > aligned.in <<'PY'
for region in range(256):
    print("#" * 248 + "\r\n" + "14 1\r")
    for r in range(14):
        print(" ".join(["ACGTA" * 10] + ["I" * 50] * 4) + "\r")
    print("ACGT" * 63 + "AC" + "\r")
PY
    [ "$(wc -c < aligned.in)" -eq 1048576 ]
    [ "$(wc -l < aligned.in)" -eq 4352 ]
    bgzip -c aligned.in | head -c -28 > cut.bgz   # the last 28 bytes: the end-of-file marker
    expect_input_error cut.bgz 4352 "truncated BGZF stream: no end-of-file marker" --threads 1
}

# ---- resources: the run's failure (3) with its true cause, never the input's (2) ----

# fd_sweep NAME CMD...: CMD (in out/) under every open-file limit from 4 to 40: it
# succeeds, or fails with exit 3 and one line naming "Too many open files" (and
# not calling a file missing or not plain); the limits where it failed go to
# $BATS_TEST_TMPDIR/NAME.fails, their messages to NAME.msgs.
fd_sweep() {
    local name=$1 n status
    shift
    : > "$BATS_TEST_TMPDIR/$name.fails"; : > "$BATS_TEST_TMPDIR/$name.msgs"
    for n in $(seq 4 40); do
        rm -rf out && mkdir out
        status=0
        (cd out && exec 2>../err.txt 3>&- && ulimit -n "$n" && exec "$@") || status=$?
        # the dynamic loader, before haplik runs, is not haplik's to report
        grep -q "error while loading shared libraries" err.txt && continue
        [ "$status" -eq 0 ] && continue
        [ "$status" -eq 3 ] || fail "$name, ulimit -n $n: exit $status, expected 0 or 3: $(cat err.txt)"
        [ "$(wc -l < err.txt)" -eq 1 ] || fail "$name, ulimit -n $n: not one line: $(cat err.txt)"
        grep -q "^haplik: error: .*Too many open files" err.txt ||
            fail "$name, ulimit -n $n: the cause is not named: $(cat err.txt)"
        ! grep -qE "missing|not a plain regular file" err.txt ||
            fail "$name, ulimit -n $n: a resource failure called the input's: $(cat err.txt)"
        echo "$n" >> "$BATS_TEST_TMPDIR/$name.fails"
        cat err.txt >> "$BATS_TEST_TMPDIR/$name.msgs"
    done
}

@test "too many open files is a runtime failure (3) naming its cause: score, plans, merge, split, config" {
    local d=$BATS_TEST_TMPDIR t=$DATA/tiny.in
    cp "$t" a.in; cp "$t" b.in; cp "$t" c.in
    echo '{"engine": {"threads": 2}}' > c.json
    "$HAPLIK" split --quiet --plan p.tsv --parts 2 a.in
    "$HAPLIK" score --backend cpu --quiet -o a.tsv a.in
    "$HAPLIK" score --backend cpu --quiet -o b.tsv b.in
    "$HAPLIK" score --backend cpu --quiet -o a.json a.in
    fd_sweep score "$HAPLIK" score --backend cpu --quiet -c "$d/c.json" -o t.json "$d/a.in" "$d/b.in" "$d/c.in"
    fd_sweep plan "$HAPLIK" score --backend cpu --quiet --plan "$d/p.tsv" --part 1 -o t.json "$d/a.in"
    fd_sweep merge_tsv "$HAPLIK" merge --quiet -o m.tsv "$d/a.tsv" "$d/b.tsv"
    fd_sweep merge_json "$HAPLIK" merge --quiet -o m.json "$d/a.json" "$d/a.json" "$d/a.json"
    fd_sweep split "$HAPLIK" split --quiet "$d/a.in" s1 s2 s3
    fd_sweep split_plan "$HAPLIK" split --quiet --plan p2.tsv --parts 3 "$d/a.in"
    # each failed somewhere, and where an input's open is the one that failed, that was said
    local name
    for name in score plan merge_tsv merge_json split split_plan; do
        [ -s "$d/$name.fails" ] || fail "$name never ran out of files: the sweep tests nothing"
    done
    grep -q "b.tsv.meta.json" "$d/merge_tsv.msgs" || fail "no sidecar failed to open: $(cat "$d/merge_tsv.msgs")"
    grep -q "a.in" "$d/plan.msgs" || fail "the planned input never failed to open: $(cat "$d/plan.msgs")"
}
