#!/usr/bin/env bash
# cross-aarch64.sh - build haplik for aarch64 Linux on an x86-64 Debian/Ubuntu host.
#
#   bash scripts/cross-aarch64.sh [--dir DIR] [--jvm] [--fetch-only]
#
# 1. An arm64 sysroot in DIR/sysroot: Debian's arm64 packages of libhts, libcjson,
#    zlib, isa-l and everything they depend on, fetched with `apt-get download`
#    through a private apt state (DIR/apt, arm64 only) and unpacked with `dpkg -x`.
#    Nothing is installed on the host: no arm64 architecture is added to its dpkg,
#    so apt never upgrades or removes the host's amd64 libraries.
# 2. The source tree copied to DIR/src, configured there with
#    --host=aarch64-linux-gnu --disable-cuda and built (make -j2): DIR/src/haplik,
#    DIR/src/libhaplik_gkl.so, DIR/src/libgkl_utils.so.
#   --jvm         also unpack an arm64 OpenJDK 17 (headless) into the sysroot and GKL's
#                 Java classes (Debian's libgkl-java and the jars it needs) into
#                 DIR/sysroot/usr/share/java, for tests/arm.bats
#   --fetch-only  the sysroot alone
#   --dir DIR     where it all goes [build-aarch64]
# Needs gcc-aarch64-linux-gnu (the cross compiler) and dpkg; run the results with
# qemu-aarch64 (qemu-user) and QEMU_LD_PREFIX=DIR/sysroot. CFLAGS, where set, go to
# configure, and so do HAPLIK_CONFIGURE_FLAGS. The mirror and suite
# come from HK_ARM64_MIRROR [http://deb.debian.org/debian] and HK_ARM64_SUITE [bookworm].
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)

say() { printf 'cross-aarch64: %s\n' "$*" >&2; }
die() { printf 'cross-aarch64: error: %s\n' "$*" >&2; exit 2; }

dir=build-aarch64 jvm=0 fetch_only=0
while [ $# -gt 0 ]; do
    case $1 in
    --dir) [ $# -ge 2 ] || die "--dir needs a DIR"; dir=$2; shift 2 ;;
    --dir=*) dir=${1#--dir=}; shift ;;
    --jvm) jvm=1; shift ;;
    --fetch-only) fetch_only=1; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
    esac
done
mkdir -p "$dir" && dir=$(cd "$dir" && pwd)
sysroot=$dir/sysroot
triplet=aarch64-linux-gnu
if ! command -v dpkg >/dev/null || ! command -v apt-get >/dev/null; then die "needs dpkg and apt-get (Debian/Ubuntu)"; fi

