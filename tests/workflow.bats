#!/usr/bin/env bats
# The Snakemake workflow (workflow/): lint, dry-runs of every mode, real runs on the CPU
# backend, genome mode with a stand-in `gatk`. Needs snakemake >= 8
# (scripts/install-workflow-deps.sh); CI installs it, so there these tests really run.
# Missing snakemake skips them, loudly, or fails them when HK_REQUIRE_WORKFLOW_TESTS=1.

setup_file() {
    SRC=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
    export SRC
}

setup() {
    load test_helper/common-setup
    load test_helper/workflow
    _common_setup
    WF="$DATA/workflow"
    if ! command -v snakemake >/dev/null; then
        not_here "SNAKEMAKE NOT FOUND: the workflow is NOT tested (run scripts/install-workflow-deps.sh)"
    fi
    local v
    v=$(snakemake --version)
    [ "${v%%.*}" -ge 8 ] || not_here "SNAKEMAKE $v IS TOO OLD (need >= 8): the workflow is NOT tested"
    W="$BATS_TEST_TMPDIR/w"
    test_dirs
}

# same_regions A B [--ignore-line]: the tables' regions are equal (every field, or every
# field but `line`, the line in the file the region was read from).
same_regions() {
    python3 - "$@" <<'EOF'
import json, sys
a, b = (json.load(open(p))["regions"] for p in sys.argv[1:3])
if "--ignore-line" in sys.argv:
    for r in a + b:
        r.pop("line", None)
if a != b:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            sys.exit(f"region {i} differs:\n{json.dumps(x)[:300]}\n{json.dumps(y)[:300]}")
    sys.exit(f"region counts differ: {len(a)} vs {len(b)}")
EOF
}

whole() { "$HAPLIK" score --backend cpu --quiet -o "$@"; }

@test "workflow: snakemake --lint is clean (default config, .test config, genome mode)" {
    # --lint exits 1 on any finding
    run -0 snakemake -s "$SRC/workflow/Snakefile" -d "$W" --lint
    assert_output --partial "Congratulations, your workflow is in a good condition!"
    refute_output --partial "Lints for"
    run -0 snakemake -s "$SRC/workflow/Snakefile" -d "$W" --configfile "$SRC/.test/config/config.yaml" --lint
    assert_output --partial "Congratulations, your workflow is in a good condition!"
    refute_output --partial "Lints for"
    printf 'dumps: []\ngenome: {reference: ref.fa, bams: [a.bam]}\n' >genome.yaml
    run -0 snakemake -s "$SRC/workflow/Snakefile" -d "$W" --configfile genome.yaml --lint
    assert_output --partial "Congratulations, your workflow is in a good condition!"
    refute_output --partial "Lints for"
}

@test "workflow: the test config (.test/config/config.yaml) as it is: the bundled example in 2 shards each, merged = scored whole" {
    # as the catalog runs it (snakemake --directory .test), in a copy of .test here
    cp -r "$SRC/.test" "$BATS_TEST_TMPDIR/.test"
    run -0 timeout -s KILL 300 snakemake -s "$SRC/workflow/Snakefile" --cores 2 \
        --directory "$BATS_TEST_TMPDIR/.test" --configfile "$BATS_TEST_TMPDIR/.test/config/config.yaml" \
        --config haplik="$HAPLIK"
    cd "$BATS_TEST_TMPDIR/.test" || return
    [ "$(find results/tables -name '*.json' | wc -l)" -eq 4 ] || fail "expected 4 shard tables: $(find results/tables)"
    whole whole.json "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" "$DATA/tiny.in"
    same_regions whole.json results/likelihoods.json
    run -0 table get results/likelihoods.json "t['summary']['backend']"
    assert_output --partial cpu
}

