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

# config FILE LINES...: write a config; the first lines pin haplik and the CPU backend.
config() {
    local f=$1
    shift
    {
        echo "haplik: $HAPLIK"
        echo "scoring: {backend: cpu, threads: 1, gpu_lock_dir: .locks}"
        printf '%s\n' "$@"
    } >"$f"
}
