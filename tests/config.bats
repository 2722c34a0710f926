#!/usr/bin/env bats
# Configuration: validation names the key path; flags override the file.
# shellcheck disable=SC2154 # stderr, stderr_lines: set by bats' run --separate-stderr

setup() { load test_helper/common-setup; _common_setup; cd "$BATS_TEST_TMPDIR" || return; }

# bad_config JSON KEYTEXT: the config is refused with 2 and names the key.
bad_config() {
    echo "$1" > c.json
    run -2 --separate-stderr "$HAPLIK" score --backend cpu -c c.json -o t.json "$DATA/tiny.in"
    assert_stderr --partial "haplik: error: c.json: $2"
    [ ! -e t.json ]
}

@test "no config at all runs with the defaults" {
    run -0 hk score --backend cpu --quiet -o t.json "$DATA/tiny.in"
    run -0 table get t.json "t['model']"
    assert_output "{'precision': 'mixed', 'float_threshold': 1e-28, 'min_base_quality': 6, 'gcp': None}"
}

@test "an unknown key is named" {
    bad_config '{"engine": {"thread": 2}}' "engine.thread: unknown key"
    bad_config '{"engines": {}}' "engines: unknown key"
}

@test "a wrong type is named" {
    bad_config '{"output": {"sequences": "yes"}}' "output.sequences: expected true or false"
    bad_config '{"model": {"precision": 2}}' 'model.precision: expected "mixed", "float" or "double"'
    bad_config '{"engine": 4}' "engine: expected an object"
}

@test "a value out of range is named" {
    bad_config '{"model": {"min_base_quality": 100}}' "model.min_base_quality: expected an integer from 0 to 93"
    bad_config '{"output": {"decimals": 13}}' "output.decimals: expected an integer from 0 to 12"
    bad_config '{"model": {"precision": "quad"}}' "model.precision: expected"
}

@test "a bad device list names the element" {
    bad_config '{"engine": {"devices": [0, -1]}}' 'engine.devices[1]: expected "all" or a list of 1 to 64 device ordinals from 0 to 1023'
    bad_config '{"engine": {"devices": "some"}}' "engine.devices: expected"
    # the list's fixed limits refuse, never cut: 65 devices, an ordinal past 1023
    bad_config "{\"engine\": {\"devices\": [$(seq -s, 0 64)]}}" 'engine.devices[64]: expected "all" or a list of 1 to 64'
    bad_config '{"engine": {"devices": [1024]}}' 'engine.devices[0]: expected "all" or a list of 1 to 64 device ordinals from 0 to 1023'
    run -2 --separate-stderr "$HAPLIK" score --backend cpu --devices "$(seq -s, 0 64)" -o t.json "$DATA/tiny.in"
    assert_stderr --partial 'haplik: error: --devices: expected "all" or a list of 1 to 64'
    [ ! -e t.json ]
}

@test "invalid JSON is reported with its line" {
    printf '{\n  "model": {\n    "precision": "mixed",,\n  }\n}\n' > c.json
    run -2 --separate-stderr "$HAPLIK" score -c c.json -o t.json "$DATA/tiny.in"
    assert_stderr --regexp '^haplik: error: c\.json:3: not valid JSON$'
}

@test "a missing config file" {
    run -2 --separate-stderr "$HAPLIK" score -c nope.json "$DATA/tiny.in"
    assert_stderr --partial "nope.json: cannot read"
}

@test "flags override the file" {
    echo '{"model": {"precision": "float"}, "output": {"format": "jsonl"}}' > c.json
    hk score --backend cpu --quiet -c c.json --precision double --output-format json -o t.json "$DATA/tiny.in"
    run -0 table get t.json "t['model']['precision']"
    assert_output double
}

@test "model.gcp replaces the gap-continuation qualities" {
    hk score --backend cpu --quiet -o a.json "$DATA/tiny.in"
    echo '{"model": {"gcp": 10}}' > c10.json
    hk score --backend cpu --quiet -c c10.json -o b.json "$DATA/tiny.in"
    run -0 table same a.json b.json      # tiny.in's gcps are all Q10
    echo '{"model": {"gcp": 30}}' > c30.json
    hk score --backend cpu --quiet -c c30.json -o c.json "$DATA/tiny.in"
    run -1 table same a.json c.json
}

@test "model.min_base_quality is the floor of base qualities" {
    printf '1 1\n%s %s IIII IIII IIII\nACGTA\n' ACGT '!!!!' > q0.in
    printf '1 1\n%s %s IIII IIII IIII\nACGTA\n' ACGT "''''" > q6.in
    hk score --backend cpu --quiet -o a.json q0.in
    hk score --backend cpu --quiet -o b.json q6.in
    run -0 table get a.json "t['regions'][0]['log10_likelihoods']"
    want=$(table get b.json "t['regions'][0]['log10_likelihoods']")
    assert_output "$want"
}