@test "workflow: dry-runs of every mode pass" {
    # the default config: the bundled example, 2 dumps x 2 shards
    run -0 sm -n
    assert_output --regexp "plan_dump +2"
    refute_output --partial "split_dump"
    assert_output --regexp "score_shard +4"
    assert_output --regexp "merge_tables +1"
    # shards: 1 scores each dump whole (no split)
    run -0 sm -n --config shards=1
    refute_output --partial "split_dump"
    refute_output --partial "plan_dump"
    assert_output --regexp "score_shard +2"
    # several dumps, 3 shards, with the local profile
    config c3.yaml "dumps: [$DATA/tiny.in, $DATA/10s.in, $DATA/1m.in]" "shards: 3"
    run -0 sm -n --profile "$SRC/workflow/profiles/local" --configfile c3.yaml
    assert_output --regexp "score_shard +9"
    # genome mode
    touch ref.fa a.bam b.bam
    cp "$WF/genome.fai" ref.fa.fai
    config g.yaml "dumps: []" "shards: 4" "genome: {reference: ref.fa, bams: [a.bam, b.bam]}"
    run -0 sm -n --configfile g.yaml
    assert_output --regexp "genome_shards +1"
    assert_output --regexp "haplotype_caller +4"
    assert_output --regexp "score_shard +4"
    refute_output --partial "split_dump"
    # the SLURM profile parses (its executor plugin is installed)
    run -0 sm -n --profile "$SRC/workflow/profiles/slurm" --configfile g.yaml
    assert_output --regexp "haplotype_caller +4"
}

@test "workflow: a bad config is refused before anything runs" {
    run ! sm -n --config shards=0
    assert_output --partial "shards"
    config bad.yaml "dumps: []"
    run ! sm -n --configfile bad.yaml
    assert_output --partial "nothing to do"
    config bad2.yaml "scoring: {backend: opencl}"
    run ! sm -n --configfile bad2.yaml
    assert_output --partial "opencl"
    [ ! -e results ]
}

@test "workflow: a dump in 3 shards merges into exactly the table of scoring it whole" {
    config c.yaml "dumps: [$DATA/1m.in]" "shards: 3"
    run -0 sm --configfile c.yaml
    # the dump is read in place: a plan, no shard files
    [ ! -e results/split ] || fail "the dump was copied into results/split"
    run -0 head -n 1 results/plan/1m.tsv
    assert_output "# haplik split plan 1"
    for k in 1 2 3; do
        [ -s "results/tables/1m/000$k.json" ] || fail "table $k missing"
        [ -e "logs/score/1m/000$k.log" ] || fail "no log for shard $k"
    done
    whole whole.json "$DATA/1m.in"
    run -0 same_regions whole.json results/likelihoods.json
    run -0 table valid results/likelihoods.json
    # the CPU backend claims no GPU: no lock folder (its flags are the first line of its log)
    run -0 head -n 1 logs/score/1m/0002.log
    assert_output "haplik flags: --backend cpu --devices all --gpu-lock-dir null"
    [ ! -e .locks ]
    # nothing left to do
    run -0 sm --configfile c.yaml -n
    assert_output --partial "Nothing to be done"
}

@test "workflow: inside a SLURM allocation the GPU locks are the allocation's, node-local" {
    # backend auto: a GPU is claimed where one is usable (here, none: the CPU, all the same)
    printf 'haplik: %s\ndumps: [%s]\nshards: 2\nscoring: {backend: auto, threads: 1, gpu_lock_dir: .locks}\nhaplik_config: {model: {precision: double}}\n' \
        "$HAPLIK" "$DATA/tiny.in" >c.yaml
    mkdir tmp
    SLURM_JOB_ID=4242 TMPDIR="$W/tmp" run -0 sm --configfile c.yaml
    run -0 head -n 1 logs/score/tiny/0001.log
    assert_output --partial "--gpu-lock-dir $W/tmp/haplik-gpu-locks-slurm-4242"
    assert_output --partial "--precision double"
    [ -d tmp/haplik-gpu-locks-slurm-4242 ]
    [ ! -e .locks ]
    # nothing else is left in TMPDIR
    run -0 ls tmp
    assert_output "haplik-gpu-locks-slurm-4242"
    # no lock directory at all when scoring.gpu_lock_dir is null
    rm -rf results logs
    printf 'haplik: %s\ndumps: [%s]\nscoring: {backend: auto, gpu_lock_dir: null}\n' "$HAPLIK" "$DATA/tiny.in" >c2.yaml
    run -0 sm --configfile c2.yaml
    run -0 head -n 1 logs/score/tiny/0001.log
    refute_output --partial "gpu_lock_dir"
}

