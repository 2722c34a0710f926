#!/usr/bin/env bash
# cluster.sh - a private single-node SLURM cluster on localhost, for tests/slurm.bats.
#
#   cluster.sh start DIR   bring it up under DIR (created; must not hold a running cluster)
#   cluster.sh stop DIR    stop every daemon by its pid file, cancel leftover jobs
#   cluster.sh env DIR     print the exports that point SLURM's commands at it: SLURM_CONF,
#                          and PATH with DIR/bin first (see below)
#   cluster.sh logs DIR    print the end of every daemon's log
#
# Everything lives in DIR: configs, munge key and socket, MariaDB data, SLURM state, pid
# files and logs; nothing under /etc or /run is touched, so it can run beside a real one.
# Daemons: munged (as the munge user), mariadbd + slurmdbd (accounting, so that sacct and
# the SLURM executor's default status checks work), slurmctld, slurmd -N localhost. The node
# declares a GPU generic resource (gres/gpu, File=/dev/null, AutoDetect=off) that SLURM
# schedules for real, and more CPUs and memory than the machine has (config_overrides).
# (File=/dev/null,/dev/zero: slurmd insists on device files, else the node drains or
# the GPUs get no CUDA_VISIBLE_DEVICES.) Run as root on Debian 12 with slurm-wlm, slurmdbd, munge and mariadb-server installed
# (scripts/install-workflow-deps.sh); no systemd needed. Bring-up takes a few seconds.
#
# DIR/bin/srun wraps srun to set SLURM_CONF again: the SLURM executor's job step plugin drops
# every SLURM_* variable before its nested srun, so without it srun inside a job would look
# for /etc/slurm/slurm.conf (a real cluster's place, which this one leaves alone).
#
# Environment: HK_SLURM_PORT (base TCP port on 127.0.0.1, default 16817; uses 4 ports),
# HK_SLURM_CPUS (default 4), HK_SLURM_GPUS (default 2), HK_SLURM_MEM_MB (default 16000).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cmd=${1:-}
D=${2:-}
if [ -z "$cmd" ] || [ -z "$D" ]; then echo "usage: $0 start|stop|env DIR" >&2; exit 2; fi

PORT=${HK_SLURM_PORT:-16817}
CTLD_PORT=$PORT SLURMD_PORT=$((PORT + 1)) DBD_PORT=$((PORT + 2)) DB_PORT=$((PORT + 3))
CPUS=${HK_SLURM_CPUS:-4}
GPUS=${HK_SLURM_GPUS:-2}
MEM_MB=${HK_SLURM_MEM_MB:-16000}
CLUSTER=haplikci
DB_PASS=haplik-ci-only

say() { printf 'cluster.sh: %s\n' "$*" >&2; }

# wait_for SECONDS WHAT CMD...: poll CMD every 0.2 s
wait_for() {
    local secs=$1 what=$2 i
    shift 2
    for ((i = 0; i < secs * 5; i++)); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.2
    done
    say "timed out after ${secs}s waiting for $what"
    return 1
}

slurm_env() {
    export SLURM_CONF="$D/etc/slurm.conf"
}

render() { # render TEMPLATE OUT: @VAR@ -> value
    sed -e "s|@DIR@|$D|g" -e "s|@CLUSTER@|$CLUSTER|g" \
        -e "s|@CTLD_PORT@|$CTLD_PORT|g" -e "s|@SLURMD_PORT@|$SLURMD_PORT|g" \
        -e "s|@DBD_PORT@|$DBD_PORT|g" -e "s|@DB_PORT@|$DB_PORT|g" -e "s|@DB_PASS@|$DB_PASS|g" \
        -e "s|@CPUS@|$CPUS|g" -e "s|@GPUS@|$GPUS|g" -e "s|@MEM_MB@|$MEM_MB|g" \
        -e "s|@GPU_FILES@|$(gpu_files)|g" "$1" >"$2"
}

