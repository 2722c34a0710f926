#!/usr/bin/env bats
# The workflow's Snakemake report (workflow/rules/report.smk, workflow/scripts/report_figures.py):
# the run makes the figures, `snakemake --report report.html` builds the report, and the report
# holds them with the per-shard values of the shard tables. Needs snakemake >= 8, matplotlib
# and pygments in Snakemake's Python (scripts/install-workflow-deps.sh installs them; CI runs
# it), else the tests skip loudly, or fail when HK_REQUIRE_WORKFLOW_TESTS=1.

setup_file() {
    SRC=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
    export SRC
}

setup() {
    load test_helper/common-setup
    load test_helper/workflow
    _common_setup
    if ! command -v snakemake >/dev/null; then
        not_here "SNAKEMAKE NOT FOUND: the report is NOT tested (run scripts/install-workflow-deps.sh)"
    fi
    local v py
    v=$(snakemake --version)
    [ "${v%%.*}" -ge 8 ] || not_here "SNAKEMAKE $v IS TOO OLD (need >= 8): the report is NOT tested"
    # the report script runs in Snakemake's own Python (no conda in the tests)
    py=$(head -n 1 "$(command -v snakemake)" | sed 's/^#! *//')
    "$py" -c "import matplotlib, pygments" 2>/dev/null \
        || not_here "NO MATPLOTLIB OR PYGMENTS BESIDE SNAKEMAKE ($py): the report is NOT tested"
    W="$BATS_TEST_TMPDIR/w"
    mkdir -p "$W"
    cd "$W"
    ln -s "$SRC/tests" tests
}

# embedded REPORT: the files the report embeds (data URIs), decoded into embedded/NAME; prints
# their names
embedded() {
    python3 - "$1" <<'EOF'
import base64, os, re, sys
html = open(sys.argv[1]).read()
os.makedirs("embedded", exist_ok=True)
found = re.findall(r'"data:[^;"]+;charset=utf8;filename=([^;"]+);base64,([A-Za-z0-9+/=]+)"', html)
for name, data in found:
    with open(os.path.join("embedded", name), "wb") as f:
        f.write(base64.b64decode(data))
# logo.svg is Snakemake's own
print(" ".join(sorted({n for n, _ in found} - {"logo.svg"})))
EOF
}

# per_shard_from_tables: the per-shard rows as the shard tables' summaries give them, in the
# merged table's order
per_shard_from_tables() {
    python3 - <<'EOF'
import json, os
for part in json.load(open("results/likelihoods.json"))["summary"]["parts"]:
    path = part["table"]
    s = json.load(open(path))["summary"]
    name = os.path.basename(os.path.dirname(path)) + "/" + os.path.basename(path)[:-5]
    print(name, s["regions"], s["pairs"], s["cells"], f"{s['seconds']:.3f}", s["backend"], sep="\t")
EOF
}

@test "report: the run makes the figures; the report embeds them with the per-shard values" {
    # the default config: the bundled example (a HaplotypeCaller results file, a batch file)
    config c.yaml
    run -0 sm --configfile c.yaml
    for f in shards.tsv shards.html throughput.svg likelihoods.svg gatk_difference.svg; do
        [ -s "results/report/$f" ] || fail "results/report/$f missing or empty"
    done
    run -0 snakemake -s "$SRC/workflow/Snakefile" -d "$W" --configfile c.yaml --report report.html
    assert_output --partial "Report created"
    [ -s report.html ]
    run -0 embedded report.html
    assert_output "gatk_difference.svg likelihoods.svg shards.html shards.tsv throughput.svg"
    # per shard: the table's pairs, cells and seconds, GCUPS from them, the device
    run -0 cut -f1-5 embedded/shards.tsv
    assert_output "$(printf 'shard\tregions\tpairs\tcells\tseconds\n'; per_shard_from_tables | cut -f1-5)"
    python3 - <<'EOF'
import csv
rows = list(csv.DictReader(open("embedded/shards.tsv"), delimiter="\t"))
assert len(rows) == 4, rows
for r in rows:
    if float(r["seconds"]) > 0:
        g = int(r["cells"]) / float(r["seconds"]) / 1e9
        assert abs(float(r["GCUPS"]) - g) <= 1e-4 * max(1, g), r
    assert r["device"].startswith("cpu: "), r
html = open("embedded/shards.html").read()
for r in rows:
    assert f"<td>{r['shard']}</td><td>{r['regions']}</td><td>{r['pairs']}</td><td>{r['cells']}</td>" in html, r
EOF
    # the figures: titles and labels are SVG text
    grep -q "haplik throughput per shard and device" embedded/throughput.svg
    grep -q "tiny/0002" embedded/throughput.svg
    grep -q "cpu: " embedded/throughput.svg
    total=$(awk -F'\t' 'NR > 1 { n += $3 } END { print n }' embedded/shards.tsv)
    grep -q "haplik log10 likelihoods ($total pairs)" embedded/likelihoods.svg
    # the HaplotypeCaller dump's 284 pairs carry GATK's values; the batch file's none
    grep -q "|haplik - GATK| per pair (284 pairs, largest 1e-06)" embedded/gatk_difference.svg
    # the captions are in the report
    grep -q "GCUPS = cells / seconds" report.html
}

