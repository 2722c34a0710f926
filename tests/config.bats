#!/usr/bin/env bats
# Configuration: validation names the key path; flags override the file.

setup() { load test_helper/common-setup; _common_setup; cd "$BATS_TEST_TMPDIR"; }

# bad_config JSON KEYTEXT: the config is refused with 2 and names the key.
bad_config() {
    echo "$1" > c.json
    run -2 --separate-stderr "$HAPLIK" score --backend cpu -c c.json -o t.json "$DATA/tiny.in"
    assert_stderr --partial "haplik: error: c.json: $2"
    [ ! -e t.json ]
}

@test "no config at all runs with the defaults" {
    run -0 hk score --backend cpu --quiet -o t.json "$DATA/tiny.in"
    run -0 $TABLE get t.json "t['model']"
    assert_output "{'precision': 'mixed', 'float_threshold': 1e-28, 'min_base_quality': 6, 'gcp': None}"
}

@test "an unknown key is named" {
    bad_config '{"engine": {"thread": 2}}' "engine.thread: unknown key"
    bad_config '{"engines": {}}' "engines: unknown key"
}

@test "a wrong type is named" {
    bad_config '{"output": {"sequences": "yes"}}' "output.sequences: expected true or false"
    bad_config '{"model": {"precision": 2}}' "model.precision: expected a string"
    bad_config '{"engine": 4}' "engine: expected an object"
}

@test "a value out of range is named" {
    bad_config '{"model": {"min_base_quality": 100}}' "model.min_base_quality: expected an integer from 0 to 93"
    bad_config '{"output": {"decimals": 13}}' "output.decimals: expected an integer from 0 to 12"
    bad_config '{"model": {"precision": "quad"}}' "model.precision: expected"
}

@test "a bad device list names the element" {
    bad_config '{"engine": {"devices": [0, -1]}}' "engine.devices[1]: expected a non-negative integer"
    bad_config '{"engine": {"devices": "some"}}' "engine.devices: expected"
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
    run -0 $TABLE get t.json "t['model']['precision']"
    assert_output double
}

@test "model.gcp replaces the gap-continuation qualities" {
    hk score --backend cpu --quiet -o a.json "$DATA/tiny.in"
    echo '{"model": {"gcp": 10}}' > c10.json
    hk score --backend cpu --quiet -c c10.json -o b.json "$DATA/tiny.in"
    run -0 $TABLE same a.json b.json      # tiny.in's gcps are all Q10
    echo '{"model": {"gcp": 30}}' > c30.json
    hk score --backend cpu --quiet -c c30.json -o c.json "$DATA/tiny.in"
    run -1 $TABLE same a.json c.json
}

@test "model.min_base_quality is the floor of base qualities" {
    printf '1 1\n%s %s IIII IIII IIII\nACGTA\n' ACGT '!!!!' > q0.in
    printf '1 1\n%s %s IIII IIII IIII\nACGTA\n' ACGT "''''" > q6.in
    hk score --backend cpu --quiet -o a.json q0.in
    hk score --backend cpu --quiet -o b.json q6.in
    run -0 $TABLE get a.json "t['regions'][0]['log10_likelihoods']"
    want=$($TABLE get b.json "t['regions'][0]['log10_likelihoods']")
    assert_output "$want"
}

@test "check.tolerance from the file" {
    echo '{"check": {"tolerance": 1e-12}}' > c.json
    run -1 hk check --backend cpu --quiet -c c.json "$DATA/pairhmm-testdata.txt"
}
