#!/usr/bin/env bats
# Absurd input gets a clear error early; SIGINT / SIGTERM during
# score, split and merge, and a full disk, leave no output and no temporary file behind.
# See docs/RELIABILITY.md. Optional tools (skipped without): /usr/bin/time, xz, bzip2,
# zstd, unshare (a private mount namespace for the full-disk test).
# shellcheck disable=SC2154 # stderr, stderr_lines: set by bats' run --separate-stderr

setup_file() {
    GEN="python3 ${GEN_BATCHES:-$BATS_TEST_DIRNAME/../scripts/gen_batches.py}"
    # many tiny pairs (23 MB; more than one batch of split, 65536 pairs): little arithmetic
    $GEN --format gatk --profile equal --read-len 16 --hap-len 16 --pairs 200000 --seed 7 \
        > "$BATS_FILE_TMPDIR/tiny-pairs.txt"
    # fewer, larger pairs (28 MB, 3.1e9 cells): some seconds on one CPU thread
    $GEN --format gatk --profile equal --read-len 256 --hap-len 1024 --pairs 12000 --seed 8 \
        > "$BATS_FILE_TMPDIR/long-run.txt"
    echo '{"engine": {"max_batch_pairs": 200}}' > "$BATS_FILE_TMPDIR/small-batches.json"
}

setup() {
    load test_helper/common-setup; _common_setup
    cd "$BATS_TEST_TMPDIR" || return
    mkdir out
    IN=$BATS_FILE_TMPDIR
    PIDS=()
}

teardown() {
    # writers still holding a FIFO open, and haplik if a test failed before killing it
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
}

# wait_for COMMAND...: retry for up to 60 s (sanitizer builds are slow).
wait_for() {
    local i
    for ((i = 0; i < 3000; i++)); do "$@" && return 0; sleep 0.02; done
    return 1
}

# A temporary output file of haplik exists in out/ (and holds more than $1 bytes).
tmp_written() {
    [ -n "$(find out -name '.*.tmp*' ${1:+-size +"$1"c} -print -quit)" ]
}

# There are $1 temporary output files in out/.
n_tmp_files() { [ "$(find out -name '.*.tmp*' | wc -l)" -eq "$1" ]; }

# start_haplik ARGS...: haplik in the background (fds away from bats), PID in $HK_PID;
# with SIGINT and SIGQUIT at their default, as in a terminal (a non-interactive shell's
# background job starts with them ignored, and haplik keeps them so; env resets them even
# where the shell running the tests started with them ignored, which no trap can undo).
start_haplik() {
    (exec env --default-signal=INT,QUIT "$HAPLIK" "$@" >"$BATS_TEST_TMPDIR/hk.out" 2>"$BATS_TEST_TMPDIR/hk.err" 3>&-) &
    HK_PID=$!
    PIDS+=("$HK_PID")
}

# feed_fifo FIFO FILE: write FILE into FIFO and keep the FIFO open (no end of input).
feed_fifo() {
    (cat "$2"; exec sleep 120) >"$1" 2>/dev/null 3>&- &
    PIDS+=("$!")
}

# kill_and_check SIGNAL: send it to haplik; it must exit 128+signal leaving out/ empty.
kill_and_check() {
    local sig=$1 status=0 num
    num=$(kill -l "$sig")
    kill -s "$sig" "$HK_PID"
    wait "$HK_PID" || status=$?
    [ "$status" -eq $((128 + num)) ] ||
        fail "exit status $status after SIG$sig, expected $((128 + num)); stderr: $(cat hk.err)"
    assert_dir_only out
}

# ---- absurd input ----

@test "a line longer than any valid record is refused at its line, without reading it whole" {
    { echo "1 1"; head -c 67108864 /dev/zero | tr '\0' A; echo " x"; } > long.txt
    run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json long.txt
    [[ "$stderr" == "haplik: error: long.txt:2: line longer than "*"bytes, longer than any valid record"* ]] ||
        fail "unexpected stderr: $stderr"
    assert_dir_only out
    # the same in a results file, gzip-compressed
    { echo "# hap-bases read-bases read-qual read-ins-qual read-del-qual gcp expected-result"
      head -c 67108864 /dev/zero | tr '\0' A; echo; } | gzip -1 > long.txt.gz
    run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json long.txt.gz
    [[ "$stderr" == "haplik: error: long.txt.gz:2: line longer than "* ]] || fail "unexpected stderr: $stderr"
    assert_dir_only out
}

