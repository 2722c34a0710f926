#!/usr/bin/env bash
# setup.sh - install what is missing on Debian/Ubuntu, then build haplik in place.
#
#   bash scripts/setup.sh            build dependencies (apt), then autoreconf, configure, make
#   bash scripts/setup.sh --tests    also what the tests need: bats, shellcheck, bgzip, python3, clang for the
#                                    fuzz targets, Debian's GKL (libgkl-java, libgkl-jni,
#                                    libgatk-native-bindings-java), the workflow tests' Snakemake and SLURM, and
#                                    the data-frame readers of tests/readers.bats
#                                    (scripts/install-workflow-deps.sh), and the aarch64
#                                    cross compiler and qemu-user of tests/arm.bats
#
# Idempotent. apt needs root: the script uses sudo when it is not root. Extra configure
# flags come from $HAPLIK_CONFIGURE_FLAGS (e.g. --disable-cuda, --with-cuda-arch=90).
set -euo pipefail
cd "$(dirname "$0")/.."

tests=0
for a in "$@"; do
    case $a in
    --tests) tests=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument $a" >&2; exit 2 ;;
    esac
done

say() { printf 'setup: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

pkgs="build-essential autoconf automake pkg-config libhts-dev libcjson-dev zlib1g-dev libisal-dev"
pkgs="$pkgs default-jdk-headless"   # jni.h for libhaplik_gkl.so, javac and java for its tests
[ "$tests" = 1 ] && pkgs="$pkgs bats bats-support bats-assert tabix python3 gzip xz-utils bzip2 time clang-14 libclang-rt-14-dev shellcheck"
# tests/arm.bats: the aarch64 build (scripts/cross-aarch64.sh) run under emulation
[ "$tests" = 1 ] && pkgs="$pkgs gcc-aarch64-linux-gnu qemu-user debian-archive-keyring file"
# GKL's own Java classes and native libraries, the real client of libhaplik_gkl.so (tests/gkl.bats,
# scripts/bench-gkl.sh --gkl-classes)
[ "$tests" = 1 ] && pkgs="$pkgs libgkl-java libgkl-jni libgatk-native-bindings-java"
missing=
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
    say "installing:$missing"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # shellcheck disable=SC2086 # a list of package names
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi
if [ "$tests" = 1 ]; then
    as_root bash scripts/install-workflow-deps.sh
    as_root bash scripts/install-reader-deps.sh   # pandas, polars, data.table, DuckDB
fi

if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
    say "autoreconf"
    autoreconf -fi
fi
if [ ! -f Makefile ] || [ configure -nt Makefile ]; then
    # shellcheck disable=SC2086
    ./configure ${HAPLIK_CONFIGURE_FLAGS:-}
fi
make -j"$(nproc)"
say "built ./haplik ($(./haplik --version | paste -sd ' '))"
