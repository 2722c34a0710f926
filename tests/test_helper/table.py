#!/usr/bin/env python3
"""Inspect haplik likelihood tables in tests.

  table.py same A B            regions of A and B are equal (every field)
  table.py close A B TOL       same shape; every likelihood within TOL; no null in A or B
  table.py get A EXPR          print a Python expression over the table `t`
  table.py valid A             A parses (json or jsonl) and its summary matches its regions
"""
import json, math, sys


def load(path):
    with open(path) as f:
        text = f.read()
    if text.startswith('{"format"'):
        return json.loads(text)
    lines = [json.loads(l) for l in text.splitlines() if l.strip()]
    last = lines.pop()
    t = dict(last)
    t["regions"] = lines
    return t


def main():
    cmd, a = sys.argv[1], load(sys.argv[2])
    if cmd == "same":
        b = load(sys.argv[3])
        if a["regions"] != b["regions"]:
            for i, (x, y) in enumerate(zip(a["regions"], b["regions"])):
                if x != y:
                    sys.exit("region %d differs:\n%s\n%s" % (i, json.dumps(x)[:300], json.dumps(y)[:300]))
            sys.exit("region counts differ: %d vs %d" % (len(a["regions"]), len(b["regions"])))
    elif cmd == "close":
        b, tol = load(sys.argv[3]), float(sys.argv[4])
        worst = 0.0
        if len(a["regions"]) != len(b["regions"]):
            sys.exit("region counts differ")
        for x, y in zip(a["regions"], b["regions"]):
            for rx, ry in zip(x["log10_likelihoods"], y["log10_likelihoods"]):
                if len(rx) != len(ry):
                    sys.exit("shapes differ in region %d" % x["index"])
                for u, v in zip(rx, ry):
                    if u is None or v is None or not math.isfinite(u) or not math.isfinite(v):
                        sys.exit("non-finite value in region %d" % x["index"])
                    worst = max(worst, abs(u - v))
        print("max difference %.3g" % worst)
        if worst > tol:
            sys.exit("max difference %.3g > %g" % (worst, tol))
    elif cmd == "get":
        t = a  # noqa: F841 (used by the expression)
        print(eval(sys.argv[3]))
    elif cmd == "valid":
        s = a["summary"]
        pairs = sum(len(r["log10_likelihoods"]) * len(r["log10_likelihoods"][0]) for r in a["regions"])
        assert s["regions"] == len(a["regions"]), "summary.regions"
        assert s["pairs"] == pairs, "summary.pairs"
        assert [r["index"] for r in a["regions"]] == list(range(len(a["regions"]))), "indexes"
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
