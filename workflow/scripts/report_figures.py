"""report_figures.py - the figures and tables of the Snakemake report, from the shards' digests.

Run by the rule report_figures (workflow/rules/report.smk) through Snakemake's `script:`
directive, or by hand:

    python3 report_figures.py --digests D1.json ... --names DUMP/0001 ... \
        [--steps plan=B.tsv ... split=B.tsv ... merge=B.tsv digest=B.tsv ...] \
        --summary OUT.html --shards OUT.tsv --shards-html OUT.html --time OUT.svg \
        --throughput OUT.svg --likelihoods OUT.svg --gatk OUT.svg [--config OUT.json]

The digests (report_shard.py, one per shard, in the order of the merged table) are a few
kilobytes each, so this job's time and its figures' sizes depend on the shards, not on the
pairs: histograms of fixed bins, a bar per shard (a histogram of shards beyond MANY_SHARDS),
never a mark per pair.

It answers two questions. Where did the time go: the run's wall-clock time from its first
job's start to this job's end, each step's job-seconds (Snakemake's benchmarks: planning,
cutting, scoring, digests, merging, figures) and, inside the scoring jobs, haplik's own busy
times (start-up, reading, scoring, writing; from each job's log) and the rest of the job
(process start, waiting for a GPU); Snakemake's own time is the wall-clock time in which no
job ran. Can I trust it: the precision, the pairs redone in double, the backend and devices of
each shard, haplik's notices, and |haplik - GATK| where the dumps carry GATK's values.
"""

import argparse
import csv
import html
import json
import math
import os
import sys
import time

START = time.time()

import matplotlib  # noqa: E402

matplotlib.use("Agg")  # no display on cluster nodes or in CI
import matplotlib.pyplot as plt  # noqa: E402

# text stays text in the SVGs: searchable, and the tests find the titles in the report
plt.rcParams["svg.fonttype"] = "none"
plt.rcParams["svg.hashsalt"] = "haplik"  # the same figure from the same data, byte for byte

CHECK_TOLERANCE = 1e-4  # haplik check's default (check.tolerance), drawn as a line
NAMED_SHARDS = 24  # up to this many shards, each bar is named
MANY_SHARDS = 1000  # beyond this, throughput is a histogram of shards, not a bar each
TABLE_ROWS = 2000  # the per-shard HTML table's rows at most (the TSV has them all)
STEPS = ["plan", "split", "score", "digest", "merge"]
STEP_NAMES = {
    "plan": "planning (haplik split --plan)",
    "split": "cutting compressed dumps (haplik split)",
    "digest": "shard digests for the report",
    "merge": "merging (haplik merge)",
    "figures": "the report's figures",
}
STYLE = """<style>
body { font-family: sans-serif; font-size: 14px; margin: 1em; }
table { border-collapse: collapse; margin-bottom: 1em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #eee; }
td.l, th.l { text-align: left; }
.bad { color: #b00; font-weight: bold; }
</style>"""


def fail(message):
    """Bad input: one line, exit 2 (haplik's convention)."""
    print(f"report_figures: error: {message}", file=sys.stderr)
    sys.exit(2)


