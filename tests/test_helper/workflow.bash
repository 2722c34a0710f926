# workflow.bash - what the workflow suites (workflow.bats, report.bats) share.
# Needs $SRC (the repository), $HAPLIK and $W (the working folder, the current one).

# sm ARGS...: snakemake on the repository's workflow, in $W, on the CPU backend.
sm() {
    timeout -s KILL 300 snakemake -s "$SRC/workflow/Snakefile" -d "$W" --cores 2 \
        --config haplik="$HAPLIK" "$@"
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
