# workflow.bash - what the workflow suites (workflow.bats, report.bats) share.
# Needs $SRC (the repository), $HAPLIK and $W (the working folder, the current one).

# not_here REASON: skip, or fail where the tests are required to run (HK_REQUIRE_WORKFLOW_TESTS=1, CI).
not_here() {
    if [ "${HK_REQUIRE_WORKFLOW_TESTS:-0}" = 1 ]; then fail "$1 (HK_REQUIRE_WORKFLOW_TESTS=1)"; fi
    skip "$1"
}

# sm ARGS...: snakemake on the repository's workflow, in $W, with haplik=$HAPLIK (the KEY=VALUE
# of a --config in ARGS join it: a second --config would replace the first).
sm() {
    local args=() cfg=(haplik="$HAPLIK") in_config=0 a
    for a in "$@"; do
        if [ "$a" = --config ]; then in_config=1; continue; fi
        if [ "$in_config" = 1 ] && [[ "$a" != -* ]]; then cfg+=("$a"); continue; fi
        in_config=0
        args+=("$a")
    done
    timeout -s KILL 300 snakemake -s "$SRC/workflow/Snakefile" -d "$W" --cores 2 "${args[@]}" \
        --config "${cfg[@]}"
}

# config FILE LINES...: write a config: the workflow's test config (.test/config/config.yaml:
# the bundled example dumps, the CPU backend, one thread, lock folder .locks) with haplik=$HAPLIK,
# each of its keys that LINES set replaced by their line; a LINE `-KEY` leaves KEY out. Its dumps
# are named relative to .test, as ../tests/data/...: the test's working folder $W needs tests/
# beside it (test_dirs).
config() {
    local f=$1 line keys=" haplik "
    shift
    for line in "$@"; do line=${line#-}; keys+="${line%%:*} "; done
    {
        echo "haplik: $HAPLIK"
        while IFS= read -r line; do
            case $line in '' | '#'* | ' '*) continue ;; esac
            [[ $keys == *" ${line%%:*} "* ]] || echo "$line"
        done <"$SRC/.test/config/config.yaml"
        for line in "$@"; do [[ $line == -* ]] || printf '%s\n' "$line"; done
    } >"$f"
}

# test_dirs: make $W (the working folder, then current) with tests/ in it and beside it, so
# that both config/config.yaml's (tests/data/...) and .test's (../tests/data/...) dumps are found.
test_dirs() {
    mkdir -p "$W"
    ln -s "$SRC/tests" "$W/tests"
    ln -s "$SRC/tests" "$W/../tests"
    cd "$W" || return
}