@test "the over-long line costs no memory of its size" {
    [ -x /usr/bin/time ] || skip "no /usr/bin/time"
    if ldd "$HAPLIK" 2>/dev/null | grep -q 'libasan'; then skip "sanitizer build: RSS not comparable"; fi
    { echo "1 1"; head -c 134217728 /dev/zero | tr '\0' A; echo " x"; } > long.txt
    run -2 /usr/bin/time -f 'maxrss_kb=%M' "$HAPLIK" score --backend cpu --quiet -o out/t.json long.txt
    local kb
    kb=$(sed -n 's/^maxrss_kb=//p' <<<"$output")
    [ -n "$kb" ] && [ "$kb" -lt 65536 ] || fail "peak RSS ${kb} KB for a 128 MB line: $output"
}

@test "an absurd batch header is refused before anything is allocated" {
    printf '10000000 100000\nA I I I I\n' > big.in
    run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json big.in
    [[ "$stderr" == "haplik: error: big.in:1: batch of 10000000 reads x 100000 haplotypes is larger than haplik accepts"* ]] ||
        fail "unexpected stderr: $stderr"
    printf '99999999999999999999999 1\nA I I I I\n' > big.in
    run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json big.in
    [[ "$stderr" == "haplik: error: big.in:1: "*"larger than haplik accepts"* ]] || fail "unexpected stderr: $stderr"
    assert_dir_only out
}

@test "xz-, zstd- and bzip2-compressed input is an input error, not an abort" {
    head -c 3000 "$DATA/tiny.in" > t.in
    local tried=0
    if command -v xz >/dev/null; then
        xz -k t.in
        run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json t.in.xz
        [[ "$stderr" == "haplik: error: t.in.xz:1: unsupported compression ("*"XZ"*"): haplik reads plain text, gzip or BGZF" ]] ||
            fail "unexpected stderr: $stderr"
        tried=1
    fi
    if command -v bzip2 >/dev/null; then
        bzip2 -k t.in
        run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json t.in.bz2
        [[ "$stderr" == "haplik: error: t.in.bz2:1: "* ]] || fail "unexpected stderr: $stderr"
        tried=1
    fi
    if command -v zstd >/dev/null; then
        zstd -q t.in
        run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json t.in.zst
        [[ "$stderr" == "haplik: error: t.in.zst:1: "* ]] || fail "unexpected stderr: $stderr"
        tried=1
    fi
    [ "$tried" = 1 ] || skip "none of xz, bzip2, zstd installed"
    assert_dir_only out
}

@test "binary input (BAM) is an input error (and leaks nothing: sanitizer build)" {
    printf 'BAM\001\0\0\0\0\0\0\0\0' | gzip > x.bam
    run -2 --separate-stderr "$HAPLIK" score --backend cpu --quiet -o out/t.json x.bam
    [[ "$stderr" == "haplik: error: x.bam:1: binary content (BAM"*"), not a text dump" ]] ||
        fail "unexpected stderr: $stderr"
    assert_dir_only out
}

