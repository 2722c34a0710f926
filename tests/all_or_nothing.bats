#!/usr/bin/env bats
# No input is ever destroyed, every command is all or nothing.
# Each test names the class of docs/RELIABILITY.md ("Inputs never destroyed") it guards; each failed on 0.1.0.
# shellcheck disable=SC2154 # stderr, stderr_lines: set by bats' run --separate-stderr

setup() {
    load test_helper/common-setup; _common_setup
    # a folder of its own: bats keeps its --separate-stderr files in the test's
    mkdir "$BATS_TEST_TMPDIR/w" && cd "$BATS_TEST_TMPDIR/w" || return
    cp "$DATA/tiny.in" a.in
    cp "$DATA/10s.in" b.in
    cp "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" hc.txt
    SUM_A=$(md5sum < a.in)
}

# The input a.in is as it was.
assert_a_intact() { [ "$(md5sum < a.in)" = "$SUM_A" ] || fail "a.in was changed"; }
valid_json() { python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$1"; }

# ---- a missing option value is a usage error, never a shifted argument list ----

@test "score a.in b.in -o: usage error (2), a.in untouched" {
    run -2 --separate-stderr hk score --backend cpu a.in b.in -o
    assert_stderr --partial "option '-o' needs a value"
    assert_a_intact
    run -2 hk score --backend cpu a.in b.in --output
    assert_a_intact
}

@test "score a.in b.in -c: usage error (2), a.in not skipped" {
    run -2 --separate-stderr hk score --backend cpu a.in b.in -c
    assert_stderr --partial "option '-c' needs a value"
    [ -z "$output" ]
}

@test "an option where a file name belongs is not taken for one (-o --quiet, -c -o)" {
    run -2 --separate-stderr hk score --backend cpu a.in -o --quiet
    assert_stderr --partial "needs a value (found the option '--quiet')"
    [ ! -e ./--quiet ]
    run -2 hk score --backend cpu a.in -c -o x.json
    [ ! -e x.json ]
}

@test "-c and -o given twice are usage errors" {
    echo '{}' > c.json
    run -2 --separate-stderr hk score --backend cpu -c c.json -c c.json a.in
    assert_stderr --partial "given twice"
    run -2 hk score --backend cpu -o x.json a.in -o y.json
    [ ! -e x.json ] && [ ! -e y.json ]
}

@test "every subcommand: a missing value at the end is a usage error" {
    run -2 hk check --backend cpu hc.txt --tolerance
    run -2 hk split a.in s1 s2 --format
    [ ! -e s1 ]
    [ ! -e s2 ]
    run -2 hk shard --fai x.fai g -n
    run -2 hk bench --runs
}

# ---- an output that is an input is refused before any work ----

@test "score and check refuse an output that is an input: same path, ./path, hard and symbolic links" {
    ln a.in hard.in
    ln -s a.in soft.in
    for out in a.in ./a.in "$PWD/a.in" hard.in soft.in; do
        run -2 --separate-stderr hk score --backend cpu b.in a.in -o "$out"
        assert_stderr --partial "refusing to overwrite an input"
        assert_a_intact
    done
    run -2 hk check --backend cpu hc.txt -o hc.txt
    cmp hc.txt "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
}

@test "standard output appended to an input is refused (score a.in >> a.in)" {
    run -2 --separate-stderr bash -c '"$HAPLIK" score --backend cpu a.in >> a.in'
    assert_stderr --partial "standard output: the output is the input a.in"
    assert_a_intact
}

@test "split refuses an output that is its input, and an output named twice" {
    run -2 hk split a.in s1 a.in
    assert_a_intact
    [ ! -e s1 ]
    run -2 --separate-stderr hk split a.in s1 s2 ./s1
    assert_stderr --partial "named twice"
    [ ! -e s1 ] && [ ! -e s2 ]
}

# ---- every file read is an input: plans, configs, sidecars, standard input ----

@test "the plan and the config are inputs: -o naming them, and --print-config appended to the config, are refused" {
    hk split --quiet --plan p.plan --parts 2 a.in
    cp p.plan p.keep
    echo '{"engine": {"threads": 1}}' > c.json
    cp c.json c.keep
    ln -s p.plan plan.link
    for out in p.plan ./p.plan plan.link; do
        run -2 --separate-stderr hk score --backend cpu --plan p.plan --part 1 a.in -o "$out"
        assert_stderr --partial "the output is the input p.plan: refusing to overwrite an input"
        cmp p.plan p.keep
    done
    run -2 --separate-stderr bash -c '"$HAPLIK" score --backend cpu --plan p.plan --part 1 a.in >> p.plan'
    assert_stderr --partial "standard output: the output is the input p.plan"
    cmp p.plan p.keep
    for cmd in score check; do
        run -2 --separate-stderr hk $cmd --backend cpu -c c.json hc.txt -o c.json
        assert_stderr --partial "c.json: the output is the input c.json"
        cmp c.json c.keep
    done
    run -2 --separate-stderr bash -c '"$HAPLIK" score -c c.json --print-config >> c.json'
    assert_stderr "haplik: error: standard output: the output is the input c.json: refusing to overwrite an input"
    cmp c.json c.keep
    # check's report goes to standard output when the table has -o
    run -2 --separate-stderr bash -c '"$HAPLIK" check --backend cpu -c c.json hc.txt -o t.json >> c.json'
    cmp c.json c.keep
    [ ! -e t.json ]
    run -2 bash -c '"$HAPLIK" check --backend cpu hc.txt -o t.json >> hc.txt'
    cmp hc.txt "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    # and what is not an input still works
    run -0 bash -c '"$HAPLIK" score -c c.json --print-config >> other.json'
    run -0 hk score --backend cpu --quiet --plan p.plan --part 1 a.in -o t.json
}

@test "the tsv sidecar NAME.meta.json never replaces an input, nor the file a link of that name points at" {
    cp a.in t.tsv.meta.json
    cp a.in keep
    run -2 --separate-stderr hk score --backend cpu a.in t.tsv.meta.json -o t.tsv
    assert_stderr --partial "t.tsv.meta.json: the output is the input t.tsv.meta.json"
    cmp t.tsv.meta.json keep
    [ ! -e t.tsv ]
    rm t.tsv.meta.json
    ln -s a.in u.tsv.meta.json
    run -2 --separate-stderr hk score --backend cpu a.in -o u.tsv
    assert_stderr --partial "u.tsv.meta.json: the output is the input a.in"
    assert_a_intact
    [ -L u.tsv.meta.json ]
    [ ! -e u.tsv ]
    ln -s a.in v.meta.json
    run -2 hk score --backend cpu a.in -o v --output-format tsv
    assert_a_intact
    echo '{"engine": {"threads": 1}}' > c.json
    ln -s c.json w.tsv.meta.json
    run -2 hk score --backend cpu -c c.json a.in -o w.tsv
    [ "$(cat c.json)" = '{"engine": {"threads": 1}}' ]
    # merge: the output's sidecar against the tables and theirs
    hk score --backend cpu --quiet a.in -o a.tsv
    hk score --backend cpu --quiet b.in -o b.tsv
    cp a.tsv.meta.json meta.keep
    ln -s a.tsv m.tsv.meta.json
    run -2 --separate-stderr hk merge --quiet a.tsv b.tsv -o m.tsv
    assert_stderr --partial "m.tsv.meta.json: the output is the input a.tsv"
    ln -s a.tsv.meta.json n.tsv.meta.json
    run -2 --separate-stderr hk merge --quiet a.tsv b.tsv -o n.tsv
    assert_stderr --partial "n.tsv.meta.json: the output is the input a.tsv.meta.json"
    cmp a.tsv.meta.json meta.keep
    run -2 hk merge --quiet a.tsv b.tsv -o a.tsv.meta.json --output-format tsv
    cmp a.tsv.meta.json meta.keep
    # a table whose sidecar is a link to the table itself: named twice
    ln -s x.tsv x.tsv.meta.json
    run -2 --separate-stderr hk score --backend cpu a.in -o x.tsv
    assert_stderr --partial "named twice"
    # and a tsv table with no such link is written with its sidecar
    run -0 hk merge --quiet a.tsv b.tsv -o ok.tsv
    [ -s ok.tsv ] && [ -s ok.tsv.meta.json ]
}

@test "standard output appended to an input, or standard input's own file, is refused (merge, score, split --plan)" {
    hk score --backend cpu --quiet a.in -o a.json
    cp a.json a.keep
    run -2 --separate-stderr bash -c '"$HAPLIK" merge a.json >> a.json'
    assert_stderr --partial "standard output: the output is the input a.json"
    cmp a.json a.keep
    run -2 --separate-stderr bash -c '"$HAPLIK" merge - < a.json >> a.json'
    assert_stderr --partial "standard output: the output is the file standard input reads"
    cmp a.json a.keep
    run -2 --separate-stderr bash -c '"$HAPLIK" merge - -o a.json < a.json'
    cmp a.json a.keep
    run -2 --separate-stderr bash -c '"$HAPLIK" score --backend cpu - < a.in >> a.in'
    assert_stderr --partial "standard output: the output is the file standard input reads"
    assert_a_intact
    run -2 bash -c '"$HAPLIK" score --backend cpu - -o a.in < a.in'
    assert_a_intact
    run -2 bash -c '"$HAPLIK" check --backend cpu - < hc.txt >> hc.txt'
    cmp hc.txt "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    run -2 bash -c '"$HAPLIK" split --plan - --parts 2 a.in >> a.in'
    assert_a_intact
    # standard input from a file that is no output is fine
    run -0 bash -c '"$HAPLIK" merge --quiet - < a.json > m.json'
    run -0 bash -c '"$HAPLIK" score --backend cpu --quiet - < a.in >> s.json'
}

@test "shard refuses two BED names that are the same file (a link), before writing" {
    printf 'chr1\t1000\t6\t60\t61\n' > g.fai
    ln -s g0001.bed g0002.bed
    run -2 --separate-stderr hk shard --fai g.fai -n 2 g
    assert_stderr --partial "named twice"
    [ ! -e g0001.bed ]
}

@test "shard refuses to write over its .fai" {
    printf 'chr1\t1000\t6\t60\t61\n' > g0001.bed
    cp g0001.bed keep
    run -2 hk shard --fai g0001.bed -n 2 g
    cmp g0001.bed keep
    [ ! -e g0002.bed ]
}

# ---- split: streams, failures, all or nothing, the input's own text ----

@test "split from a pipe, FIFO or process substitution is refused (2), nothing written" {
    run -2 --separate-stderr bash -c '"$HAPLIK" split <(cat a.in) s1 s2'
    assert_stderr --partial "must be a regular file"
    mkfifo f
    (cat a.in > f &)
    run -2 hk split f s1 s2
    cat f > /dev/null 2>&1 || true
    [ ! -e s1 ] && [ ! -e s2 ]
}

@test "split where a shard cannot be created exits 3 cleanly, leaving nothing (missing folder, a directory)" {
    run -3 --separate-stderr hk split a.in s1 nodir/s2 s3
    assert_stderr --partial "nodir/s2"
    assert_dir_only . a.in b.in hc.txt
    mkdir d
    run -3 hk split a.in s1 s2 d
    assert_dir_only . a.in b.in hc.txt d
}

@test "split with too few open files allowed exits 3 cleanly, leaving nothing" {
    run -3 --separate-stderr bash -c 'ulimit -n 24; "$HAPLIK" split a.in s{01..40}'
    [ "${#stderr_lines[@]}" -eq 1 ]
    assert_dir_only . a.in b.in hc.txt
}

@test "split fails at shard 3 of 3: the shards of a previous run are kept as they were" {
    hk split a.in s1 s2 s3
    md5sum s1 s2 > before
    rm s3 && mkdir s3
    run -3 hk split b.in s1 s2 s3
    md5sum -c --quiet before
}

@test "split keeps expected values as written, comments and tags, and balances by cells" {
    { echo "# hap-bases read-bases read-qual read-ins-qual read-del-qual gcp expected-result"
      echo "# region chrA:1-100"
      echo "# a comment of the user"
      sed -n '2,157p' hc.txt | sed '5s/ [^ ]*$/ -1.23456789012345e+00/'
      echo "# region chrB:5-9"
      sed -n '158,$p' hc.txt; } > in.txt
    hk split in.txt s1 s2 s3
    grep -q -- "-1.23456789012345e+00" s1
    grep -q "# a comment of the user" s1
    # concatenated (tags aside) the shards are the input's lines
    cat s1 s2 s3 | grep -v '^# source-line\|^# source-input\|^# hap-bases\|^# region' > got
    grep -v '^# hap-bases\|^# region' in.txt > want
    cmp got want
    hk score --backend cpu in.txt -o whole.json
    for s in s1 s2 s3; do hk score --backend cpu "$s" -o "$s.json"; done
    hk merge s1.json s2.json s3.json -o merged.json
    table same whole.json merged.json
}

# ---- standard output ----

@test "closed standard output: exit 3 and one line (score, check, --help)" {
    run -3 --separate-stderr bash -c '"$HAPLIK" score --backend cpu a.in >&-'
    assert_stderr --partial "standard output is closed"
    [ "${#stderr_lines[@]}" -eq 1 ]
    run -3 bash -c '"$HAPLIK" check --backend cpu hc.txt >&-'
    run -3 bash -c '"$HAPLIK" score --help >&-'
}

@test "the stdout spool honours TMPDIR and its error names the spool" {
    # standard output redirected to a regular file is spooled (a pipe is streamed)
    mkdir spool
    TMPDIR=$PWD/spool run -0 bash -c '"$HAPLIK" score --backend cpu a.in > out.json'
    assert_dir_only spool
    TMPDIR=$PWD/missing run -3 --separate-stderr bash -c '"$HAPLIK" score --backend cpu a.in > out.json'
    assert_stderr --partial "$PWD/missing/haplik-spool."
    assert_stderr --partial "spool of standard output"
}

# (Not -o /dev/stdout itself: 0.1, run as root, replaced the system's /dev/stdout with a
# regular file. A link of our own to /proc/self/fd/1 shows the same bug harmlessly.)
@test "-o /dev/fd/1, /proc/self/fd/1, a link to them and a symlink to a device are written directly" {
    ln -s /proc/self/fd/1 my-stdout
    hk score --backend cpu a.in -o my-stdout > t1.json
    valid_json t1.json
    [ -L my-stdout ]
    hk score --backend cpu a.in -o /dev/fd/1 > t1.json
    valid_json t1.json
    hk score --backend cpu a.in -o /proc/self/fd/1 > t2.json
    cmp <(grep -v seconds t1.json) <(grep -v seconds t2.json)
    ln -s /dev/null to-null.json
    hk score --backend cpu a.in -o to-null.json
    [ -L to-null.json ]
    [ -c /dev/null ]
    assert_dir_only . a.in b.in hc.txt my-stdout t1.json t2.json to-null.json
}

@test "a symlink to a regular file: the target is replaced, the link stays" {
    echo old > target.json
    ln -s target.json link.json
    hk score --backend cpu a.in -o link.json
    [ -L link.json ]
    valid_json target.json
}

@test "check -o - keeps the report off standard output" {
    run -0 --separate-stderr hk check --backend cpu hc.txt -o -
    echo "$output" > t.json
    valid_json t.json
    assert_stderr --partial "pairs compared: 284"
}

# ---- replacing an output ----

@test "replacing an output keeps its permission bits" {
    echo old > out.json
    chmod 640 out.json
    hk score --backend cpu a.in -o out.json
    [ "$(stat -c %a out.json)" = 640 ]
    valid_json out.json
}

@test "an output name of 250 bytes works (the temporary name stays within NAME_MAX)" {
    name=$(printf 'n%.0s' {1..245}).json
    hk score --backend cpu a.in -o "$name"
    valid_json "$name"
    hk split a.in "$name" s2
    assert_dir_only . a.in b.in hc.txt "$name" s2
}

# ---- signals ----

@test "SIGHUP, SIGUSR1, SIGUSR2, SIGALRM and SIGQUIT during score leave no temporary file" {
    python3 "${GEN_BATCHES:-$BATS_TEST_DIRNAME/../scripts/gen_batches.py}" --format gatk --profile equal \
        --read-len 256 --hap-len 1024 --pairs 3000 --seed 8 > long.txt
    for sig in HUP USR1 USR2 ALRM QUIT; do
        # each signal at its default, as in a terminal: a script's background job starts with
        # SIGQUIT ignored, and one under nohup with SIGHUP (haplik keeps an ignored signal so)
        env --default-signal=HUP,USR1,USR2,ALRM,QUIT "$HAPLIK" score --backend cpu --threads 1 long.txt \
            -o out.json & pid=$!
        for ((i = 0; i < 1500; i++)); do compgen -G '.out.json.tmp*' > /dev/null && break; sleep 0.02; done
        kill -s "$sig" "$pid"
        st=0
        wait "$pid" || st=$?   # not through run: its subshell is not the parent
        [ "$st" -gt 128 ] || fail "SIG$sig: exit $st"
        assert_dir_only . a.in b.in hc.txt long.txt
    done
}

@test "a write past the file size limit (SIGXFSZ) is an error (3) with no temporary file" {
    run -3 --separate-stderr bash -c 'ulimit -f 4; "$HAPLIK" score --backend cpu b.in -o out.json'
    assert_stderr --partial "File too large"
    assert_dir_only . a.in b.in hc.txt
}

# ---- shard: all or nothing ----

@test "shard failing midway keeps a previous run's files and leaves no new one" {
    printf 'chr1\t100000\t6\t60\t61\nchr2\t50000\t9\t60\t61\n' > g.fai
    hk shard --fai g.fai -n 3 p
    md5sum p0001.bed p0002.bed > before
    rm p0003.bed && mkdir p0003.bed
    run -3 hk shard --fai g.fai -n 3 --window 1000 p
    md5sum -c --quiet before
    assert_dir_only . a.in b.in hc.txt g.fai p0001.bed p0002.bed p0003.bed before
}

@test "SIGTERM during a shard of many files leaves nothing" {
    printf 'chr1\t900000000\t6\t60\t61\n' > g.fai
    mkdir o
    "$HAPLIK" shard --fai g.fai -n 20000 --window 1 o/p & pid=$!
    for ((i = 0; i < 500; i++)); do [ -n "$(find o -mindepth 1 -print -quit)" ] && break; sleep 0.02; done
    kill -TERM "$pid"
    st=0
    wait "$pid" || st=$?
    [ "$st" -eq 143 ] || fail "exit $st (finished before the signal?)"
    assert_dir_only o
}

# ---- small ones ----

@test "an over-large batch header reports the counts as read" {
    printf '123456789012345678901234567890 2\n' > big.in
    run -2 --separate-stderr hk score --backend cpu big.in
    assert_stderr --partial "batch of 123456789012345678901234567890 reads x 2 haplotypes"
}

@test "engine.gpu_lock_dir: a planted symlink is not followed, its target not truncated" {
    if ! hk devices >/dev/null 2>&1; then
        skip "SKIPPED LOUDLY: no usable GPU here (the GPU lock is taken only when a GPU is used)"
    fi
    mkdir locks
    echo precious > victim
    for d in 0 1 2 3 4 5 6 7; do ln -s ../victim "locks/gpu$d.lock"; done
    echo "{\"engine\": {\"gpu_lock_dir\": \"$PWD/locks\"}}" > c.json
    run --separate-stderr hk score --backend cuda -c c.json a.in -o out.json
    [ "$status" -ne 0 ]
    assert_stderr --partial "symbolic link"
    [ "$(cat victim)" = precious ]
}
