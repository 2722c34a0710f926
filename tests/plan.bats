#!/usr/bin/env bats
# split --plan and score --plan: the shards of split, read in place, give the
# shard files' tables; errors name the input's own lines.

setup() { load test_helper/common-setup; _common_setup; cd "$BATS_TEST_TMPDIR" || return; }

score() { hk score --backend cpu --quiet "$@"; }

# A results file of 7 regions with region tags in force over several regions,
# a "# source-line" tag and a comment after the last region.
tagged() {
    local f="$DATA/hc-NA12878-20_10000117.java.hmmresults.txt"
    { echo "# region A"; awk 1 "$f" "$f"; echo "# region B"; awk 1 "$f"
      echo "# source-line 9999"; tail -n +2 "$f" | awk 1; echo "# region"; awk 1 "$f" "$f"
      echo "# trailing comment"; } > "$1"
}

# same_as_split INPUT N: part k of the plan scores as shard k of split.
same_as_split() {
    local input=$1 n=$2 shards=()
    for k in $(seq 1 "$n"); do shards+=("s$k.txt"); done
    run -0 hk split --quiet "$input" "${shards[@]}"
    run -0 hk split --quiet --plan plan.tsv --parts "$n" "$input"
    for k in $(seq 1 "$n"); do
        score -o "split$k.json" "s$k.txt"
        score -o "part$k.json" --plan plan.tsv --part "$k" "$input"
        run -0 table same "split$k.json" "part$k.json"
    done
}

@test "plan: parts of a results file with region tags score as split's shards" {
    tagged tagged.txt
    for n in 1 2 3 5 9 13; do same_as_split tagged.txt $n; done
}

@test "plan: parts of batch files and a PDHMM dump score as split's shards" {
    for n in 1 3 7; do
        same_as_split "$DATA/1m.in" $n
        same_as_split "$DATA/pdhmm_syn_990_1_2.txt" $n
    done
}

