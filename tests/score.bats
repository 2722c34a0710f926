#!/usr/bin/env bats
# Scoring and checking: GATK's values, precision modes, output options.
# shellcheck disable=SC2154 # stderr, stderr_lines: set by bats' run --separate-stderr

setup() { load test_helper/common-setup; _common_setup; cd "$BATS_TEST_TMPDIR" || return; }

@test "check: the HaplotypeCaller dump (java) within 1e-6 in double" {
    run -0 hk check --backend cpu --precision double --tolerance 1e-6 \
        "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    assert_line "pairs compared: 284"
    assert_line "over tolerance 1e-06: 0"
}

@test "check: the HaplotypeCaller dump (avx) within 1e-5 in mixed" {
    run -0 hk check --backend cpu --precision mixed --tolerance 1e-5 \
        "$DATA/hc-NA12878-20_10000117.avx.hmmresults.txt"
    assert_line "pairs compared: 284"
    assert_line "over tolerance 1e-05: 0"
}

@test "check: pairhmm-testdata within 1e-5 in mixed and in double" {
    for p in mixed double; do
        run -0 hk check --backend cpu --precision $p --tolerance 1e-5 "$DATA/pairhmm-testdata.txt"
        assert_line "pairs compared: 104"
        assert_line "over tolerance 1e-05: 0"
    done
}

@test "check exits 1 when a pair is over the tolerance" {
    run -1 hk check --backend cpu --precision float --tolerance 1e-9 "$DATA/pairhmm-testdata.txt"
    assert_line --regexp '^over tolerance 1e-09: [1-9][0-9]*$'
}

@test "check refuses input without expected values (2)" {
    run -2 --separate-stderr hk check --backend cpu "$DATA/tiny.in"
    assert_stderr --partial "no pair has an expected value"
}

@test "1m.in: the pair float underflows gets its true value (-85.207) in mixed" {
    hk score --backend cpu --quiet -o mixed.json "$DATA/1m.in"
    hk score --backend cpu --quiet --precision float -o float.json "$DATA/1m.in"
    run -0 table get mixed.json "min(v for r in t['regions'] for row in r['log10_likelihoods'] for v in row if v is not None and -85.3 < v < -85.1)"
    assert_output "-85.206899"
    run -0 table get float.json "sum(v is None for r in t['regions'] for row in r['log10_likelihoods'] for v in row)"
    [ "$output" -ge 1 ] || fail "float mode should underflow on 1m.in (got $output nulls)"
}

@test "1m.in: no -inf or NaN in mixed or double; mixed within 1e-4 of double" {
    hk score --backend cpu --quiet -o mixed.json "$DATA/1m.in"
    hk score --backend cpu --quiet --precision double -o double.json "$DATA/1m.in"
    run -0 table close mixed.json double.json 1e-4
    run -0 table get mixed.json "t['summary']['double_recomputed']"
    [ "$output" -gt 0 ]
}

@test "the table is valid JSON whose summary matches its regions" {
    hk score --backend cpu --quiet -o t.json "$DATA/10s.in"
    run -0 table valid t.json
    run -0 table get t.json "(t['format'], t['format_version'], t['model']['precision'], t['summary']['pairs'])"
    assert_output "('haplik-likelihoods', 1, 'mixed', 3550)"
}

@test "standard output and -o give the same table" {
    hk score --backend cpu --quiet "$DATA/tiny.in" > stdout.json
    hk score --backend cpu --quiet -o file.json "$DATA/tiny.in"
    run -0 table same stdout.json file.json
}

@test "1 and 2 threads give identical tables" {
    hk score --backend cpu --quiet --threads 1 -o t1.json "$DATA/10s.in"
    hk score --backend cpu --quiet --threads 2 -o t2.json "$DATA/10s.in"
    run -0 table same t1.json t2.json
}

@test "jsonl holds the same regions, one per line, summary last" {
    hk score --backend cpu --quiet -o t.json "$DATA/10s.in"
    hk score --backend cpu --quiet --output-format jsonl -o t.jsonl "$DATA/10s.in"
    run -0 table same t.json t.jsonl
    [ "$(wc -l < t.jsonl)" -eq 8 ]
    run -0 tail -n 1 t.jsonl
    assert_output --regexp '^\{"summary": '
}

@test "--no-sequences drops reads and haplotypes" {
    hk score --backend cpu --quiet --no-sequences -o t.json "$DATA/tiny.in"
    run -0 table get t.json "'reads' in t['regions'][0] or 'haplotypes' in t['regions'][0]"
    assert_output False
}

@test "output.decimals sets the digits after the point" {
    echo '{"output": {"decimals": 2}}' > c.json
    hk score --backend cpu --quiet -c c.json -o t.json "$DATA/tiny.in"
    run -0 grep -o '"log10_likelihoods": \[\[-[0-9]*\.[0-9]*,' t.json
    assert_line --index 0 --regexp '\[\[-[0-9]+\.[0-9]{2},$'
}

@test "several inputs make one table, regions in input order" {
    hk score --backend cpu --quiet -o both.json "$DATA/tiny.in" "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    run -0 table get both.json "[len(r['reads']) for r in t['regions']]"
    assert_output "[53, 49, 64, 78, 64]"
}