@test "check.tolerance from the file" {
    echo '{"check": {"tolerance": 1e-12}}' > c.json
    run -1 hk check --backend cpu --quiet -c c.json "$DATA/pairhmm-testdata.txt"
}

# Every key: a value given in the file and by its flag is the same setting.
# Columns: key path, flag, JSON value, flag value.
KEY_VALUES='input.format	format	"gatk"	gatk
output.format	output-format	"tsv"	tsv
output.compression	compression	"bgzf"	bgzf
output.decimals	decimals	3	3
output.sequences	sequences	false	false
model.precision	precision	"double"	double
model.float_threshold	float-threshold	1.5e-20	1.5e-20
model.min_base_quality	min-base-quality	10	10
model.gcp	gcp	20	20
model.unknown_bases	unknown-bases	"as_n"	as_n
engine.backend	backend	"cpu"	cpu
engine.devices	devices	[0, 2]	0,2
engine.threads	threads	3	3
engine.max_batch_pairs	max-batch-pairs	5000	5000
engine.gpu_lock_dir	gpu-lock-dir	"/tmp/locks"	/tmp/locks
check.tolerance	tolerance	0.002	0.002'

# file_of KEY JSONVALUE: a config file setting one key.
file_of() { python3 -c "import json,sys; s,k=sys.argv[1].split('.'); print(json.dumps({s: {k: json.loads(sys.argv[2])}}))" "$1" "$2"; }

@test "every key has a flag, and a flag and a file key give the same setting" {
    run -0 "$HAPLIK" score --print-config
    keys=$(python3 -c "import json,sys; d=json.load(sys.stdin); print('\n'.join(sorted(s+'.'+k for s in d for k in d[s])))" <<< "$output")
    assert_equal "$keys" "$(cut -f1 <<< "$KEY_VALUES" | sort)"
    while IFS=$'\t' read -r key flag json value; do
        file_of "$key" "$json" > c.json
        from_file=$("$HAPLIK" score -c c.json --print-config)
        from_flag=$("$HAPLIK" score "--$flag" "$value" --print-config)
        default=$("$HAPLIK" score --print-config)
        [ "$from_file" = "$from_flag" ] || { echo "$key: file and flag differ"; diff <(echo "$from_file") <(echo "$from_flag"); return 1; }
        [ "$from_file" != "$default" ] || { echo "$key: the value changed nothing"; return 1; }
    done <<< "$KEY_VALUES"
}