@test "the fuzz corpus reads without a crash (exit 0 or 2, never a signal)" {
    local f st
    for f in "$BATS_TEST_DIRNAME"/fuzz/corpus/reader/*; do
        # the corpus inputs start with the harness's option byte; the rest is the file
        tail -c +2 "$f" > in.txt
        st=0
        "$HAPLIK" score --backend cpu --quiet -o out/t.json in.txt >/dev/null 2>err.txt || st=$?
        [ "$st" -eq 0 ] || [ "$st" -eq 2 ] || fail "$f: exit $st: $(cat err.txt)"
        rm -f out/t.json
        st=0
        "$HAPLIK" split --quiet in.txt out/a out/b >/dev/null 2>err.txt || st=$?
        [ "$st" -eq 0 ] || [ "$st" -eq 2 ] || fail "split $f: exit $st: $(cat err.txt)"
        rm -f out/a out/b
    done
    assert_dir_only out
}

# ---- signals: nothing left behind, exit status 128 + signal ----

@test "SIGINT and SIGTERM during a long score of a file leave no output" {
    local sig
    for sig in INT TERM; do
        start_haplik score --backend cpu --threads 1 --quiet -c "$IN/small-batches.json" \
            -o out/t.json "$IN/long-run.txt"
        # more than the 1 MiB stdio buffer: table data is in the file
        wait_for tmp_written 1048576 || fail "no table data was written: $(cat hk.err)"
        kill_and_check "$sig"
    done
}

@test "a signal ignored at start stays ignored (nohup, a script's background job): the table is written" {
    local sig status
    head -n 2001 "$IN/long-run.txt" > part.txt
    "$HAPLIK" score --backend cpu --threads 1 --quiet -o whole.json part.txt
    for sig in HUP INT; do
        # as nohup (SIGHUP) and a non-interactive shell's background job (SIGINT) start it
        (trap '' "$sig"; exec "$HAPLIK" score --backend cpu --threads 1 --quiet -c "$IN/small-batches.json" \
            -o out/t.json part.txt >"$BATS_TEST_TMPDIR/hk.out" 2>"$BATS_TEST_TMPDIR/hk.err" 3>&-) &
        # shellcheck disable=SC2030 # bats runs each test in a subshell; its helpers run in that same subshell
        HK_PID=$!
        PIDS+=("$HK_PID")
        wait_for tmp_written || fail "no table was begun: $(cat hk.err)"
        kill -s "$sig" "$HK_PID"
        status=0
        wait "$HK_PID" || status=$?
        [ "$status" -eq 0 ] || fail "SIG$sig, ignored at start, ended the run: status $status; stderr: $(cat hk.err)"
        run -0 table same whole.json out/t.json
        rm out/t.json
    done
}

@test "SIGINT and SIGTERM while score is writing (input held open) leave no output" {
    local sig
    for sig in INT TERM; do
        # a fresh FIFO each round: the writer of the last round may hold unread data
        mkfifo in.$sig.fifo
        # 16 threads: the reader must not wait for a block of 16 threads' size
        # to fill from a stream that is held open
        start_haplik score --backend cpu --quiet --threads 16 -c "$IN/small-batches.json" \
            -o out/t.json in.$sig.fifo
        feed_fifo in.$sig.fifo "$IN/tiny-pairs.txt"
        # more than the 1 MiB stdio buffer: table data is in the file, not only in memory
        wait_for tmp_written 1048576 || fail "no table data was written: $(cat hk.err)"
        kill_and_check "$sig"
    done
}

# split reads a regular file only (it is read twice; FIFOs are refused: tests/all_or_nothing.bats),
# so it cannot be held mid-write: it is interrupted at several moments instead, and must
# leave all its shards or none, and never a temporary file.
# shellcheck disable=SC2031 # a helper runs in the subshell of the test that calls it: what that test set is seen
all_or_none_after() {
    local n=$1 sig=$2 got tmp
    kill -s "$sig" "$HK_PID" 2>/dev/null || true
    wait "$HK_PID" || true
    got=$(find out -type f ! -name '.*' | wc -l)
    tmp=$(find out -name '.*.tmp*' | wc -l)
    [ "$tmp" -eq 0 ] || fail "SIG$sig: $tmp temporary files left"
    [ "$got" -eq 0 ] || [ "$got" -eq "$n" ] || fail "SIG$sig: $got of $n shards left"
}

@test "SIGINT and SIGTERM during split leave all shards or none, never a temporary file" {
    local sig delay
    for sig in INT TERM; do
        for delay in 0.02 0.1 0.3 0.6; do
            rm -rf out && mkdir out
            start_haplik split --quiet "$IN/tiny-pairs.txt" out/s1.txt out/s2.txt
            sleep "$delay"
            all_or_none_after 2 "$sig"
        done
    done
}

@test "SIGINT and SIGTERM while merge is writing leave no output" {
    "$HAPLIK" score --backend cpu --quiet -o t1.json "$IN/tiny-pairs.txt"
    head -n 3 t1.json > t2.part
    local sig
    for sig in INT TERM; do
        mkfifo t2.$sig.fifo
        # merge copies t1.json, then waits on the second table
        start_haplik merge --quiet t1.json t2.$sig.fifo -o out/m.json
        feed_fifo t2.$sig.fifo t2.part
        wait_for tmp_written 1048576 || fail "no merged data was written: $(cat hk.err)"
        kill_and_check "$sig"
    done
}

# shellcheck disable=SC2030 # bats runs each test in a subshell; its helpers run in that same subshell
@test "SIGINT during a split into 300 shards leaves all or none of them (more than 256 pending files)" {
    local outs=() i delay
    for ((i = 1; i <= 300; i++)); do outs+=("out/s$i"); done
    for delay in 0.01 0.05 0.1 0.2; do
        rm -rf out && mkdir out
        start_haplik split --quiet "$IN/tiny-pairs.txt" "${outs[@]}"
        sleep "$delay"
        all_or_none_after 300 INT
    done
}

# on_full_disk CMD...: run CMD where small/ is a 1 MiB tmpfs (private mount namespace;
# skips where none can be made); prints CMD's stderr, "status=N", then what small/ holds.
# shellcheck disable=SC2031 # a helper runs in the subshell of the test that calls it: what that test set is seen
on_full_disk() {
    mkdir -p small
    local ns=(unshare -rm)
    [ "$(id -u)" = 0 ] && ns=(unshare -m)
    if ! command -v unshare >/dev/null || ! "${ns[@]}" true 2>/dev/null; then
        skip "cannot make a private mount namespace"
    fi
    run "${ns[@]}" sh -c 'mount -t tmpfs -o size=1m tmpfs small 2>/dev/null || exit 99
        "$@" 2>&1 >/dev/null; echo "status=$?"; ls -A small' sh "$@"
    [ "$status" -ne 99 ] || skip "cannot mount a tmpfs"
}

@test "threads that cannot start (tight memory and stack limits): exit 3 with the cause, never silent" {
    local s status failed=0
    # AddressSanitizer reserves terabytes of shadow memory: it aborts under ulimit -v (and its report fails the run)
    if ldd "$HAPLIK" 2>/dev/null | grep -q 'libasan'; then skip "a sanitizer build does not run under ulimit -v"; fi
    # 32 threads whose stacks (ulimit -s) fill a 2 GB address space (ulimit -v) before all start
    for s in 100000 200000 250000 300000 400000 500000 600000 800000 1000000 1500000; do
        rm -rf out && mkdir out
        status=0
        (ulimit -v 2000000 && ulimit -s "$s" && exec "$HAPLIK" score --backend cpu --threads 32 --quiet \
            -o out/t.json "$DATA/1m.in" 2>err.txt 3>&-) || status=$?
        [ "$status" -eq 0 ] && continue
        failed=$((failed + 1))
        [ "$status" -eq 3 ] || fail "ulimit -s $s: exit $status, expected 0 or 3: $(cat err.txt)"
        [ -s err.txt ] || fail "ulimit -s $s: exit 3 with nothing on stderr"
        ! grep -qv "^haplik: error: " err.txt || fail "ulimit -s $s: not haplik's error lines: $(cat err.txt)"
        assert_dir_only out
    done
    [ "$failed" -gt 0 ] || skip "no thread failed to start under these limits on this host"
}

@test "HK_TRACE keeps its first 256 events and says how many more there were" {
    run -0 --separate-stderr env HK_TRACE=1 "$HAPLIK" score --backend cpu --quiet --max-batch-pairs 1 \
        -o out/t.json "$DATA/1m.in"
    [ "$(grep -c '^haplik: trace  *[0-9.]* ms  ' <<< "$stderr")" -eq 256 ] || fail "not 256 events kept"
    [[ "$stderr" == *"haplik: trace ("*" later events not kept: the first 256 are)"* ]] ||
        fail "the events not kept are not counted: $(tail -3 <<< "$stderr")"
    # a knob's value outside its range is not used, and said so
    run -0 --separate-stderr env HK_TRACE=5 "$HAPLIK" score --backend cpu --quiet -o out/t.json "$DATA/tiny.in"
    [ "$stderr" = "haplik: warning: HK_TRACE=5: not a whole number from 0 to 1; using the default" ] || fail "stderr: $stderr"
}

@test "standard output that cannot be written is a runtime error (3) with one message" {
    [ -w /dev/full ] || skip "no /dev/full"
    local cmd
    for cmd in "score --backend cpu --quiet $DATA/tiny.in" "merge --quiet $IN/t-tiny.json"; do
        [ -f "$IN/t-tiny.json" ] || "$HAPLIK" score --backend cpu --quiet -o "$IN/t-tiny.json" "$DATA/tiny.in"
        run -3 --separate-stderr sh -c "\"\$0\" $cmd > /dev/full" "$HAPLIK"
        [ "$stderr" = "haplik: error: standard output: write failed: No space left on device" ] ||
            fail "$cmd: stderr: $stderr"
    done
}

@test "a full disk is a runtime error (3) with one message, and leaves nothing (score, split, merge)" {
    on_full_disk "$HAPLIK" score --backend cpu --quiet -o small/t.json "$IN/tiny-pairs.txt"
    assert_output "haplik: error: small/t.json: write failed: No space left on device
status=3"
    on_full_disk "$HAPLIK" split --quiet "$IN/tiny-pairs.txt" small/a small/b
    [[ "${lines[0]}" == "haplik: error: "*"write failed"* ]] && [ "${lines[1]}" = "status=3" ] &&
        [ "${#lines[@]}" -eq 2 ] || fail "split: $output"
    "$HAPLIK" score --backend cpu --quiet -o t1.json "$IN/tiny-pairs.txt"
    on_full_disk "$HAPLIK" merge --quiet t1.json t1.json -o small/m.json
    [[ "${lines[0]}" == "haplik: error: small/m.json: write failed: No space left on device" ]] &&
        [ "${lines[1]}" = "status=3" ] && [ "${#lines[@]}" -eq 2 ] || fail "merge: $output"
}