def load_digest(path):
    try:
        with open(path) as f:
            d = json.load(f)
        d["pairs"], d["cells"], d["seconds"], d["lk"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{path}: not a shard digest of report_shard.py ({e})")
    return d


def benchmark(path):
    """(wall-clock seconds, end time) of a Snakemake benchmark, or (None, None)."""
    try:
        with open(path) as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        return float(rows[-1]["s"]), os.path.getmtime(path)
    except (OSError, KeyError, IndexError, ValueError):
        return None, None


def device_label(d):
    """What scored the shard: the GPU(s) with their ordinals, or the CPU."""
    names, ordinals = d["devices"], d["device_ordinals"]
    if d["backend"] == "cuda" and ordinals:
        return ", ".join(f"GPU {o}: {n}" for o, n in zip(ordinals, names))
    return f"{d['backend']}: {', '.join(names)}" if names else d["backend"]


def plain_notice(text):
    """haplik's notice, with what a host without a GPU means said plainly."""
    if "CUDA driver version is insufficient" in text or "no CUDA-capable device" in text:
        return ("no usable GPU on this host (no NVIDIA driver, or none that this CUDA build "
                f"can use): the shard was scored on the CPU [haplik: {text}]")
    return text


def union_seconds(intervals):
    """Seconds covered by at least one (start, end) interval."""
    total, end = 0.0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def no_data(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def save(fig, path):
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def time_account(shards, steps):
    """[(step, job-seconds, jobs)], the scoring split into haplik's busy times and the rest,
    and the run's wall-clock seconds and Snakemake's own (no job running)."""
    rows, intervals = [], []
    for step in STEPS:
        if step == "score":
            busy = {k: 0.0 for k in ("startup", "reading", "scoring", "writing")}
            job = rest = 0.0
            for d in shards:
                if d["job_seconds"] is None:
                    continue
                job += d["job_seconds"]
                intervals.append((d["job_end"] - d["job_seconds"], d["job_end"]))
                b = d["busy"] or {}
                for k in busy:
                    busy[k] += b.get(k, 0.0)
                rest += max(0.0, d["job_seconds"] - sum(b.get(k, 0.0) for k in busy))
            n = len(shards)
            rows += [
                ("scoring: haplik's start-up", busy["startup"], n),
                ("scoring: haplik reading", busy["reading"], n),
                ("scoring: haplik scoring", busy["scoring"], n),
                ("scoring: haplik writing", busy["writing"], n),
                ("scoring: rest of the job (process start, waiting for a GPU)", rest, n),
            ]
            continue
        seconds, n = 0.0, 0
        for path in steps.get(step, []):
            s, end = benchmark(path)
            if s is None:
                continue
            seconds += s
            n += 1
            intervals.append((end - s, end))
        if n:
            rows.append((STEP_NAMES[step], seconds, n))
    now = time.time()
    rows.append((STEP_NAMES["figures"], now - START, 1))
    intervals.append((START, now))
    first = min(s for s, _ in intervals)
    wall = now - first
    rows.append(("Snakemake itself (no job running)", max(0.0, wall - union_seconds(intervals)), 0))
    return rows, wall


def figure_time(rows, wall, path):
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(rows) + 1.6))
    total = sum(s for _, s, _ in rows) or 1.0
    names = [n for n, _, _ in rows][::-1]
    values = [s for _, s, _ in rows][::-1]
    ax.barh(range(len(rows)), values, color="tab:blue")
    ax.set_yticks(range(len(rows)), names, fontsize=8)
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.2f} s ({100 * v / total:.1f}%)", va="center", fontsize=8)
    ax.set_xlim(0, max(values + [1e-3]) * 1.35)
    ax.set_xlabel("seconds (job-seconds: summed over jobs that ran side by side)")
    ax.set_title(f"Where did the time go? Run: {wall:.2f} s wall-clock, "
                 f"{total:.2f} job-seconds", fontsize=10)
    save(fig, path)


def figure_throughput(shards, names, path):
    """GCUPS per shard that scored pairs, a colour per device; empty shards are not bars."""
    full = [(i, d) for i, d in enumerate(shards) if d["pairs"] > 0 and d["seconds"] > 0]
    empty = sum(1 for d in shards if d["pairs"] == 0)
    n = len(full)
    note = f" ({empty} empty shard{'s' if empty != 1 else ''} not drawn)" if empty else ""
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * n + 3) if n <= NAMED_SHARDS else 12, 4.5))
    if not full:
        no_data(ax, "no shard scored any pair")
    elif n > MANY_SHARDS:
        ax.hist([d["cells"] / d["seconds"] / 1e9 for _, d in full], bins=60, color="tab:blue")
        ax.set_xlabel("GCUPS (cells / haplik's seconds / 1e9)")
        ax.set_ylabel("shards")
    else:
        devices = sorted({device_label(d) for _, d in full})
        colours = {dv: plt.cm.tab10(k % 10) for k, dv in enumerate(devices)}
        xs = list(range(n)) if n <= NAMED_SHARDS else [i + 1 for i, _ in full]
        for dv in devices:
            sel = [k for k, (_, d) in enumerate(full) if device_label(d) == dv]
            ax.bar([xs[k] for k in sel], [full[k][1]["cells"] / full[k][1]["seconds"] / 1e9
                                           for k in sel],
                   color=colours[dv], label=dv, width=0.8 if n <= NAMED_SHARDS else 1.0)
        if n <= NAMED_SHARDS:
            ax.set_xticks(xs, [names[i] for i, _ in full], rotation=60, ha="right", fontsize=8)
        else:
            ax.set_xlim(0.5, len(shards) + 0.5)
            ax.set_xlabel(f"shard (its row in the per-shard table; {len(shards)} shards)")
        ax.set_ylabel("GCUPS (cells / haplik's seconds / 1e9)")
        ax.legend(fontsize=8, loc="best")
    ax.set_title("haplik throughput per shard and device" + note)
    save(fig, path)


