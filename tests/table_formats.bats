#!/usr/bin/env bats
# The table's formats: tsv (plain and BGZF) holds json's values; merge
# writes score's summary shape and refuses tables that do not belong together.

setup() { load test_helper/common-setup; _common_setup; cd "$BATS_TEST_TMPDIR" || return; }

HC=hc-NA12878-20_10000117.java.hmmresults.txt

# tsv_equals_json TSV JSON: every pair of the json table is one row of the tsv
# (read with Python's csv module), value for value.
tsv_equals_json() {
    python3 - "$1" "$2" <<'PY'
import csv, gzip, json, sys
tsv, js = sys.argv[1], sys.argv[2]
opener = gzip.open if tsv.endswith(".gz") else open
with opener(tsv, "rt", newline="") as f:
    rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
t = json.load(open(js))
want = [(r["index"], r["name"] or "", i, h, v)
        for r in t["regions"] for i, row in enumerate(r["log10_likelihoods"]) for h, v in enumerate(row)]
got = [(int(r["region_index"]), r["region_name"], int(r["read_index"]), int(r["haplotype_index"]),
        float(r["log10_likelihood"])) for r in rows]
assert len(got) == len(want) == t["summary"]["pairs"], (len(got), len(want))
for g, w in zip(got, want):
    assert g == w, (g, w)
print(len(got), "rows")
PY
}

@test "tsv, plain and BGZF, equals json value for value and loads with Python's csv" {
    hk score --backend cpu --quiet -o t.json "$DATA/$HC" "$DATA/tiny.in"
    hk score --backend cpu --quiet --output-format tsv -o t.tsv "$DATA/$HC" "$DATA/tiny.in"
    hk score --backend cpu --quiet --output-format tsv -o t.tsv.gz "$DATA/$HC" "$DATA/tiny.in"
    echo '{"output": {"format": "tsv", "compression": "bgzf"}}' > c.json
    hk score --backend cpu --quiet -c c.json -o bgzf.tsv "$DATA/$HC" "$DATA/tiny.in"
    run -0 tsv_equals_json t.tsv t.json
    assert_output "616 rows"
    run -0 tsv_equals_json t.tsv.gz t.json
    run -0 python3 -c "import sys; d=open(sys.argv[1],'rb').read(); assert d[12:14]==b'BC' and d.endswith(bytes.fromhex('1f8b08040000000000ff0600424302001b0003000000000000000000'))" t.tsv.gz
    run -0 python3 -c "import sys; assert open(sys.argv[1],'rb').read(2)==b'\x1f\x8b'" bgzf.tsv
    run -0 cmp <(gzip -dc t.tsv.gz) t.tsv
}

@test "tsv carries the dump's expected value and the difference" {
    hk score --backend cpu --quiet --output-format tsv -o t.tsv "$DATA/$HC"
    run -0 sed -n 1p t.tsv
    assert_output "$(printf 'input\tline\tregion_index\tregion_name\tread_index\thaplotype_index\tlog10_likelihood\texpected\tdifference')"
    run -0 python3 - t.tsv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t", quoting=csv.QUOTE_NONE))
for r in rows:
    d = float(r["log10_likelihood"]) - float(r["expected"])
    assert abs(d - float(r["difference"])) < 2e-6, r
    assert abs(float(r["difference"])) < 1e-4, r
PY
    # a batch file has no expected values: no such columns
    hk score --backend cpu --quiet --output-format tsv -o b.tsv "$DATA/tiny.in"
    run -0 sed -n 1p b.tsv
    assert_output "$(printf 'input\tline\tregion_index\tregion_name\tread_index\thaplotype_index\tlog10_likelihood')"
}

@test "merge's summary has every key score's has, in every format" {
    hk split "$DATA/$HC" a.txt b.txt
    for fmt in json jsonl tsv; do
        hk score --backend cpu --quiet --output-format $fmt -o a.$fmt a.txt
        hk score --backend cpu --quiet --output-format $fmt -o b.$fmt b.txt
        hk merge -o m.$fmt a.$fmt b.$fmt
    done
    run -0 python3 - <<'PY'
import json
def summary(path):
    lines = open(path).read().splitlines()
    if path.endswith(".tsv"):   # the tsv table's summary is in its sidecar
        return json.load(open(path + ".meta.json"))["summary"]
    if path.endswith(".jsonl"):
        return json.loads(lines[-1])["summary"]
    return json.load(open(path))["summary"]
for fmt in ("json", "jsonl", "tsv"):
    score, merged = summary("a." + fmt), summary("m." + fmt)
    missing = set(score) - set(merged)
    assert not missing, (fmt, missing)
    assert merged["pairs"] == summary("a." + fmt)["pairs"] + summary("b." + fmt)["pairs"]
print("ok")
PY
    assert_output ok
    # the merged tsv holds the merged json's values
    hk merge -o m.json a.json b.json
    run -0 tsv_equals_json m.tsv m.json
}

@test "merge refuses tables of other decimals or model, and mixed families" {
    hk score --backend cpu --quiet -o a.json "$DATA/tiny.in"
    hk score --backend cpu --quiet --decimals 4 -o d4.json "$DATA/tiny.in"
    hk score --backend cpu --quiet --precision double -o dbl.json "$DATA/tiny.in"
    hk score --backend cpu --quiet --output-format tsv -o a.tsv "$DATA/tiny.in"
    run -2 --separate-stderr "$HAPLIK" merge -o m.json a.json d4.json
    assert_stderr --partial "d4.json:1: decimals 4 differ from the first table's 6"
    run -2 --separate-stderr "$HAPLIK" merge -o m.json a.json dbl.json
    assert_stderr --partial "dbl.json:1: model"
    run -2 --separate-stderr "$HAPLIK" merge -o m.json a.json a.tsv
    assert_stderr --partial "a.tsv:1: a tsv table cannot be merged into a json table"
    [ ! -e m.json ]
}
