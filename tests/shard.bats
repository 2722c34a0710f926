#!/usr/bin/env bats
# haplik shard: genome shards (BED files) from a .fai, balanced by length.

setup() {
    load test_helper/common-setup
    _common_setup
    WF="$DATA/workflow"
    CHECK=(python3 "$WF/check_shards.py")
    # a directory of its own: bats keeps its --separate-stderr files in BATS_TEST_TMPDIR
    mkdir -p "$BATS_TEST_TMPDIR/w"
    cd "$BATS_TEST_TMPDIR/w" || return
}

@test "shard --help: usage on stdout with the defaults, status 0" {
    run --separate-stderr -0 hk shard --help
    assert_output --partial "Usage: haplik shard --fai REF.fai -n N"
    assert_output --partial "[100000]"
    [ -z "$stderr" ]
}

@test "shard: a GRCh38-like .fai in 1..3000 shards: N files, every base once, within 1%" {
    for n in 1 2 3 7 24 25 64 100 1000 3000; do
        mkdir "n$n"
        run -0 hk shard --quiet --fai "$WF/grch38-like.fai" -n "$n" "n$n/shard"
        run -0 "${CHECK[@]}" "$WF/grch38-like.fai" "$n" "n$n/shard"
        got=$(find "n$n" -mindepth 1 -maxdepth 1 | wc -l)
        [ "$got" -eq "$n" ] || fail "n$n holds $got files"
    done
}

@test "shard: names are zero-padded from 0001, BED lines NAME<TAB>START<TAB>END" {
    run -0 hk shard --quiet --fai "$WF/genome.fai" -n 12 out.
    assert_dir_only . out.{0001..0012}.bed
    run -0 head -n 1 out.0001.bed
    assert_output --regexp $'^chr20\t0\t[0-9]+$'
    run -0 tail -n 1 out.0012.bed
    assert_output --regexp $'^chr22\t[0-9]+0000\t50818468$'
}

@test "shard: long contigs are cut on the window grid; short ones stay whole" {
    # 3 shards of ~54 Mb: a 1 Mb grid is lowered under the 1% bound (~270 kb), to 200 kb
    run -0 hk shard --quiet --fai "$WF/genome.fai" -n 3 --window 1000000 a.
    run -0 "${CHECK[@]}" "$WF/genome.fai" 3 a.
    run -0 awk -F'\t' '($2 % 200000) || ($3 % 200000 && $3 != 64444167 && $3 != 46709983 && $3 != 50818468)' a.000?.bed
    assert_output ""
    run -0 hk shard --quiet --fai "$WF/genome.fai" -n 3 --window 100000 b.
    run -0 "${CHECK[@]}" "$WF/genome.fai" 3 b.
    # every cut inside a contig is a multiple of the window
    run -0 awk -F'\t' '($2 % 100000) || ($3 % 100000 && $3 != 64444167 && $3 != 46709983 && $3 != 50818468)' b.000?.bed
    assert_output ""
    # a tiny window cuts exactly: shard lengths differ by at most one base
    run -0 hk shard --quiet --fai "$WF/grch38-like.fai" -n 7 --window 1 c.
    run -0 "${CHECK[@]}" "$WF/grch38-like.fai" 7 c. 0.000000001
}

@test "shard: more shards than bases gives N files, some empty, every base once" {
    printf 'a\t5\t3\t5\t6\nb\t3\t12\t3\t4\n' >tiny.fai
    run -0 hk shard --quiet --fai tiny.fai -n 10 s
    run -0 "${CHECK[@]}" tiny.fai 10 s
    [ "$(cat s*.bed | wc -l)" -eq 8 ]
    [ "$(find . -name 's*.bed' -empty | wc -l)" -eq 2 ]
}

@test "shard: same input, same shards; gzip'd .fai and stdin read alike" {
    run -0 hk shard --quiet --fai "$WF/grch38-like.fai" -n 5 x
    run -0 hk shard --quiet --fai "$WF/grch38-like.fai" -n 5 y
    gzip -c "$WF/grch38-like.fai" >g.fai.gz
    run -0 hk shard --quiet --fai g.fai.gz -n 5 z
    run -0 hk shard --quiet --fai - -n 5 w <"$WF/grch38-like.fai"
    for k in 1 2 3 4 5; do
        cmp "x000$k.bed" "y000$k.bed"
        cmp "x000$k.bed" "z000$k.bed"
        cmp "x000$k.bed" "w000$k.bed"
    done
}

