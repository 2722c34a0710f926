#!/usr/bin/env bats
# The table is always valid JSON, and merge is trustworthy: merge refuses what it
# cannot read (2, one error line, no output, no temporary file), never writes
# invalid JSON, text from the input stays valid UTF-8 in the table, diagnostics
# never carry raw control characters, and merge's options cannot be misread.
# Optional tools (their cases skipped without): xz, bzip2, zstd.
# shellcheck disable=SC2154 # stderr, stderr_lines: set by bats' run --separate-stderr

setup() {
    load test_helper/common-setup; _common_setup
    cd "$BATS_TEST_TMPDIR" || return
    printf '# region chr1:1-100\n1 1\nACGT IIII IIII IIII IIII\nACGTT\n1 1\nACGA IIII IIII IIII IIII\nACGTT\n' > t.in
    hk score --backend cpu --quiet -o a.json t.in
    hk score --backend cpu --quiet --output-format jsonl -o a.jsonl t.in
}

# Strict JSON, as Python reads it: a file opened as UTF-8 text, and bytes.
valid_json() {
    python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$1" &&
        python3 -c 'import json,sys; json.loads(open(sys.argv[1], "rb").read())' "$1"
}
valid_jsonl() {
    python3 -c 'import json,sys
for l in open(sys.argv[1], encoding="utf-8"): json.loads(l)' "$1" &&
        python3 -c 'import json,sys
for l in open(sys.argv[1], "rb"): json.loads(l)' "$1"
}

# refused TABLE...: merge exits 2 with one line "haplik: error: ..." and leaves
# out/ empty (no output, no temporary file); $stderr is kept for more checks.
refused() {
    rm -rf out && mkdir out
    run -2 --separate-stderr hk merge --quiet -o out/m.json "$@"
    [[ "$stderr" == "haplik: error: "* && "$stderr" != *$'\n'* ]] ||
        fail "merge $*: not one error line: $stderr"
    assert_dir_only out
}

# with_line FILE N TEXT: FILE with its line N replaced by TEXT, whose backslash
# escapes (\t, \xNN, \\) are decoded to bytes.
with_line() {
    python3 -c 'import codecs, sys
f, n, text = sys.argv[1], int(sys.argv[2]), codecs.escape_decode(sys.argv[3].encode())[0]
lines = open(f, "rb").read().split(b"\n")
lines[n - 1] = text
sys.stdout.buffer.write(b"\n".join(lines))' "$@"
}

# edit_summary FILE STATEMENT: FILE (json) with Python's STATEMENT applied to its
# summary `s`, written back as valid JSON.
edit_summary() {
    python3 -c 'import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
s = json.loads("{" + lines[5])["summary"]
exec(sys.argv[2])
lines[5] = "\"summary\": " + json.dumps(s) + "}"
sys.stdout.write("\n".join(lines))' "$@"
}

# is_true FILE EXPR: the Python expression over the table `t` is true.
is_true() {
    run -0 table get "$1" "$2"
    [ "$output" = True ] || fail "$1: not true: $2 ($output)"
}

# A comment line of 1100 bytes: htslib takes a file with control characters in
# its first KiB for binary, so the lines under test come after it.
PAD="# $(printf '%01100d' 0)"