gpu_files() { # stand-in GPU device files: harmless character devices (slurmd wants
    # character or block devices; nothing opens them, there are no cgroups here)
    local d f=()
    for d in /dev/null /dev/zero /dev/full /dev/urandom /dev/random; do
        [ -c "$d" ] && [ ${#f[@]} -lt "$GPUS" ] && f+=("$d")
    done
    [ ${#f[@]} -eq "$GPUS" ] || { say "HK_SLURM_GPUS=$GPUS: only ${#f[@]} stand-in device files"; exit 2; }
    (IFS=,; echo "${f[*]}")
}

dump_logs() {
    local f
    for f in "$D"/log/*.log; do
        [ -f "$f" ] || continue
        say "---- $f (last 20 lines)"
        tail -n 20 "$f" >&2 || true
    done
}

start() {
    [ "$(id -u)" = 0 ] || { say "must run as root"; exit 2; }
    for p in munged mariadbd mariadb-install-db slurmdbd slurmctld slurmd sacctmgr sinfo runuser; do
        command -v "$p" >/dev/null || { say "$p not found: run scripts/install-workflow-deps.sh"; exit 2; }
    done
    if [ -e "$D/run/slurmctld.pid" ]; then say "$D already holds a cluster; stop it first"; exit 2; fi
    mkdir -p "$D"
    D=$(cd "$D" && pwd)
    chmod 755 "$D"
    runuser -u munge -- test -x "$D" || { say "the munge user cannot reach $D: use a directory every user can enter"; exit 2; }
    mkdir -p "$D"/{etc,run,log,state,spool/slurmd-localhost,db}
    # munge: private key and socket, owned by the munge user, who runs munged
    mkdir -p "$D/munge"
    dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
    chown -R munge:munge "$D/munge"
    chmod 755 "$D/munge" # clients need to reach the socket
    chmod 400 "$D/munge/munge.key"
    runuser -u munge -- munged --force --key-file="$D/munge/munge.key" \
        --socket="$D/munge/munge.socket" --pid-file="$D/munge/munged.pid" \
        --log-file="$D/munge/munged.log" --seed-file="$D/munge/munged.seed"
    wait_for 10 munged test -S "$D/munge/munge.socket"

    # MariaDB for slurmdbd, on 127.0.0.1:DB_PORT only
    mariadb-install-db --no-defaults --datadir="$D/db" --user=root --auth-root-authentication-method=socket \
        --skip-test-db >"$D/log/mariadb-install.log" 2>&1 || { say "mariadb-install-db failed"; tail "$D/log/mariadb-install.log" >&2; exit 3; }
    mariadbd --no-defaults --user=root --datadir="$D/db" --socket="$D/run/mysqld.sock" \
        --pid-file="$D/run/mariadbd.pid" --bind-address=127.0.0.1 --port="$DB_PORT" \
        --log-error="$D/log/mariadbd.log" --innodb-buffer-pool-size=64M >/dev/null 2>&1 &
    wait_for 30 mariadbd mariadb --no-defaults --socket="$D/run/mysqld.sock" -uroot -e 'select 1'
    mariadb --no-defaults --socket="$D/run/mysqld.sock" -uroot <<EOF
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASS';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
EOF

    render "$here/slurm.conf.in" "$D/etc/slurm.conf"
    render "$here/gres.conf.in" "$D/etc/gres.conf"
    render "$here/slurmdbd.conf.in" "$D/etc/slurmdbd.conf"
    chmod 600 "$D/etc/slurmdbd.conf"
    mkdir -p "$D/bin"
    printf '#!/bin/sh\n# see tests/slurm/cluster.sh\nSLURM_CONF=%s/etc/slurm.conf exec %s "$@"\n' \
        "$D" "$(command -v srun)" >"$D/bin/srun"
    chmod 755 "$D/bin/srun"
    slurm_env

    slurmdbd
    wait_for 30 slurmdbd timeout 5 sacctmgr -n list cluster
    sacctmgr -i add cluster "$CLUSTER" >/dev/null
    sacctmgr -i add account haplik Cluster="$CLUSTER" Description=haplik-ci Organization=haplik >/dev/null
    sacctmgr -i add user root Account=haplik DefaultAccount=haplik Cluster="$CLUSTER" >/dev/null

    slurmctld
    wait_for 30 slurmctld timeout 5 scontrol ping
    slurmd -N localhost
    node_idle() { timeout 5 sinfo -h -N -n localhost -o '%T' | grep -Eq '^(idle|mixed|allocated)'; }
    if ! wait_for 30 "node localhost to be idle" node_idle; then
        sinfo -N -l >&2 || true
        dump_logs
        exit 3
    fi
    say "up: $CPUS CPUs, gres/gpu:$GPUS, accounting on; export SLURM_CONF=$SLURM_CONF"
}

stop_pidfile() { # stop_pidfile NAME FILE: TERM, wait up to 10 s, then KILL
    local name=$1 f=$2 pid i
    [ -f "$f" ] || return 0
    pid=$(cat "$f" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        if kill -0 "$pid" 2>/dev/null; then
            say "$name ($pid) did not stop; killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$f"
}

stop() {
    [ -d "$D" ] || return 0
    D=$(cd "$D" && pwd)
    slurm_env
    if [ -f "$D/run/slurmctld.pid" ] && command -v scancel >/dev/null; then
        timeout 10 scancel --full --cluster="$CLUSTER" --user=root >/dev/null 2>&1 || true
        # let slurmd reap the job steps it started before it goes
        for ((i = 0; i < 25; i++)); do
            [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.2
        done
    fi
    stop_pidfile slurmd "$D/run/slurmd-localhost.pid"
    stop_pidfile slurmctld "$D/run/slurmctld.pid"
    stop_pidfile slurmdbd "$D/run/slurmdbd.pid"
    stop_pidfile mariadbd "$D/run/mariadbd.pid"
    stop_pidfile munged "$D/munge/munged.pid"
}

case $cmd in
    start) start ;;
    stop) stop ;;
    env) D=$(cd "$D" && pwd); echo "export SLURM_CONF=$D/etc/slurm.conf PATH=$D/bin:\$PATH" ;;
    logs) dump_logs ;;
    *) echo "usage: $0 start|stop|env|logs DIR" >&2; exit 2 ;;
esac
