#!/usr/bin/env bash
# install-workflow-deps.sh - what the workflow tests (tests/workflow.bats, tests/slurm.bats) need.
#
# Run as root on Debian 12 (no systemd needed). Idempotent: a second run changes nothing.
#   apt:  slurm-wlm (slurmctld, slurmd, client tools), munge, slurmdbd, mariadb-server
#         (accounting, so that the SLURM executor's sacct status checks work), python3-venv
#   pip:  snakemake and snakemake-executor-plugin-slurm, pinned, into a virtual environment
#         ($HK_WF_VENV, default /opt/haplik-workflow), with `snakemake` linked into /usr/local/bin;
#         in the same environment, pinned, what the report needs without conda: matplotlib (the
#         rule report_figures runs its script in Snakemake's own Python; workflow/envs/report.yaml pins
#         the same version for --use-conda) and pygments (`snakemake --report` requires it).
# No daemon is started or enabled here: tests/slurm/cluster.sh starts its own private cluster.
#
# The environment is for every user of the host: it is built on a Python that every user can
# run (the system's /usr/bin/python3 by default, not one under a private home directory such
# as pyenv's), its files are readable by all, and the script ends by running its snakemake as
# the unprivileged user `nobody` (when run as root). An environment an earlier run built on a
# private Python is built again.
#
# Environment: HK_WF_VENV (venv directory), HK_WF_PYTHON (python >= 3.11 to build it with,
# default /usr/bin/python3, else python3), HK_WF_NO_APT=1 (skip the apt part, e.g. when not
# root), HK_WF_LINK=0 (do not link snakemake into /usr/local/bin).
set -euo pipefail

SNAKEMAKE_VERSION=9.27.1
SLURM_PLUGIN_VERSION=2.8.0
MATPLOTLIB_VERSION=3.10.8   # the same as workflow/envs/report.yaml
PYGMENTS_VERSION=2.19.2
VENV=${HK_WF_VENV:-/opt/haplik-workflow}
if [ -n "${HK_WF_PYTHON:-}" ]; then PY=$HK_WF_PYTHON
elif [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3
else PY=python3
fi

say() { printf 'install-workflow-deps: %s\n' "$*" >&2; }

if [ "${HK_WF_NO_APT:-0}" != 1 ]; then
    [ "$(id -u)" = 0 ] || { say "run as root (or set HK_WF_NO_APT=1 to skip apt)"; exit 2; }
    pkgs="slurm-wlm munge slurmdbd mariadb-server mariadb-client python3-venv coreutils procps"
    missing=
    for p in $pkgs; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        say "apt-get install$missing"
        export DEBIAN_FRONTEND=noninteractive
        # Keep the packages' maintainer scripts from starting daemons (no systemd here, and
        # the tests run their own): policy-rc.d exit 101 = "action forbidden".
        made_policy=0
        if [ ! -e /usr/sbin/policy-rc.d ]; then
            printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
            chmod 755 /usr/sbin/policy-rc.d
            made_policy=1
        fi
        apt-get update -qq
        # shellcheck disable=SC2086 # a list of package names
        apt-get install -y -qq --no-install-recommends $missing
        [ "$made_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
    else
        say "apt packages already installed"
    fi
fi

want="snakemake==$SNAKEMAKE_VERSION snakemake-executor-plugin-slurm==$SLURM_PLUGIN_VERSION"
want="$want matplotlib==$MATPLOTLIB_VERSION pygments==$PYGMENTS_VERSION"
# has PACKAGE VERSION: the venv holds that version (pip's output read whole: grep -q would
# stop early and, under pipefail, pip's SIGPIPE would read as "not installed")
has() {
    local info
    info=$("$VENV/bin/python" -m pip show "$1" 2>/dev/null) || return 1
    grep -qx "Version: $2" <<<"$info"
}
# for_all PATH: every user may reach and read PATH (each folder on the way searchable by all)
for_all() {
    local p
    p=$(readlink -f "$1") || return 1
    [ -r "$p" ] && [ "$(( 0$(stat -c %a "$p") & 04 ))" != 0 ] || return 1
    while p=$(dirname "$p"); [ "$p" != / ]; do
        [ "$(( 0$(stat -c %a "$p") & 01 ))" != 0 ] || return 1
    done
}
# the Python the environment runs, and its standard library, must be every user's
shared_python() {
    local exe lib
    exe=$("$1" -c 'import sys; print(sys.executable)' 2>/dev/null) || return 1
    lib=$("$1" -c 'import os, sysconfig; print(os.path.join(sysconfig.get_path("stdlib"), "os.py"))' 2>/dev/null) || return 1
    for_all "$exe" && for_all "$lib"
}
shared_python "$PY" || {
    say "$PY ($(readlink -f "$(command -v "$PY")")) cannot be run by every user of the host" \
        "(a folder on its way is private): set HK_WF_PYTHON to a Python every user can run"
    exit 2
}
if [ -x "$VENV/bin/python" ] && ! shared_python "$VENV/bin/python"; then
    say "$VENV was built on a Python other users cannot run ($(readlink -f "$VENV/bin/python")): building it again"
    rm -rf "$VENV"
fi
if [ -x "$VENV/bin/snakemake" ] \
   && [ "$("$VENV/bin/snakemake" --version 2>/dev/null)" = "$SNAKEMAKE_VERSION" ] \
   && has snakemake-executor-plugin-slurm "$SLURM_PLUGIN_VERSION" \
   && has matplotlib "$MATPLOTLIB_VERSION" && has pygments "$PYGMENTS_VERSION"; then
    say "snakemake $SNAKEMAKE_VERSION, the SLURM plugin, matplotlib and pygments already in $VENV"
else
    say "creating $VENV with $want"
    "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    # shellcheck disable=SC2086
    "$VENV/bin/python" -m pip install --quiet $want
fi
chmod -R a+rX "$VENV"
if [ "${HK_WF_LINK:-1}" = 1 ]; then
    ln -sf "$VENV/bin/snakemake" /usr/local/bin/snakemake 2>/dev/null \
        || say "could not link $VENV/bin/snakemake into /usr/local/bin; put $VENV/bin on PATH"
fi
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    # what another user of the host meets (the folder it runs in must be theirs to read)
    (cd / && runuser -u nobody -- \
        "$VENV/bin/snakemake" --version >/dev/null) \
        || { say "$VENV/bin/snakemake does not run as the user nobody"; exit 3; }
fi
say "snakemake $("$VENV/bin/snakemake" --version) ready ($VENV/bin/snakemake)"
