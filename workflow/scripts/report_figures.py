"""report_figures.py - the figures and the per-shard table of the Snakemake report.

Run by the rule report_figures (workflow/rules/report.smk) through Snakemake's `script:`
directive, or by hand:

    python3 report_figures.py --tables T1.json ... --sources S1.txt ... \
        --benchmarks B1.tsv ... --shards OUT.tsv --shards-html OUT.html --throughput OUT.svg \
        --likelihoods OUT.svg [--gatk OUT.svg]

Inputs, one per shard and in the same order: the shard's haplik table (json, jsonl or tsv
with its sidecar TABLE.meta.json; each optionally gzip/BGZF), the file the shard scored (a dump shard, a whole dump, or a genome shard's HaplotypeCaller dump) and the
scoring job's Snakemake benchmark. Everything shown comes from what haplik wrote: the table
summary (pairs, cells, seconds, backend, devices, device_ordinals) and its likelihoods.

|haplik - GATK|: a HaplotypeCaller results file carries GATK's value as the 7th field of each
record. A region's records are read-major (each read's records, one per haplotype), starting
at the region's `line`; that line counts in the original dump, which `haplik split` keeps with
`# source-line N` comments in the shards. So record k of a region is read k // H, haplotype
k % H; where the table carries the haplotypes, each record's haplotype is checked against it.
"""

import argparse
import csv
import gzip
import html
import json
import math
import os
import sys

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")  # no display on cluster nodes or in CI
import matplotlib.pyplot as plt  # noqa: E402

# text stays text in the SVGs: searchable, and the CI test finds the titles in the report
plt.rcParams["svg.fonttype"] = "none"
plt.rcParams["svg.hashsalt"] = "haplik"  # the same figure from the same data, byte for byte