@test "report: |haplik - GATK| shows a changed GATK value; no such figure without GATK values" {
    # one GATK value moved by 0.5: the figure's largest difference is that
    sed '2s/-1.664814e+00$/-2.164814e+00/' "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" >hc.txt
    ! cmp -s hc.txt "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" || fail "sed changed nothing"
    config c.yaml "dumps: [$W/hc.txt]" "shards: 2"
    run -0 sm --configfile c.yaml
    grep -q "largest 0.5)" results/report/gatk_difference.svg
    # batch files carry no GATK values: no figure, and the report lacks it
    rm -rf results
    config b.yaml "dumps: [$DATA/tiny.in, $DATA/10s.in]" "shards: 2"
    run -0 sm --configfile b.yaml
    [ ! -e results/report/gatk_difference.svg ]
    [ -s results/report/throughput.svg ]
    run -0 snakemake -s "$SRC/workflow/Snakefile" -d "$W" --configfile b.yaml --report report.html
    run -0 embedded report.html
    assert_output "likelihoods.svg shards.html shards.tsv throughput.svg"
}

@test "report: the figure script refuses a table that is not one, in one line, exit 2" {
    echo '{"regions": []}' >bad.json
    py=$(head -n 1 "$(command -v snakemake)" | sed 's/^#! *//')
    run -2 "$py" "$SRC/workflow/scripts/report_figures.py" --tables bad.json --sources x \
        --benchmarks y --shards s.tsv --shards-html s.html --throughput t.svg --likelihoods l.svg
    assert_output "report_figures: error: bad.json: not a haplik json table ('summary')"
}

# figures TABLE...: run the figure script on the tables (sources: hc.txt; no benchmarks)
figures() {
    local py n=$#
    py=$(head -n 1 "$(command -v snakemake)" | sed 's/^#! *//')
    echo '{}' >bench.tsv
    "$py" "$SRC/workflow/scripts/report_figures.py" --tables "$@" \
        --sources $(for _ in "$@"; do echo hc.txt; done) --benchmarks $(for _ in "$@"; do echo bench.tsv; done) \
        --shards s.tsv --shards-html s.html --throughput t.svg --likelihoods l.svg --gatk g.svg
}

