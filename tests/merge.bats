#!/usr/bin/env bats
# merge never crashes, checks every record it copies, and reads each table
# once: empty shards, pipes, tables cut short or spliced, tsv rows that break
# the column contract. Every refusal: exit 2, one error line naming the file
# and line, no output. (docs/RELIABILITY.md, "merge", lists these classes.)
# shellcheck disable=SC2154 # stderr, stderr_lines: set by bats' run --separate-stderr

setup() {
    load test_helper/common-setup; _common_setup
    cd "$BATS_TEST_TMPDIR" || return
    : > empty.in
    cp "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" g.txt
}

score() { hk score --backend cpu --quiet "$@"; }

# refused TABLE...: merge exits 2 with one line "haplik: error: ..." and writes
# nothing (the output named without extension: of the first table's format);
# $stderr is kept for more checks.
refused() {
    rm -rf out && mkdir out
    run -2 --separate-stderr hk merge --quiet -o out/m "$@"
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
            read -ra tables <<< "$order"
            for out in json jsonl; do
                run -0 hk merge --quiet --output-format "$out" -o "m.$out" "${tables[@]}"
                run -0 table valid m.$out
            done
            run -0 table get m.json "len(t['summary']['parts'])"
            assert_output "${#tables[@]}"
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

@test "likelihoods: every form of JSON number passes, first in a line or last; nothing else does" {
    score --output-format jsonl -o t.jsonl "$DATA/tiny.in"
    # lk.jsonl: t.jsonl with the first value of the first region, or its last, written as TEXT
    with_lk() {
        python3 -c 'import json, sys
lines = open("t.jsonl").read().splitlines()
r = json.loads(lines[0])
rows = r["log10_likelihoods"]
assert len(rows) > 1 and len(rows[0]) > 1, rows
rows[0 if sys.argv[1] == "first" else -1][0 if sys.argv[1] == "first" else -1] = "@"
lines[0] = json.dumps(r).replace("\"@\"", sys.argv[2])
open("lk.jsonl", "w").write("\n".join(lines) + "\n")' "$@"
    }
    local at v
    for at in first last; do
        for v in -2.5 -2.797158 -12345678.25 -2.123456789012 -0.5 0 3 1.5e3 -2.5E-3 1E+2 null \
                 -123456789012345678.5; do
            with_lk "$at" "$v"
            run -0 hk merge --quiet -o m.jsonl t.jsonl lk.jsonl
            grep -qF -- "$v" m.jsonl || fail "$at $v: not copied as written"
        done
        for v in 01.5 -2.5. 2. - --1 1e +1 .5 -2.5e 1.5- -2.5e+ -02 0x1 1.5.5 NaN -Infinity; do
            with_lk "$at" "$v"
            refused t.jsonl lk.jsonl
            [[ "$stderr" == "haplik: error: lk.jsonl:1: "* ]] || fail "$at $v: $stderr"
        done
    done
}

@test "json and jsonl values are checked for their domain: line, likelihoods, decimals, device ordinals" {
    score --no-sequences -o t.json "$DATA/tiny.in"
    score --no-sequences --output-format jsonl -o t.jsonl "$DATA/tiny.in"
    local n_json n_jsonl v
    n_json=$(wc -l < t.json); n_jsonl=$(wc -l < t.jsonl)
    # edit TABLE LINE FROM TO OUT: OUT is TABLE with FROM replaced by TO on its line LINE (once)
    edit() {
        python3 -c 'import sys
f, n, old, new, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
lines = open(f).read().split("\n")
assert old in lines[n - 1], (old, lines[n - 1])
lines[n - 1] = lines[n - 1].replace(old, new, 1)
open(out, "w").write("\n".join(lines))' "$@"
    }
    # a region's line: a line number (1 to 2^53), as tsv's line column
    for v in -1 0 1.5 2e0 1e300 9007199254740993; do
        edit t.json 3 '"line": 1,' "\"line\": $v," bad.json
        refused t.json bad.json
        [[ "$stderr" == "haplik: error: bad.json:3: not a haplik region: line is not a line number" ]] ||
            fail "line $v: $stderr"
        edit t.jsonl 1 '"line": 1,' "\"line\": $v," bad.jsonl
        refused bad.jsonl
        [[ "$stderr" == "haplik: error: bad.jsonl:1: not a haplik region: line is not a line number" ]] ||
            fail "line $v: $stderr"
    done
    # a likelihood beyond a double's range (inf to every reader), first in its row or later
    for v in 1e400 -1e400 -1.5E+309 -99999999999999999999e300; do
        edit t.json 3 '[[-4.962644,' "[[$v," bad.json
        refused t.json bad.json
        [[ "$stderr" == "haplik: error: bad.json:3: not a haplik region: a likelihood beyond a double's range"* ]] ||
            fail "likelihood $v: $stderr"
        edit t.jsonl 1 ' -1.686275]' " $v]" bad.jsonl
        refused bad.jsonl
        [[ "$stderr" == "haplik: error: bad.jsonl:1: not a haplik region: a likelihood beyond a double's range"* ]] ||
            fail "likelihood $v: $stderr"
    done
    # decimals: an integer 0-12, as --decimals
    for v in '"six"' 13 -1 2.5 null '[6]'; do
        edit t.json 1 '"decimals": 6,' "\"decimals\": $v," bad.json
        refused t.json bad.json
        [[ "$stderr" == "haplik: error: bad.json:1: decimals "*" is not an integer from 0 to 12" ]] ||
            fail "decimals $v: $stderr"
        edit t.jsonl "$n_jsonl" '"decimals": 6}' "\"decimals\": $v}" bad.jsonl
        refused bad.jsonl
        [[ "$stderr" == "haplik: error: bad.jsonl:"*": decimals "*" is not an integer from 0 to 12" ]] ||
            fail "decimals $v: $stderr"
    done
    # device ordinals: GPU ordinals 0-1023, as engine.devices
    for v in '[1e300]' '[-1]' '[0.5]' '[1024]' '["0"]' '7' '{}'; do
        edit t.json "$n_json" '"device_ordinals": []' "\"device_ordinals\": $v" bad.json
        refused t.json bad.json
        [[ "$stderr" == "haplik: error: bad.json:$n_json: summary.device_ordinals is not a list of GPU ordinals (0-1023)" ]] ||
            fail "ordinals $v: $stderr"
        edit t.jsonl "$n_jsonl" '"device_ordinals": []' "\"device_ordinals\": $v" bad.jsonl
        refused bad.jsonl
        [[ "$stderr" == "haplik: error: bad.jsonl:"*": summary.device_ordinals is not a list of GPU ordinals (0-1023)" ]] ||
            fail "ordinals $v: $stderr"
    done
    # the values in their domain still merge
    edit t.json "$n_json" '"device_ordinals": []' '"device_ordinals": [0, 1023]' ok.json
    edit ok.json 3 '"line": 1,' '"line": 9007199254740992,' ok.json
    run -0 hk merge --quiet -o m.json t.json ok.json
    grep -qF '"device_ordinals": [0, 1023]' m.json
}

@test "a model of any length is copied whole into the merged header (no fixed buffer)" {
    score --no-sequences -o t.json "$DATA/tiny.in"
    python3 -c 'import sys
t = open("t.json").read()
t = t.replace("\"gcp\": null}", "\"gcp\": null, \"note\": \"" + "x" * 5000 + "\"}", 1)
open("long.json", "w").write(t)'
    local f
    for f in json jsonl; do
        run -0 hk merge --quiet -o "m.$f" long.json long.json
        run -0 python3 -c 'import json, sys
f = sys.argv[1]
t = open(f).read()
h = json.loads(t) if f.endswith(".json") else json.loads(t.splitlines()[-1])
assert h["model"]["note"] == "x" * 5000, "the model was cut"' "m.$f"
    done
}

@test "tsv: a likelihood, expected value or difference beyond a double's range is refused" {
    score -o g.tsv g.txt
    local v
    for v in 1e400 -1E+309; do
        awk -v v="$v" 'BEGIN { FS = OFS = "\t" } NR == 3 { $7 = v } { print }' g.tsv > bad.tsv
        cp g.tsv.meta.json bad.tsv.meta.json
        refused bad.tsv
        [[ "$stderr" == "haplik: error: bad.tsv:3: not a haplik row: log10_likelihood is beyond a double's range" ]] ||
            fail "$v: $stderr"
        awk -v v="$v" 'BEGIN { FS = OFS = "\t" } NR == 5 { $8 = v } { print }' g.tsv > bad.tsv
        refused bad.tsv
        [[ "$stderr" == "haplik: error: bad.tsv:5: not a haplik row: expected is beyond a double's range" ]] ||
            fail "$v: $stderr"
    done
}

# with_row FILE N TEXT: FILE with its line N replaced by TEXT (\t decoded).
with_row() {
    python3 -c 'import sys
f, n, text = sys.argv[1], int(sys.argv[2]), sys.argv[3].replace("\\t", "\t")
lines = open(f).read().split("\n")
lines[n - 1] = text
open(sys.argv[4], "w").write("\n".join(lines))' "$@"
    cp "$1.meta.json" "$4.meta.json"
}

@test "tsv: an empty shard merges with shards that have the expected columns, in any place" {
    score -o e.tsv empty.in
    score -o g.tsv g.txt
    score -o g.json g.txt
    for order in "e.tsv g.tsv" "g.tsv e.tsv" "e.tsv g.tsv e.tsv g.tsv" "e.tsv e.tsv"; do
        read -ra tables <<< "$order"
        run -0 hk merge --quiet -o m.tsv "${tables[@]}"
        [ -e m.tsv.meta.json ] || fail "$order: no sidecar"
        run -0 python3 -c 'import csv, json, sys
rows = list(csv.DictReader(open("m.tsv"), delimiter="\t"))
meta = json.load(open("m.tsv.meta.json"))
g = json.load(open("g.json"))
n = sys.argv[1:].count("g.tsv")
assert meta["summary"]["pairs"] == len(rows) == n * g["summary"]["pairs"], (meta["summary"], len(rows))
assert meta["summary"]["regions"] == n * len(g["regions"])
assert [int(r["region_index"]) for r in rows] == sorted(int(r["region_index"]) for r in rows)
want = [v for r in g["regions"] for row in r["log10_likelihoods"] for v in row] * n
assert [float(r["log10_likelihood"]) for r in rows] == want
assert len(meta["summary"]["parts"]) == len(sys.argv) - 1' "${tables[@]}"
    done
}

@test "tsv: tables with and without GATK's values merge into the table of scoring their dumps whole" {
    # g.txt carries GATK's values, tiny.in none: `haplik score` takes the columns of its first
    # pair, and so does merge, whichever shard held which dump
    score -o g.tsv g.txt
    score -o b.tsv "$DATA/tiny.in"
    score -o e.tsv empty.in
    for order in "g.tsv b.tsv" "b.tsv g.tsv" "e.tsv b.tsv g.tsv" "g.tsv e.tsv b.tsv g.tsv"; do
        local dumps=() tables
        read -ra tables <<< "$order"
        for t in "${tables[@]}"; do
            case $t in g.tsv) dumps+=(g.txt) ;; b.tsv) dumps+=("$DATA/tiny.in") ;; e.tsv) dumps+=(empty.in) ;; esac
        done
        score -o whole.tsv "${dumps[@]}"
        run -0 hk merge --quiet -o m.tsv "${tables[@]}"
        run -0 diff whole.tsv m.tsv
        run -0 hk merge --quiet -o m.tsv.gz "${tables[@]}"
        run -0 diff whole.tsv <(gzip -dc m.tsv.gz)
    done
}

