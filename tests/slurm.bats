#!/usr/bin/env bats
# The SLURM profile against a real single-node SLURM cluster started on localhost
# (tests/slurm/cluster.sh: munge, MariaDB + slurmdbd for accounting, slurmctld, slurmd with
# a GPU generic resource). Jobs are submitted by Snakemake's SLURM executor; each scoring job
# gets a GPU from SLURM (gres/gpu) and scores on the CPU backend; the merged table must
# equal the local run's. Needs root, slurm-wlm, slurmdbd, munge, mariadb-server, snakemake
# and snakemake-executor-plugin-slurm (scripts/install-workflow-deps.sh); CI has them all.
# Missing any of them skips the tests, loudly, or fails them when HK_REQUIRE_WORKFLOW_TESTS=1.
# Time-bounded: the cluster bring-up and the Snakemake run are killed (SIGKILL) when late.

setup_file() {
    SRC=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
    export SRC
    # not under BATS_FILE_TMPDIR: the munge user must be able to reach its socket and key
    HK_SLURM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/haplik-slurm.XXXXXX")
    chmod 755 "$HK_SLURM_DIR"
    export HK_SLURM_DIR
    local why=
    if [ "$(id -u)" != 0 ]; then
        why="not root"
    else
        for p in snakemake slurmctld slurmd slurmdbd munged mariadbd sbatch sacct; do
            command -v "$p" >/dev/null || why="$why $p"
        done
        [ -z "$why" ] || why="missing:$why"
    fi
    if [ -z "$why" ] && ! snakemake --help 2>/dev/null | grep -q -- "--slurm-"; then
        why="snakemake-executor-plugin-slurm not installed"
    fi
    if [ -n "$why" ]; then
        echo "$why" >"$BATS_FILE_TMPDIR/skip"
        return 0
    fi
    # (diagnostics go to fd 3 as TAP comments)
    if ! timeout -s KILL 90 bash "$SRC/tests/slurm/cluster.sh" start "$HK_SLURM_DIR" 2>&1 | sed 's/^/# /' >&3 \
        || [ ! -e "$HK_SLURM_DIR/run/slurmctld.pid" ]; then
        bash "$SRC/tests/slurm/cluster.sh" logs "$HK_SLURM_DIR" 2>&1 | sed 's/^/# /' >&3 || true
        timeout -s KILL 60 bash "$SRC/tests/slurm/cluster.sh" stop "$HK_SLURM_DIR" || true
        echo "the SLURM test cluster did not come up" >"$BATS_FILE_TMPDIR/broken"
    fi
}

teardown_file() {
    [ -d "${HK_SLURM_DIR:-}" ] || return 0
    timeout -s KILL 60 bash "$SRC/tests/slurm/cluster.sh" stop "$HK_SLURM_DIR"
    rm -rf "$HK_SLURM_DIR"
}

setup() {
    load test_helper/common-setup
    _common_setup
    if [ -e "$BATS_FILE_TMPDIR/skip" ]; then
        local why
        why="SLURM TEST NOT RUN: $(cat "$BATS_FILE_TMPDIR/skip") (run scripts/install-workflow-deps.sh as root)"
        [ "${HK_REQUIRE_WORKFLOW_TESTS:-0}" != 1 ] || fail "$why (HK_REQUIRE_WORKFLOW_TESTS=1)"
        skip "$why"
    fi
    [ ! -e "$BATS_FILE_TMPDIR/broken" ] || fail "$(cat "$BATS_FILE_TMPDIR/broken")"
    eval "$(bash "$SRC/tests/slurm/cluster.sh" env "$HK_SLURM_DIR")"
    W="$BATS_TEST_TMPDIR/w"
    mkdir -p "$W"
    cd "$W" || return
    cat >config.yaml <<EOF
haplik: $HAPLIK
dumps: [$DATA/hc-NA12878-20_10000117.java.hmmresults.txt, $DATA/tiny.in, $DATA/10s.in]
shards: 2
scoring: {backend: cpu, threads: 2, mem_mb: 500, runtime: 10}
EOF
}

@test "slurm: the cluster schedules the gpu generic resource" {
    run -0 sinfo -h -N -o '%N %G %T'
    assert_output --regexp "^localhost gpu:2 idle"
    run -0 timeout -s KILL 60 srun --gpus=1 -c 1 --mem 100 sh -c 'echo "gpu=$CUDA_VISIBLE_DEVICES"'
    assert_output "gpu=0"
    run -0 timeout -s KILL 60 srun --gpus=2 -c 1 --mem 100 sh -c 'echo "gpu=$CUDA_VISIBLE_DEVICES"'
    assert_output "gpu=0,1"
    run ! timeout -s KILL 60 srun --immediate=5 --gpus=3 -c 1 --mem 100 true
}

@test "slurm: the SLURM profile runs the workflow through sbatch; table = the local run's" {
    mkdir slurm local
    cd slurm
    # SIGTERM does not stop a Snakemake waiting on its jobs: KILL it when late
    run timeout -s KILL 240 snakemake -s "$SRC/workflow/Snakefile" -d "$PWD" \
        --profile "$SRC/workflow/profiles/slurm" --configfile ../config.yaml \
        --slurm-init-seconds-before-status-checks 2 --retries 0
    if [ "$status" -ne 0 ]; then
        bash "$SRC/tests/slurm/cluster.sh" logs "$HK_SLURM_DIR" 2>&1 | sed 's/^/# /' >&3 || true
        find .snakemake/slurm_logs -name '*.log' -exec tail -n 20 {} + 2>/dev/null | sed 's/^/# /' >&3 || true
        fail "snakemake on SLURM failed (status $status): ${output: -3000}"
    fi
    assert_output --partial "has been submitted with SLURM jobid"
    # 3 planning jobs (the plain dumps are read in place) and 6 scoring jobs went through
    # SLURM; each scoring job had a GPU
    run -0 sacct -X -n -P -o Comment,State,AllocTRES
    local jobs=$output
    [ "$(grep -c '^rule_plan_dump.*|COMPLETED|' <<<"$jobs")" -eq 3 ] || fail "expected 3 planning jobs: $jobs"
    [ "$(grep -c '^rule_score_shard.*|COMPLETED|.*gres/gpu=1' <<<"$jobs")" -eq 6 ] || fail "expected 6 scoring jobs with a GPU: $jobs"
    [ "$(grep -c '^rule_plan_dump.*gres/gpu' <<<"$jobs")" -eq 0 ] || fail "a planning job had a GPU: $jobs"
    cd ../local
    run -0 timeout -s KILL 240 snakemake -s "$SRC/workflow/Snakefile" -d "$PWD" --cores 2 \
        --configfile ../config.yaml
    run -0 table same results/likelihoods.json ../slurm/results/likelihoods.json
    run -0 table get ../slurm/results/likelihoods.json "len(t['regions'])"
    assert_output 12
}
