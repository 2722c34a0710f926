#!/usr/bin/env python3
"""cycles.py TOP [BUILD] - no circles among the modules of src/ and kernels/: prints each one, exit 1 if any.

A module is the files of one directory that share a name but for the extension
(src/hk_table.c and src/hk_table.h; a header alone, such as src/hk_types.h, is a
module too). Module A depends on module B when a file of A includes a file of B
(#include "...", in src/ and kernels/), or, for the host's C code, when an object
file of A (an in-tree build's src/*.o and src/gkl/*.o; a library's copy, as
libNAME_a-hk_x.o, counts as hk_x) uses a symbol that an object of B defines (a symbol a macro pastes together
included, which the source's text would hide). No module may depend on itself
through others. BUILD: where the object files are (an out-of-tree build), TOP by default.
Exit 2 when no object file is found (build first)."""
import glob
import os
import re
import subprocess
import sys

top = sys.argv[1] if len(sys.argv) > 1 else "."
build = sys.argv[2] if len(sys.argv) > 2 else top
SRC_DIRS = ["src", "src/gkl", "kernels", "kernels/host", "kernels/device"]
SRC_EXT = (".c", ".h", ".cu", ".cuh", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module(path):
    d, name = os.path.split(path)
    if name.endswith(".o") and "-" in name:   # a library's copy: libhaplik_pic_a-hk_x.o
        name = name.split("-", 1)[1]
    return os.path.join(d, name.split(".", 1)[0])


files = []
for d in SRC_DIRS:
    for f in sorted(os.listdir(os.path.join(top, d))) if os.path.isdir(os.path.join(top, d)) else []:
        if f.endswith(SRC_EXT):
            files.append(os.path.join(d, f))
known = set(files)


def resolve(inc, frm):
    for d in [os.path.dirname(frm)] + SRC_DIRS:
        p = os.path.normpath(os.path.join(d, inc))
        if p in known:
            return p
    return None   # config.h, system headers


edges = {}   # (a, b) -> why


def depend(a, b, why):
    if a != b:
        edges.setdefault((a, b), why)


for f in files:
    with open(os.path.join(top, f), encoding="utf-8", errors="replace") as fh:
        text = re.sub(r"/\*.*?\*/", "", fh.read(), flags=re.S)
    for inc in INCLUDE.findall(text):
        p = resolve(inc, f)
        if p:
            depend(module(f), module(p), "%s includes %s" % (f, p))

sources = {module(f) for f in files if f.endswith((".c", ".cu"))}
objs = []
for d in ["src", "src/gkl"]:   # the objects of sources that are there (not a renamed file's, left behind)
    objs += [o for o in sorted(glob.glob(os.path.join(build, d, "*.o")))
             if module(os.path.relpath(o, build)) in sources]
if not objs:
    print("cycles.py: no object files under %s (build first)" % build, file=sys.stderr)
    sys.exit(2)
defined, used = {}, {}
for o in objs:
    rel = os.path.relpath(o, build)
    out = subprocess.run(["nm", "-P", o], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) < 2:
            continue
        if p[1] == "U":
            used.setdefault(rel, set()).add(p[0])
        elif p[1] in "TDBRCGSVW":
            defined.setdefault(p[0], module(rel))
for rel, names in used.items():
    for n in sorted(names):
        if n in defined:
            depend(module(rel), defined[n], "%s uses %s, defined in %s" % (rel, n, defined[n]))

graph = {}
for a, b in edges:
    graph.setdefault(a, set()).add(b)


def path_back(start):
    """The shortest way from start back to start, or None."""
    prev, frontier = {}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w == start:
                    way = [v]
                    while way[-1] != start:
                        way.append(prev[way[-1]])
                    return [start] + way[::-1][1:] + [start] if len(way) > 1 else [start, start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return None


seen, bad = set(), 0
for m in sorted(graph):
    way = path_back(m)
    if not way:
        continue
    key = frozenset(way)
    if key in seen:
        continue
    seen.add(key)
    bad += 1
    print("cycle: " + " -> ".join(way))
    for a, b in zip(way, way[1:]):
        print("    " + edges[(a, b)])
sys.exit(1 if bad else 0)
