#!/usr/bin/env bats
# The workflow's Snakemake report (workflow/rules/report.smk, workflow/scripts/report_shard.py and
# report_figures.py): the run makes a digest per shard and the figures from them, `snakemake
# --report report.html` builds the report, and the report holds them with the per-shard values
# of the shard tables, where the time went and what to trust. Needs snakemake >= 8, matplotlib
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
    test_dirs
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

# py: Snakemake's own Python (the report's scripts run in it, with matplotlib and numpy)
py() { "$(head -n 1 "$(command -v snakemake)" | sed 's/^#! *//')" "$@"; }

@test "report: the run makes the figures; the report embeds them with the per-shard values" {
    # the default config: the bundled example (a HaplotypeCaller results file, a batch file)
    config c.yaml
    run -0 sm --configfile c.yaml
    for f in summary.html time.svg shards.tsv shards.html throughput.svg likelihoods.svg gatk_difference.svg; do
        [ -s "results/report/$f" ] || fail "results/report/$f missing or empty"
    done
    run -0 snakemake -s "$SRC/workflow/Snakefile" -d "$W" --configfile c.yaml --report report.html
    assert_output --partial "Report created"
    [ -s report.html ]
    run -0 embedded report.html
    assert_output "gatk_difference.svg likelihoods.svg shards.html shards.tsv summary.html throughput.svg time.svg"
    # per shard: the table's pairs, cells and seconds, GCUPS from them, the device
    run -0 cut -f1-5 embedded/shards.tsv
    assert_output "$(printf 'shard\tregions\tpairs\tcells\tseconds\n'; per_shard_from_tables | cut -f1-5)"
    python3 - <<'PY'
import csv
rows = list(csv.DictReader(open("embedded/shards.tsv"), delimiter="\t"))
assert len(rows) == 4, rows
for r in rows:
    if float(r["seconds"]) > 0:
        g = int(r["cells"]) / float(r["seconds"]) / 1e9
        assert abs(float(r["GCUPS"]) - g) <= 1e-4 * max(1, g), r
    assert r["device"].startswith("cpu: "), r
    # haplik's own busy times, from the job's log
    assert all(r[k] != "" for k in ("start-up s", "reading s", "scoring s", "writing s")), r
html = open("embedded/shards.html").read()
for r in rows:
    assert f"<td class=\"l\">{r['shard']}</td><td>{r['regions']}</td><td>{r['pairs']}</td><td>{r['cells']}</td>" in html, r
PY
    # the figures: titles and labels are SVG text
    grep -q "haplik throughput per shard and device" embedded/throughput.svg
    grep -q "tiny/0002" embedded/throughput.svg
    grep -q "cpu: " embedded/throughput.svg
    total=$(awk -F'\t' 'NR > 1 { n += $3 } END { print n }' embedded/shards.tsv)
    grep -q "haplik log10 likelihoods ($total pairs)" embedded/likelihoods.svg
    # the HaplotypeCaller dump's 284 pairs carry GATK's values; the batch file's none
    grep -q "|haplik - GATK| (284 pairs, largest 1e-06; 0 above 0.0001; [0-9]* equal)" embedded/gatk_difference.svg
    # where the time went: every step of the run, with its share
    grep -q "Where did the time go?" embedded/time.svg
    local step
    for step in "planning (haplik split --plan)" "scoring: haplik reading" "scoring: haplik scoring" \
        "scoring: haplik writing" "merging (haplik merge)" "the report&#x27;s figures" "Snakemake itself"; do
        grep -qF "<td class=\"l\">$step" embedded/summary.html || fail "no step '$step' in the summary"
    done
    grep -q "The run took [0-9.]* s wall-clock" embedded/summary.html
    # can I trust it
    grep -q "616 pairs scored in precision mixed; 0 redone in double" embedded/summary.html
    grep -q "Against GATK's values: 284 pairs compared, 0 differ by more than 0.0001" embedded/summary.html
    grep -q "cpu: [^<]*: 4 shards, 616 pairs" embedded/summary.html
    # the captions are in the report
    grep -q "GCUPS = cells / seconds" report.html
}

