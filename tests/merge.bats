#!/usr/bin/env bats
# merge never crashes, checks every record it copies, and reads each table
# once: empty shards, pipes, tables cut short or spliced, tsv rows that break
# the column contract. Every refusal: exit 2, one error line naming the file
# and line, no output. (docs/RELIABILITY.md, "merge", lists these classes.)

setup() {
    load test_helper/common-setup; _common_setup
    cd "$BATS_TEST_TMPDIR"
    : > empty.in
    cp "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" g.txt
}

score() { hk score --backend cpu --quiet "$@"; }

# refused TABLE...: merge exits 2 with one line "haplik: error: ..." and writes
# nothing; $stderr is kept for more checks.
refused() {
    rm -rf out && mkdir out
    run -2 --separate-stderr hk merge --quiet -o out/m.json "$@"
    [[ "$stderr" == "haplik: error: "* && "$stderr" != *$'\n'* ]] ||
        fail "merge $*: not one error line: $stderr"
    assert_dir_only out
}

# regions_of TABLE: the regions as JSON text (any format), for comparing.
regions_of() {
    python3 -c 'import json, sys
t = open(sys.argv[1]).read()
rs = json.loads(t)["regions"] if t.startswith("{\"format\"") else [json.loads(l) for l in t.splitlines()[:-1]]
for r in rs: r.pop("index")
print(json.dumps(rs))' "$1"
}

@test "an empty shard's table merges, first or last, in json and jsonl" {
    for f in json jsonl; do
        score --output-format $f -o e.$f empty.in
        score --output-format $f -o t.$f "$DATA/tiny.in"
        for order in "e.$f t.$f" "t.$f e.$f" "e.$f e.$f" "e.$f"; do
            for out in json jsonl; do
                run -0 hk merge --quiet --output-format $out -o m.$out $order
                run -0 $TABLE valid m.$out
            done
            run -0 $TABLE get m.json "len(t['summary']['parts'])"
            assert_output "$(echo $order | wc -w)"
        done
        hk merge --quiet -o m.json e.$f t.$f e.$f
        [ "$(regions_of m.json)" = "$(regions_of t.$f)" ] || fail "$f: regions differ"
    done
}

@test "the first table may be a pipe or standard input, in every format of json" {
    score -o t.json "$DATA/tiny.in"
    score --output-format jsonl -o t.jsonl "$DATA/tiny.in"
    hk merge --quiet -o want.json t.json t.jsonl
    for f in json jsonl; do
        run -0 --separate-stderr hk merge --quiet -o p.json \
            <(hk score --backend cpu --quiet --output-format $f "$DATA/tiny.in") t.jsonl
        [ "$(regions_of p.json)" = "$(regions_of want.json)" ] || fail "$f pipe: regions differ"
        run -0 sh -c '"$0" merge --quiet -o s.json - t.jsonl < "$1"' "$HAPLIK" t.$f
        [ "$(regions_of s.json)" = "$(regions_of want.json)" ] || fail "$f stdin: regions differ"
        # compressed, through a pipe
        run -0 sh -c 'bgzip -c "$1" | "$0" merge --quiet -o z.json - t.jsonl' "$HAPLIK" t.$f
        [ "$(regions_of z.json)" = "$(regions_of want.json)" ] || fail "$f bgzip stdin: regions differ"
    done
    # a bad first table on a pipe is named for what is wrong with it
    refused <(head -n 2 t.jsonl) t.json
    [[ "$stderr" == *"/dev/fd/"*":2: truncated table (no summary)" ]] || fail "$stderr"
    refused <(printf 'x\n') t.json
    [[ "$stderr" == *"/dev/fd/"*":1: not valid JSON"* ]] || fail "$stderr"
}

