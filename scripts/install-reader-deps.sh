#!/usr/bin/env bash
# install-reader-deps.sh - the data-frame libraries tests/readers.bats loads a tsv table with.
#
# Idempotent: a second run changes nothing.
#   apt:  python3-pandas and r-cran-data.table (Debian's; R comes with it)
#   pip:  polars and duckdb, pinned, into a virtual environment of their own ($HK_READERS_VENV,
#         default /opt/haplik-readers), built with --system-site-packages so that Debian's
#         pandas is there too; tests/readers.bats looks for it there.
# Environment: HK_READERS_VENV, HK_READERS_NO_APT=1 (skip apt, e.g. when not root).
set -euo pipefail

POLARS_VERSION=1.35.2
DUCKDB_VERSION=1.4.2
VENV=${HK_READERS_VENV:-/opt/haplik-readers}

say() { printf 'install-reader-deps: %s\n' "$*" >&2; }

if [ "${HK_READERS_NO_APT:-0}" != 1 ]; then
    [ "$(id -u)" = 0 ] || { say "run as root (or set HK_READERS_NO_APT=1 to skip apt)"; exit 2; }
    missing=
    for p in python3-pandas r-cran-data.table python3-venv; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        say "apt-get install$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        # shellcheck disable=SC2086
        apt-get install -y -qq --no-install-recommends $missing
    else
        say "apt packages already installed"
    fi
fi

has() {
    local info
    info=$("$VENV/bin/python" -m pip show "$1" 2>/dev/null) || return 1
    grep -qx "Version: $2" <<<"$info"
}
if [ -x "$VENV/bin/python" ] && has polars "$POLARS_VERSION" && has duckdb "$DUCKDB_VERSION"; then
    say "polars $POLARS_VERSION and duckdb $DUCKDB_VERSION already in $VENV"
else
    say "creating $VENV with polars $POLARS_VERSION and duckdb $DUCKDB_VERSION"
    /usr/bin/python3 -m venv --system-site-packages "$VENV"   # Debian's, which sees python3-pandas
    "$VENV/bin/python" -m pip install --quiet "polars==$POLARS_VERSION" "duckdb==$DUCKDB_VERSION"
fi
