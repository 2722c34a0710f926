#!/usr/bin/env python3
"""sass-loop.py - instructions a forward kernel's step loop issues per cell.

Usage: scripts/sass-loop.py [-c COLUMNS] OBJECT [KERNEL_REGEX ...]
  e.g. scripts/sass-loop.py kernels/hk_kernel_cgap.o 'Li4ELi20E'

Needs cuobjdump (CUDA toolkit, or the nvidia-cuda-cuobjdump wheel) on PATH.
For each kernel whose mangled name matches a regex: its step loop is the
backward branch whose body is densest in FFMA/FMUL/DFMA/DMUL (40 or more); from it the
largest forward-skipped block inside (the haplotype-boundary code that a
warp-uniform branch jumps over on most steps) is left out. Prints the loop's
instructions on that path, by kind, and per cell: a step is K rows (the
second template integer of hk_pair_kernel<T, P, K, ...>) times COLUMNS
(default 2) cells. This is how docs/PERFORMANCE.md counts "instructions per
cell"; it is a static count of one path, not a profile.
"""
import re
import subprocess
import sys

INSN = re.compile(r'/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;')


def kernels(obj):
    out = subprocess.run(['cuobjdump', '-sass', obj], check=True, capture_output=True, text=True).stdout
    name, body = None, []
    for line in out.splitlines():
        m = re.match(r'\s*Function : (\S+)', line)
        if m:
            if name:
                yield name, body
            name, body = m.group(1), []
            continue
        m = INSN.search(line)
        if m and name:
            body.append((int(m.group(1), 16), m.group(2)))
    if name:
        yield name, body


def opcode(text):
    t = re.sub(r'^@!?U?P\w+\s+', '', text)
    return t.split()[0] if t else ''


def target(text):
    m = re.search(r'\bBRA\b(?:\s+!?U?P\w+,)?\s+(?:`\()?0x([0-9a-f]+)', text)
    return int(m.group(1), 16) if m else None


FP = ('FFMA', 'FMUL', 'FADD', 'DFMA', 'DMUL', 'DADD')


def step_loop(body):
    addr = [a for a, _ in body]
    best = None
    for i, (a, t) in enumerate(body):
        tg = target(t)
        if tg is None or tg >= a:
            continue
        j = addr.index(tg) if tg in addr else None
        if j is None:
            continue
        seg = body[j:i + 1]
        nfp = sum(opcode(x).split('.')[0] in FP for _, x in seg)
        if nfp < 40:
            continue
        # innermost: the densest loop in FP, not an outer loop around it
        density = nfp / len(seg)
        if best is None or density > best[0]:
            best = (density, j, i)
    return best


def main():
    args = sys.argv[1:]
    cols = 2
    if len(args) >= 2 and args[0] == '-c':
        cols, args = int(args[1]), args[2:]
    if not args:
        sys.exit(__doc__)
    obj, pats = args[0], [re.compile(p) for p in args[1:]] or [re.compile('.')]
    for name, body in kernels(obj):
        if not any(p.search(name) for p in pats):
            continue
        found = step_loop(body)
        if not found:
            continue
        _, j, i = found
        seg = body[j:i + 1]
        # the largest block inside the loop that a forward branch skips
        skip = (0, None, None)
        for k, (a, t) in enumerate(seg):
            tg = target(t)
            if tg is not None and a < tg <= seg[-1][0]:
                n = sum(1 for b, _ in seg if a < b < tg)
                if n > skip[0]:
                    skip = (n, a, tg)
        path = [(a, t) for a, t in seg if not (skip[1] is not None and skip[1] < a < skip[2])]
        kinds = {}
        for _, t in path:
            op = opcode(t).split('.')[0]
            kinds[op] = kinds.get(op, 0) + 1
        pk = re.search(r'Li(\d+)ELi(\d+)E', name)
        cells = int(pk.group(2)) * cols if pk else 0
        top = ' '.join('%s %d' % kv for kv in sorted(kinds.items(), key=lambda kv: -kv[1]))
        print('%s\n  loop %d instructions (boundary block of %d left out), %d cells: %.2f per cell\n  %s'
              % (name, len(path), skip[0], cells, len(path) / cells if cells else 0, top))


if __name__ == '__main__':
    main()
