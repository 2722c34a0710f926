#!/usr/bin/env bats
# The tsv table's contract (README "The likelihood table"): the format follows the
# output's name, one header row and one row per pair and nothing else, the
# input and line of each pair, an empty field for every missing or non-finite
# value, names escaped so that no byte breaks a row, and the provenance in a
# sidecar put in place with the table.

setup() { load test_helper/common-setup; _common_setup; cd "$BATS_TEST_TMPDIR" || return; }

HC=hc-NA12878-20_10000117.java.hmmresults.txt
COLS=$'input\tline\tregion_index\tregion_name\tread_index\thaplotype_index\tlog10_likelihood'

# table_kind FILE: json, jsonl or tsv by content (gzip or plain).
table_kind() {
    python3 - "$1" <<'PY'
import gzip, json, sys
raw = open(sys.argv[1], "rb").read()
if raw[:2] == b"\x1f\x8b":
    raw = gzip.decompress(raw)
text = raw.decode()
first = text.split("\n", 1)[0]
if first.startswith("input\tline\t"):
    print("tsv")
elif text.startswith("{\"format\""):
    json.loads(text)
    print("json")
else:
    json.loads(text.splitlines()[-1])
    print("jsonl")
PY
}

@test "the output's extension picks the format; --output-format names others; a contradiction is a usage error" {
    for name in t.json t.jsonl t.tsv t.json.gz t.jsonl.gz t.tsv.gz; do
        hk score --backend cpu --quiet -o $name "$DATA/tiny.in"
        want=${name%.gz}; want=${want#t.}
        run -0 table_kind $name
        assert_output "$want"
    done
    run -0 python3 -c "import sys; assert open(sys.argv[1],'rb').read(4)==b'\x1f\x8b\x08\x04'" t.tsv.gz
    # another name: json unless a format is asked for
    hk score --backend cpu --quiet -o t.out "$DATA/tiny.in"
    run -0 table_kind t.out
    assert_output json
    hk score --backend cpu --quiet --output-format tsv -o t.txt "$DATA/tiny.in"
    run -0 table_kind t.txt
    assert_output tsv
    echo '{"output": {"format": "jsonl"}}' > c.json
    hk score --backend cpu --quiet -c c.json -o c.out "$DATA/tiny.in"
    run -0 table_kind c.out
    assert_output jsonl
    # standard output: the format asked for
    hk score --backend cpu --quiet --output-format tsv "$DATA/tiny.in" > s.tsv
    run -0 table_kind s.tsv
    assert_output tsv
    # a format that contradicts the name: exit 2 before any work, nothing written
    run -2 --separate-stderr hk score --backend cpu --output-format json -o x.tsv "$DATA/tiny.in"
    assert_stderr "haplik: error: x.tsv: the name says tsv but the output format is json (--output-format or output.format): rename the output or drop the format"
    run -2 --separate-stderr hk score --backend cpu -c c.json -o x.tsv.gz "$DATA/tiny.in"
    assert_stderr --partial "the name says tsv but the output format is jsonl"
    [ ! -e x.tsv ] && [ ! -e x.tsv.gz ]
}

@test "tsv: one header row, one row per pair, nothing else; input and line trace each row" {
    cp "$DATA/$HC" hc.txt
    hk score --backend cpu --quiet -o t.tsv hc.txt "$DATA/tiny.in"
    hk score --backend cpu --quiet -o t.json hc.txt "$DATA/tiny.in"
    run -0 head -1 t.tsv
    assert_output "$COLS"$'\texpected\tdifference'
    run -1 grep -c '^#' t.tsv
    assert_output 0
    run -0 python3 - t.tsv t.json hc.txt "$DATA/tiny.in" <<'PY'
import csv, json, sys
tsv, js, hc, tiny = sys.argv[1:]
rows = list(csv.DictReader(open(tsv, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
t = json.load(open(js))
assert len(rows) == t["summary"]["pairs"], (len(rows), t["summary"]["pairs"])
want = [(r["index"], r["name"] or "", i, h, v) for r in t["regions"]
        for i, row in enumerate(r["log10_likelihoods"]) for h, v in enumerate(row)]
got = [(int(r["region_index"]), r["region_name"], int(r["read_index"]), int(r["haplotype_index"]),
        float(r["log10_likelihood"])) for r in rows]
assert got == want
lines = {hc: open(hc).read().split("\n"), tiny: open(tiny).read().split("\n")}
regions = {r["index"]: r for r in t["regions"]}
n_hc = 0
for r in rows:
    text = lines[r["input"]][int(r["line"]) - 1].split(" ")
    reg = regions[int(r["region_index"])]
    if r["input"] == hc:
        # the pair's own record: its haplotype, read and expected value
        n_hc += 1
        assert len(text) == 7, r
        assert text[0] == reg["haplotypes"][int(r["haplotype_index"])], r
        assert text[1] == reg["reads"][int(r["read_index"])], r
        assert float(text[6]) == float(r["expected"]), r
    else:
        # a batch file: the read's line
        assert len(text) == 5 and text[0] == reg["reads"][int(r["read_index"])], r
        assert r["expected"] == "" and r["difference"] == "", r
print(n_hc, len(rows) - n_hc)
PY
    assert_output "284 332"
}

@test "tsv: records apart (comments and blank lines inside a region) keep their own lines" {
    # a region of 2 reads x 2 haplotypes with a comment and a blank line between its records
    sed -n 2,5p "$DATA/$HC" > four.txt
    { sed -n 1,2p four.txt; echo '# a note'; echo; sed -n 3,4p four.txt; } > apart.txt
    hk score --backend cpu --quiet -o t.tsv apart.txt
    run -0 cut -f2,5,6 t.tsv
    assert_output "$(printf 'line\tread_index\thaplotype_index\n1\t0\t0\n2\t0\t1\n5\t1\t0\n6\t1\t1')"
}

@test "tsv: no byte of a name breaks a row, and the table is valid UTF-8" {
    # region names from tags (tab, #, backslash, CR, bytes that are not UTF-8), and
    # an input whose file name holds a tab, a newline, ESC, ^A and a byte that is not UTF-8
    # (an input holding other control bytes is refused as binary)
    region='1 1\nACGT IIII IIII IIII ++++\nACGA\n'
    # shellcheck disable=SC2059 # the format is the input's text, its escapes meant
    printf "$region# region HG002#1#chr20\tx\\\\y\rz\377\xc3(\n$region# region caf\xc3\xa9 ok\n$region" > in.txt
    name=$'odd\tname\nwith\e\x01\xffbyte.txt'
    cp in.txt "$name"
    run -0 hk score --backend cpu --quiet --output-format tsv -o t.tsv "$name"
    run -0 python3 - t.tsv "$name" <<'PY'
import sys
raw = open(sys.argv[1], "rb").read()
text = raw.decode("utf-8")               # valid UTF-8, or this raises
lines = text.split("\n")
assert lines[-1] == ""
rows = [l.split("\t") for l in lines[1:-1]]
assert len(rows) == 3 and all(len(r) == 7 for r in rows), rows
assert all(ord(c) >= 0x20 for l in lines for c in l if c != "\t"), lines
def unescape(s):
    out, i = bytearray(), 0
    b = s.encode()
    while i < len(b):
        if b[i:i+1] == b"\\":
            c = b[i+1:i+2]
            if c == b"x":
                out.append(int(b[i+2:i+4], 16)); i += 4; continue
            out += {b"t": b"\t", b"n": b"\n", b"r": b"\r", b"\\": b"\\"}[c]; i += 2; continue
        out.append(b[i]); i += 1
    return bytes(out)
names = sorted({unescape(r[3]) for r in rows})
assert names == sorted([b"", b"HG002#1#chr20\tx\\y\rz\xff\xc3(", "café ok".encode()]), names
assert {unescape(r[0]) for r in rows} == {sys.argv[2].encode("utf-8", "surrogateescape")}
print(rows[1][0], rows[1][3])
PY
    assert_output 'odd\tname\nwith\x1b\x01\xffbyte.txt HG002#1#chr20\tx\\y\rz\xff\xc3('
}

@test "tsv: missing and non-finite values are empty fields; json writes null" {
    # GATK's -Infinity as the expected value of a pair
    sed -n 1,3p "$DATA/$HC" | awk 'NR==3 {$7="-Infinity"} 1' > gatk.txt
    hk score --backend cpu --quiet -o t.tsv gatk.txt
    run -0 sed -n 3p t.tsv
    [[ "$output" == *$'\t\t' ]] || fail "expected and difference should be empty: $output"
    run -1 grep -ciE 'inf|nan|null' t.tsv
    assert_output 0
    # --precision float underflows to -inf where double does not
    python3 - <<'PY' > far.txt
import random
random.seed(3)
r = "".join(random.choice("ACGT") for _ in range(700))
h = "".join(random.choice("ACGT") for _ in range(700))
print(1, 1)
print(r, "I" * 700, "I" * 700, "I" * 700, "+" * 700)
print(h)
PY
    hk score --backend cpu --quiet --precision float -o f.tsv far.txt
    hk score --backend cpu --quiet --precision float -o f.json far.txt
    run -0 sed -n 2p f.tsv
    assert_output "far.txt	2	0		0	0	"
    run -0 python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['regions'][0]['log10_likelihoods'])" f.json
    assert_output "[[None]]"
}

@test "tsv: the sidecar holds header and summary, and comes and goes with the table" {
    hk score --backend cpu --quiet -o t.tsv "$DATA/tiny.in"
    assert_dir_only . t.tsv t.tsv.meta.json
    run -0 python3 - t.tsv t.tsv.meta.json <<'PY'
import json, sys
m = json.load(open(sys.argv[2]))
assert list(m) == ["haplik-likelihoods", "summary"], list(m)
h = m["haplik-likelihoods"]
assert h["format"] == "haplik-likelihoods" and h["decimals"] == 6 and "model" in h, h
rows = open(sys.argv[1]).read().splitlines()[1:]
assert m["summary"]["pairs"] == len(rows), (m["summary"], len(rows))
print(m["summary"]["regions"])
PY
    assert_output 3
    hk score --backend cpu --quiet -o z.tsv.gz "$DATA/tiny.in"
    [ -s z.tsv.gz.meta.json ]
    # a failed run leaves neither (and keeps what was there)
    mkdir bad && cd bad
    echo old > t.tsv
    echo old > t.tsv.meta.json
    printf '1 1\nACGT IIII IIII IIII ++++\nACXT\n' > bad.in
    run -2 hk score --backend cpu --quiet -o t.tsv bad.in
    assert_dir_only . t.tsv t.tsv.meta.json bad.in
    run -0 cat t.tsv t.tsv.meta.json
    assert_output $'old\nold'
    # the sidecar cannot be written: no table either
    rm t.tsv.meta.json && mkdir t.tsv.meta.json
    run -3 --separate-stderr hk score --backend cpu --quiet -o t.tsv "$DATA/tiny.in"
    assert_stderr --partial "t.tsv.meta.json: is a directory"
    run -0 cat t.tsv
    assert_output old
    # standard output: no sidecar
    cd .. && mkdir s && cd s
    hk score --backend cpu --quiet --output-format tsv "$DATA/tiny.in" | cat > piped.tsv
    assert_dir_only . piped.tsv
    run -0 head -1 piped.tsv
    assert_output "$COLS"
}