SHARDS_HTML_HEAD = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>haplik: per shard</title>
<style>
body { font-family: sans-serif; font-size: 14px; margin: 1em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #eee; }
td:first-child, td:nth-child(7), th:first-child, th:nth-child(7) { text-align: left; }
</style></head><body>
<table>
"""


# check.tolerance's default (haplik check --help), drawn as a reference line
CHECK_TOLERANCE = 1e-4

# the most shards whose names label the throughput figure's bars
NAMED_SHARDS = 24


def fail(message):
    """Bad input: one line, exit 2 (haplik's convention)."""
    print(f"report_figures: error: {message}", file=sys.stderr)
    sys.exit(2)


def open_text(path):
    """Plain, gzip or BGZF (BGZF is gzip to Python), told by the magic bytes."""
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt")
    return open(path)


def number(v):
    """A table's or a dump's value as a float: None for null, an empty tsv field or a word that
    is no number; -inf, inf and nan as they come (GATK writes -Infinity)."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def finite(v):
    return v is not None and math.isfinite(v)


def tsv_table(path):
    """A tsv table (one header row, a row per pair) and its sidecar PATH.meta.json, in the
    json table's shape: regions with their first record's line and their likelihood rows."""
    meta_path = path + ".meta.json"
    try:
        with open(meta_path) as f:
            meta = json.load(f)
        header, summary = meta["haplik-likelihoods"], meta["summary"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{meta_path}: not the sidecar of a haplik tsv table ({e})")
    regions = {}
    with open_text(path) as f:
        rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        names = next(rows, None)
        need = ["line", "region_index", "read_index", "haplotype_index", "log10_likelihood"]
        if names is None or any(n not in names for n in need):
            fail(f"{path}: not a haplik tsv table (its header lacks {', '.join(need)})")
        col = {n: names.index(n) for n in names}
        for k, row in enumerate(rows, start=2):
            try:
                g, r, h = (int(row[col[n]]) for n in ("region_index", "read_index", "haplotype_index"))
                line = int(row[col["line"]]) if row[col["line"]] else None
                value = number(row[col["log10_likelihood"]]) if row[col["log10_likelihood"]] else None
            except (IndexError, ValueError):
                fail(f"{path}:{k}: not a row of a haplik tsv table")
            region = regions.setdefault(g, {"index": g, "line": line, "rows": {}})
            region["rows"].setdefault(r, {})[h] = value
    out = []
    for g in sorted(regions):
        rg = regions[g]
        n_haps = 1 + max((h for row in rg["rows"].values() for h in row), default=-1)
        lk = [[rg["rows"][r].get(h) for h in range(n_haps)] for r in sorted(rg["rows"])]
        out.append({"index": g, "line": rg["line"], "log10_likelihoods": lk})
    return dict(header, regions=out, summary=summary)


def load_table(path):
    """A haplik table of any format, in the json table's shape (json: as it is; jsonl: the
    regions' lines and the summary's last line; tsv: tsv_table)."""
    name = path[:-3] if path.endswith(".gz") else path
    if name.endswith(".tsv"):
        return tsv_table(path)
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


def device_label(summary):
    """What scored the shard: the GPU(s) with their ordinals, or the CPU."""
    names = summary.get("devices") or []
    ordinals = summary.get("device_ordinals") or []
    backend = summary.get("backend", "?")
    if backend == "cuda" and ordinals:
        return ", ".join(f"GPU {o}: {n}" for o, n in zip(ordinals, names))
    if names:
        return f"{backend}: {', '.join(names)}"
    return backend


def gatk_values(source):
    """{original line: GATK's value} of the records of a HaplotypeCaller results file; the
    line numbers are the original dump's (`# source-line N` sets the next line's)."""
    values = {}
    lineno = 0
    with open_text(source) as f:
        for text in f:
            lineno += 1
            if text.startswith("#"):
                if text.startswith("# source-line "):
                    lineno = int(text.split()[2]) - 1
                continue
            fields = text.split()
            if len(fields) == 7:
                value = number(fields[6])  # -Infinity where GATK's double underflows
                if value is not None and not math.isnan(value):
                    values[lineno] = (fields[0], value)
    return values


class GatkSource:
    """GATK's values of one source at a time, read once for all the shards that name it: the
    shards of a dump read in place all name the whole dump, one after another (each reading
    it again cost a full pass over the dump per shard)."""

    def __init__(self):
        self.path = None

    def get(self, source):
        """(values, record lines in order, {line: its place among them}) of source."""
        if source != self.path:
            self.path = None  # a failed read leaves nothing half-made behind
            values = gatk_values(source)
            lines = sorted(values)
            self.known = (values, lines, {line: i for i, line in enumerate(lines)})
            self.path = source
        return self.known


def differences(table, source, known=None):
    """|haplik - GATK| per pair of the table's regions whose records carry GATK's value: a
    number, inf where only one of the two is finite (GATK's -Infinity, which haplik rescues
    to a finite value), 0 where both are -inf, or None where haplik has no value (null).
    known: a GatkSource that may hold the source's values already."""
    values, lines, index = (known or GatkSource()).get(source)
    if not values:
        return []
    out = []
    for region in table["regions"]:
        start = index.get(region.get("line"))
        if start is None:
            continue
        rows = region["log10_likelihoods"]
        n_haps = len(rows[0]) if rows else 0
        haps = region.get("haplotypes")
        for r, row in enumerate(rows):
            for h, ours in enumerate(row):
                k = start + r * n_haps + h
                if k >= len(lines):
                    fail(f"{source}: region at line {region['line']} has fewer records than pairs")
                hap, theirs = values[lines[k]]
                if haps is not None and haps[h] != hap:
                    fail(
                        f"{source}:{lines[k]}: the record's haplotype is not haplotype {h} of "
                        f"the region at line {region['line']} (records not read-major?)"
                    )
                ours = number(ours)
                if ours is None or math.isnan(ours):
                    out.append(None)
                elif ours == theirs:  # both -inf (an empty sequence) or equal
                    out.append(0.0)
                else:
                    out.append(abs(ours - theirs))
    return out


def shard_name(table_path):
    """results/tables/DUMP/SHARD.json (.jsonl, .tsv, each maybe .gz) -> DUMP/SHARD"""
    parent, base = os.path.split(table_path)
    for ext in (".gz", ".json", ".jsonl", ".tsv"):
        if base.endswith(ext) and len(base) > len(ext):
            base = base[: -len(ext)]
    return f"{os.path.basename(parent)}/{base}"


def job_seconds(benchmark):
    """The scoring job's wall-clock seconds (Snakemake's benchmark `s` column), or None."""
    try:
        with open(benchmark) as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        return float(rows[-1]["s"])
    except (OSError, KeyError, IndexError, ValueError):
        return None


def no_data(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])


