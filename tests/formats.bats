#!/usr/bin/env bats
# Inputs: both formats, compression, standard input, tags, line ends, empty input.

setup() {
    load test_helper/common-setup; _common_setup; cd "$BATS_TEST_TMPDIR"
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
        run -0 $TABLE same plain.json gz.json
        run -0 $TABLE same plain.json bgz.json
    done
}

@test "standard input (-) works, plain and compressed" {
    score -o plain.json "$GATK"
    score -o stdin.json - < "$GATK"
    run -0 $TABLE same plain.json stdin.json
    gzip -c "$GATK" | score -o stdin_gz.json -
    run -0 $TABLE same plain.json stdin_gz.json
}

@test "Windows line ends give the same table" {
    sed 's/$/\r/' "$DATA/tiny.in" > crlf.in
    score -o lf.json "$DATA/tiny.in"
    score -o crlf.json crlf.in
    run -0 $TABLE same lf.json crlf.json
}

@test "an empty input is a valid input with no regions" {
    : > empty.in
    score -o t.json empty.in
    run -0 $TABLE get t.json "(t['regions'], t['summary']['regions'], t['summary']['pairs'])"
    assert_output "([], 0, 0)"
    gzip -c empty.in > empty.gz
    score -o tz.json empty.gz
    run -0 $TABLE valid tz.json
}

@test "the results file is rebuilt into its two regions (78x2, 64x2) with their lines" {
    score -o t.json "$GATK"
    run -0 $TABLE get t.json "[(len(r['reads']), len(r['haplotypes']), r['line'], r['name']) for r in t['regions']]"
    assert_output "[(78, 2, 2, None), (64, 2, 158, None)]"
}

@test "region tags name the regions that follow" {
    printf '1 1\nACGT IIII IIII IIII IIII\nACGTT\n# region chrX:5-9\n1 1\nACGT IIII IIII IIII IIII\nACGTT\n1 1\nAC II II II II\nACG\n' > tags.in
    score -o t.json tags.in
    run -0 $TABLE get t.json "[(r['name'], r['line']) for r in t['regions']]"
    assert_output "[(None, 1), ('chrX:5-9', 5), ('chrX:5-9', 8)]"
}

@test "the format is detected from content, and can be forced" {
    score -o a.json "$GATK"
    score --format gatk -o b.json "$GATK"
    run -0 $TABLE same a.json b.json
    run -2 --separate-stderr hk score --backend cpu --format batch -o c.json "$GATK"
    assert_stderr --partial "hc-NA12878-20_10000117.java.hmmresults.txt:2:"
    [ ! -e c.json ]
}

@test "lower-case bases are accepted; unknown letters only with model.unknown_bases as_n" {
    printf '1 1\nacgr IIII IIII IIII IIII\nACGTT\n' > r.in
    run -2 --separate-stderr hk score --backend cpu -o t.json r.in
    assert_stderr --partial "r.in:2: read: invalid base 'r'"
    echo '{"model": {"unknown_bases": "as_n"}}' > c.json
    run -0 hk score --backend cpu --quiet -c c.json -o t.json r.in
    printf '1 1\nacgn IIII IIII IIII IIII\nACGTT\n' > n.in
    hk score --backend cpu --quiet -o n.json n.in
    run -0 $TABLE get t.json "t['regions'][0]['log10_likelihoods']"
    want=$($TABLE get n.json "t['regions'][0]['log10_likelihoods']")
    assert_output "$want"
}

@test "N matches every base at the match probability" {
    printf '1 2\nNNNN IIII IIII IIII IIII\nACGT\nTTTT\n' > n.in
    score -o t.json n.in
    run -0 $TABLE get t.json "len(set(t['regions'][0]['log10_likelihoods'][0]))"
    assert_output 1
}