def merged(shards, key):
    out = {}
    for d in shards:
        for b, v in (d.get(key) or {}).items():
            out[int(b)] = out.get(int(b), 0) + v
    return out


def figure_likelihoods(shards, path):
    hist = merged(shards, "lk")
    width = shards[0]["lk_bin"] if shards else 0.5
    pairs = sum(d["pairs"] for d in shards)
    others = sum(d["lk_other"] for d in shards)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if hist:
        lo, hi = min(hist), max(hist)
        edges = [b * width for b in range(lo, hi + 2)]
        ax.stairs([hist.get(b, 0) for b in range(lo, hi + 1)], edges, fill=True, color="tab:blue")
        ax.set_yscale("log")
        ax.set_xlabel(f"log10 likelihood (bins of {width:g})")
        ax.set_ylabel("pairs")
    else:
        no_data(ax, "no pairs" if not pairs else "no finite likelihood")
    ax.set_title(f"haplik log10 likelihoods ({pairs} pairs"
                 + (f"; {others} without a finite value, not drawn" if others else "") + ")")
    save(fig, path)


def gatk_account(shards):
    """The comparison with GATK summed over the shards that carry GATK's values, and the
    reason none could be made."""
    total = dict(compared=0, equal=0, one_sided=0, missing=0, over=0)
    largest, reasons = None, set()
    for d in shards:
        g = d.get("gatk")
        if not g:
            continue
        if g.get("none"):
            reasons.add(g["none"])
            continue
        for k in total:
            total[k] += g[k]
        if g["largest"] is not None:
            largest = g["largest"] if largest is None else max(largest, g["largest"])
    return total, largest, reasons


NO_GATK = {
    "zeros": "the dumps' expected column is all 0: a placeholder, not GATK's values",
    "placeholder": "the dumps mark their expected column as a placeholder, not GATK's values",
}


def figure_gatk(shards, path, gatk_asked):
    total, largest, reasons = gatk_account(shards)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    hist = {}
    for d in shards:
        g = d.get("gatk") or {}
        for b, v in (g.get("diff") or {}).items():
            hist[int(b)] = hist.get(int(b), 0) + v
    if not gatk_asked or not total["compared"]:
        why = ("no dump carries GATK's values (batch files)" if not gatk_asked
               else "; ".join(sorted(NO_GATK.get(r, r) for r in reasons)) or "no pair compared")
        no_data(ax, f"no comparison with GATK:\n{why}")
        ax.set_title("|haplik - GATK|: not compared")
        save(fig, path)
        return total, largest, reasons
    width = 0.1
    for d in shards:
        if (d.get("gatk") or {}).get("diff_bin"):
            width = d["gatk"]["diff_bin"]
    notes = "".join(f"; {v} {k}" for k, v in (("equal", total["equal"]),
                                              ("finite on one side only", total["one_sided"]),
                                              ("without haplik's value", total["missing"])) if v)
    if hist:
        lo, hi = min(hist), max(hist)
        edges = [10 ** (b * width) for b in range(lo, hi + 2)]
        ax.stairs([hist.get(b, 0) for b in range(lo, hi + 1)], edges, fill=True, color="tab:blue")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.axvline(CHECK_TOLERANCE, color="tab:red", linestyle="--", linewidth=1)
        ax.text(CHECK_TOLERANCE, ax.get_ylim()[1], f" haplik check's default tolerance {CHECK_TOLERANCE:g}",
                color="tab:red", fontsize=8, va="top")
        ax.set_xlabel("|haplik - GATK| (log10 units)")
        ax.set_ylabel("pairs")
    else:
        no_data(ax, "every compared pair equal (or not finite on both sides)")
    big = f", largest {largest:.3g}" if largest is not None else ""
    ax.set_title(f"|haplik - GATK| ({total['compared']} pairs{big}; {total['over']} above "
                 f"{CHECK_TOLERANCE:g}{notes})", fontsize=9)
    save(fig, path)
    return total, largest, reasons