@test "an input's shards scored in one run give its table; each input after the first opened early" {
    hk split --quiet "$DATA/1m.in" s1.in s2.in s3.in s4.in s5.in
    hk score --backend cpu --quiet -o whole.json "$DATA/1m.in"
    HK_TRACE=1 run -0 --separate-stderr hk score --backend cpu -o shards.json s1.in s2.in s3.in s4.in s5.in
    table same whole.json shards.json
    # the next input is opened, and its first block read, once the one before is all read
    assert_equal "$(grep -c 'trace .* input opened early' <<< "$stderr")" 4
    assert_equal "$(grep -c 'trace .* input switched, opened early' <<< "$stderr")" 4
    HK_OPEN_EARLY=0 HK_TRACE=1 run -0 --separate-stderr hk score --backend cpu -o late.json s1.in s2.in s3.in s4.in s5.in
    table same whole.json late.json
    assert_equal "$(grep -c 'trace .* input opened [0-9]' <<< "$stderr")" 5
    if grep -q 'opened early' <<< "$stderr"; then fail "HK_OPEN_EARLY=0 opened an input early: $stderr"; fi
}

@test "HK_TRACE=1 prints the timeline of every batch; small batches give the same table" {
    echo '{"engine": {"max_batch_pairs": 300}}' > small.json
    hk score --quiet -o whole.json "$DATA/1m.in"
    HK_TRACE=1 run -0 --separate-stderr hk score --config small.json -o out.json "$DATA/1m.in"
    table same whole.json out.json
    read_n=$(grep -c 'trace .* read batch' <<< "$stderr")
    (( read_n >= 2 ))
    # every batch read is scored once and written once, and none is written before it is scored
    assert_equal "$(grep -c 'trace .* scored batch' <<< "$stderr")" "$read_n"
    assert_equal "$(grep -c 'trace .* wrote batch' <<< "$stderr")" "$read_n"
    first_scored=$(grep -n -m1 'scored batch' <<< "$stderr" | cut -d: -f1)
    first_wrote=$(grep -n -m1 'wrote batch' <<< "$stderr" | cut -d: -f1)
    (( first_scored < first_wrote ))
    grep -q 'trace .* table finished' <<< "$stderr"
    # and when reading ended, with the cores busy until then
    grep -Eq 'trace reading ended at [0-9.]+ ms with [0-9.]+ s of the process.s CPU time: [0-9.]+ cores busy while reading' <<< "$stderr"
}

@test "reading runs ahead of a slow engine start-up, with the same table" {
    echo '{"engine": {"max_batch_pairs": 300}}' > small.json
    hk score --quiet --config small.json -o whole.json "$DATA/1m.in"
    HK_OPEN_DELAY_MS=1500 HK_TRACE=1 run -0 --separate-stderr hk score --config small.json -o out.json "$DATA/1m.in"
    table same whole.json out.json
    # more batches were read while the engine opened than the pool's 8
    ahead=$(sed -n 's/.*trace .* engine open, batches read ahead \([0-9]*\)$/\1/p' <<< "$stderr")
    (( ahead > 0 ))
    assert_equal "$(grep -c 'trace .* scored batch' <<< "$stderr")" "$(grep -c 'trace .* read batch' <<< "$stderr")"
}

@test "score asks for 2 CUDA hardware queues whatever the input; the user's setting and --backend cpu are left alone" {
    if hk version | grep -q 'no CUDA engine'; then skip "built without CUDA"; fi
    unset CUDA_DEVICE_MAX_CONNECTIONS
    HK_TRACE=1 run -0 --separate-stderr hk score --backend auto -o a.json "$DATA/10s.in"
    grep -q 'trace engine: 2 hardware queues per device' <<< "$stderr"
    gzip -c "$DATA/10s.in" > 10s.in.gz
    HK_TRACE=1 run -0 --separate-stderr hk score --backend auto -o b.json 10s.in.gz
    grep -q 'trace engine: 2 hardware queues per device' <<< "$stderr"
    HK_TRACE=1 run -0 --separate-stderr hk score --backend auto -o c.json - < "$DATA/10s.in"
    grep -q 'trace engine: 2 hardware queues per device' <<< "$stderr"
    CUDA_DEVICE_MAX_CONNECTIONS=8 HK_TRACE=1 run -0 --separate-stderr hk score --backend auto -o d.json "$DATA/10s.in"
    [[ "$stderr" != *'hardware queues'* ]]
    HK_TRACE=1 run -0 --separate-stderr hk score --backend cpu -o e.json "$DATA/10s.in"
    [[ "$stderr" != *'hardware queues'* ]]
    table same a.json b.json
}

@test "an input is read by its own name, whatever it holds (##idx##, a URL scheme's colon)" {
    cp "$DATA/hc-NA12878-20_10000117.java.hmmresults.txt" plain.txt
    cp plain.txt 'a##idx##b.txt'
    cp plain.txt 'data:x.txt'
    for f in plain.txt 'a##idx##b.txt' 'data:x.txt'; do
        run -0 hk check --backend cpu --precision double --tolerance 1e-6 "$f"
        assert_line "pairs compared: 284"
        assert_line "over tolerance 1e-06: 0"
    done
}
