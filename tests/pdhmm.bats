#!/usr/bin/env bats
# PDHMM dumps (DRAGEN-GATK's --pdhmm-results-file, SPEC 1b and 2): reading, the model
# against GKL's expected values, the table, split and merge, bad input.
# shellcheck disable=SC2154 # stderr, stderr_lines: set by bats' run --separate-stderr

setup_file() {
    # a dump of several regions as GATK writes them: header and records each after a
    # newline, none at the end; region 2 has region 1's haplotype bases with other PD bytes
    python3 - > "$BATS_FILE_TMPDIR/regions.txt" <<'PY'
import random
rnd = random.Random(16)
seq = lambda n, a="ACGT": "".join(rnd.choice(a) for _ in range(n))
qual = lambda n: "".join(chr(33 + rnd.randint(10, 40)) for _ in range(n))
def pd(n):
    v = [0] * n
    for j in range(n):
        if rnd.random() < 0.1: v[j] = 1 | (8 << rnd.randint(0, 3))          # SNP + alternative
    s = rnd.randrange(n - 3); v[s] |= 2; v[s + 2] |= 4                       # a deletion span
    return [x - 256 if x > 127 else x for x in v]
out = ["# hap-bases\thap-pd-bases\tread-bases\tread-qual\tread-ins-qual\tread-del-qual\tgcp\texpected-result"]
bases = [seq(40), seq(44)]
regions = [(3, [(bases[0], pd(40)), (bases[1], pd(44))]),
           (2, [(bases[0], pd(40)), (bases[1], pd(44)), (seq(30), pd(30))])]
for R, haps in regions:
    for r in range(R):
        read = seq(25, "ACGTacgtN")
        q = [qual(25) for _ in range(4)]
        for h, p in haps:
            out.append("\t".join([h, "[" + ", ".join(map(str, p)) + "]", read] + q + ["0.000000e+00"]))
print("\n".join(out), end="")
PY
}

setup() { load test_helper/common-setup; _common_setup; cd "$BATS_TEST_TMPDIR" || return; }

GKL=pdhmm_syn_990_1_2.txt
score() { hk score --backend cpu --quiet "$@"; }

@test "GKL's 990 synthetic pairs: every one within 1e-4 of the expected value (check, exit 0)" {
    run -0 --separate-stderr hk check --backend cpu --quiet -o t.json "$DATA/$GKL"
    assert_line "pairs compared: 990"
    assert_line "over tolerance 0.0001: 0"
    # the printing precision of the file: 7 significant digits
    run -0 hk check --backend cpu --quiet --tolerance 1e-5 -o /dev/null "$DATA/$GKL"
    run -0 table get t.json "(t['model']['name'], t['model']['precision'], len(t['regions']), t['regions'][1]['haplotype_pd'])"
    assert_output "('pdhmm', 'double', 990, [[-86, 16]])"
}

@test "the format is found from the header, from a record without it, or forced" {
    score -o with.json "$DATA/$GKL"
    tail -n +2 "$DATA/$GKL" > noheader.txt
    score -o found.json noheader.txt
    score --format pdhmm -o forced.json noheader.txt
    run -0 table get found.json "t['regions'][0]['line']"
    assert_output 1
    run -0 python3 -c "
import json
a, b, c = (json.load(open(f))['regions'] for f in ('with.json', 'found.json', 'forced.json'))
assert [r['log10_likelihoods'] for r in a] == [r['log10_likelihoods'] for r in b] == [r['log10_likelihoods'] for r in c]
assert [r['haplotype_pd'] for r in a] == [r['haplotype_pd'] for r in b]"
}

@test "GATK's layout (no final newline), gzip, BGZF and standard input give the same table" {
    score -o plain.json "$BATS_FILE_TMPDIR/regions.txt"
    printf '\n' | cat "$BATS_FILE_TMPDIR/regions.txt" - > newline.txt   # GKL's layout
    gzip -c "$BATS_FILE_TMPDIR/regions.txt" > in.gz
    bgzip -c "$BATS_FILE_TMPDIR/regions.txt" > in.bgz
    score -o nl.json newline.txt
    score -o gz.json in.gz
    score -o bgz.json in.bgz
    score -o stdin.json - < "$BATS_FILE_TMPDIR/regions.txt"
    for t in nl gz bgz stdin; do run -0 table same plain.json $t.json; done
}