@test "shard: CRLF line ends and a .fai with 2 columns are accepted" {
    printf 'c1\t1000\r\nc2\t3000\r\n' >crlf.fai
    run -0 hk shard --quiet --fai crlf.fai -n 2 s
    run -0 "${CHECK[@]}" <(printf 'c1\t1000\nc2\t3000\n') 2 s
}

@test "shard: bad .fai lines are errors naming FILE:LINE, status 2, no file left" {
    printf 'chr1\t100\t0\t60\t61\nchr2\t12x\t0\t60\t61\n' >bad1.fai
    run --separate-stderr -2 hk shard --fai bad1.fai -n 2 o1
    assert_stderr --partial "haplik: error: bad1.fai:2:"
    assert_stderr --partial "12x"
    printf 'chr1 100 0 60 61\n' >bad2.fai
    run --separate-stderr -2 hk shard --fai bad2.fai -n 2 o2
    assert_stderr --partial "haplik: error: bad2.fai:1:"
    printf 'chr1\t100\nchr1\t200\n' >bad3.fai
    run --separate-stderr -2 hk shard --fai bad3.fai -n 2 o3
    assert_stderr --partial "bad3.fai:2: sequence 'chr1' appears twice"
    printf 'chr1\t0\n' >bad4.fai
    run --separate-stderr -2 hk shard --fai bad4.fai -n 2 o4
    assert_stderr --partial "bad4.fai:1:"
    printf 'chr1\t-5\n' >bad5.fai
    run --separate-stderr -2 hk shard --fai bad5.fai -n 2 o5
    assert_stderr --partial "bad5.fai:1:"
    : >empty.fai
    run --separate-stderr -2 hk shard --fai empty.fai -n 2 o6
    assert_stderr --partial "no sequences"
    run --separate-stderr -2 hk shard --fai missing.fai -n 2 o7
    assert_stderr --partial "missing.fai"
    assert_dir_only . bad1.fai bad2.fai bad3.fai bad4.fai bad5.fai empty.fai
}

@test "shard: usage errors are status 2 with one line on stderr" {
    run --separate-stderr -2 hk shard -n 2 o
    assert_stderr --partial "--fai"
    run --separate-stderr -2 hk shard --fai "$WF/genome.fai" o
    assert_stderr --partial "-n"
    for bad in 0 -1 abc 3x "" 1000001; do
        run --separate-stderr -2 hk shard --fai "$WF/genome.fai" -n "$bad" o
        assert_stderr --partial "-n/--shards"
    done
    for bad in 0 -5 1e6 10k; do
        run --separate-stderr -2 hk shard --fai "$WF/genome.fai" -n 2 --window "$bad" o
        assert_stderr --partial "--window"
    done
    run --separate-stderr -2 hk shard --fai "$WF/genome.fai" -n 2
    assert_stderr --partial "OUTPREFIX"
    run --separate-stderr -2 hk shard --fai "$WF/genome.fai" -n 2 a b
    assert_stderr --partial "OUTPREFIX"
    run --separate-stderr -2 hk shard --bogus
    assert_stderr --partial "--bogus"
    assert_dir_only .
}

@test "shard: an unwritable OUTPREFIX is a runtime error (3), nothing left behind" {
    run --separate-stderr -3 hk shard --fai "$WF/genome.fai" -n 3 no/such/dir/s
    assert_stderr --partial "haplik: error:"
    mkdir ro
    printf 'x' >ro/keep
    # shard 2 cannot be written (a directory is in its way): shard 1 is taken back
    mkdir ro/s0002.bed
    run --separate-stderr -3 hk shard --fai "$WF/genome.fai" -n 3 ro/s
    assert_dir_only ro keep s0002.bed
}

@test "shard reads the .fai by its own name (a URL scheme's colon)" {
    cp "$WF/grch38-like.fai" 'data:ref.fai'
    mkdir out
    run -0 hk shard --quiet --fai 'data:ref.fai' -n 7 out/shard
    run -0 "${CHECK[@]}" "$WF/grch38-like.fai" 7 out/shard
}