@test "tsv: every row is checked against the column contract before it is copied" {
    score -o g.tsv g.txt
    local row
    row=$(sed -n 3p g.tsv)
    local input line region name read hap lk want diff
    for f in input:1 line:2 region:3 name:4 read:5 hap:6 lk:7 want:8 diff:9; do
        printf -v "${f%:*}" '%s' "$(cut -f"${f#*:}" <<< "$row")"
    done
    local bad
    for bad in "$input\t$line\t$region\t$name\t$read\t$hap\t$lk\t$want" \
               "$input\t$line\t$region\t$name\t$read\t$hap\t$lk\t$want\t$diff\t1" \
               "$input\t$line\t$region\t$name\t$read\t$hap\tminus one\t$want\t$diff" \
               "$input\t$line\t$region\t$name\t$read\t$hap\t$lk\tnan\t$diff" \
               "$input\t$line\t$region\t$name\t$read\t$hap\t$lk\t$want\tinf" \
               "$input\t$line\t$region\t$name\t$read\t$hap\t0x1p3\t$want\t$diff" \
               "$input\tx\t$region\t$name\t$read\t$hap\t$lk\t$want\t$diff" \
               "$input\t0\t$region\t$name\t$read\t$hap\t$lk\t$want\t$diff" \
               "$input\t$line\t-1\t$name\t$read\t$hap\t$lk\t$want\t$diff" \
               "$input\t$line\t7\t$name\t$read\t$hap\t$lk\t$want\t$diff" \
               "$input\t$line\t$region\tchr1\t$read\t$hap\t$lk\t$want\t$diff" \
               "$input\t$line\t$region\t$name\t$read\t0\t$lk\t$want\t$diff" \
               "$input\t$line\t$region\t$name\t$read\t$((hap + 1))\t$lk\t$want\t$diff" \
               "$input\t$line\t$region\t$name\t01\t$hap\t$lk\t$want\t$diff" \
               "a\\qb\t$line\t$region\t$name\t$read\t$hap\t$lk\t$want\t$diff" \
               "$input\t$line\t$region\t$name\t$read\t$hap\t$lk\t$want\t$diff\r" \
               "" ; do
        with_row g.tsv 3 "$bad" bad.tsv
        refused bad.tsv
        [[ "$stderr" == "haplik: error: bad.tsv:3: "* ]] || fail "$bad: $stderr"
    done
    # a row lost (the count in the sidecar), a region's last row lost, a header row changed
    sed 3d g.tsv > lost.tsv; cp g.tsv.meta.json lost.tsv.meta.json
    refused g.tsv lost.tsv
    assert_stderr --partial "lost.tsv:4: not a haplik row: read 1 haplotype 1 cannot follow read 1 haplotype 0"
    sed '$d' g.tsv > last.tsv; cp g.tsv.meta.json last.tsv.meta.json
    refused last.tsv
    assert_stderr --partial "last.tsv:"
    sed '1s/log10_likelihood/lk/' g.tsv > head.tsv; cp g.tsv.meta.json head.tsv.meta.json
    refused head.tsv
    assert_stderr --partial "head.tsv:1: not the columns of a haplik tsv table"
    # the sidecar: missing, not JSON, another model
    cp g.tsv alone.tsv
    refused g.tsv alone.tsv
    assert_stderr --partial "alone.tsv: a tsv table's model and summary are in its sidecar alone.tsv.meta.json, which is missing"
    cp g.tsv side.tsv; head -c 100 g.tsv.meta.json > side.tsv.meta.json
    refused g.tsv side.tsv
    assert_stderr --partial "side.tsv.meta.json:1: not valid JSON"
    score --precision double -o d.tsv g.txt
    refused g.tsv d.tsv
    assert_stderr --partial "d.tsv.meta.json:1: model"
    # names are escaped text: a valid escape and UTF-8 pass, a raw control byte does not
    python3 -c 'import sys
lines = open("g.tsv", encoding="utf-8").read().split("\n")
for i in range(1, len(lines) - 1):
    f = lines[i].split("\t"); f[3] = "HG002#1#chr20\\t\\xff\u00e9"; lines[i] = "\t".join(f)
open("named.tsv", "w", encoding="utf-8").write("\n".join(lines))'
    cp g.tsv.meta.json named.tsv.meta.json
    run -0 hk merge --quiet -o m.tsv g.tsv named.tsv
    run -0 python3 -c 'import csv; rows = list(csv.DictReader(open("m.tsv"), delimiter="\t"))
assert rows[-1]["region_name"] == "HG002#1#chr20\\t\\xff\u00e9", rows[-1]'
    # (past the first KiB, where htslib would call the file binary)
    python3 -c 'lines = open("g.tsv").read().split("\n")
f = lines[39].split("\t"); f[3] = "chr\x01"; lines[39] = "\t".join(f)
open("ctl.tsv", "w").write("\n".join(lines))'
    cp g.tsv.meta.json ctl.tsv.meta.json
    refused ctl.tsv
    assert_stderr --partial "ctl.tsv:40: not a haplik row: region_name"
}

@test "tsv: a table on a pipe has no sidecar, and merge says so" {
    score -o g.tsv g.txt
    refused <(cat g.tsv) g.tsv
    [[ "$stderr" == *"/dev/fd/"*"which is missing"* ]] || fail "$stderr"
    run -2 --separate-stderr sh -c '"$0" merge g.tsv - < g.tsv' "$HAPLIK"
    assert_stderr --partial "a table streamed to standard output has none"
}

@test "the merged table's format: asked for, else OUT's extension, else the first table's" {
    score -o t.json "$DATA/tiny.in"
    hk merge --quiet -o m.jsonl t.json
    run -0 table valid m.jsonl
    [ "$(head -c 10 m.jsonl)" = '{"index": ' ] || fail "m.jsonl is not jsonl"
    hk merge --quiet -o m.out t.json
    [ "$(head -c 9 m.out)" = '{"format"' ] || fail "m.out is not json"
    run -2 --separate-stderr hk merge --output-format json -o m.jsonl t.json
    assert_stderr --partial "m.jsonl: the name says jsonl but the output format is json"
    [ ! -e m.jsonl.tmp ] 
}
