#!/usr/bin/env bats
# Inputs: both formats, compression, standard input, tags, line ends, empty input.
# shellcheck disable=SC2154 # stderr, stderr_lines: set by bats' run --separate-stderr

setup_file() {
    GEN="python3 ${GEN_BATCHES:-$BATS_TEST_DIRNAME/../scripts/gen_batches.py}"
    # inputs of several of the reader's blocks (1 MB per thread), regions cut by block and
    # piece ends: tiny pairs, batches of 32 reads x 1 haplotype (9 MB), results-file regions
    # of 32 x 32 (12 MB)
    $GEN --profile equal --read-len 16 --hap-len 16 --haps-per-batch 1 --pairs 100000 \
        --seed 11 > "$BATS_FILE_TMPDIR/many.in"
    $GEN --format gatk --profile equal --read-len 16 --hap-len 16 --pairs 100000 --seed 11 \
        > "$BATS_FILE_TMPDIR/many.txt"
    # results-file regions larger than a block: 3 x (400 reads x 64 haplotypes), 2.6 MB each
    python3 - > "$BATS_FILE_TMPDIR/big-regions.txt" <<'PY'
import random
rnd = random.Random(5)
seq = lambda n: "".join(rnd.choice("ACGT") for _ in range(n))
print("# hap-bases read-bases read-qual read-ins-qual read-del-qual gcp expected-result")
for region in range(3):
    haps = sorted({seq(24) for _ in range(200)})[:64]
    for r in range(400):
        read, qual = seq(16), "".join(chr(43 + rnd.randint(0, 30)) for _ in range(16))
        for h in haps:
            print(h, read, qual, "+" * 16, "+" * 16, "+" * 16, "-1.0e+00")
PY
    # every line 256 bytes with CRLF: blocks end exactly at a line end
    python3 - > "$BATS_FILE_TMPDIR/aligned.in" <<'PY'
import random
rnd = random.Random(6)
seq = lambda n: "".join(rnd.choice("ACGT") for _ in range(n))
out = []
for region in range(700):
    out.append("#" * 248 + "\r\n")                    # with the header below: 256 bytes
    out.append("16 1\r\n")
    for r in range(16):
        out.append(" ".join([seq(50)] + ["".join(chr(43 + rnd.randint(0, 30)) for _ in range(50))] * 4) + "\r\n")
    out.append(seq(254) + "\r\n")
assert all(len(l) == 256 for l in out if not l.startswith("#") and not l.startswith("16 1"))
print("".join(out), end="")
PY
}

setup() {
    load test_helper/common-setup; _common_setup; cd "$BATS_TEST_TMPDIR" || return
    GATK="$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
}

score() { hk score --backend cpu --quiet "$@"; }

@test "gzip and BGZF inputs give the same table as plain (both formats)" {
    for f in "$DATA/10s.in" "$GATK"; do
        gzip -c "$f" > in.gz
        bgzip -c "$f" > in.bgz
        score -o plain.json "$f"
        score -o gz.json in.gz
        score -o bgz.json in.bgz
        run -0 table same plain.json gz.json
        run -0 table same plain.json bgz.json
    done
}

@test "gzip members one after another read as one input; a cut or garbage-trailed gzip is an error at its line" {
    head -n 2000 "$GATK" > a.txt
    tail -n +2001 "$GATK" > b.txt
    gzip -c a.txt > ab.gz
    gzip -c b.txt >> ab.gz
    score -o plain.json "$GATK"
    score -o members.json ab.gz
    run -0 table same plain.json members.json
    gzip -c "$GATK" > all.gz
    head -c $(( $(stat -c %s all.gz) * 2 / 3 )) all.gz > cut.gz
    run -2 hk score --backend cpu --quiet -o cut.json cut.gz
    assert_output --regexp '^haplik: error: cut\.gz:[0-9]+: read error \(truncated or corrupt compressed stream\?\)$'
    [ ! -e cut.json ]
    { cat all.gz; echo trailing; } > trail.gz
    run -2 hk score --backend cpu --quiet -o trail.json trail.gz
    assert_output --regexp '^haplik: error: trail\.gz:[0-9]+: read error'
    [ ! -e trail.json ]
}

@test "standard input (-) works, plain and compressed" {
    score -o plain.json "$GATK"
    score -o stdin.json - < "$GATK"
    run -0 table same plain.json stdin.json
    gzip -c "$GATK" | score -o stdin_gz.json -
    run -0 table same plain.json stdin_gz.json
}

@test "Windows line ends give the same table" {
    sed 's/$/\r/' "$DATA/tiny.in" > crlf.in
    score -o lf.json "$DATA/tiny.in"
    score -o crlf.json crlf.in
    run -0 table same lf.json crlf.json
}

