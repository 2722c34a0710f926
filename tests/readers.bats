#!/usr/bin/env bats
# The README's way to read a tsv table, run as written, in each data-frame library that is
# installed (scripts/install-reader-deps.sh installs them all): the row count is the
# summary's, and a likelihood equals the json table's. A missing library is a loud skip.

setup_file() {
    cd "$BATS_FILE_TMPDIR" || return
    "$HAPLIK" score --backend cpu --quiet -o t.tsv "$BATS_TEST_DIRNAME/data/hc-NA12878-20_10000117.java.hmmresults.txt" "$BATS_TEST_DIRNAME/data/tiny.in"
    "$HAPLIK" score --backend cpu --quiet -o t.json "$BATS_TEST_DIRNAME/data/hc-NA12878-20_10000117.java.hmmresults.txt" "$BATS_TEST_DIRNAME/data/tiny.in"
    # a region name with '#', as pangenome names have, must not cut the rows
    printf '# region HG002#1#chr20\n1 1\nACGT IIII IIII IIII ++++\nACGA\n' > hash.txt
    "$HAPLIK" score --backend cpu --quiet -o h.tsv hash.txt
    python3 -c "
import json
t = json.load(open('t.json'))
print(t['summary']['pairs'], repr(t['regions'][3]['log10_likelihoods'][1][0]))" > want.txt
}

setup() {
    load test_helper/common-setup; _common_setup
    cd "$BATS_FILE_TMPDIR" || return
    PY=/usr/bin/python3   # Debian's python3-pandas
    [ -x "${HK_READERS_VENV:-/opt/haplik-readers}/bin/python" ] && PY="${HK_READERS_VENV:-/opt/haplik-readers}/bin/python"
    read -r PAIRS VALUE < want.txt
}

# python_reader MODULE EXPR: the frame EXPR(f) gives, as "rows value", where value is the
# likelihood of region 3, read 1, haplotype 0.
python_reader() {
    "$PY" -c "import $1" 2>/dev/null || skip "$1 not installed: run scripts/install-reader-deps.sh (or setup.sh --tests)"
    run -0 "$PY" - "$1" "$2" <<'PY'
import importlib, sys
mod = importlib.import_module(sys.argv[1])
for f in ("t.tsv", "h.tsv"):
    frame = eval(sys.argv[2], {sys.argv[1]: mod, "f": f})
    if sys.argv[1] == "duckdb":
        frame = frame.df()
    if sys.argv[1] == "polars":
        rows = frame.rows(named=True)
    else:
        rows = frame.to_dict("records")
    if f == "h.tsv":
        assert len(rows) == 1 and rows[0]["region_name"] == "HG002#1#chr20", rows
        continue
    hit = [r["log10_likelihood"] for r in rows
           if r["region_index"] == 3 and r["read_index"] == 1 and r["haplotype_index"] == 0]
    print(len(rows), repr(float(hit[0])))
PY
    assert_output "$PAIRS $VALUE"
}

@test "pandas.read_csv(f, sep=\"\\t\") loads the tsv table" {
    python_reader pandas 'pandas.read_csv(f, sep="\t")'
}

@test "polars.read_csv(f, separator=\"\\t\") loads the tsv table" {
    python_reader polars 'polars.read_csv(f, separator="\t")'
}

@test "duckdb.read_csv(f) loads the tsv table" {
    python_reader duckdb 'duckdb.read_csv(f)'
}

@test "data.table::fread(f) loads the tsv table" {
    command -v Rscript >/dev/null && Rscript -e 'library(data.table)' >/dev/null 2>&1 ||
        skip "R's data.table not installed: run scripts/install-reader-deps.sh (or setup.sh --tests)"
    run -0 Rscript -e '
        d <- data.table::fread("t.tsv")
        h <- data.table::fread("h.tsv")
        stopifnot(nrow(h) == 1, h$region_name == "HG002#1#chr20")
        v <- d[region_index == 3 & read_index == 1 & haplotype_index == 0]$log10_likelihood
        cat(nrow(d), format(v, digits = 17), "\n")'
    run -0 python3 -c "import sys; n, v = sys.argv[1].split(); print(n, repr(float(v)))" "$output"
    assert_output "$PAIRS $VALUE"
}
