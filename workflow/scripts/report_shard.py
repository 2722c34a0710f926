"""report_shard.py - one shard's digest for the report: a few kilobytes, whatever the shard's size.

Run by the rule report_shard (workflow/rules/report.smk) once per shard, or by hand:

    python3 report_shard.py --table T.json --source S.txt [--plan P.tsv --part K] \
        --benchmark B.tsv --log L.log [--gatk] --out D.json

It reads the shard's table once (json, jsonl or tsv with its sidecar; each optionally gzip/BGZF)
and writes what the figures need (report_figures.py reads only digests, so the figures job
does not grow with the pairs of the run):

- the table summary (regions, pairs, cells, seconds, double recomputes, backend, devices), the
  model's precision and the scoring job's wall-clock seconds and end time (its benchmark);
- haplik's own busy times (start-up, reading, scoring, writing) and its notices, from the
  job's log;
- the likelihoods as a histogram of fixed bins (LK_BIN wide), with the count of pairs that
  have no finite value;
- with --gatk, |haplik - GATK| as a histogram of fixed log10 bins (DIFF_BIN wide), with the
  pairs compared, above the tolerance, equal, finite on one side only and without haplik's
  value, and the largest difference. GATK's value is the 7th field of a HaplotypeCaller
  results file's record (a tsv table carries it as `expected`). A column whose every value
  is 0 holds no GATK values (scripts/gen_batches.py writes such a placeholder, and marks it):
  nothing is compared, and the digest says why.
"""

import argparse
import csv
import gzip
import json
import math
import os
import re
import sys

import numpy as np

LK_BIN = 0.5  # log10 units
DIFF_BIN = 0.1  # decades
CHECK_TOLERANCE = 1e-4  # haplik check's default (check.tolerance)
# scripts/gen_batches.py's mark of a dump whose expected-result column is a placeholder
PLACEHOLDER_MARK = "# expected-result placeholder"
BUSY = re.compile(
    r"busy: start-up ([0-9.]+) s, reading ([0-9.]+) s, scoring ([0-9.]+) s(?: \(([^)]*)\))?, "
    r"writing ([0-9.]+) s"
)


def fail(message):
    """Bad input: one line, exit 2 (haplik's convention)."""
    print(f"report_shard: error: {message}", file=sys.stderr)
    sys.exit(2)


def open_text(path):
    """Plain, gzip or BGZF (BGZF is gzip to Python), told by the magic bytes."""
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rt", encoding="utf-8", errors="replace") if magic == b"\x1f\x8b" \
        else open(path, encoding="utf-8", errors="replace")


def number(v):
    """A value as a float: None for null, an empty field or a word that is no number."""
    if v is None or isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def floats(values):
    """A list of table values as a float array, null (None) as NaN."""
    try:
        return np.array(values, dtype=float)
    except (TypeError, ValueError):
        return np.array([np.nan if number(v) is None else number(v) for v in values], dtype=float)


class Digest:
    """The histograms and counts of one shard, from arrays of values."""

    def __init__(self):
        self.lk = {}  # bin -> pairs
        self.lk_other = 0  # pairs without a finite likelihood
        self.lk_min = self.lk_max = None
        self.diff = {}  # log10 bin -> pairs
        self.n = dict(compared=0, equal=0, one_sided=0, missing=0, over=0)
        self.largest = None
        self.expected_nonzero = False
        self.expected_seen = 0

    @staticmethod
    def _count(into, bins):
        keys, counts = np.unique(bins, return_counts=True)
        for k, c in zip(keys.tolist(), counts.tolist()):
            into[k] = into.get(k, 0) + c

    def likelihoods(self, v):
        ok = np.isfinite(v)
        self.lk_other += int(v.size - ok.sum())
        v = v[ok]
        if v.size:
            self._count(self.lk, np.floor(v / LK_BIN).astype(np.int64))
            lo, hi = float(v.min()), float(v.max())
            self.lk_min = lo if self.lk_min is None else min(lo, self.lk_min)
            self.lk_max = hi if self.lk_max is None else max(hi, self.lk_max)

    def against(self, ours, theirs):
        """haplik's values against GATK's (arrays of one length; theirs may hold -inf)."""
        n = self.n
        self.expected_seen += int(theirs.size)
        self.expected_nonzero = self.expected_nonzero or bool(np.any(theirs != 0.0))
        n["compared"] += int(theirs.size)
        missing = np.isnan(ours)
        equal = ~missing & (ours == theirs)
        both = np.isfinite(ours) & np.isfinite(theirs) & ~equal
        n["missing"] += int(missing.sum())
        n["equal"] += int(equal.sum())
        n["one_sided"] += int((~missing & ~equal & ~both).sum())
        d = np.abs(ours[both] - theirs[both])
        if d.size:
            n["over"] += int((d > CHECK_TOLERANCE).sum())
            big = float(d.max())
            self.largest = big if self.largest is None else max(big, self.largest)
            self._count(self.diff, np.floor(np.log10(d) / DIFF_BIN).astype(np.int64))