@test "an empty input is a valid input with no regions" {
    : > empty.in
    score -o t.json empty.in
    run -0 table get t.json "(t['regions'], t['summary']['regions'], t['summary']['pairs'])"
    assert_output "([], 0, 0)"
    gzip -c empty.in > empty.gz
    score -o tz.json empty.gz
    run -0 table valid tz.json
}

@test "the results file is rebuilt into its two regions (78x2, 64x2) with their lines" {
    score -o t.json "$GATK"
    run -0 table get t.json "[(len(r['reads']), len(r['haplotypes']), r['line'], r['name']) for r in t['regions']]"
    assert_output "[(78, 2, 2, None), (64, 2, 158, None)]"
}

@test "region tags name the regions that follow" {
    printf '1 1\nACGT IIII IIII IIII IIII\nACGTT\n# region chrX:5-9\n1 1\nACGT IIII IIII IIII IIII\nACGTT\n1 1\nAC II II II II\nACG\n' > tags.in
    score -o t.json tags.in
    run -0 table get t.json "[(r['name'], r['line']) for r in t['regions']]"
    assert_output "[(None, 1), ('chrX:5-9', 5), ('chrX:5-9', 8)]"
}

@test "the format is detected from content, and can be forced" {
    score -o a.json "$GATK"
    score --format gatk -o b.json "$GATK"
    run -0 table same a.json b.json
    run -2 --separate-stderr hk score --backend cpu --format batch -o c.json "$GATK"
    assert_stderr --partial "hc-NA12878-20_10000117.java.hmmresults.txt:2:"
    [ ! -e c.json ]
}

@test "the first block is scanned with the format its first lines show: no line is scanned twice" {
    local f
    for f in "$BATS_FILE_TMPDIR/many.in" "$BATS_FILE_TMPDIR/many.txt" "$DATA/pdhmm_syn_990_1_2.txt"; do
        HK_TRACE=1 HK_BLOCK_KB=64 run -0 --separate-stderr hk score --backend cpu --threads 2 -o t.json "$f"
        assert_stderr --regexp "reader .*: walking .*; 0 lines scanned again"
    done
    # a first block of comments alone says nothing: the lines read before the
    # first record are scanned again once the walk finds the format
    { for _ in $(seq 3000); do echo "# a comment of about sixty bytes, to fill the first block ....."; done
      cat "$BATS_FILE_TMPDIR/many.txt"; } > late.txt
    HK_TRACE=1 HK_BLOCK_KB=64 run -0 --separate-stderr hk score --backend cpu --threads 1 -o late.json late.txt
    assert_stderr --regexp "reader .*: walking .*; [1-9][0-9]* lines scanned again"
    hk score --backend cpu --quiet -o t.json "$BATS_FILE_TMPDIR/many.txt"
    run -0 table close t.json late.json 0   # the lines differ: 3000 more
}

@test "lower-case bases are accepted; unknown letters only with model.unknown_bases as_n" {
    printf '1 1\nacgr IIII IIII IIII IIII\nACGTT\n' > r.in
    run -2 --separate-stderr hk score --backend cpu -o t.json r.in
    assert_stderr --partial "r.in:2: read: invalid base 'r'"
    echo '{"model": {"unknown_bases": "as_n"}}' > c.json
    run -0 hk score --backend cpu --quiet -c c.json -o t.json r.in
    printf '1 1\nacgn IIII IIII IIII IIII\nACGTT\n' > n.in
    hk score --backend cpu --quiet -o n.json n.in
    run -0 table get t.json "t['regions'][0]['log10_likelihoods']"
    want=$(table get n.json "t['regions'][0]['log10_likelihoods']")
    assert_output "$want"
}

@test "N matches every base at the match probability" {
    printf '1 2\nNNNN IIII IIII IIII IIII\nACGT\nTTTT\n' > n.in
    score -o t.json n.in
    run -0 table get t.json "len(set(t['regions'][0]['log10_likelihoods'][0]))"
    assert_output 1
}

# score_with_threads FILE OUT N: score FILE reading it with N threads.
score_with_threads() { hk score --backend cpu --quiet --threads "$3" -o "$2" "$1"; }

# gzip: one or two threads inflate as they read, more have a thread inflate ahead (hk_source.c).
@test "one thread and several read the same regions from inputs of several blocks (plain, gzip, BGZF, stdin)" {
    local f
    for f in "$BATS_FILE_TMPDIR/many.in" "$BATS_FILE_TMPDIR/many.txt"; do
        score_with_threads "$f" t1.json 1
        run -0 table get t1.json "t['summary']['pairs'] >= 100000"
        assert_output True
        score_with_threads "$f" t3.json 3
        run -0 table same t1.json t3.json
        gzip -c "$f" > in.gz
        score_with_threads in.gz tgz.json 3
        run -0 table same t1.json tgz.json
        score_with_threads in.gz tgz1.json 1
        run -0 table same t1.json tgz1.json
        bgzip -c "$f" > in.bgz
        score_with_threads in.bgz tbgz.json 2
        run -0 table same t1.json tbgz.json
        hk score --backend cpu --quiet --threads 4 -o tin.json - < "$f"
        run -0 table same t1.json tin.json
    done
}