@test "workflow: several dumps, regions in the order of dumps, then of shards" {
    printf '' >empty.txt
    config c.yaml "dumps: [$DATA/hc-NA12878-20_10000117.java.hmmresults.txt, $DATA/tiny.in, $W/empty.txt, $DATA/10s.in]" "shards: 2"
    run -0 sm --configfile c.yaml
    whole whole.json "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" "$DATA/tiny.in" empty.txt "$DATA/10s.in"
    run -0 same_regions whole.json results/likelihoods.json
    run -0 table get results/likelihoods.json "[p['table'] for p in t['summary']['parts']]"
    assert_output "['results/tables/hc-NA12878-20_10000117.java/0001.json', 'results/tables/hc-NA12878-20_10000117.java/0002.json', 'results/tables/tiny/0001.json', 'results/tables/tiny/0002.json', 'results/tables/empty/0001.json', 'results/tables/empty/0002.json', 'results/tables/10s/0001.json', 'results/tables/10s/0002.json']"
    # shards: 1 scores each dump whole, same table
    rm -rf results
    run -0 sm --configfile c.yaml --config shards=1
    [ ! -e results/split ]
    run -0 same_regions whole.json results/likelihoods.json
}

@test "workflow: an empty shard (2 regions in 3 shards) and an empty dump" {
    printf '' >empty.txt
    config c.yaml "dumps: [$DATA/hc-NA12878-20_10000117.java.hmmresults.txt, $W/empty.txt]" "shards: 3"
    run -0 sm --configfile c.yaml
    run -0 table get results/likelihoods.json "[p['regions'] for p in t['summary']['parts']]"
    assert_output --regexp "^\[[0-9], [0-9], [0-9], 0, 0, 0\]$"
    assert_output --partial ", 0, "
    whole whole.json "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    run -0 same_regions whole.json results/likelihoods.json
}

@test "workflow: outputs are complete or absent; a failed shard reruns alone" {
    # a haplik that fails on shard 0002 while fail-0002 exists, and logs every call
    cat >haplik-flaky <<EOF
#!/bin/sh
echo "\$*" >>"$W/calls"
case "\$*" in score*0002.json*) [ -e "$W/fail-0002" ] && { echo "haplik-flaky: failing" >&2; exit 3; } ;; esac
exec "$HAPLIK" "\$@"
EOF
    chmod +x haplik-flaky
    touch fail-0002
    config c.yaml "dumps: [$DATA/1m.in]" "shards: 3"
    run ! sm --configfile c.yaml --config haplik="$W/haplik-flaky" --keep-going
    [ -s results/tables/1m/0001.json ]
    [ -s results/tables/1m/0003.json ]
    [ ! -e results/tables/1m/0002.json ]
    [ ! -e results/likelihoods.json ]
    run -0 ls results/tables/1m
    assert_output $'0001.json\n0003.json'
    grep -q "haplik-flaky: failing" logs/score/1m/0002.log
    # the rerun scores shard 2 only, then merges
    rm fail-0002 calls
    run -0 sm --configfile c.yaml --config haplik="$W/haplik-flaky"
    run -0 sh -c "grep -v -- --print-config calls | cut -d' ' -f1"
    assert_output $'score\nmerge'
    grep -q -- "--part 2 -o results/tables/1m/0002.json" calls
    whole whole.json "$DATA/1m.in"
    run -0 same_regions whole.json results/likelihoods.json
}

@test "workflow: a compressed dump is cut into shard files, a plain one read in place" {
    gzip -c "$DATA/1m.in" >1m.in.gz
    config c.yaml "dumps: [$W/1m.in.gz, $DATA/10s.in]" "shards: 2"
    run -0 sm -n --configfile c.yaml
    assert_output --regexp "split_dump +1"
    assert_output --regexp "plan_dump +1"
    run -0 sm --configfile c.yaml
    [ -s results/split/1m/0001.txt ] || fail "the compressed dump was not cut"
    [ ! -e results/split/10s ] || fail "the plain dump was copied"
    [ -s results/plan/10s.tsv ] || fail "the plain dump was not planned"
    whole whole.json "$DATA/1m.in" "$DATA/10s.in"
    run -0 same_regions whole.json results/likelihoods.json --ignore-line
}