def tsv_rows(path, digest, gatk):
    """A tsv table's rows into the digest; its summary and header from the sidecar. A pair
    whose `expected` field is empty (GATK's -Infinity, or a dump without values) is not
    compared."""
    meta_path = path + ".meta.json"
    try:
        with open(meta_path) as f:
            meta = json.load(f)
        header, summary = meta["haplik-likelihoods"], meta["summary"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{meta_path}: not the sidecar of a haplik tsv table ({e})")
    with open_text(path) as f:
        names = f.readline().rstrip("\n").split("\t")
        if "log10_likelihood" not in names:
            fail(f"{path}: not a haplik tsv table (its header lacks log10_likelihood)")
        k = names.index("log10_likelihood")
        e = names.index("expected") if gatk and "expected" in names else None
        while True:
            rows = [line.rstrip("\n").split("\t") for line in f.readlines(1 << 24)]
            if not rows:
                break
            try:
                ours = floats([r[k] or "nan" for r in rows])
                digest.likelihoods(ours)
                if e is not None:
                    theirs = floats([r[e] or "nan" for r in rows])
                    have = ~np.isnan(theirs)
                    digest.against(ours[have], theirs[have])
            except IndexError:
                fail(f"{path}: a row of too few fields")
    return dict(header, summary=summary)


def json_table(path):
    """A json or jsonl table, in the json table's shape."""
    name = path[:-3] if path.endswith(".gz") else path
    try:
        with open_text(path) as f:
            if name.endswith(".jsonl"):
                lines = [json.loads(text) for text in f if text.strip()]
                if not lines or "summary" not in lines[-1]:
                    raise KeyError("summary")
                table = dict(lines[-1], regions=lines[:-1])
            else:
                table = json.load(f)
        table["summary"]
        table["regions"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{path}: not a haplik {'jsonl' if name.endswith('.jsonl') else 'json'} table ({e})")
    return table


def plan_part(plan, part):
    """(start byte, end byte, first line) of part K of a `haplik split --plan` plan."""
    with open(plan) as f:
        for text in f:
            if text.startswith("#"):
                continue
            fields = text.rstrip("\n").split("\t")
            if fields[0] == str(part):
                return int(fields[1]), int(fields[2]), int(fields[3])
    fail(f"{plan}: no part {part}")


def gatk_values(source, rng=None):
    """(line numbers, haplotypes, GATK's values) of the records of a HaplotypeCaller results
    file (or of the byte range rng = (start, end, first line) of it), lines as the table counts
    them (`# source-line N` sets the next line's); None when the dump is marked as holding a
    placeholder. A record is a line of 7 fields; its value may be -Infinity."""
    with open_text(source) if rng is None else open(source, "rb") as f:
        if rng is None:
            data, first = f.read().encode("utf-8", "replace"), 1
        else:
            start, end, first = rng
            f.seek(start)
            data = f.read(end - start)
    lines = data.split(b"\n")
    number_of = np.arange(first, first + len(lines), dtype=np.int64)
    for i, text in enumerate(lines):
        if text.startswith(b"#"):
            if text.startswith(PLACEHOLDER_MARK.encode()):
                return None
            if text.startswith(b"# source-line "):
                number_of[i + 1:] += int(text.split()[2]) - number_of[i + 1]
    keep = [i for i, text in enumerate(lines) if text.count(b" ") == 6 and not text.startswith(b"#")]
    values = np.array([lines[i].rpartition(b" ")[2].replace(b"Infinity", b"inf") for i in keep])
    values = values.astype(float) if keep else np.zeros(0)
    # a record's haplotype, on demand (its first field)
    hap = lambda k: lines[keep[k]].partition(b" ")[0]  # noqa: E731
    return number_of[keep], hap, values


def json_rows(table, digest, source, rng):
    """A json table's pairs into the digest; with a source, each against GATK's value: a
    region's records start at its `line` and are read-major (where the table carries the
    haplotypes, the first and last record of each region are checked against them)."""
    records = gatk_values(source, rng) if source else None
    if source and records is None:
        return False
    if records is not None:
        lines, haps_of, values = records
        index = {int(line): i for i, line in enumerate(lines)}
    ours_all, theirs_all = [], []
    lk = floats([v for region in table["regions"] for row in region.get("log10_likelihoods") or []
                 for v in row])
    digest.likelihoods(lk)
    at = 0
    for region in table["regions"]:
        rows = region.get("log10_likelihoods") or []
        n = sum(len(row) for row in rows)
        ours, at = lk[at:at + n], at + n
        if records is None or not ours.size:
            continue
        start = index.get(region.get("line"))
        if start is None:
            continue
        n_haps = len(rows[0])
        if start + ours.size > len(values):
            fail(f"{source}: region at line {region['line']} has fewer records than pairs")
        haps = region.get("haplotypes")
        for k in {0, ours.size - 1} if haps is not None else ():
            if haps[k % n_haps].encode() != haps_of(start + k):
                fail(f"{source}:{lines[start + k]}: the record's haplotype is not haplotype "
                     f"{k % n_haps} of the region at line {region['line']} (records not read-major?)")
        ours_all.append(ours)
        theirs_all.append(values[start:start + ours.size])
    if ours_all:
        digest.against(np.concatenate(ours_all), np.concatenate(theirs_all))
    return True


def log_facts(log):
    """haplik's busy times and its notices (other than the busy line), from the job's log."""
    busy, notices = None, []
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            for text in f:
                text = text.rstrip("\n")
                m = BUSY.search(text)
                if m:
                    busy = dict(startup=float(m[1]), reading=float(m[2]), scoring=float(m[3]),
                                writing=float(m[5]), scored_on=m[4] or "")
                elif text.startswith("haplik: ") and text not in notices:
                    notices.append(text[len("haplik: "):])
    except OSError:
        pass
    return busy, notices


def benchmark(path):
    """(wall-clock seconds, end time) of a Snakemake benchmark (its `s` column; the file is
    written as the job ends), or (None, None)."""
    try:
        with open(path) as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        return float(rows[-1]["s"]), os.path.getmtime(path)
    except (OSError, KeyError, IndexError, ValueError):
        return None, None


def main(a):
    digest = Digest()
    name = a.table[:-3] if a.table.endswith(".gz") else a.table
    gatk_note = None
    if name.endswith(".tsv"):
        table = tsv_rows(a.table, digest, a.gatk)
        if a.gatk and a.source and gatk_values_marked(a.source):
            gatk_note = "placeholder"
    else:
        table = json_table(a.table)
        rng = plan_part(a.plan, a.part) if a.plan else None
        if not json_rows(table, digest, a.source if a.gatk else None, rng):
            gatk_note = "placeholder"
    summary = table["summary"]
    if not isinstance(summary, dict):
        fail(f"{a.table}: not a haplik table (its summary is not an object)")
    if a.gatk and gatk_note is None and digest.expected_seen and not digest.expected_nonzero:
        gatk_note = "zeros"
    busy, notices = log_facts(a.log) if a.log else (None, [])
    job_s, job_end = benchmark(a.benchmark) if a.benchmark else (None, None)
    count = lambda k: int(number(summary.get(k)) or 0)  # noqa: E731
    seconds = number(summary.get("seconds"))
    out = dict(
        table=a.table,
        regions=count("regions"), pairs=count("pairs"), cells=count("cells"),
        double_recomputed=count("double_recomputed"),
        seconds=seconds if seconds is not None and math.isfinite(seconds) else 0.0,
        backend=summary.get("backend") or "?",
        devices=summary.get("devices") or [],
        device_ordinals=summary.get("device_ordinals") or [],
        precision=(table.get("model") or {}).get("precision"),
        decimals=number(table.get("decimals")),
        busy=busy, notices=notices, job_seconds=job_s, job_end=job_end,
        lk={str(k): v for k, v in sorted(digest.lk.items())}, lk_bin=LK_BIN,
        lk_other=digest.lk_other, lk_min=digest.lk_min, lk_max=digest.lk_max,
    )
    if a.gatk:
        if gatk_note:
            # not GATK's values: nothing compared
            out["gatk"] = dict(none=gatk_note)
        else:
            out["gatk"] = dict(digest.n, largest=digest.largest, diff_bin=DIFF_BIN,
                               diff={str(k): v for k, v in sorted(digest.diff.items())})
    tmp = a.out + ".part"
    with open(tmp, "w") as f:
        json.dump(out, f)
    os.replace(tmp, a.out)


def gatk_values_marked(source):
    """Whether a dump's comments before its first record mark its expected column as a
    placeholder."""
    try:
        with open_text(source) as f:
            for text in f:
                if not text.startswith("#"):
                    return False
                if text.startswith(PLACEHOLDER_MARK):
                    return True
    except OSError:
        pass
    return False


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--table", required=True)
    p.add_argument("--source")
    p.add_argument("--plan")
    p.add_argument("--part", type=int)
    p.add_argument("--benchmark")
    p.add_argument("--log")
    p.add_argument("--gatk", action="store_true")
    p.add_argument("--out", required=True)
    return p.parse_args(argv)


if "snakemake" in globals():
    sm = snakemake  # noqa: F821 (given by Snakemake's script directive)
    sys.stderr = open(sm.log[0], "w")
    main(argparse.Namespace(
        table=sm.input.table, source=sm.input.get("source"), plan=sm.input.get("plan"),
        part=sm.params.part, benchmark=sm.input.benchmark, log=sm.input.log,
        gatk=sm.params.gatk, out=sm.output[0]))
elif __name__ == "__main__":
    main(parse())
