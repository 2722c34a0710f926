#!/usr/bin/env python3
"""Check the BED shards of `haplik shard` against the .fai they came from.

  check_shards.py FAI N PREFIX [TOLERANCE]

PREFIX0001.bed .. PREFIX<N>.bed (4 digits at least) must all exist, nothing else numbered
beyond N; the shards in order must cover every base of every .fai sequence exactly once, in
.fai order (so concatenated they are the genome, 0-based half-open, no empty interval); and
(max - min) shard length must be at most TOLERANCE (default 0.01) of the mean, unless the
genome is too short for that (mean < 1/TOLERANCE bases: then within one base).
Prints one line of figures; exit 1 with the reason on failure.
"""
import os
import sys


def main():
    fai, n, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    tol = float(sys.argv[4]) if len(sys.argv) > 4 else 0.01
    contigs = []
    with open(fai) as f:
        for line in f:
            if line.strip():
                name, length = line.split("\t")[:2]
                contigs.append((name, int(length)))
    width = max(4, len(str(n)))
    expected = [f"{prefix}{k:0{width}d}.bed" for k in range(1, n + 1)]
    intervals, sizes = [], []
    for path in expected:
        if not os.path.isfile(path):
            sys.exit(f"missing {path}")
        size = 0
        with open(path) as f:
            for ln, line in enumerate(f, 1):
                fields = line.rstrip("\n").split("\t")
                if len(fields) != 3:
                    sys.exit(f"{path}:{ln}: expected 3 tab-separated fields: {line!r}")
                c, s, e = fields[0], int(fields[1]), int(fields[2])
                if not 0 <= s < e:
                    sys.exit(f"{path}:{ln}: bad interval {c}:{s}-{e}")
                intervals.append((c, s, e))
                size += e - s
        sizes.append(size)
    extra = f"{prefix}{n + 1:0{width}d}.bed"
    if os.path.exists(extra):
        sys.exit(f"unexpected {extra}")
    # concatenated in order, the intervals must tile the genome in .fai order
    i = 0
    for name, length in contigs:
        pos = 0
        while pos < length:
            if i >= len(intervals):
                sys.exit(f"{name}:{pos}-{length} not covered")
            c, s, e = intervals[i]
            if c != name or s != pos or e > length:
                sys.exit(f"expected an interval from {name}:{pos}, got {c}:{s}-{e}")
            pos = e
            i += 1
    if i != len(intervals):
        sys.exit(f"interval beyond the genome: {intervals[i]}")
    total = sum(l for _, l in contigs)
    mean = total / n
    spread = max(sizes) - min(sizes)
    limit = tol * mean if mean >= 1 / tol else 1
    print(f"shards={n} total={total} mean={mean:.1f} min={min(sizes)} max={max(sizes)} "
          f"spread={spread} ({spread / mean if mean else 0:.5f} of the mean) intervals={len(intervals)}")
    if spread > limit:
        sys.exit(f"unbalanced: spread {spread} > {limit:.1f}")


if __name__ == "__main__":
    main()