@test "workflow: output_format writes the merged table as jsonl, tsv or tsv.gz" {
    "$HAPLIK" score --backend cpu --quiet --output-format tsv -o whole.tsv "$DATA/10s.in"
    # the rows (not the '#' lines: the summary's seconds and parts differ)
    rows() { gzip -dcf "$1" | grep -v '^#'; }
    for fmt in jsonl tsv tsv.gz; do
        rm -rf results
        config c.yaml "dumps: [$DATA/10s.in]" "shards: 3" "output_format: $fmt"
        run -0 sm --configfile c.yaml
        [ -s "results/likelihoods.$fmt" ] || fail "no results/likelihoods.$fmt"
        case $fmt in
        jsonl) run -0 table valid results/likelihoods.jsonl ;;
        tsv*)  run -0 diff <(rows whole.tsv) <(rows "results/likelihoods.$fmt") ;;
        esac
        # the report, from tables of every format
        [ -s results/report/shards.tsv ] || fail "no report from $fmt tables"
    done
    gzip -t results/likelihoods.tsv.gz
    config bad.yaml "dumps: [$DATA/10s.in]" "output_format: csv"
    run ! sm -n --configfile bad.yaml
    assert_output --partial "csv"
}

@test "workflow: a misspelt haplik_config key, a bad value and mixed dump families are refused at a dry run" {
    config c.yaml "dumps: [$DATA/10s.in]" "shards: 2" "haplik_config: {model: {precison: double}}"
    run ! sm -n --configfile c.yaml
    assert_output --partial "haplik_config.model.precison: haplik has no such key"
    config c.yaml "dumps: [$DATA/10s.in]" "haplik_config: {modle: {precision: double}}"
    run ! sm -n --configfile c.yaml
    assert_output --partial "haplik_config.modle.precision: haplik has no such key"
    config c.yaml "dumps: [$DATA/10s.in]" "haplik_config: {model: {precision: quad}}"
    run ! sm -n --configfile c.yaml
    assert_output --partial "haplik_config: haplik: error: --precision: expected"
    config c.yaml "dumps: [$DATA/10s.in]" "haplik_config: {output: {format: tsv}}"
    run ! sm -n --configfile c.yaml
    assert_output --partial "haplik_config.output.format: set by the workflow; use \`output_format\`"
    config c.yaml "dumps: [$DATA/10s.in, $DATA/pdhmm_syn_990_1_2.txt]"
    run ! sm -n --configfile c.yaml
    assert_output --partial "dumps of two families in one run"
    assert_output --partial "pdhmm_syn_990_1_2.txt is a PDHMM dump"
    [ ! -e results ]
    # the keys haplik has pass
    config c.yaml "dumps: [$DATA/10s.in]" "haplik_config: {model: {precision: double}, output: {sequences: false}}"
    run -0 sm -n --configfile c.yaml
}

@test "workflow: genome mode with a stand-in gatk: shards, HaplotypeCaller per shard, scores, merge" {
    mkdir bin
    ln -s "$WF/gatk" bin/gatk
    export HK_GATK_RECORDED="$WF/gatk-recorded" HK_GATK_CALLS="$W/gatk-calls"
    touch ref.fa a.bam b.bam
    cp "$WF/genome.fai" ref.fa.fai
    config g.yaml "dumps: []" "shards: 3" \
        "genome: {reference: ref.fa, bams: [a.bam, b.bam], extra: '--interval-padding 0'}"
    PATH="$W/bin:$PATH" run -0 sm --configfile g.yaml
    run -0 python3 "$WF/check_shards.py" ref.fa.fai 3 results/genome/shards/
    run -0 sort gatk-calls
    assert_output $'HaplotypeCaller 0001 a.bam b.bam\nHaplotypeCaller 0002 a.bam b.bam\nHaplotypeCaller 0003 a.bam b.bam'
    for k in 1 2 3; do
        [ -e "results/genome/dumps/000$k.txt" ] || fail "no dump for shard $k"
        gzip -t "results/genome/vcf/000$k.vcf.gz"
        grep -q "gatk (stand-in): 000$k: wrote" "logs/genome/haplotypecaller/000$k.log"
    done
    # the recorded dumps are the real dump's two regions in shards 1 and 3 (2 has none):
    # the merged table is the whole dump's, lines apart (each shard is its own file)
    whole whole.json "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    run -0 same_regions whole.json results/likelihoods.json --ignore-line
    run -0 table get results/likelihoods.json "[p['regions'] for p in t['summary']['parts']]"
    assert_output "[1, 0, 1]"
}

