#!/usr/bin/env bats
# Which GPUs a run starts CUDA on: those of --devices, or the one its lock
# claims, made the only ones CUDA sees (CUDA_VISIBLE_DEVICES) before CUDA
# starts, unless the user or a scheduler has already chosen. Tested through
# HK_TRACE's engine lines and the lock files. A GPU a list names that is not
# there is a usage error (exit 2) before any output; "all" on a host without
# a GPU goes on on the CPU (backend auto).
# shellcheck disable=SC2154 # stderr, stderr_lines: set by bats' run --separate-stderr

setup() {
    load test_helper/common-setup
    _common_setup
    cd "$BATS_TEST_TMPDIR" || return
    # a build without the CUDA engine (configure --disable-cuda) never starts CUDA: nothing to choose
    if [[ $BATS_TEST_DESCRIPTION != "any build: "* ]] && "$HAPLIK" --version | grep -q 'no CUDA engine'; then
        skip "SKIPPED: this build has no CUDA engine (configure --disable-cuda): no GPU is ever chosen"
    fi
}

# A run whose --devices list names GPUs this host may not have: scored (0),
# or refused (2) naming the GPU that is not there, with no table.
scored_or_missing() {
    if [ "$status" -eq 2 ]; then
        [[ "$stderr" == *"haplik: error: engine.devices: GPU "*" is not there: "* ]] || fail "stderr: $stderr"
        [ ! -e out.json ] || fail "a table was written"
    else
        [ "$status" -eq 0 ] || fail "status $status: $stderr"
        [ -s out.json ]
    fi
}

@test "any build: a GPU the list names that is not there is a usage error before any output" {
    run -2 --separate-stderr "$HAPLIK" score --devices 7 -o out.json "$DATA/tiny.in"
    [[ "$stderr" == "haplik: error: engine.devices: GPU 7 is not there: "* ]] || fail "stderr: $stderr"
    [ "${#stderr_lines[@]}" -eq 1 ] || fail "more than one line: $stderr"
    [ ! -e out.json ]
    run -2 --separate-stderr "$HAPLIK" score --backend cuda --devices 0,7 -o out.json "$DATA/tiny.in"
    assert_stderr --partial "engine.devices: GPU "
    [ ! -e out.json ]
    # GPUs 0-63 are never all there; the same from a configuration file
    echo '{"engine": {"devices": [63]}}' > c.json
    run -2 --separate-stderr "$HAPLIK" score -c c.json -o out.json "$DATA/tiny.in"
    assert_stderr --partial "engine.devices: GPU 63 is not there: "
    [ ! -e out.json ]
    # the CPU backend uses no GPU; "all" falls back to the CPU with its notice where there is none
    run -0 --separate-stderr "$HAPLIK" score --backend cpu --devices 7 -o out.json "$DATA/tiny.in"
    [ -s out.json ]
    if "$HAPLIK" --version | grep -q 'no CUDA engine'; then
        run -0 --separate-stderr "$HAPLIK" score --devices all -o all.json "$DATA/tiny.in"
        assert_stderr --partial "no usable GPU ("
        [ -s all.json ]
    fi
}

traced() { HK_TRACE=1 "$HAPLIK" score "$@" -o out.json "$DATA/tiny.in"; }

@test "gpu choice: --devices makes only those GPUs visible to CUDA, by the host's numbers" {
    run --separate-stderr env -u CUDA_VISIBLE_DEVICES HK_TRACE=1 "$HAPLIK" score \
        --devices 3,1 -o out.json "$DATA/tiny.in"
    assert_stderr --partial "trace engine: CUDA_VISIBLE_DEVICES=3,1"
    scored_or_missing
}

@test "gpu choice: the lock is claimed by the host's number before CUDA starts, and released" {
    mkdir locks
    run --separate-stderr env -u CUDA_VISIBLE_DEVICES HK_TRACE=1 "$HAPLIK" score \
        --devices 5,6 --gpu-lock-dir locks -o out.json "$DATA/tiny.in"
    scored_or_missing
    assert_stderr --partial "claimed GPU 5 (locks/gpu5.lock)"
    assert_stderr --partial "trace engine: CUDA_VISIBLE_DEVICES=5"
    # released: said where the run scored (a host with a GPU 5), and free after the run either way
    [ "$status" -ne 0 ] || assert_stderr --partial "releasing GPU 5"
    flock -n locks/gpu5.lock true || fail "the lock is still held after the run"
    # the claim comes before CUDA's start
    [[ "$stderr" == *"claimed GPU 5"*"CUDA_VISIBLE_DEVICES=5"* ]] || fail "claimed after CUDA started"
    # held: the next run takes the other
    exec 9>locks/gpu5.lock
    flock -n 9
    rm -f out.json
    run --separate-stderr env -u CUDA_VISIBLE_DEVICES HK_TRACE=1 "$HAPLIK" score \
        --devices 5,6 --gpu-lock-dir locks -o out.json "$DATA/tiny.in"
    scored_or_missing
    assert_stderr --partial "claimed GPU 6 (locks/gpu6.lock)"
    assert_stderr --partial "trace engine: CUDA_VISIBLE_DEVICES=6"
    exec 9>&-
}

@test "gpu choice: CUDA_VISIBLE_DEVICES set by the user (or SLURM) is left alone" {
    run --separate-stderr env CUDA_VISIBLE_DEVICES=0 HK_TRACE=1 "$HAPLIK" score \
        --devices 0 -o out.json "$DATA/tiny.in"
    scored_or_missing
    [[ "$stderr" != *"CUDA_VISIBLE_DEVICES="* ]] || fail "changed the user's CUDA_VISIBLE_DEVICES"
}

@test "gpu choice: all GPUs without a lock, and the CPU backend, choose nothing" {
    run -0 --separate-stderr env -u CUDA_VISIBLE_DEVICES HK_TRACE=1 "$HAPLIK" score \
        -o out.json "$DATA/tiny.in"
    [[ "$stderr" != *"CUDA_VISIBLE_DEVICES="* ]] || fail "narrowed a run on all GPUs"
    mkdir locks
    run -0 --separate-stderr env -u CUDA_VISIBLE_DEVICES HK_TRACE=1 "$HAPLIK" score \
        --backend cpu --devices 2 --gpu-lock-dir locks -o out.json "$DATA/tiny.in"
    [[ "$stderr" != *"CUDA_VISIBLE_DEVICES="* ]] || fail "the CPU backend chose GPUs"
    [ -z "$(ls -A locks)" ] || fail "the CPU backend claimed a GPU"
}