@test "report: |haplik - GATK| shows a changed GATK value; without GATK values it says so" {
    # one GATK value moved by 0.5: the figure's largest difference is that
    sed '2s/-1.664814e+00$/-2.164814e+00/' "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" >hc.txt
    ! cmp -s hc.txt "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" || fail "sed changed nothing"
    config c.yaml "dumps: [$W/hc.txt]" "shards: 2"
    run -0 sm --configfile c.yaml
    grep -q "largest 0.5; 1 above 0.0001" results/report/gatk_difference.svg
    grep -q "class='bad'>Against GATK" results/report/summary.html
    # batch files carry no GATK values: the figure and the summary say nothing was compared
    rm -rf results
    config b.yaml "dumps: [$DATA/tiny.in, $DATA/10s.in]" "shards: 2"
    run -0 sm --configfile b.yaml
    grep -q "|haplik - GATK|: not compared" results/report/gatk_difference.svg
    grep -q "no dump carries GATK" results/report/gatk_difference.svg
    grep -q "No comparison with GATK: no dump carries GATK" results/report/summary.html
}

@test "report: a placeholder expected column (gen_batches.py, or all zeros) is not taken for GATK's values" {
    python3 "$SRC/scripts/gen_batches.py" --format gatk --pairs 3000 --seed 2 >gen.txt
    config c.yaml "dumps: [$W/gen.txt]" "shards: 2"
    run -0 sm --configfile c.yaml
    grep -q "|haplik - GATK|: not compared" results/report/gatk_difference.svg
    ! grep -q "above 0.0001" results/report/gatk_difference.svg || fail "placeholders compared"
    # the same column of zeros without the generator's mark: refused all the same
    rm -rf results
    grep -v '^# expected-result placeholder' gen.txt >zeros.txt
    config c.yaml "dumps: [$W/zeros.txt]" "shards: 2"
    run -0 sm --configfile c.yaml
    grep -q "|haplik - GATK|: not compared" results/report/gatk_difference.svg
    grep -q "all 0: a placeholder, not GATK" results/report/summary.html
}