# rec_gatk: bin/gatk records USE_LIBRARY_PATH and its arguments, one [argument] each, in
# $W/gatk-argv, then runs the stand-in
rec_gatk() {
    mkdir -p bin
    cat >bin/gatk <<EOF
#!/usr/bin/env bash
{ printf 'USE_LIBRARY_PATH=%s' "\${USE_LIBRARY_PATH-unset}"; printf ' [%s]' "\$@"; echo; } >>"$W/gatk-argv"
exec "$WF/gatk" "\$@"
EOF
    chmod +x bin/gatk
}

# hc_only CONFIG SHARD...: snakemake up to HaplotypeCaller's VCFs of those shards, with bin/gatk
hc_only() {
    local cfg=$1 s
    shift
    local targets=()
    for s in "$@"; do targets+=("results/genome/vcf/$s.vcf.gz"); done
    PATH="$W/bin:$PATH" run -0 env -u USE_LIBRARY_PATH timeout -s KILL 300 \
        snakemake -s "$SRC/workflow/Snakefile" -d "$W" --cores 2 "${targets[@]}" --configfile "$cfg"
}

@test "workflow: genome mode runs HaplotypeCaller with haplik's Pair-HMM (genome.pair_hmm: haplik)" {
    rec_gatk
    touch ref.fa a.bam
    cp "$WF/genome.fai" ref.fa.fai
    mkdir libs
    touch libs/libgkl_utils.so libs/libgkl_pairhmm_omp.so
    config g.yaml "dumps: []" "shards: 2" \
        "genome: {reference: ref.fa, bams: [a.bam], java_options: '-Xmx2g', pair_hmm: haplik, pair_hmm_libs: libs}"
    hc_only g.yaml 0001 0002
    run -0 cat gatk-argv
    [ "${#lines[@]}" -eq 2 ]
    local k
    for k in 0 1; do
        assert_line --index $k --regexp "^USE_LIBRARY_PATH=1 \[--java-options\] \[-Xmx2g -Djava\.library\.path=$W/libs\] \[HaplotypeCaller\] "
        assert_line --index $k --partial " [--pair-hmm-implementation] [AVX_LOGLESS_CACHING_OMP]"
        assert_line --index $k --partial " [--pair-hmm-results-file] [results/genome/dumps/000"
    done
    # the default, gkl: HaplotypeCaller's own choice, none of the above
    rm -rf results gatk-argv
    config d.yaml "dumps: []" "shards: 1" "genome: {reference: ref.fa, bams: [a.bam]}"
    hc_only d.yaml 0001
    run -0 cat gatk-argv
    assert_output --regexp "^USE_LIBRARY_PATH=unset \[--java-options\] \[-Xmx4g\] \[HaplotypeCaller\] "
    refute_output --partial "pair-hmm-implementation"
    refute_output --partial "java.library.path"
}

@test "workflow: genome.pair_hmm: haplik without its libraries is refused before anything runs" {
    touch ref.fa a.bam
    cp "$WF/genome.fai" ref.fa.fai
    config g.yaml "dumps: []" "shards: 1" "genome: {reference: ref.fa, bams: [a.bam], pair_hmm: haplik}"
    run ! sm -n --configfile g.yaml
    assert_output --partial "pair_hmm_libs"
    config g2.yaml "dumps: []" "shards: 1" \
        "genome: {reference: ref.fa, bams: [a.bam], pair_hmm: haplik, pair_hmm_libs: nolibs}"
    run ! sm -n --configfile g2.yaml
    assert_output --partial "nolibs/libgkl_pairhmm_omp.so"
    config g3.yaml "dumps: []" "shards: 1" "genome: {reference: ref.fa, bams: [a.bam], pair_hmm: gatk}"
    run ! sm -n --configfile g3.yaml
    assert_output --partial "'gatk' is not one of"
    [ ! -e results ]
}