@test "regions are rebuilt from runs of records; a haplotype is its bases and its PD bytes" {
    score -o t.json "$BATS_FILE_TMPDIR/regions.txt"
    run -0 table get t.json "[(len(r['reads']), len(r['haplotypes']), r['line']) for r in t['regions']]"
    assert_output "[(3, 2, 2), (2, 3, 8)]"
    # the same bases with other PD bytes: another haplotype, and another likelihood
    run -0 table get t.json "(t['regions'][0]['haplotypes'][0] == t['regions'][1]['haplotypes'][0], t['regions'][0]['haplotype_pd'][0] != t['regions'][1]['haplotype_pd'][0])"
    assert_output "(True, True)"
    run -0 table valid t.json
    # without sequences the PD bytes stay: they are part of what was scored
    score --no-sequences -o n.json "$BATS_FILE_TMPDIR/regions.txt"
    run -0 table get n.json "('reads' in t['regions'][0], len(t['regions'][1]['haplotype_pd'][2]))"
    assert_output "(False, 30)"
}

@test "the model: case-sensitive bases, an SNP alternative matches, qualities as written" {
    h=$'# hap-bases\thap-pd-bases\tread-bases\tread-qual\tread-ins-qual\tread-del-qual\tgcp\texpected-result'
    rec() { printf '%s\n%s\t%s\t%s\t%s\t%s\t%s\t%s\t0\n' "$h" "$1" "$2" "$3" "$4" "$4" "$4" "$4"; }
    rec ACGT "[0, 0, 0, 0]" ACGT IIII > same.txt
    rec acgt "[0, 0, 0, 0]" ACGT IIII > case.txt
    rec AAGT "[0, 17, 0, 0]" ACGT IIII > snp.txt     # 17 = SNP | C: C is an alternative at 2
    rec AAGT "[0, 0, 0, 0]" ACGT IIII > mism.txt
    rec ACGT "[0, 0, 0, 0]" ACGT '$$$$' > q3.txt    # Q3 kept, not raised to 6
    for f in same case snp mism q3; do score -o $f.json $f.txt; done
    v() { table get "$1.json" "t['regions'][0]['log10_likelihoods'][0][0]"; }
    # the alternative matches where the haplotype has A: almost the exact match's value
    run python3 -c "import sys; a, s, c, m, q = map(float, sys.argv[1:]); assert abs(a - s) < 1e-3 and c < a - 5 and m < a - 1 and q < a, (a, s, c, m, q)" \
        "$(v same)" "$(v snp)" "$(v case)" "$(v mism)" "$(v q3)"
    assert_success
}

@test "check counts -Infinity expectations apart; the value is finite" {
    python3 -c "
print('# hap-bases\thap-pd-bases\tread-bases\tread-qual\tread-ins-qual\tread-del-qual\tgcp\texpected-result')
print('\t'.join(['A' * 400, '[' + ', '.join(['0'] * 400) + ']', 'C' * 400] + ['I' * 400] * 4 + ['-Infinity']), end='')
" > deep.txt
    run -0 --separate-stderr hk check --backend cpu --quiet -o t.json deep.txt
    assert_line --partial "not compared): 1"
    run -0 table get t.json "-3000 < t['regions'][0]['log10_likelihoods'][0][0] < -631"
    assert_output True
}

@test "split into 1, 3 and 5 shards, score, merge = whole; TSV tables too" {
    for n in 1 3 5; do
        shards=() tables=()
        for i in $(seq 1 $n); do shards+=("s$i.txt"); tables+=("s$i.json"); done
        run -0 hk split --quiet "$DATA/$GKL" "${shards[@]}"
        head -1 s$n.txt | grep -q $'^# hap-bases\thap-pd-bases' || fail "shard $n has no PDHMM header"
        for i in $(seq 1 "$n"); do score -o "s$i.json" "s$i.txt"; done
        run -0 hk merge --quiet -o merged.json "${tables[@]}"
        score -o whole.json "$DATA/$GKL"
        run -0 table same whole.json merged.json
    done
    score --output-format tsv -o t.tsv "$BATS_FILE_TMPDIR/regions.txt"
    run -0 python3 -c "
import csv
rows = [r for r in csv.reader(open('t.tsv'), delimiter='\t') if not r[0].startswith('#')]
assert len(rows) == 1 + 3 * 2 + 2 * 3, len(rows)"
}

@test "a PDHMM table does not merge with another model's (2)" {
    score -o pd.json "$DATA/$GKL"
    score -o gatk.json "$DATA/pairhmm-testdata.txt"
    run -2 --separate-stderr hk merge -o m.json pd.json gatk.json
    [ ! -e m.json ] || fail "merge left m.json"
}