@test "report: figures are summaries, not a mark per pair: their size does not grow with the pairs" {
    # a dump with an expected value for every pair (GATK's stand-in: -1)
    python3 "$SRC/scripts/gen_batches.py" --format gatk --pairs 40000 --seed 4 \
        | sed -e '/^# expected-result placeholder/d' -e 's/0\.000000e+00$/-1.000000e+00/' >big.txt
    config c.yaml "dumps: [$W/big.txt]" "shards: 4"
    run -0 sm --configfile c.yaml
    local f size
    for f in results/report/*.svg results/report/*.html; do
        size=$(stat -c %s "$f")
        [ "$size" -le 120000 ] || fail "$f: $size bytes for 40,000 pairs"
    done
    grep -q "|haplik - GATK| (4[0-9]* pairs, largest" results/report/gatk_difference.svg
    run -0 snakemake -s "$SRC/workflow/Snakefile" -d "$W" --configfile c.yaml --report report.html
    size=$(stat -c %s report.html)
    [ "$size" -le 10000000 ] || fail "report.html: $size bytes"
}

@test "report: snakemake --report without --configfile reports the last run, not the default config" {
    config c.yaml "dumps: [$DATA/10s.in]" "shards: 3"
    run -0 sm --configfile c.yaml
    run -0 snakemake -s "$SRC/workflow/Snakefile" -d "$W" --report report.html
    assert_output --partial "Report created"
    run -0 embedded report.html
    assert_output --partial "shards.tsv"
    run -0 cut -f1 embedded/shards.tsv
    assert_output $'shard\n10s/0001\n10s/0002\n10s/0003'
}

@test "report: empty shards are marked, a host without a GPU is named plainly" {
    # a haplik that says what a CUDA build says on a host without an NVIDIA driver
    {
        echo '#!/bin/sh'
        echo 'case "$*" in score*--print-config*) ;; score*)'
        echo '    echo "haplik: no usable GPU (CUDA driver version is insufficient for CUDA runtime version); scoring on the CPU with 1 thread" >&2 ;;'
        echo 'esac'
        echo "exec \"$HAPLIK\" \"\$@\""
    } >haplik-nogpu
    chmod +x haplik-nogpu
    # 2 regions in 3 shards: one empty
    config c.yaml "dumps: [$DATA/hc-NA12878-20_10000117.java.hmmresults.txt]" "shards: 3"
    run -0 sm --configfile c.yaml --config haplik="$W/haplik-nogpu"
    run -0 cut -f1,3,14 results/report/shards.tsv
    assert_output --regexp $'\t0\tempty shard'
    grep -q "(1 empty shard not drawn)" results/report/throughput.svg
    grep -q "3 shards, 1 of them empty" results/report/summary.html
    grep -q "no usable GPU on this host (no NVIDIA driver" results/report/summary.html
}

@test "report: the scripts refuse a table or a digest that is not one, in one line, exit 2" {
    echo '{"regions": []}' >bad.json
    run -2 py "$SRC/workflow/scripts/report_shard.py" --table bad.json --out d.json
    assert_output "report_shard: error: bad.json: not a haplik json table ('summary')"
    [ ! -e d.json ]
    run -2 py "$SRC/workflow/scripts/report_figures.py" --digests bad.json --names x --summary s.html \
        --shards s.tsv --shards-html s.html --time t.svg --throughput p.svg --likelihoods l.svg --gatk g.svg
    assert_output --partial "report_figures: error: bad.json: not a shard digest"
}

# digest TABLE SOURCE: report_shard.py's digest of a table (compared with SOURCE) -> TABLE.d
digest() { py "$SRC/workflow/scripts/report_shard.py" --table "$1" --source "$2" --gatk --out "$1.d"; }

# figures DIGEST...: the figures of the digests, each named as its table without extension
figures() {
    local names=() d
    for d in "$@"; do names+=("${d%%.*}"); done
    py "$SRC/workflow/scripts/report_figures.py" --digests "$@" --names "${names[@]}" --summary s.html \
        --shards s.tsv --shards-html sh.html --time t.svg --throughput p.svg --likelihoods l.svg --gatk g.svg
}

@test "report: the digest takes GATK's -Infinity, null values, a null summary field and every table format" {
    # GATK's value of the first record underflowed (-Infinity): haplik's is finite there
    sed '2s/-1.664814e+00$/-Infinity/' "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" >hc.txt
    mkdir -p t
    "$HAPLIK" score --backend cpu --quiet -o t/a.json hc.txt
    "$HAPLIK" score --backend cpu --quiet --output-format jsonl -o t/c.jsonl hc.txt
    "$HAPLIK" score --backend cpu --quiet -o t/d.tsv hc.txt
    gzip -c t/c.jsonl >t/e.jsonl.gz
    python3 - <<'PY'
import json
t = json.load(open("t/a.json"))
t["regions"][0]["log10_likelihoods"][0][1] = None   # a pair without a value
t["summary"]["seconds"] = None
json.dump(t, open("t/b.json", "w"))
PY
    local f
    for f in t/a.json t/b.json t/c.jsonl t/d.tsv t/e.jsonl.gz; do run -0 digest "$f" hc.txt; done
    run -0 figures t/a.json.d t/b.json.d t/c.jsonl.d t/d.tsv.d t/e.jsonl.gz.d
    run -0 cut -f1,3 s.tsv
    assert_output "$(printf 'shard\tpairs\nt/a\t284\nt/b\t284\nt/c\t284\nt/d\t284\nt/e\t284')"
    [ "$(cut -f5 s.tsv | sed -n 3p)" = 0.000 ]   # t/b: no seconds
    grep -q "haplik log10 likelihoods (1420 pairs; 1 without a finite value, not drawn)" l.svg
    # json tables: GATK's -Infinity against haplik's finite value (4 tables); tsv: an empty
    # expected field is not compared (1 pair less)
    grep -q "|haplik - GATK| (1419 pairs, largest [0-9.e-]*; 0 above 0.0001; [0-9]* equal; 4 finite on one side only; 1 without haplik's value)" g.svg
}

@test "report: the throughput figure stays readable with many shards" {
    cp "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" hc.txt
    "$HAPLIK" score --backend cpu --quiet -o a.json hc.txt
    run -0 digest a.json hc.txt
    mkdir -p t
    local i
    for i in $(seq -w 1 40); do cp a.json.d "t/shard$i.json.d"; done
    run -0 figures t/shard*.json.d
    # a figure of bounded width, its bars numbered (the names would overlap)
    grep -q 'width="864pt"' p.svg || fail "$(grep -o 'width="[^"]*"' p.svg | head -1)"
    grep -q "shard (its row in the per-shard table; 40 shards)" p.svg
    ! grep -q "t/shard01" p.svg || fail "40 shard names on the axis"
    # few shards: each bar named
    run -0 figures t/shard0[1-4].json.d
    grep -q "t/shard01" p.svg
}
