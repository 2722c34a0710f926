#!/bin/sh
# make-bundle.sh - build haplik into a self-contained folder for an offline GPU node.
#
#   scripts/make-bundle.sh [-o DIR] [--arch LIST] [--src DIR] [--build-dir DIR] [--no-build]
#                          [-j N] [--no-bats]
#
# The folder (default .bundle/) gets:
#   bin/haplik        built here for the given CUDA architectures (default 90),
#                     and bgzip (the tests make BGZF files) when this host has it
#   lib/              the shared libraries it needs that are not glibc's (from ldd:
#                     htslib, cJSON, libdeflate, libcurl, ...), found through env.sh
#   tests/            a copy of tests/, with the built test programs (make check's
#                     check_PROGRAMS, e.g. tests/gpu/gpu_vs_cpu) in place
#   README.md         (config.bats checks its configuration table), docs/SPEC.md
#                     (test_status checks its exit statuses)
#   bats/             bats, bats-support and bats-assert, unpacked with
#                     apt-get download + dpkg -x (into the folder, never into /)
#   tools/            gen_batches.py (seeded benchmark inputs, pure python3)
#   env.sh            . DIR/env.sh sets PATH, LD_LIBRARY_PATH, BATS_LIB_PATH,
#                     HAPLIK, HK_TESTDATA and GEN_BATCHES
# The build runs on a copy of the source tree (the checkout's tracked and
# untracked, not ignored, files; --src picks another tree) in --build-dir
# (default: a temporary folder, removed at the end), so the checkout's own
# configure and build are left alone. --no-build reuses --build-dir as it is.
set -eu

out=.bundle
arch=90
src=
jobs=$(nproc 2>/dev/null || echo 2)
bats=1
build=1
bdir=

usage() {
    sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
    exit "${1:-0}"
}

while [ $# -gt 0 ]; do
    case $1 in
    -o) out=$2; shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --src) src=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --no-bats) bats=0; shift ;;
    --build-dir) bdir=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) usage 0 ;;
    *) echo "make-bundle.sh: unknown option '$1'" >&2; usage 2 >&2 ;;
    esac
done

top=$(git rev-parse --show-toplevel 2>/dev/null || pwd)
[ -n "$src" ] || src=$top
case $out in /*) ;; *) out=$top/$out ;; esac
mkdir -p "$out"
out=$(cd "$out" && pwd)

say() { echo "make-bundle: $*" >&2; }

# ---- build on a copy of the tree ----
if [ -n "$bdir" ]; then
    mkdir -p "$bdir"
    b=$(cd "$bdir" && pwd)
    keep=1
else
    [ "$build" = 1 ] || { say "--no-build needs --build-dir"; exit 2; }
    b=$(mktemp -d "${TMPDIR:-/tmp}/haplik-bundle.XXXXXX")
    keep=0
fi
if [ "$build" = 1 ]; then
    say "copying the source tree from $src"
    rm -rf "$b"
    mkdir -p "$b"
    if git -C "$src" rev-parse >/dev/null 2>&1; then
        (cd "$src" && git ls-files -co --exclude-standard -z |
            xargs -0 tar -cf - --no-recursion --ignore-failed-read 2>/dev/null) | tar -xf - -C "$b"
    else
        (cd "$src" && tar -cf - --exclude=./.bundle --exclude=./.git .) | tar -xf - -C "$b"
    fi
    mkdir -p "$b/m4"                  # kept empty in git (generated macros are ignored)
    say "building for CUDA architectures $arch"
    (cd "$b" && autoreconf -fi >/dev/null &&
        ./configure --enable-cuda=yes --with-cuda-arch="$arch" >configure.out &&
        make -j"$jobs" >make.out 2>&1 &&
        make -j"$jobs" check TESTS= >make-check.out 2>&1 &&
        make -j"$jobs" tests/bench/bench_io tests/bench/bench_pack tests/gpu/time_gpu \
            tests/bench/bench_pdhmm >>make-check.out 2>&1) ||
        { say "build failed; see $b/configure.out, make.out, make-check.out"; exit 1; }
fi
[ -x "$b/haplik" ] || { say "no haplik binary in $b"; exit 1; }

# ---- binary and libraries ----
rm -rf "${out:?}/bin" "${out:?}/lib" "${out:?}/tests" "${out:?}/tools"
mkdir -p "$out/bin" "$out/lib" "$out/tools"
cp "$b/haplik" "$out/bin/"
# tools the tests call that a bare GPU node may lack (htslib's bgzip)
if p=$(command -v bgzip 2>/dev/null); then
    cp -L "$p" "$out/bin/"
else
    say "no bgzip here: tests that need it will fail there"
fi
# the test sources, then the built test programs over them (an out-of-tree
# --build-dir holds only the latter)
cp -R "$src/tests" "$out/tests"
cp -R "$b/tests/." "$out/tests/"
cp "$src/README.md" "$out/"   # config.bats checks the README's configuration table
mkdir -p "$out/docs"
cp "$src/docs/SPEC.md" "$out/docs/"   # test_status checks the exit statuses it documents
find "$out/tests" \( -name '*.o' -o -name '*.log' -o -name '*.trs' -o -name .deps -o -name .dirstamp \) \
    -prune -exec rm -rf {} + 2>/dev/null || true
# the project's own generator (it has the pdhmm layout the shared one lacks)
cp "$top/scripts/gen_batches.py" "$out/tools/"

# shared libraries of every program in the bundle, glibc's own excepted
progs=$(find "$out/bin" "$out/tests" -type f -perm -u+x 2>/dev/null)
for p in $progs; do
    file "$p" 2>/dev/null | grep -q ELF || continue
    ldd "$p" 2>/dev/null | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do
    case $(basename "$lib") in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*|libutil.so*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
    esac
done
say "libraries: $(find "$out/lib" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tr '\n' ' ')"

# ---- bats ----
if [ "$bats" = 1 ]; then
    tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download bats bats-support bats-assert >/dev/null) ||
        { say "apt-get download bats bats-support bats-assert failed"; rm -rf "$tmp"; exit 1; }
    rm -rf "$out/bats"
    mkdir -p "$out/bats"
    for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$out/bats"; done
    rm -rf "$tmp"
fi

# ---- environment ----
cat >"$out/env.sh" <<'EOF'
# . this file to use the bundle (any shell of the Bourne family)
HAPLIK_BUNDLE=$(cd "$(dirname "${BASH_SOURCE:-$0}")" 2>/dev/null && pwd)
[ -x "$HAPLIK_BUNDLE/bin/haplik" ] || HAPLIK_BUNDLE=$(pwd)
export HAPLIK_BUNDLE
export PATH="$HAPLIK_BUNDLE/bin:$HAPLIK_BUNDLE/bats/usr/bin:$PATH"
export LD_LIBRARY_PATH="$HAPLIK_BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export BATS_LIB_PATH="$HAPLIK_BUNDLE/bats/usr/lib/bats"
export HAPLIK="$HAPLIK_BUNDLE/bin/haplik"
export HK_TESTDATA="$HAPLIK_BUNDLE/tests/data"
export GEN_BATCHES="$HAPLIK_BUNDLE/tools/gen_batches.py"
EOF
[ "$keep" = 1 ] || rm -rf "$b"
say "done: $out ($(du -sh "$out" 2>/dev/null | cut -f1)); use it with: . $out/env.sh"