def cell(text, left=False, cls=None):
    attrs = (' class="l"' if left else "") if not cls else f' class="{cls}"'
    return f"<td{attrs}>{html.escape(str(text))}</td>"


def write_shards(shards, names, tsv_path, html_path):
    header = ["shard", "regions", "pairs", "cells", "seconds", "GCUPS", "device", "job wall s",
              "start-up s", "reading s", "scoring s", "writing s", "double recomputed", "note"]
    rows = []
    for name, d in zip(names, shards):
        b = d["busy"] or {}
        g = d["cells"] / d["seconds"] / 1e9 if d["seconds"] > 0 and d["pairs"] else None
        rows.append([
            name, d["regions"], d["pairs"], d["cells"], f"{d['seconds']:.3f}",
            "" if g is None else f"{g:.4f}", device_label(d),
            "" if d["job_seconds"] is None else f"{d['job_seconds']:.2f}",
            *("" if k not in b else f"{b[k]:.3f}" for k in ("startup", "reading", "scoring", "writing")),
            d["double_recomputed"], "empty shard" if d["pairs"] == 0 else "",
        ])
    with open(tsv_path, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    with open(html_path, "w") as f:
        f.write(f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>haplik: per shard'
                f"</title>{STYLE}</head><body>\n<table>\n")
        f.write("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>\n")
        for row in rows[:TABLE_ROWS]:
            f.write("<tr>" + "".join(cell(c, left=k in (0, 6, 13)) for k, c in enumerate(row)) + "</tr>\n")
        f.write("</table>\n")
        if len(rows) > TABLE_ROWS:
            f.write(f"<p>The first {TABLE_ROWS} of {len(rows)} shards; shards.tsv has them all.</p>\n")
        empty = sum(1 for d in shards if d["pairs"] == 0)
        f.write(f"<p>{len(shards)} shards ({empty} empty), {sum(d['pairs'] for d in shards)} pairs, "
                f"{sum(d['cells'] for d in shards)} cells in {sum(d['seconds'] for d in shards):.3f} s "
                "of haplik's time summed over the shards.</p></body></html>\n")


def write_summary(path, shards, rows, wall, gatk, gatk_asked):
    total_js = sum(s for _, s, _ in rows) or 1.0
    pairs = sum(d["pairs"] for d in shards)
    recomputed = sum(d["double_recomputed"] for d in shards)
    precisions = sorted({str(d["precision"]) for d in shards})
    by_device = {}
    for d in shards:
        by_device.setdefault(device_label(d), [0, 0])
        by_device[device_label(d)][0] += 1
        by_device[device_label(d)][1] += d["pairs"]
    notices = {}
    for d in shards:
        for n in d["notices"]:
            if " pairs, " in n and "cells in" in n:
                continue  # the summary line, shown per shard already
            notices[plain_notice(n)] = notices.get(plain_notice(n), 0) + 1
    out = [f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>haplik: the run</title>{STYLE}'
           "</head><body>\n<h2>Where did the time go?</h2>\n"
           f"<p>The run took {wall:.2f} s wall-clock from its first job's start to the end of the "
           f"figures job, {total_js:.2f} job-seconds in all.</p>\n<table>\n"
           "<tr><th class='l'>step</th><th>jobs</th><th>seconds</th><th>share</th></tr>\n"]
    for name, s, n in rows:
        out.append(f"<tr>{cell(name, True)}{cell(n or '')}{cell(f'{s:.3f}')}"
                   f"{cell(f'{100 * s / total_js:.1f}%')}</tr>\n")
    empty = sum(1 for d in shards if d["pairs"] == 0)
    out.append(f"</table>\n<p>{len(shards)} shards, {empty} of them empty (no pairs: marked in the "
               "per-shard table, not drawn in the throughput).</p>\n<h2>Can I trust it?</h2>\n<ul>\n")
    out.append(f"<li>{pairs} pairs scored in precision {html.escape(', '.join(precisions))}; "
               f"{recomputed} redone in double (mixed precision: a float sum below "
               "model.float_threshold is computed again in double).</li>\n")
    for dv, (n, p) in sorted(by_device.items()):
        out.append(f"<li>{html.escape(dv)}: {n} shard{'s' if n != 1 else ''}, {p} pairs.</li>\n")
    total, largest, reasons = gatk
    if not gatk_asked:
        out.append("<li>No comparison with GATK: no dump carries GATK's values (batch files).</li>\n")
    elif not total["compared"]:
        why = "; ".join(sorted(NO_GATK.get(r, r) for r in reasons)) or "no pair could be matched"
        out.append(f"<li class='bad'>No comparison with GATK: {html.escape(why)}.</li>\n")
    else:
        cls = " class='bad'" if total["over"] else ""
        out.append(f"<li{cls}>Against GATK's values: {total['compared']} pairs compared, "
                   f"{total['over']} differ by more than {CHECK_TOLERANCE:g} (haplik check's "
                   f"default tolerance); largest difference "
                   f"{'none' if largest is None else f'{largest:.3g}'}; {total['equal']} equal, "
                   f"{total['one_sided']} finite on one side only, {total['missing']} without "
                   f"haplik's value.</li>\n")
        if reasons:
            out.append(f"<li>Not compared: {html.escape('; '.join(sorted(NO_GATK.get(r, r) for r in reasons)))}.</li>\n")
    for n, k in sorted(notices.items()):
        out.append(f"<li>haplik said, in {k} shard{'s' if k != 1 else ''}: {html.escape(n)}</li>\n")
    out.append("</ul></body></html>\n")
    with open(path, "w") as f:
        f.write("".join(out))


def main(a):
    if len(a.names) != len(a.digests):
        fail(f"{len(a.digests)} digests, {len(a.names)} names: one each per shard")
    shards = [load_digest(p) for p in a.digests]
    steps = {}
    for item in a.steps:
        step, _, path = item.partition("=")
        steps.setdefault(step, []).append(path)
    gatk_asked = any("gatk" in d for d in shards)
    write_shards(shards, a.names, a.shards, a.shards_html)
    figure_throughput(shards, a.names, a.throughput)
    figure_likelihoods(shards, a.likelihoods)
    gatk = figure_gatk(shards, a.gatk, gatk_asked)
    if a.config:
        with open(a.config, "w") as f:
            json.dump(a.run_config, f, indent=1)
    # last: the time figure counts this job's own time up to here
    rows, wall = time_account(shards, steps)
    write_summary(a.summary, shards, rows, wall, gatk, gatk_asked)
    figure_time(rows, wall, a.time)


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--digests", nargs="*", default=[])
    p.add_argument("--names", nargs="*", default=[])
    p.add_argument("--steps", nargs="*", default=[])
    for name in ("summary", "shards", "shards-html", "time", "throughput", "likelihoods", "gatk"):
        p.add_argument(f"--{name}", required=True)
    p.add_argument("--config")
    a = p.parse_args(argv)
    a.run_config = None
    return a


if "snakemake" in globals():
    sm = snakemake  # noqa: F821 (given by Snakemake's script directive)
    sys.stderr = open(sm.log[0], "w")
    out = sm.output
    main(argparse.Namespace(
        digests=list(sm.input.digests), names=list(sm.params.names),
        steps=[f"{step}={path}" for step in STEPS for path in sm.input.get(f"bench_{step}", [])],
        summary=out.summary, shards=out.shards, shards_html=out.shards_html, time=out.time,
        throughput=out.throughput, likelihoods=out.likelihoods, gatk=out.gatk,
        config=out.run_config, run_config=dict(sm.config)))
elif __name__ == "__main__":
    main(parse())