@test "report: the figure script takes GATK's -Infinity, null values, a null summary field and every table format" {
    # GATK's value of the first record underflowed (-Infinity): haplik's is finite there
    sed '2s/-1.664814e+00$/-Infinity/' "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" >hc.txt
    mkdir -p t
    "$HAPLIK" score --backend cpu --quiet -o t/a.json hc.txt
    "$HAPLIK" score --backend cpu --quiet --output-format jsonl -o t/c.jsonl hc.txt
    gzip -c t/c.jsonl >t/e.jsonl.gz
    python3 - <<'PY'
import json
t = json.load(open("t/a.json"))
t["regions"][0]["log10_likelihoods"][0][1] = None   # a pair without a value
t["summary"]["seconds"] = None
json.dump(t, open("t/b.json", "w"))
# the same table as tsv with its sidecar, the value of one pair an empty field
t = json.load(open("t/a.json"))
head = {k: v for k, v in t.items() if k not in ("regions", "summary")}
json.dump({"haplik-likelihoods": head, "summary": t["summary"]}, open("t/d.tsv.meta.json", "w"))
with open("t/d.tsv", "w") as f:
    f.write("input\tline\tregion_index\tregion_name\tread_index\thaplotype_index\tlog10_likelihood\texpected\tdifference\n")
    for g in t["regions"]:
        n = len(g["haplotypes"])
        for r, row in enumerate(g["log10_likelihoods"]):
            for h, v in enumerate(row):
                value = "" if (g["index"], r, h) == (1, 0, 0) else repr(v)
                f.write(f"hc.txt\t{g['line'] + r * n + h}\t{g['index']}\t\t{r}\t{h}\t{value}\t\t\n")
PY
    run -0 figures t/a.json t/b.json t/c.jsonl t/d.tsv t/e.jsonl.gz
    run -0 cut -f1,3 s.tsv
    assert_output "$(printf 'shard\tpairs\nt/a\t284\nt/b\t284\nt/c\t284\nt/d\t284\nt/e\t284')"
    [ "$(cut -f5 s.tsv | sed -n 3p)" = 0.000 ]   # t/b: no seconds
    grep -q "haplik log10 likelihoods (1420 pairs; 2 without a finite value, not drawn)" l.svg
    grep -q "|haplik - GATK| per pair (1420 pairs, largest [0-9.e-]*; 5 finite on one side only; 2 without haplik's value)" g.svg
}

@test "report: the throughput figure stays readable with many shards" {
    "$HAPLIK" score --backend cpu --quiet -o a.json "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    cp "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" hc.txt
    mkdir -p t
    for i in $(seq -w 1 40); do cp a.json "t/shard$i.json"; done
    run -0 figures t/shard*.json
    # a figure of bounded width, its bars numbered (the names would overlap)
    grep -q 'width="864pt"' t.svg || fail "$(grep -o 'width="[^"]*"' t.svg | head -1)"
    grep -q "shard (its row in the per-shard table; 40 shards)" t.svg
    ! grep -q "t/shard01" t.svg || fail "40 shard names on the axis"
    # few shards: each bar named
    run -0 figures t/shard0[1-4].json
    grep -q "t/shard01" t.svg
}

@test "report: a dump that several shards name (read in place) is read once, not once per shard" {
    cp "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" hc.txt
    "$HAPLIK" score --backend cpu --quiet -o a.json hc.txt
    mkdir -p t
    for i in 1 2 3 4; do cp a.json "t/s$i.json"; done
    # opens of hc.txt by the figure script, given N shard tables that all scored it
    opens() {
        local py n=$1
        py=$(head -n 1 "$(command -v snakemake)" | sed 's/^#! *//')
        echo '{}' >bench.tsv
        "$py" - "$SRC/workflow/scripts/report_figures.py" "$n" <<'PY'
import builtins, runpy, sys
script, n = sys.argv[1], int(sys.argv[2])
count, real = 0, builtins.open
def counted(path, *args, **kwargs):
    global count
    count += str(path).endswith("hc.txt")
    return real(path, *args, **kwargs)
builtins.open = counted
sys.argv = [script, "--tables", *[f"t/s{i}.json" for i in range(1, n + 1)],
            "--sources", *["hc.txt"] * n, "--benchmarks", *["bench.tsv"] * n, "--shards", "s.tsv",
            "--shards-html", "s.html", "--throughput", "t.svg", "--likelihoods", "l.svg",
            "--gatk", "g.svg"]
runpy.run_path(script, run_name="__main__")
print(count)
PY
    }
    run -0 opens 1
    one=$output
    [ "$one" -ge 1 ] || fail "hc.txt never opened: $one"
    run -0 opens 4
    assert_output "$one"
    # and every shard's pairs are compared all the same
    grep -q "|haplik - GATK| per pair (1136 pairs, largest 1e-06)" g.svg
}