def main(a):
    n = len(a.tables)
    if len(a.sources) != n or len(a.benchmarks) != n:
        fail(f"{n} tables, {len(a.sources)} sources, {len(a.benchmarks)} benchmarks: one each per shard")
    shards, likelihoods, diffs = [], [], []
    decimals = 6
    known = GatkSource()
    for table_path, source, benchmark in zip(a.tables, a.sources, a.benchmarks):
        table = load_table(table_path)
        summary = table["summary"]
        if not isinstance(summary, dict):
            fail(f"{table_path}: not a haplik table (its summary is not an object)")
        # a count or a time that is missing or not a number counts as 0
        count = {k: int(number(summary.get(k)) or 0) for k in ("regions", "pairs", "cells")}
        seconds = number(summary.get("seconds"))
        seconds = seconds if finite(seconds) else 0.0
        d = number(table.get("decimals"))
        decimals = min(decimals, int(d)) if finite(d) else decimals
        shards.append(
            {
                "shard": shard_name(table_path),
                **count,
                "seconds": seconds,
                # cells per second; haplik's seconds are rounded to ms, so a tiny shard has none
                "gcups": count["cells"] / seconds / 1e9 if seconds > 0 else None,
                "device": device_label(summary),
                "job_seconds": job_seconds(benchmark),
            }
        )
        for region in table["regions"]:
            for row in region.get("log10_likelihoods") or []:
                likelihoods.extend(number(v) for v in row)
        if a.gatk:
            diffs.extend(differences(table, source, known))

    header = ["shard", "regions", "pairs", "cells", "seconds", "GCUPS", "device", "job wall s"]
    rows = [
        [
            s["shard"], s["regions"], s["pairs"], s["cells"], f"{s['seconds']:.3f}",
            "" if s["gcups"] is None else f"{s['gcups']:.4f}", s["device"],
            "" if s["job_seconds"] is None else f"{s['job_seconds']:.2f}",
        ]
        for s in shards
    ]
    with open(a.shards, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)

    # the same table in HTML: the report shows HTML (and images) inline, a TSV only as a download
    with open(a.shards_html, "w") as f:
        f.write(SHARDS_HTML_HEAD)
        f.write("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>\n")
        for row in rows:
            f.write("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>\n")
        total_cells = sum(s["cells"] for s in shards)
        total_seconds = sum(s["seconds"] for s in shards)
        f.write(
            f"</table><p>{len(shards)} shards, {sum(s['pairs'] for s in shards)} pairs, "
            f"{total_cells} cells in {total_seconds:.3f} s of haplik's time summed over the "
            f"shards.</p></body></html>\n"
        )

    # throughput per shard, one colour per device; up to NAMED_SHARDS shards each bar is
    # named, beyond that the figure keeps its width and the bars are numbered as the rows of
    # the per-shard table (names would overlap, and a figure a shard wide would not fit)
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * n + 3) if n <= NAMED_SHARDS else 12, 4.5))
    devices = sorted({s["device"] for s in shards})
    colours = {d: plt.cm.tab10(i % 10) for i, d in enumerate(devices)}
    xs = list(range(n)) if n <= NAMED_SHARDS else list(range(1, n + 1))
    ys = [s["gcups"] or 0.0 for s in shards]
    for d in devices:
        sel = [i for i in range(n) if shards[i]["device"] == d]
        ax.bar([xs[i] for i in sel], [ys[i] for i in sel], color=colours[d], label=d,
               width=0.8 if n <= NAMED_SHARDS else 1.0)
    if n <= NAMED_SHARDS:
        ax.set_xticks(xs, [s["shard"] for s in shards], rotation=60, ha="right", fontsize=8)
    else:
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=20, integer=True))
        ax.set_xlim(0.5, n + 0.5)
        ax.set_xlabel(f"shard (its row in the per-shard table; {n} shards)")
    ax.set_ylabel("GCUPS (cells / haplik's seconds / 1e9)")
    ax.set_title("haplik throughput per shard and device")
    if devices:
        ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(a.throughput)
    plt.close(fig)

    # the likelihoods: the finite ones drawn, the others (null, -inf) counted in the title
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = [v for v in likelihoods if finite(v)]
    if drawn:
        ax.hist(drawn, bins=60, color="tab:blue")
        ax.set_yscale("log")
        ax.set_xlabel("log10 likelihood")
        ax.set_ylabel("pairs")
    else:
        no_data(ax, "no pairs" if not likelihoods else "no finite likelihood")
    others = len(likelihoods) - len(drawn)
    ax.set_title(f"haplik log10 likelihoods ({len(likelihoods)} pairs"
                 + (f"; {others} without a finite value, not drawn" if others else "") + ")")
    fig.tight_layout()
    fig.savefig(a.likelihoods)
    plt.close(fig)

    if a.gatk:
        if not diffs:
            fail("the dumps looked like HaplotypeCaller results files, yet no pair had a GATK value")
        # pairs where only one side is finite (GATK's -Infinity) or haplik has no value are
        # counted in the title, not drawn
        apart = sum(1 for d in diffs if d is not None and not math.isfinite(d))
        missing = sum(1 for d in diffs if d is None)
        compared = len(diffs)
        diffs = [d for d in diffs if finite(d)]
        notes = (f"; {apart} finite on one side only" if apart else "") + (
            f"; {missing} without haplik's value" if missing else "")
        fig, ax = plt.subplots(figsize=(7, 4.5))
        if not diffs:
            no_data(ax, "no pair finite on both sides")
            ax.set_title(f"|haplik - GATK| per pair ({compared} pairs{notes})")
            fig.tight_layout()
            fig.savefig(a.gatk)
            plt.close(fig)
            return
        # the table holds `decimals` digits, so differences are multiples of 10^-decimals; a
        # difference of 0 would vanish on a log axis, so it is drawn a decade below that
        floor = 10.0 ** -(decimals + 1)
        ax.plot(range(len(diffs)), [max(d, floor) for d in diffs], ".", markersize=3)
        ax.axhline(CHECK_TOLERANCE, color="tab:red", linestyle="--", linewidth=1)
        ax.text(0, CHECK_TOLERANCE * 1.3, f"haplik check's default tolerance {CHECK_TOLERANCE:g}",
                color="tab:red", fontsize=8)
        ax.set_yscale("log")
        ax.set_ylim(floor / 3, max(max(diffs), CHECK_TOLERANCE) * 5)
        ax.set_xlabel("pair (in table order)")
        ax.set_ylabel(f"|haplik - GATK| (log10 units; 0 drawn at {floor:g})")
        ax.set_title(f"|haplik - GATK| per pair ({compared} pairs, largest {max(diffs):.3g}{notes})")
        fig.tight_layout()
        fig.savefig(a.gatk)
        plt.close(fig)


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tables", nargs="*", default=[])
    p.add_argument("--sources", nargs="*", default=[])
    p.add_argument("--benchmarks", nargs="*", default=[])
    p.add_argument("--shards", required=True)
    p.add_argument("--shards-html", required=True)
    p.add_argument("--throughput", required=True)
    p.add_argument("--likelihoods", required=True)
    p.add_argument("--gatk")
    return p.parse_args(argv)


if "snakemake" in globals():
    sm = snakemake  # noqa: F821 (given by Snakemake's script directive)
    sys.stderr = open(sm.log[0], "w")
    main(
        argparse.Namespace(
            tables=list(sm.input.tables),
            sources=list(sm.input.sources),
            benchmarks=list(sm.input.benchmarks),
            shards=sm.output.shards,
            shards_html=sm.output.shards_html,
            throughput=sm.output.throughput,
            likelihoods=sm.output.likelihoods,
            gatk=sm.output.get("gatk"),
        )
    )
elif __name__ == "__main__":
    main(parse())