@test "merge refuses xz, bzip2 and zstd tables (2): one line, no output, no temporary file" {
    local tried=0 c ext
    for c in xz:xz bzip2:bz2 zstd:zst; do
        ext=${c#*:} c=${c%%:*}
        command -v "$c" >/dev/null || continue
        "$c" -q -k -c a.json > "a.json.$ext"
        refused a.json "a.json.$ext"
        [[ "$stderr" == "haplik: error: a.json.$ext:1: unsupported compression ("* ]] ||
            fail "$c: $stderr"
        refused "a.json.$ext"
        tried=1
    done
    [ "$tried" = 1 ] || skip "none of xz, bzip2, zstd installed"
}

@test "merge of a gzip table still works" {
    gzip -c a.json > a.json.gz
    run -0 hk merge --quiet -o m.json a.json.gz a.jsonl
    valid_json m.json
    run -0 table get m.json "len(t['regions'])"
    assert_output 4
}

@test "merge of a missing file says that it is missing (2); standard input in any place" {
    refused a.json nope.json
    assert_stderr "haplik: error: nope.json: No such file or directory"
    refused nope.json a.json
    assert_stderr "haplik: error: nope.json: No such file or directory"
    # standard input, in any place (each table is read once)
    run -0 sh -c '"$0" merge --quiet - a.json < a.json > m.json' "$HAPLIK"
    valid_json m.json
    run -0 sh -c '"$0" merge --quiet a.json - < a.jsonl > m.json' "$HAPLIK"
    valid_json m.json
}

@test "merge refuses binary garbage and an empty file (2), and says so" {
    python3 -c 'import random; random.seed(5)
open("g.json", "wb").write(bytes(random.randrange(256) for _ in range(3000)))'
    refused a.json g.json
    assert_stderr --partial "g.json:1: binary content"
    refused g.json
    printf '{"index": 0\0, "name": null, "line": 1, "log10_likelihoods": []}\n' > nul.jsonl
    cat a.jsonl >> nul.jsonl
    refused nul.jsonl
    assert_stderr --partial "nul.jsonl:1: binary content"
    # past the first KiB, which htslib looks at, a NUL is in a line of text
    hk score --backend cpu --quiet --output-format jsonl -o big.jsonl "$DATA/tiny.in"
    python3 -c 'import sys
lines = open("big.jsonl", "rb").read().split(b"\n")
lines[1] = lines[1].replace(b"\"line\"", b"\"li\0ne\"")
open("nul.jsonl", "wb").write(b"\n".join(lines))'
    refused a.json nul.jsonl
    assert_stderr --partial "nul.jsonl:2: not valid JSON: a raw control character in a string"
    : > empty.json
    refused a.json empty.json
    assert_stderr "haplik: error: empty.json: empty file, not a haplik table"
}

@test "merge refuses truncated tables (2)" {
    head -c 250 a.json > cut.json                # inside the first region line
    refused a.json cut.json
    assert_stderr --partial "cut.json:3: not valid JSON"
    head -n 2 a.jsonl > cut.jsonl                # no summary
    refused cut.jsonl a.json
    assert_stderr "haplik: error: cut.jsonl:2: truncated table (no summary)"
    head -c 150 a.jsonl > cut.jsonl              # inside a line, no line end
    refused a.json cut.jsonl
    # a region line lost: the summary counts one more
    sed '4d; 3s/,$//' a.json > lost.json
    refused a.json lost.json
    assert_stderr "haplik: error: lost.json:5: summary.regions is 2 but the table holds 1 regions"
    sed 2d a.jsonl > lost.jsonl
    refused a.json lost.jsonl
    assert_stderr "haplik: error: lost.jsonl:2: summary.regions is 2 but the table holds 1 regions"
}

@test "merge refuses region lines that are not JSON objects (2)" {
    local bad
    for bad in '{"index": 0, "name": "chr1:1-100", "line": 2, "log10_likelihoods": [[-0.699361]], },' \
               '{"index": 0, "name": "chr1, "line": 2, "log10_likelihoods": [[-0.699361]]},' \
               '{"index": 0, "name": "chr1:1-100", "line": 2, "log10_likelihoods": [[-0.699361]]} x,' \
               '{"index": 0, "name": "chr1\t:1-100", "line": 2, "log10_likelihoods": [[-0.699361]]},' \
               '{"index": 0, "name": "chr1:1-100", "line": 2, "log10_likelihoods": [[-0.699361, nan]]},' \
               '{"index": "0", "name": "chr1:1-100", "line": 2, "log10_likelihoods": [[-0.699361]]},' \
               '{"index": 0,},' '{"index": 0, "name": null},' '[1, 2],' '{"index": 0' '{' ''; do
        with_line a.json 3 "$bad" > bad.json
        refused a.json bad.json
        [[ "$stderr" == "haplik: error: bad.json:3: "* ]] || fail "$bad: $stderr"
        with_line a.jsonl 1 "${bad%,}" > bad.jsonl
        refused a.json bad.jsonl
        [[ "$stderr" == "haplik: error: bad.jsonl:1: "* ]] || fail "$bad (jsonl): $stderr"
    done
}

@test "merge refuses a malformed summary (2)" {
    local stmt summary
    for stmt in 's["regions"] = 1.5' 's["regions"] = -2' 's["regions"] = 3' 's["pairs"] = "2"' \
                'del s["cells"]' 's["devices"] = "x"' 's["devices"] = [1]' 's["backend"] = 7' \
                's["seconds"] = None'; do
        edit_summary a.json "$stmt" > bad.json
        refused a.json bad.json
        [[ "$stderr" == "haplik: error: bad.json:6: "* ]] || fail "$stmt: $stderr"
    done
    summary=$(sed -n 6p a.json)
    for bad in "${summary%\}}" "$summary x" "${summary/\"summary\"/\"summery\"}" '"summary": 1}'; do
        with_line a.json 6 "$bad" > bad.json
        refused a.json bad.json
        [[ "$stderr" == "haplik: error: bad.json:6: "* ]] || fail "$bad: $stderr"
    done
    { cat a.json; sed -n 6p a.json; } > two.json
    refused a.json two.json
    assert_stderr --partial "two.json:7: "
}

@test "merge writes valid JSON: strings of the summaries are escaped again" {
    edit_summary a.json 's["backend"] = "c\"p\\u\x1b"; s["devices"] = ["d\"\x7f"]' > q.json
    valid_json q.json
    run -0 hk merge --quiet -o m.json q.json q.json
    valid_json m.json
    is_true m.json "t['summary']['backend'] == 'c\"p\\\\u\\x1b'"
    is_true m.json "t['summary']['devices'] == ['d\"\\x7f']"
    run -0 hk merge --quiet --output-format jsonl -o m.jsonl q.json a.json
    valid_jsonl m.jsonl
    is_true m.jsonl "t['summary']['backend'] == 'mixed'"
}

@test "region names that are not UTF-8 are written as U+FFFD, control characters as \\u00XX" {
    printf '%s\n# region chr1\377\376:\001\033[31m-\177|\355\240\200|\300\257|\342\202:|\303\251|\360\237\247\254\n1 1\nACGT IIII IIII IIII IIII\nACGTT\n' "$PAD" > u.in
    # what Python makes of the name's bytes with errors="replace"
    local want="open('u.in', 'rb').read().split(b'\\n')[1][len('# region '):].decode('utf-8', 'replace')"
    run -0 hk score --backend cpu --quiet -o u.json u.in
    valid_json u.json
    is_true u.json "t['regions'][0]['name'] == $want"
    is_true u.json "t['regions'][0]['name'].count('\\ufffd') == 8"
    run -0 hk score --backend cpu --quiet --output-format jsonl -o u.jsonl u.in
    valid_jsonl u.jsonl
    # the table holds no raw control character, DEL included
    run -1 grep -c $'[\001-\037\177]' u.json u.jsonl
    run -0 hk merge --quiet -o m.json u.json u.jsonl
    valid_json m.json
    is_true m.json "[r['name'] for r in t['regions']] == [$want] * 2"
}

@test "merge repairs tables whose strings are not UTF-8 (earlier writers), and odd file names" {
    with_line a.json 3 '{"index": 0, "name": "chr1\xff\xc3:1-100", "line": 2, "log10_likelihoods": [[-0.699361]]},' > old.json
    run -0 hk merge --quiet -o m.json old.json a.jsonl
    valid_json m.json
    is_true m.json "t['regions'][0]['name'] == 'chr1\\ufffd\\ufffd:1-100'"
    cp a.json $'b\377\001.json'
    run -0 hk merge --quiet -o m.jsonl --output-format jsonl a.json $'b\377\001.json'
    valid_jsonl m.jsonl
    is_true m.jsonl "t['summary']['parts'][1]['table'] == 'b\\ufffd\\x01.json'"
}

@test "errors never print raw control characters (an ESC sequence in an input field)" {
    printf '# hap-bases read-bases read-qual read-ins-qual read-del-qual gcp expected-result\n%s\nACGTT ACGT IIII IIII IIII ++++ -1.0\033[31mred\a\n' "$PAD" > esc.txt
    run -2 --separate-stderr hk score --backend cpu --quiet -o esc.json esc.txt
    [[ "$stderr" == *'-1.0\x1b[31mred\x07'* ]] || fail "stderr: $stderr"
    [[ "$stderr" != *$'\033'* && "$stderr" != *$'\a'* ]] || fail "raw control character: $stderr"
    run -2 --separate-stderr hk merge -o m.json $'x\033[31m\177.json'
    assert_stderr 'haplik: error: x\x1b[31m\x7f.json: No such file or directory'
}

@test "merge: an option without its value is a usage error that names it (2)" {
    run -2 --separate-stderr hk merge a.json a.jsonl -o
    [[ "$stderr" == "haplik: error: merge: option '-o' needs a value"* ]] || fail "$stderr"
    run -2 --separate-stderr hk merge a.json a.jsonl --output-format
    [[ "$stderr" == "haplik: error: merge: option '--output-format' needs a value"* ]] || fail "$stderr"
    # a value that is the next option is no value: -o would write to a file "--quiet"
    run -2 --separate-stderr hk merge -o --quiet a.json a.jsonl
    [[ "$stderr" == "haplik: error: merge: option '-o' needs a value"* ]] || fail "$stderr"
    [ ! -e --quiet ]
    run -2 --separate-stderr hk merge --bogus a.json
    [[ "$stderr" == "haplik: error: merge: unknown option '--bogus'"* ]] || fail "$stderr"
    # a file name starting with '-' is written as ./-NAME
    run -0 hk merge --quiet -o ./-m.json a.json
    valid_json ./-m.json
}

@test "merge refuses to write over one of its inputs (2), by name or by link" {
    cp a.json keep.json
    ln -s a.json sym.json
    ln a.json hard.json
    local out
    for out in a.json ./a.json sym.json hard.json "$PWD/a.json"; do
        run -2 --separate-stderr hk merge a.jsonl a.json -o "$out"
        assert_stderr "haplik: error: $out: the output is the input a.json: refusing to overwrite an input"
        cmp a.json keep.json
        [ -L sym.json ]
    done
    [ -z "$(find . -name '.*.tmp*')" ] || fail "a temporary file was left"
    run -0 hk merge --quiet a.json a.json -o m.json
}