@test "tables cut short are refused: mid-line, before the summary, compressed streams" {
    score -o t.json "$DATA/1m.in"
    score --output-format jsonl -o t.jsonl "$DATA/1m.in"
    local n
    n=$(wc -l < t.jsonl)
    # a jsonl cut inside its summary line, and inside a region line (first or later)
    head -c -20 t.jsonl > cut.jsonl
    refused cut.jsonl
    refused t.json cut.jsonl
    assert_stderr --partial "cut.jsonl:$n: not valid JSON"
    head -c 300 t.jsonl > cut.jsonl
    refused t.json cut.jsonl
    assert_stderr --partial "cut.jsonl:1: not valid JSON"
    # no summary: a json cut after its regions, a jsonl without its last line
    head -n -1 t.json > cut.json
    refused t.json cut.json
    assert_stderr "haplik: error: cut.json:$(( $(wc -l < t.json) - 1 )): truncated table (no summary)"
    head -n -1 t.jsonl > cut.jsonl
    refused cut.jsonl t.json
    assert_stderr "haplik: error: cut.jsonl:$((n - 1)): truncated table (no summary)"
    # BGZF and gzip cut short: inside a block, and without the end-of-file block
    bgzip -c t.jsonl > t.jsonl.gz
    gzip -c t.json > t.json.gz
    head -c -100 t.jsonl.gz > cut.jsonl.gz
    refused t.json cut.jsonl.gz
    head -c -28 t.jsonl.gz > cut.jsonl.gz    # the 28-byte end-of-file block gone: a whole table
    run -0 hk merge --quiet -o m.json t.json cut.jsonl.gz
    head -c 70000 t.jsonl.gz > cut.jsonl.gz  # at no line end, or a block boundary
    refused t.json cut.jsonl.gz
    head -c -12 t.json.gz > cut.json.gz
    refused t.json cut.json.gz
    refused cut.json.gz
}

@test "region lines are checked, not only parsed: place, pairs, shape" {
    score -o t.json "$DATA/tiny.in"
    score --output-format jsonl -o t.jsonl "$DATA/tiny.in"
    # a region given twice, or two swapped: each index must be its place
    sed '2p' t.jsonl > dup.jsonl
    refused dup.jsonl
    assert_stderr --partial "dup.jsonl:3: not a haplik region: its index 1 is not its place (2)"
    { sed -n 2p t.jsonl; sed -n 1p t.jsonl; sed -n '3,$p' t.jsonl; } > swap.jsonl
    refused t.json swap.jsonl
    assert_stderr --partial "swap.jsonl:1: not a haplik region: its index 1 is not its place (0)"
    # a likelihood dropped from a row; a row dropped (then reads no longer match)
    python3 -c 'import json, sys
lines = open("t.jsonl").read().splitlines()
r = json.loads(lines[0]); r["log10_likelihoods"][0].pop(); lines[0] = json.dumps(r)
open("short.jsonl", "w").write("\n".join(lines) + "\n")
r = json.loads(open("t.jsonl").readline()); r["log10_likelihoods"].pop()
lines[0] = json.dumps(r)
open("rows.jsonl", "w").write("\n".join(lines) + "\n")
r = json.loads(open("t.jsonl").readline()); r.pop("reads"); r["log10_likelihoods"].pop()
lines[0] = json.dumps(r)
open("pairs.jsonl", "w").write("\n".join(lines) + "\n")'
    refused short.jsonl
    assert_stderr --partial "short.jsonl:1: not a haplik region: log10_likelihoods has rows of different lengths"
    refused rows.jsonl
    assert_stderr --partial "rows.jsonl:1: not a haplik region: reads and log10_likelihoods differ in length"
    refused pairs.jsonl
    assert_stderr --partial "pairs.jsonl:$(wc -l < t.jsonl): summary.pairs is"
    # a member given twice; numbers and literals RFC 8259 refuses; nesting too deep
    local bad
    for bad in '{"index": 0, "name": null, "name": "x", "line": 1, "log10_likelihoods": [[1]]}' \
               '{"index": 0, "name": null, "line": 01, "log10_likelihoods": [[1]]}' \
               '{"index": 0, "name": null, "line": 1, "log10_likelihoods": [[1]], "x": tru}' \
               '{"index": 0, "name": "\ud800", "line": 1, "log10_likelihoods": [[1]]}' \
               "{\"index\": 0, \"name\": null, \"line\": 1, \"log10_likelihoods\": [[1]], \"x\": $(printf '[%.0s' $(seq 1100))}"; do
        { echo "$bad"; sed -n '$p' t.jsonl; } > bad.jsonl
        refused t.json bad.jsonl
        [[ "$stderr" == "haplik: error: bad.jsonl:1: "* ]] || fail "$bad: $stderr"
    done
}
