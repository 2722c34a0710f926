#!/usr/bin/env bash
# build.sh KIT [--runtime] - builds the JNI benchmark harness into KIT: the Java classes
# (KIT/classes) and the copy-only binding (KIT/libhk_copyonly.so). --runtime also puts a
# minimal Java runtime in KIT/jre (jlink, java.base only) with the JDK's JNI headers in
# KIT/jre/include, for a host that has no JDK: there the kit runs with nothing else
# installed, and `./configure --with-jni=KIT/jre` builds haplik's library. Needs javac, and gcc with a JDK's jni.h
# (JAVA_HOME, else the JDK that javac belongs to).
set -euo pipefail
die() { echo "build.sh: error: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: build.sh KIT [--runtime]"
mkdir -p "$1"
kit=$(cd "$1" && pwd) runtime=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
command -v javac >/dev/null || die "javac not found (install a JDK, e.g. Debian's default-jdk-headless)"
jh=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}
[ -f "$jh/include/jni.h" ] || die "no jni.h under $jh/include (set JAVA_HOME to a JDK)"
mkdir -p "$kit/classes"
# the binding and holder classes are the test harness's own (tests/jni), the benchmark's beside them
( cd "$here/../../jni" && find "$here" com org -name '*.java' -print0 |
    xargs -0 javac -Xlint:all -Werror --release 11 -d "$kit/classes" )
"${CC:-gcc}" -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -I"$jh/include" -I"$jh/include/linux" \
    "$here/hk_copyonly.c" -o "$kit/libhk_copyonly.so"
if [ "$runtime" = --runtime ]; then
    rm -rf "$kit/jre"
    "$jh/bin/jlink" --add-modules java.base --strip-debug --no-man-pages --no-header-files \
        --compress=2 --output "$kit/jre"
    cp -r "$jh/include" "$kit/jre/include"
fi
echo "build.sh: harness built in $kit${runtime:+ (with a Java runtime in $kit/jre)}" >&2