@test "a PDHMM dump and another dump are not scored in one run (2, at the line)" {
    run -2 --separate-stderr hk score --backend cpu -o t.json "$DATA/$GKL" "$DATA/pairhmm-testdata.txt"
    assert_stderr --partial "pairhmm-testdata.txt:2: a gatk dump cannot be scored in one run with PDHMM dumps"
    run -2 --separate-stderr hk score --backend cpu -o t.json "$DATA/pairhmm-testdata.txt" "$DATA/$GKL"
    assert_stderr --partial "$GKL:2: a PDHMM dump cannot be scored in one run with other dumps"
    [ ! -e t.json ] || fail "a table was left behind"
    # a dump without a header after a PDHMM dump: its first line, split on the
    # PDHMM dump's tabs, is still told apart by its spaces
    run -2 --separate-stderr hk score --backend cpu -o t.json "$DATA/$GKL" "$DATA/10s.in"
    assert_stderr --partial "10s.in:1: a batch dump cannot be scored in one run with PDHMM dumps"
    [ ! -e t.json ] || fail "a table was left behind"
}

# bad LINE MESSAGE: line 3 of a copy of GKL's file replaced by LINE is refused at line 3
bad() {
    { sed -n 1,2p "$DATA/$GKL"; printf '%s\n' "$1"; sed -n '4,$p' "$DATA/$GKL"; } > bad.txt
    cp bad.txt before.txt
    run -2 --separate-stderr hk score --backend cpu -o t.json bad.txt
    assert_stderr --partial "bad.txt:3: $2"
    [ "$(echo "$stderr" | wc -l)" -eq 1 ] || fail "more than one line: $stderr"
    [ ! -e t.json ] || fail "a table was left behind"
    cmp -s bad.txt before.txt || fail "the input was changed"
}

@test "bad PD bytes: length, range, brackets, separators, numbers (2, file:line, nothing written)" {
    T=$'\t'
    bad "TT${T}[-86]${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01" "hap-pd-bases has 1 values but the haplotype has 2 bases"
    bad "TT${T}[-86, 16, 0]${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01" "hap-pd-bases has more values than the haplotype's 2 bases"
    bad "TT${T}[-86, 128]${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01" "hap-pd-bases value 2 (128) is outside -128..127"
    bad "TT${T}[-129, 1]${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01" "hap-pd-bases value 1 (-129) is outside -128..127"
    bad "TT${T}-86, 16]${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01" "hap-pd-bases does not start with '['"
    bad "TT${T}[-86, 16${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01" "hap-pd-bases has more values than"
    bad "TT${T}[-86,16]${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01" "hap-pd-bases value 1 is not followed by ', ' or ']'"
    bad "TT${T}[-86, x]${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01" "hap-pd-bases value 2 is not a number"
    bad "TT${T}[-86, 16] ${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01" "hap-pd-bases has text after ']'"
}

@test "bad records: fields, quality lengths, bases, the expected value (2, file:line)" {
    T=$'\t'
    bad "TT${T}[-86, 16]${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}-1.1e+01" "expected 8 tab-separated fields"
    bad "TT${T}[-86, 16]${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01${T}x" "expected 8 tab-separated fields"
    bad "TT${T}[-86, 16]${T}tgGG${T}82F${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01" "field 4 has 3 characters but the read has 4 bases"
    bad "TT${T}[-86, 16]${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}ngo${T}-1.1e+01" "field 7 has 3 characters but the read has 4 bases"
    bad "TT${T}[-86, 16]${T}tgXG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01" "read: invalid base 'X' at position 3"
    bad "TT${T}[-86, 16]${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}many" "expected-result 'many' is not a number"
    bad "${T}[]${T}tgGG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01" "empty haplotype"
}

@test "a read's 'n' against an undetermined SNP is refused, as GATK throws there (2)" {
    T=$'\t'
    # -85 = 171 = N | G | A | DEL_START | SNP: an undetermined SNP at position 1
    bad "TT${T}[-85, 16]${T}tnGG${T}82F4${T}>XMX${T}2mCc${T}ngo3${T}-1.1e+01" "read base 'n' at position 2 meets haplotype 1's undetermined SNP at position 1"
    # without the SNP flag (-86 = 170) the same read is scored
    { sed -n 1,2p "$DATA/$GKL"; printf 'TT\t[-86, 16]\ttnGG\t82F4\t>XMX\t2mCc\tngo3\t0\n'; } > ok.txt
    run -0 hk score --backend cpu --quiet -o t.json ok.txt
}