@test "results-file regions larger than a block are rebuilt whole" {
    local f=$BATS_FILE_TMPDIR/big-regions.txt
    score_with_threads "$f" t1.json 1
    run -0 table get t1.json "[(len(r['reads']), len(r['haplotypes']), r['line']) for r in t['regions']]"
    assert_output "[(400, 64, 2), (400, 64, 25602), (400, 64, 51202)]"
    score_with_threads "$f" t3.json 3
    run -0 table same t1.json t3.json
}

@test "blocks that end exactly at a line end (CRLF lines of 256 bytes)" {
    local f=$BATS_FILE_TMPDIR/aligned.in
    score_with_threads "$f" t1.json 1
    run -0 table get t1.json "(len(t['regions']), t['regions'][-1]['line'])"
    assert_output "(700, $((19 * 699 + 2)))"
    score_with_threads "$f" t2.json 2
    run -0 table same t1.json t2.json
    sed 's/\r$//' "$f" > lf.in
    score_with_threads lf.in lf.json 2
    run -0 table same t1.json lf.json
    bgzip -c "$f" > in.bgz
    score_with_threads in.bgz bgz.json 2
    run -0 table same t1.json bgz.json
}

@test "a read of the longest length (a 5 MB line, over several blocks) is read whole" {
    local a q
    a=$(head -c 1000000 /dev/zero | tr '\0' A)
    q=$(head -c 1000000 /dev/zero | tr '\0' I)
    { echo "1 1"; echo "$a $q $q $q $q"; echo "ACGTA"; echo "1 1"; echo "ACGT IIII IIII IIII IIII"; echo "ACGTA"; } > long.in
    score_with_threads long.in t1.json 1
    run -0 table get t1.json "[(len(r['reads'][0]), r['line']) for r in t['regions']]"
    assert_output "[(1000000, 1), (4, 4)]"
    score_with_threads long.in t2.json 2
    run -0 table same t1.json t2.json
}

# bgzf_blocks FILE: the byte offsets where FILE's BGZF blocks start.
bgzf_blocks() {
    python3 -c "
import struct, sys
d = open(sys.argv[1], 'rb').read(); o = 0
while o < len(d):
    print(o); o += struct.unpack('<H', d[o + 16:o + 18])[0] + 1" "$1"
}

@test "a BGZF stream cut short is refused from a pipe as from a file, on one thread and several" {
    bgzip -c "$DATA/1m.in" > all.bgz     # 2.2 MB: 35 blocks and the end-of-file marker
    mapfile -t blocks < <(bgzf_blocks all.bgz)
    # without its end-of-file marker (every pair there: only the marker tells), and cut at
    # a block boundary halfway (the cut falls where it may: inside a line or between two)
    head -c "${blocks[-1]}" all.bgz > noeof.bgz
    head -c "${blocks[${#blocks[@]} / 2]}" all.bgz > half.bgz
    head -c $(( ${blocks[${#blocks[@]} / 2]} + 3000 )) all.bgz > mid.bgz
    for t in 1 2 4; do
        for f in noeof half mid; do
            run -2 --separate-stderr hk score --backend cpu --quiet --threads $t -o f.json $f.bgz
            file_err=$stderr
            run -2 --separate-stderr hk score --backend cpu --quiet --threads $t -o p.json - < <(cat $f.bgz)
            [[ "$stderr" == "haplik: error: -:"*": read error ("* ]] || fail "$f, $t threads, pipe: $stderr"
            [[ "$file_err" == "haplik: error: $f.bgz:"*": read error ("* ]] || fail "$f, $t threads, file: $file_err"
            [ ! -e f.json ]
            [ ! -e p.json ]
        done
        run -2 --separate-stderr hk score --backend cpu --quiet --threads $t -o p.json - < <(cat noeof.bgz)
        assert_stderr --partial "truncated BGZF stream: no end-of-file marker"
        # the whole stream still reads from a pipe
        hk score --backend cpu --quiet --threads $t -o whole.json - < <(cat all.bgz)
        score -o plain.json "$DATA/1m.in"
        run -0 table same plain.json whole.json
    done
}

@test "a gzip stream cut short is refused from a pipe as from a file" {
    gzip -c "$GATK" > all.gz
    head -c $(( $(stat -c %s all.gz) / 2 )) all.gz > half.gz
    head -c -4 all.gz > notrailer.gz       # the length of the trailer lost
    for f in half notrailer; do
        for t in 1 4; do
            run -2 --separate-stderr hk score --backend cpu --quiet --threads $t -o p.json - < <(cat $f.gz)
            [[ "$stderr" == "haplik: error: -:"*": read error (truncated or corrupt compressed stream?)" ]] ||
                fail "$f, $t threads: $stderr"
            [ ! -e p.json ]
        done
    done
}
