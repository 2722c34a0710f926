#!/usr/bin/env bats
# split into shards, score each, merge: equals scoring the whole.

setup() { load test_helper/common-setup; _common_setup; cd "$BATS_TEST_TMPDIR" || return; }

score() { hk score --backend cpu --quiet "$@"; }

# roundtrip INPUT N: split into N shards, score each, merge, compare with whole.
roundtrip() {
    local input=$1 n=$2 shards=() tables=()
    for i in $(seq 1 "$n"); do shards+=("s$i.txt"); tables+=("s$i.json"); done
    run -0 hk split --quiet "$input" "${shards[@]}"
    for i in $(seq 1 "$n"); do
        [ -e "s$i.txt" ] || fail "shard s$i.txt missing"
        score -o "s$i.json" "s$i.txt"
    done
    run -0 hk merge --quiet -o merged.json "${tables[@]}"
    score -o whole.json "$input"
    run -0 table same whole.json merged.json
    run -0 table valid merged.json
    run -0 table get merged.json "t['summary']['pairs'] == sum(p['pairs'] for p in t['summary']['parts'])"
    assert_output True
}

@test "batch file: split into 1, 3 and 7 shards, score, merge = whole" {
    for n in 1 3 7; do roundtrip "$DATA/1m.in" $n; done
}

@test "results file: split into 1, 3 and 7 shards (some empty), score, merge = whole" {
    for n in 1 3 7; do roundtrip "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" $n; done
}

@test "tsv: shards' rows keep the dump's lines, so the merged table is the whole dump's" {
    local input n
    for input in "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" "$DATA/1m.in"; do
        for n in 2 3; do
            local shards=() tables=()
            for i in $(seq 1 "$n"); do shards+=("s$i.txt"); tables+=("s$i.tsv"); done
            run -0 hk split --quiet "$input" "${shards[@]}"
            for i in $(seq 1 "$n"); do score -o "s$i.tsv" "s$i.txt"; done
            run -0 hk merge --quiet -o merged.tsv "${tables[@]}"
            score -o whole.tsv "$input"
            # every column but `input` (the shard files' names)
            run -0 diff <(cut -f2- whole.tsv) <(cut -f2- merged.tsv)
        done
    done
    # and each row's line is its record's own in the dump: its expected value is there
    run -0 hk split --quiet "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" s1.txt s2.txt
    score -o s2.tsv s2.txt
    run -0 python3 - "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" <<'PY'
import csv, sys
hc = open(sys.argv[1]).read().split("\n")
rows = list(csv.DictReader(open("s2.tsv"), delimiter="\t", quoting=csv.QUOTE_NONE))
assert rows, "no rows in shard 2"
for r in rows:
    assert float(hc[int(r["line"]) - 1].split(" ")[6]) == float(r["expected"]), r
PY
}

@test "tsv: shards' rows name the dump that was split, whatever its name, also after a second split" {
    # a compressed dump (the workflow's case: it cannot be read in place), named with a
    # backslash, a tab, a newline and letters beyond ASCII
    local name=$'d\\ump\t\nx \u00e9chantillon.txt.gz' i
    gzip -c "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" >"$name"
    run -0 hk split --quiet "$name" s1.txt s2.txt s3.txt
    for i in 1 2 3; do score -o "s$i.tsv" "s$i.txt"; done
    run -0 hk merge --quiet -o merged.tsv s1.tsv s2.tsv s3.tsv
    score -o whole.tsv "$name"
    run -0 diff whole.tsv merged.tsv
    # a shard cut again keeps the dump's name
    run -0 hk split --quiet s1.txt t1.txt t2.txt
    for i in 1 2; do score -o "t$i.tsv" "t$i.txt"; done
    run -0 hk merge --quiet -o merged.tsv t1.tsv t2.tsv s2.tsv s3.tsv
    run -0 diff whole.tsv merged.tsv
    # json tables do not change: no input column
    score -o s1.json s1.txt
    run -0 table valid s1.json
}

@test "shards are balanced by cells: none exceeds its share by more than one region" {
    hk split "$DATA/1m.in" a.in b.in c.in
    score -o whole.json "$DATA/1m.in"
    for s in a b c; do score -o $s.json $s.in; done
    run -0 python3 -c "
import json
c=[json.load(open(s+'.json'))['summary']['cells'] for s in 'abc']
w=json.load(open('whole.json'))
big=max(sum(map(len,r['reads']))*sum(map(len,r['haplotypes'])) for r in w['regions'])
print(c, big); assert sum(c)==w['summary']['cells'] and max(c) <= sum(c)/3 + big/2, c"
}

@test "region names and tags survive a split" {
    printf '# region chr1:1-100\n1 1\nACGT IIII IIII IIII IIII\nACGTT\n1 1\nACGA IIII IIII IIII IIII\nACGTT\n# region\n1 1\nACGG IIII IIII IIII IIII\nACGTT\n' > tagged.in
    roundtrip tagged.in 2
    run -0 table get merged.json "[r['name'] for r in t['regions']]"
    assert_output "['chr1:1-100', 'chr1:1-100', None]"
}

@test "merge of jsonl tables, and json to jsonl" {
    hk split "$DATA/10s.in" a.in b.in
    score --output-format jsonl -o a.jsonl a.in
    score -o b.json b.in
    run -0 hk merge -o m.jsonl a.jsonl b.json
    score -o whole.json "$DATA/10s.in"
    run -0 table same whole.json m.jsonl
}

@test "merge refuses tables of different models (2) and writes nothing" {
    score -o a.json "$DATA/tiny.in"
    score --precision double -o b.json "$DATA/tiny.in"
    run -2 --separate-stderr hk merge -o m.json a.json b.json
    assert_stderr --partial "b.json:1: model"
    [ ! -e m.json ]
}

@test "merge refuses a truncated table (2)" {
    score -o a.json "$DATA/10s.in"
    head -n 4 a.json > cut.json
    run -2 --separate-stderr hk merge -o m.json cut.json
    assert_stderr --partial "cut.json:4: truncated table"
    [ ! -e m.json ]
}

@test "split refuses standard input and writes nothing" {
    run -2 --separate-stderr hk split - a.in b.in < "$DATA/tiny.in"
    assert_stderr --partial "not standard input"
    [ ! -e a.in ] && [ ! -e b.in ]
}

@test "split of bad input leaves no shard behind" {
    printf '1 1\nACGT IIII IIII IIII\nACGTT\n' > bad.in
    run -2 hk split bad.in a.in b.in
    [ ! -e a.in ] && [ ! -e b.in ]
}

@test "split reads its input by its own name, whatever it holds (a URL scheme's colon, ##idx##)" {
    for name in 'data:x.txt' 'a##idx##b.txt'; do
        cp "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" "$name"
        roundtrip "$name" 3
    done
}