@test "plan: more than 256 parts cut where split cuts" {
    local n=300 shards=() k start end rest
    for k in $(seq 1 $n); do shards+=("s$k.in"); done
    run -0 hk split --quiet "$DATA/1m.in" "${shards[@]}"
    run -0 hk split --quiet --plan plan.tsv --parts $n "$DATA/1m.in"
    [ "$(grep -vc '^#' plan.tsv)" -eq $n ]
    # shard k is the input's bytes the plan gives part k, with "# source-line" tags (the first: L)
    # after its "# source-input" tag
    while IFS=$'\t' read -r k start end line rest; do
        [[ $k == \#* ]] && continue
        [ "$(head -n 1 "s$k.in")" = "# source-input $DATA/1m.in" ] || fail "shard $k: $(head -n 1 "s$k.in")"
        if [ "$start" -eq "$end" ]; then [ "$(wc -l <"s$k.in")" -eq 1 ] || fail "part $k is empty, shard $k is not"; continue; fi
        [ "$(sed -n 2p "s$k.in")" = "# source-line $line" ] || fail "part $k: line $line, shard: $(sed -n 2p "s$k.in")"
        cmp <(tail -c +$((start + 1)) "$DATA/1m.in" | head -c $((end - start))) <(grep -v '^# source-line \|^# source-input ' "s$k.in") ||
            fail "part $k: bytes $start-$end are not shard $k"
    done < plan.tsv
}

@test "plan: parts merge into the table of the whole, and nothing is copied" {
    tagged tagged.txt
    run -0 hk split --quiet --plan plan.tsv --parts 4 tagged.txt
    for k in 1 2 3 4; do score -o "p$k.json" --plan plan.tsv --part "$k" tagged.txt; done
    run -0 hk merge --quiet -o merged.json p1.json p2.json p3.json p4.json
    score -o whole.json tagged.txt
    run -0 table same whole.json merged.json
    assert_dir_only . tagged.txt plan.tsv p1.json p2.json p3.json p4.json merged.json whole.json
}

@test "plan: an error in a later part names the line of the whole input" {
    tagged tagged.txt
    # a bad base on the input's line 1000 (a record of region B)
    awk 'NR == 1000 { sub(/^C/, "X") } 1' tagged.txt > bad.txt
    run -0 hk split --quiet --plan plan.tsv --parts 13 bad.txt
    # the part that holds line 1000: the last that begins on it or before, not the first
    local k
    k=$(awk -F'\t' '!/^#/ && $4 <= 1000 && $3 > $2 { k = $1 } END { print k }' plan.tsv)
    [ "$k" -gt 1 ] || fail "line 1000 is in part '$k'"
    run -2 --separate-stderr score -o out.json --plan plan.tsv --part "$k" bad.txt
    assert_stderr --partial "bad.txt:1000: haplotype: invalid base 'X'"
    [ ! -e out.json ] || fail "a table was written"
}

@test "plan: a compressed dump is refused (cut it with split instead)" {
    gzip -c "$DATA/tiny.in" > tiny.in.gz
    run -2 --separate-stderr hk split --plan plan.tsv --parts 2 tiny.in.gz
    assert_stderr --partial "tiny.in.gz:1: a plan reads parts of a plain text file"
    [ ! -e plan.tsv ] || fail "a plan was written"
}

@test "plan: an input modified before 1970 or after 2262 is planned and scored, and a change is still seen" {
    cp "$DATA/tiny.in" d.in
    score -o whole.json d.in
    for when in '1960-01-01 00:00:00.25' '1969-12-31 23:59:59.999999999' '2400-01-01 00:00:00'; do
        touch -d "$when" d.in || skip "this file system cannot keep the time $when"
        run -0 hk split --quiet --plan plan.tsv --parts 1 d.in
        run -0 score -o part.json --plan plan.tsv --part 1 d.in
        run -0 table same whole.json part.json
    done
    touch -d '1960-01-01 00:00:00.25' d.in
    run -0 hk split --quiet --plan plan.tsv --parts 2 d.in
    touch -d '1960-01-01 00:00:00.5' d.in
    run -2 --separate-stderr score -o out.json --plan plan.tsv --part 1 d.in
    assert_stderr --partial "d.in: not the file plan.tsv was made for"
}

@test "plan: a changed input, a missing part, a bad plan and bad options are refused" {
    cp "$DATA/1m.in" d.in
    run -0 hk split --quiet --plan plan.tsv --parts 3 d.in
    run -2 --separate-stderr score --plan plan.tsv --part 4 d.in
    assert_stderr --partial "plan.tsv:5: no part 4 (the plan has 3)"
    run -2 --separate-stderr score --plan plan.tsv d.in
    assert_stderr --partial "--plan PLAN and --part K go together"
    run -2 --separate-stderr score --plan plan.tsv --part 1 d.in d.in
    assert_stderr --partial "--plan PLAN and --part K go together"
    run -2 --separate-stderr score --plan plan.tsv --part 0 d.in
    assert_stderr --partial "--part: expected a whole number"
    sed 's/^2\t[0-9]*/2\tx/' plan.tsv > bad.tsv
    run -2 --separate-stderr score --plan bad.tsv --part 2 d.in
    assert_stderr --partial "bad.tsv:4: bad part"
    echo "not a plan" > bad.tsv
    run -2 --separate-stderr score --plan bad.tsv --part 1 d.in
    assert_stderr --partial "bad.tsv:1: not a haplik split plan"
    echo "# one more line" >> d.in
    run -2 --separate-stderr score -o out.json --plan plan.tsv --part 1 d.in
    assert_stderr --partial "d.in: not the file plan.tsv was made for"
    [ ! -e out.json ] || fail "a table was written"
    run -2 --separate-stderr hk split --plan plan.tsv d.in
    assert_stderr --partial "--plan PLAN and --parts N go together"
    run -2 --separate-stderr hk split --plan plan.tsv --parts 0 d.in
    assert_stderr --partial "--parts: expected a whole number"
    run -2 --separate-stderr hk split --plan plan.tsv --parts 1000001 d.in
    assert_stderr --partial "--parts: expected a whole number from 1 to 1000000"
}