@test "workflow: genome mode reports a missing .fai before running anything" {
    touch ref.fa a.bam
    config g.yaml "dumps: []" "shards: 2" "genome: {reference: ref.fa, bams: [a.bam]}"
    run ! sm --configfile g.yaml
    assert_output --partial "ref.fa.fai"
    [ ! -e results/genome ]
}

@test "workflow: output_format tsv and tsv.gz of a HaplotypeCaller dump beside a batch file: the table of scoring them whole" {
    # the bundled example's dumps, as the default config names them
    local hc=tests/data/hc-NA12878-20_10000117.java.hmmresults.txt tiny=tests/data/tiny.in fmt
    "$HAPLIK" score --backend cpu --quiet -o whole.tsv "$hc" "$tiny"
    "$HAPLIK" score --backend cpu --quiet -o whole2.tsv "$tiny" "$hc"
    for fmt in tsv tsv.gz; do
        rm -rf results
        config c.yaml "dumps: [$hc, $tiny]" "shards: 2" "output_format: $fmt"
        run -0 sm -n --configfile c.yaml
        assert_output --regexp "merge_tables +1"
        run -0 sm --configfile c.yaml
        run -0 diff whole.tsv <(gzip -dcf "results/likelihoods.$fmt")
        # the other order: no GATK values first, so no such columns, as `haplik score` writes
        rm -rf results
        config c.yaml "dumps: [$tiny, $hc]" "shards: 3" "output_format: $fmt"
        run -0 sm --configfile c.yaml
        run -0 diff whole2.tsv <(gzip -dcf "results/likelihoods.$fmt")
    done
}

@test "workflow: tsv rows of a compressed dump name the dump and its lines, not the shard files" {
    gzip -c "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" >hc.txt.gz
    config c.yaml "dumps: [hc.txt.gz, $DATA/1m.in]" "shards: 3" "output_format: tsv"
    run -0 sm --configfile c.yaml
    [ -s results/split/hc/0001.txt ] || fail "the compressed dump was not cut"
    "$HAPLIK" score --backend cpu --quiet -o whole.tsv hc.txt.gz "$DATA/1m.in"
    run -0 diff whole.tsv results/likelihoods.tsv
}

@test "workflow: integers are integers, a list is no number, a misspelt key gets one line and the nearest key" {
    config c.yaml "dumps: [$DATA/tiny.in]" "shards: 2.0"
    run ! sm -n --configfile c.yaml
    assert_output --partial "config: shards: 2.0 is not an integer"
    refute_output --partial "TypeError"
    config c.yaml "dumps: [$DATA/tiny.in]" "haplik_config: {output: {decimals: [4]}}"
    run ! sm -n --configfile c.yaml
    assert_output --partial "haplik_config.output.decimals: [4]: expected one value"
    config c.yaml "dumps: [$DATA/tiny.in]" "shard: 2"
    run ! sm -n --configfile c.yaml
    assert_output --partial "config: shard: no such key (did you mean \`shards\`?)"
    # one line of it, not the schema
    [ "$(grep -c 'description' <<<"$output")" -eq 0 ] || fail "the schema was printed"
    config c.yaml "dumps: [$DATA/tiny.in]" "scoring: {backend: cpu, thread: 2}"
    run ! sm -n --configfile c.yaml
    assert_output --partial "config: scoring.thread: no such key (did you mean \`scoring.threads\`?)"
    [ ! -e results ]
}

