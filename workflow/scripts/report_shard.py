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


class Digest:
    """The histograms and counts of one shard."""

    def __init__(self):
        self.lk = {}  # bin -> pairs
        self.lk_other = 0  # pairs without a finite likelihood
        self.lk_min = self.lk_max = None
        self.diff = {}  # log10 bin -> pairs
        self.n = dict(compared=0, equal=0, one_sided=0, missing=0, over=0)
        self.largest = None
        self.expected_nonzero = False
        self.expected_seen = 0

    def likelihood(self, v):
        if v is None or not math.isfinite(v):
            self.lk_other += 1
            return
        b = math.floor(v / LK_BIN)
        self.lk[b] = self.lk.get(b, 0) + 1
        self.lk_min = v if self.lk_min is None or v < self.lk_min else self.lk_min
        self.lk_max = v if self.lk_max is None or v > self.lk_max else self.lk_max

    def against(self, ours, theirs):
        """haplik's value against GATK's (theirs: a float, -inf allowed)."""
        self.expected_seen += 1
        self.expected_nonzero = self.expected_nonzero or theirs != 0.0
        n = self.n
        n["compared"] += 1
        if ours is None or math.isnan(ours):
            n["missing"] += 1
        elif ours == theirs:
            n["equal"] += 1
        elif not (math.isfinite(ours) and math.isfinite(theirs)):
            n["one_sided"] += 1
        else:
            d = abs(ours - theirs)
            n["over"] += d > CHECK_TOLERANCE
            self.largest = d if self.largest is None or d > self.largest else self.largest
            b = math.floor(math.log10(d) / DIFF_BIN)
            self.diff[b] = self.diff.get(b, 0) + 1


def tsv_rows(path, digest, gatk):
    """A tsv table's rows into the digest; its summary and header from the sidecar."""
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
        for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(row) <= k:
                fail(f"{path}: a row of {len(row)} fields")
            ours = number(row[k]) if row[k] else None
            digest.likelihood(ours)
            if e is not None and row[e]:
                # an empty expected field: GATK's -Infinity or no value; the dump's own text
                # is not at hand here, so such pairs are counted apart, not compared
                digest.against(ours, float(row[e]))
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
    """[(line, haplotype, GATK's value)] of the records of a HaplotypeCaller results file (or
    of the byte range rng = (start, end, first line) of it), lines as the table counts them
    (`# source-line N` sets the next line's). None when the dump is marked as holding a
    placeholder."""
    out = []
    lineno = 0
    with open_text(source) if rng is None else open(source, "rb") as f:
        if rng is None:
            lines = f
        else:
            start, end, first = rng
            f.seek(start)
            lines = (b.decode("utf-8", "replace") for b in f.read(end - start).split(b"\n"))
            lineno = first - 1
        for text in lines:
            lineno += 1
            if text.startswith("#"):
                if text.startswith(PLACEHOLDER_MARK):
                    return None
                if text.startswith("# source-line "):
                    lineno = int(text.split()[2]) - 1
                continue
            fields = text.split()
            if len(fields) == 7:
                value = number(fields[6])
                if value is not None and not math.isnan(value):
                    out.append((lineno, fields[0], value))
    return out


def json_rows(table, digest, source, rng):
    """A json table's pairs into the digest; with a source, each against GATK's value: a
    region's records start at its `line` and are read-major."""
    records = gatk_values(source, rng) if source else []
    if records is None:
        return False
    index = {line: i for i, (line, _, _) in enumerate(records)}
    for region in table["regions"]:
        rows = region.get("log10_likelihoods") or []
        start = index.get(region.get("line"))
        n_haps = len(rows[0]) if rows else 0
        haps = region.get("haplotypes")
        for r, row in enumerate(rows):
            for h, v in enumerate(row):
                ours = number(v)
                digest.likelihood(ours)
                if start is None:
                    continue
                k = start + r * n_haps + h
                if k >= len(records):
                    fail(f"{source}: region at line {region['line']} has fewer records than pairs")
                line, hap, theirs = records[k]
                if haps is not None and haps[h] != hap:
                    fail(f"{source}:{line}: the record's haplotype is not haplotype {h} of the "
                         f"region at line {region['line']} (records not read-major?)")
                digest.against(ours, theirs)
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