# ---- the private apt state: arm64 indexes of one Debian suite ----
mirror=${HK_ARM64_MIRROR:-http://deb.debian.org/debian}
suite=${HK_ARM64_SUITE:-bookworm}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || die "$keyring not found: apt-get install debian-archive-keyring"
ad=$dir/apt
mkdir -p "$ad/state/lists/partial" "$ad/cache/archives/partial" "$ad/parts" "$dir/debs"
: > "$ad/state/status"
cat > "$ad/sources.list" <<EOF
deb [arch=arm64 signed-by=$keyring] $mirror $suite main
deb [arch=arm64 signed-by=$keyring] $mirror $suite-updates main
EOF
apt_opts=(-o "Dir::State=$ad/state" -o "Dir::State::status=$ad/state/status"
          -o "Dir::Cache=$ad/cache" -o "Dir::Etc::SourceList=$ad/sources.list"
          -o "Dir::Etc::SourceParts=$ad/parts" -o "Dir::Etc::Preferences=/dev/null"
          -o "Dir::Etc::PreferencesParts=$ad/parts" -o "APT::Architecture=arm64"
          -o "APT::Architectures::=arm64" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=$(id -un)")
if [ ! -f "$ad/updated" ] || [ -n "$(find "$ad/updated" -mmin +1440)" ]; then
    say "arm64 package indexes of $suite ($mirror)"
    apt-get "${apt_opts[@]}" -qq update || die "apt-get update of the arm64 indexes failed"
    touch "$ad/updated"
fi

# the closure of Depends and Pre-Depends, less what a sysroot for linking and
# running needs not (the host's cross toolchain brings libc's headers)
closure() {
    apt-cache "${apt_opts[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
        --no-breaks --no-replaces --no-enhances "$@" |
        grep -v '^ \|^<' | sort -u |
        grep -vxE 'libc6-dev|linux-libc-dev|libcrypt-dev|libnsl-dev|libtirpc-dev|rpcsvc-proto|libc-dev-bin|debconf|perl-base|dpkg|tar|coreutils|install-info|debianutils|sensible-utils|base-files|dash|diffutils|grep|gzip|sed|findutils|init-system-helpers|libdebconfclient0|util-linux|login|passwd|adduser|mount|bsdutils|ncurses-base|ncurses-bin|sysvinit-utils|lsb-base|ucf|ca-certificates|ca-certificates-java|java-common|libpam.*|libaudit.*|libsemanage.*|libselinux1|libsystemd0|libudev1|systemd.*|openssl|cdebconf|libcap-ng0|libcap2|libsmartcols1|libblkid1|libmount1|libuuid1|debconf-2.0|libsepol2'
}
pkgs=$(closure libhts-dev libcjson-dev zlib1g-dev libisal-dev libc6 libgcc-s1) || die "apt-cache depends failed"
if [ "$jvm" = 1 ]; then
    # the JVM of tests/arm.bats: the runtime and the libraries libjvm and its launcher
    # load (not its desktop ones), and GKL's classes with the jars their loading needs
    jpkgs=$(closure openjdk-17-jre-headless libstdc++6 libgkl-java libcommons-logging-java) || die "apt-cache depends failed"
    # shellcheck disable=SC2086 # a list of package names
    pkgs="$pkgs $(printf '%s\n' $jpkgs | grep -E '^(openjdk-17-jre-headless|libstdc\+\+6|zlib1g|libgcc-s1|gcc-12-base|libc6|libgkl-java|libgatk-native-bindings-java|libcommons-logging-java)$')"
fi
# shellcheck disable=SC2086 # a list of package names
pkgs=$(printf '%s\n' $pkgs | sort -u)
stamp=$sysroot/.packages
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pkgs" ]; then
    # shellcheck disable=SC2086 # a list of package names
    say "sysroot $sysroot is up to date ($(printf '%s\n' $pkgs | wc -l) packages)"
else
    # shellcheck disable=SC2086 # a list of package names
    say "fetching $(printf '%s\n' $pkgs | wc -l) arm64 packages into $dir/debs"
    # shellcheck disable=SC2086
    (cd "$dir/debs" && apt-get "${apt_opts[@]}" -qq download $pkgs) || die "apt-get download failed"
    rm -rf "$sysroot" && mkdir -p "$sysroot"
    for p in $pkgs; do
        deb=$(find "$dir/debs" -maxdepth 1 \( -name "${p}_*_arm64.deb" -o -name "${p}_*_all.deb" \) | sort -V | tail -n 1)
        [ -n "$deb" ] || die "$p: no .deb in $dir/debs"
        dpkg -x "$deb" "$sysroot" || die "$deb: dpkg -x failed"
    done
    # absolute symbolic links (libz.so -> /lib/...) point into the sysroot
    find "$sysroot" -type l -lname '/*' | while read -r l; do
        ln -sfn "$sysroot$(readlink "$l")" "$l"
    done
    printf '%s\n' "$pkgs" > "$stamp"
    say "sysroot ready: $sysroot"
fi
[ "$fetch_only" = 1 ] && exit 0

# ---- the cross build, in a copy of the source tree ----
command -v "$triplet-gcc" >/dev/null || die "$triplet-gcc not found: apt-get install gcc-aarch64-linux-gnu"
b=$dir/src
mkdir -p "$b"
# the files git tracks or would (all, outside git), and what autoreconf made here, times kept
{ git -C "$src" ls-files -z --cached --others --exclude-standard 2>/dev/null || find . -path ./build-aarch64 -prune -o -type f -print0; } |
    tar -C "$src" --null -T - -cf - | tar -C "$b" -xf -
for f in configure Makefile.in aclocal.m4 config.h.in build-aux m4; do
    [ -e "$src/$f" ] && cp -a "$src/$f" "$b/"
done
libdirs="$sysroot/usr/lib/$triplet:$sysroot/lib/$triplet"
jdk=$(ls -d /usr/lib/jvm/default-java 2>/dev/null || true)   # jni.h is the same on every architecture
cd "$b"
[ -x configure ] || autoreconf -fi
# configured again (and built from clean) when CFLAGS or HAPLIK_CONFIGURE_FLAGS change
want="CFLAGS=${CFLAGS-default} ${HAPLIK_CONFIGURE_FLAGS:-}"
if [ ! -f Makefile ] || [ configure -nt Makefile ] || [ "$(cat "$dir/configured" 2>/dev/null)" != "$want" ]; then
    say "configure --host=$triplet --disable-cuda ($want)"
    cflags=(); [ -z "${CFLAGS+set}" ] || cflags=("CFLAGS=$CFLAGS")
    # shellcheck disable=SC2086 # HAPLIK_CONFIGURE_FLAGS: flags, split on purpose
    PKG_CONFIG_LIBDIR="$sysroot/usr/lib/$triplet/pkgconfig:$sysroot/usr/share/pkgconfig" \
    PKG_CONFIG_SYSROOT_DIR="$sysroot" PKG_CONFIG=pkg-config \
    ./configure --host="$triplet" --disable-cuda ${jdk:+--with-jni="$jdk"} \
        LDFLAGS="-L$sysroot/usr/lib/$triplet -Wl,-rpath-link,$libdirs" \
        JAVAC='' JAVA='' "${cflags[@]}" ${HAPLIK_CONFIGURE_FLAGS:-} > "$dir/configure.out" ||
        { tail -n 20 "$dir/configure.out" >&2; die "configure failed ($b/config.log)"; }
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make clean >/dev/null
    printf '%s\n' "$want" > "$dir/configured"
fi
# (a make of its own, also when a make check runs this)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -j2 >"$dir/make.out" 2>&1 || { tail -n 30 "$dir/make.out" >&2; die "make failed ($dir/make.out)"; }
warnings=$(grep -cE '^[^ :]+:[0-9]+:([0-9]+:)? warning:' "$dir/make.out" || true)
built=
for f in haplik libhaplik_gkl.so libgkl_utils.so haplik-gatk-libs; do [ -f "$f" ] && built="$built $b/$f"; done
say "built:$built; $warnings compiler warnings"
say "run: QEMU_LD_PREFIX=$sysroot qemu-aarch64 $b/haplik --version"
