#!/usr/bin/env python3
"""citations.py TOP - every citation of a document's section in the tree, written as
FILE, "Section" (or FILE "Section", FILE section "Section"), where FILE is README(.md),
SPEC or docs/NAME.md, must name a heading of that file (a line of #s whose text holds
the section's name). Prints each one that does not, as FILE:LINE: the citation; exit 1 if any."""
import os
import re
import sys

top = sys.argv[1] if len(sys.argv) > 1 else "."
CITE = re.compile(r'\b(docs/[A-Z]+\.md|README(?:\.md)?|SPEC(?:\.md)?)(?:,|\s+section)?\s+"([^"\n]{3,80})"')
WHERE = ["src", "kernels", "tests", "docs", "scripts", "workflow", "README.md", "CHANGELOG.md"]
SKIP_DIRS = {".git", "data", "__pycache__", ".snakemake"}


def target(name):
    if name.startswith("README"):
        return "README.md"
    if name.startswith("SPEC"):
        return "docs/SPEC.md"
    return name


headings = {}


def heads(path):
    if path not in headings:
        try:
            with open(os.path.join(top, path), encoding="utf-8") as f:
                headings[path] = [l.lstrip("#").strip().lower() for l in f if re.match(r"#{1,6} ", l)]
        except OSError:
            headings[path] = None
    return headings[path]


def files():
    for w in WHERE:
        p = os.path.join(top, w)
        if os.path.isfile(p):
            yield w
            continue
        for d, subdirs, names in os.walk(p):
            subdirs[:] = [s for s in subdirs if s not in SKIP_DIRS]
            for n in names:
                if re.search(r"\.(c|h|cu|cuh|inc|bats|bash|sh|py|md|smk|yaml|rst|in|java)$|^Snakefile$", n):
                    yield os.path.relpath(os.path.join(d, n), top)


bad = n = 0
for rel in files():
    if rel == "tests/test_helper/citations.py":
        continue
    try:
        text = open(os.path.join(top, rel), encoding="utf-8").read()
    except (OSError, UnicodeDecodeError):
        continue
    for m in CITE.finditer(text):
        n += 1
        path, title = target(m.group(1)), m.group(2).lower()
        h = heads(path)
        if h is None or not any(title in x for x in h):
            line = text.count("\n", 0, m.start()) + 1
            print(f"{rel}:{line}: {m.group(0)}: no such heading in {path}")
            bad += 1
print(f"{n} citations, {bad} unresolved", file=sys.stderr)
sys.exit(1 if bad else 0)