@test "every key's bad values are refused with the same message from the file and the flag" {
    # key path, flag, bad JSON value, the same as a flag value
    bad='input.format	format	"gzip"	gzip
output.format	output-format	"csv"	csv
output.compression	compression	"zstd"	zstd
output.decimals	decimals	13	13
output.decimals	decimals	2.5	2.5
output.sequences	sequences	1	1
model.precision	precision	"quad"	quad
model.float_threshold	float-threshold	-1	-1
model.min_base_quality	min-base-quality	94	94
model.gcp	gcp	0	0
model.unknown_bases	unknown-bases	"skip"	skip
engine.backend	backend	"opencl"	opencl
engine.devices	devices	"some"	some
engine.threads	threads	-1	-1
engine.max_batch_pairs	max-batch-pairs	1e10	10000000000
engine.gpu_lock_dir	gpu-lock-dir	""	
check.tolerance	tolerance	"small"	small'
    seen=""
    while IFS=$'\t' read -r key flag json value; do
        file_of "$key" "$json" > c.json
        run -2 --separate-stderr "$HAPLIK" score -c c.json "$DATA/tiny.in"
        file_msg=${stderr#"haplik: error: c.json: $key: "}
        [ "$file_msg" != "$stderr" ] || { echo "$key: $stderr"; return 1; }
        run -2 --separate-stderr "$HAPLIK" score "--$flag" "$value" "$DATA/tiny.in"
        flag_msg=${stderr#"haplik: error: --$flag: "}
        [ "$flag_msg" != "$stderr" ] || { echo "$key: $stderr"; return 1; }
        assert_equal "$flag_msg" "$file_msg"
        [[ "$file_msg" == expected* ]]
        seen="$seen$key"$'\n'
    done <<< "$bad"
    # every key was tried
    assert_equal "$(sort -u <<< "$seen" | sed '/^$/d')" "$(cut -f1 <<< "$KEY_VALUES" | sort)"
}

@test "a flag value with spaces around it is refused as in the file" {
    run -2 --separate-stderr "$HAPLIK" score --threads " 2" "$DATA/tiny.in"
    assert_stderr "haplik: error: --threads: expected an integer from 0 to 1024"
}

@test "--help lists every key with its live default" {
    run -0 "$HAPLIK" score --help
    assert_output --partial "--decimals N"
    assert_output --partial "[6] (output.decimals)"
    assert_output --partial '["mixed"] (model.precision)'
    assert_output --partial "[null] (engine.gpu_lock_dir)"
}

@test "the README's configuration table lists exactly the keys of the list" {
    run -0 "$HAPLIK" score --print-config
    keys=$(python3 -c "import json,sys; d=json.load(sys.stdin); print('\n'.join(sorted(s+'.'+k for s in d for k in d[s])))" <<< "$output")
    readme=$(sed -n '/^## Configuration/,/^## /p' "$BATS_TEST_DIRNAME/../README.md" |
             grep -o '^| `[a-z_]*\.[a-z_]*`' | sed 's/^| `//; s/`$//' | sort)
    assert_equal "$readme" "$keys"
}

@test "a string holding \\u0000 is refused with file, line and key, not cut short" {
    printf '{"input": {"format": "gatk\\u0000x"}}' > c.json
    run -2 --separate-stderr "$HAPLIK" score --backend cpu -c c.json -o t.json "$DATA/tiny.in"
    [ "${#stderr_lines[@]}" -eq 1 ] || fail "expected one line on stderr, got: $stderr"
    assert_stderr 'haplik: error: c.json:1: input.format: a string holds \u0000 (a NUL character), which no setting takes'
    [ ! -e t.json ]
    printf '{"engine":\n {"gpu_lock_dir": "/tmp/a\\u0000b"}}' > c.json
    run -2 --separate-stderr "$HAPLIK" score --print-config -c c.json
    assert_stderr --partial 'c.json:2: engine.gpu_lock_dir: a string holds \u0000'
    printf '{"engi\\u0000ne": {}}' > c.json
    run -2 --separate-stderr "$HAPLIK" score --print-config -c c.json
    assert_stderr --partial 'c.json:1: engi: a string holds \u0000'
    # an escaped backslash before u0000 is the text \u0000, not a NUL
    printf '{"engine": {"gpu_lock_dir": "a\\\\u0000"}}' > c.json
    run -0 "$HAPLIK" score --print-config -c c.json
    assert_output --partial '"gpu_lock_dir": "a\\u0000"'
}

@test "what cJSON takes and JSON does not is refused: raw control characters, malformed numbers" {
    printf '{"engine": {"gpu_lock_dir": "a\tb"}}' > c.json
    run -2 --separate-stderr "$HAPLIK" score --print-config -c c.json
    assert_stderr "haplik: error: c.json:1: not valid JSON: a raw control character in a string"
    printf '{"engine": {"threads": 01}}' > c.json
    run -2 --separate-stderr "$HAPLIK" score --print-config -c c.json
    assert_stderr "haplik: error: c.json:1: not valid JSON: a malformed number"
}

@test "config text that is not UTF-8 is refused with file and line, and --print-config is always JSON" {
    printf '{"engine":\n {"gpu_lock_dir": "/tmp/a\xffb"}}' > c.json
    run -2 --separate-stderr "$HAPLIK" score --print-config -c c.json
    assert_stderr "haplik: error: c.json:2: not valid JSON: text that is not UTF-8"
    [ -z "$output" ]
    printf '{"engine": {"gpu_lock_dir": "\xc3\x28"}}' > c.json
    run -2 --separate-stderr "$HAPLIK" score --backend cpu -c c.json -o t.json "$DATA/tiny.in"
    assert_stderr "haplik: error: c.json:1: not valid JSON: text that is not UTF-8"
    [ ! -e t.json ]
    # an over-long encoding, a surrogate, and a key that is not UTF-8
    for bad in '\xc0\xaf' '\xed\xa0\x80'; do
        printf '{"engine": {"gpu_lock_dir": "a%b"}}' "$bad" > c.json
        run -2 "$HAPLIK" score --print-config -c c.json
    done
    printf '{"engine": {"thr\xe9ads": 1}}' > c.json
    run -2 "$HAPLIK" score --print-config -c c.json
    # well-formed UTF-8 is printed as valid JSON
    printf '{"engine": {"gpu_lock_dir": "/tmp/\xc3\xa9t\xc3\xa9"}}' > c.json
    run -0 --separate-stderr "$HAPLIK" score --print-config -c c.json
    printf '%s\n' "$output" | python3 -c 'import json,sys; d=json.loads(sys.stdin.buffer.read().decode("utf-8")); assert d["engine"]["gpu_lock_dir"] == "/tmp/\u00e9t\u00e9"'
}

@test "a key or section given twice is refused, not the last one silently kept" {
    bad_config '{"engine": {"threads": 1, "threads": 2}}' "engine.threads: given more than once"
    bad_config '{"engine": {"threads": 1}, "engine": {"threads": 3}}' "engine: given more than once"
}

@test "an unknown key gets the nearest known one" {
    bad_config '{"engine": {"thread": 2}}' "engine.thread: unknown key (did you mean engine.threads?)"
    bad_config '{"modle": {}}' "modle: unknown key (did you mean model? expected input"
    bad_config '{"engine": {"frobnicate": 2}}' "engine.frobnicate: unknown key"
    run -2 --separate-stderr "$HAPLIK" score -c c.json -o t.json "$DATA/tiny.in"
    [[ "$stderr" != *"did you mean"* ]] || fail "a suggestion for a far name: $stderr"
}