@test "workflow: a haplik that is not there is refused at the dry run" {
    printf 'dumps: [%s]\nscoring: {backend: cpu}\n' "$DATA/tiny.in" >c.yaml
    run ! timeout 120 snakemake -s "$SRC/workflow/Snakefile" -d "$W" --cores 1 -n --configfile c.yaml \
        --config haplik="$W/no/haplik"
    assert_output --partial "haplik: $W/no/haplik: no such executable"
    # none configured, none on PATH, no ./haplik
    PATH=/usr/bin:/bin run ! timeout 120 "$(command -v snakemake)" -s "$SRC/workflow/Snakefile" -d "$W" \
        --cores 1 -n --configfile c.yaml
    assert_output --partial "haplik: haplik: no such executable"
    [ ! -e results ]
}

@test "workflow: a dump listed twice is refused; names keep their letters; a genome config hears nothing of dumps" {
    cp "$DATA/tiny.in" "échantillon ü.txt"
    config c.yaml "dumps: [$DATA/tiny.in, $DATA/10s.in, $DATA/../data/tiny.in]"
    run ! sm -n --configfile c.yaml
    assert_output --partial "dumps: $DATA/../data/tiny.in (entry 3) is the dump of entry 1 again"
    config c.yaml "dumps: ['$W/échantillon ü.txt']" "shards: 1"
    run -0 sm --configfile c.yaml
    [ -s "results/tables/échantillon_ü/0001.json" ] || fail "$(ls results/tables)"
    # a genome-only config (dumps not set: the default config's are not the user's)
    touch ref.fa a.bam
    cp "$WF/genome.fai" ref.fa.fai
    config g.yaml -dumps "shards: 2" "genome: {reference: ref.fa, bams: [a.bam]}"
    if grep -q '^dumps' g.yaml; then fail "g.yaml names dumps: $(cat g.yaml)"; fi
    run -0 sm -n --configfile g.yaml
    refute_output --partial "dumps\` is ignored"
    config g.yaml "dumps: [$DATA/tiny.in]" "shards: 2" "genome: {reference: ref.fa, bams: [a.bam]}"
    run -0 sm -n --configfile g.yaml
    assert_output --partial "dumps\` is ignored"
}

@test "workflow: the CPU backend needs no GPU lock folder; another format's merged table goes; a stale temporary goes" {
    # a lock folder that cannot be made (under a regular file)
    touch afile
    printf 'haplik: %s\ndumps: [%s]\nshards: 2\nscoring: {backend: cpu, threads: 1, gpu_lock_dir: %s}\n' \
        "$HAPLIK" "$DATA/1m.in" "$W/afile/locks" >c.yaml
    # the temporary table of a job killed before it could remove it
    mkdir -p results/tables/1m
    : >results/tables/1m/.0002.json.tmpAbC123
    run -0 sm --configfile c.yaml
    [ -s results/likelihoods.json ]
    [ ! -e results/tables/1m/.0002.json.tmpAbC123 ] || fail "the stale temporary table stayed"
    # the same run as tsv: one merged table, this run's, and the log says what went
    run -0 sm --configfile c.yaml --config output_format=tsv
    [ -s results/likelihoods.tsv ]
    [ ! -e results/likelihoods.json ] || fail "the json table of the earlier run stayed"
    grep -q "removed results/likelihoods.json" logs/merge.log
}

@test "workflow: a dump rewritten with its old modification time is planned and scored again" {
    cp "$DATA/1m.in" d.in
    config c.yaml "dumps: [$W/d.in]" "shards: 2"
    run -0 sm --configfile c.yaml
    local stamp
    stamp=$(stat -c %y d.in)
    cp "$DATA/10s.in" d.in
    touch -d "$stamp" d.in
    run -0 sm --configfile c.yaml
    assert_output --partial "plan_dump"
    "$HAPLIK" score --backend cpu --quiet -o whole.json d.in
    run -0 same_regions whole.json results/likelihoods.json
}

@test "workflow: the workflow's Snakemake runs for any user of the host, not only for the one who installed it" {
    [ "$(id -u)" = 0 ] || skip "not root: cannot run as another user here"
    id nobody >/dev/null 2>&1 || skip "no user nobody"
    local exe
    exe=$(readlink -f "$(command -v snakemake)")
    run -0 bash -c "cd / && runuser -u nobody -- '$exe' --version"
}
