#!/usr/bin/env python3
"""Plots of dsop_perf results, after the figures of Enderlin et al. (DSOP).

Reads the JSON lines of one or more `dsop_perf -J` runs and writes PNGs:

  speedup_P<P>_p<pct>.png   speedup over the allreduce baseline vs N, one line
                            per algorithm, at a percentile (50 = median; 10 and
                            90 with --percentiles) of the per-repetition
                            speedups, with 95 % percentile-bootstrap CIs
  runtime_P<P>.png          runtime distributions per algorithm and N as
                            violins (log scale), every kept iteration, with the
                            5th / 50th / 95th percentiles marked

Methodology (the same as dsop_perf's summary): warm-up iterations are
dropped; a repetition's observation is the median of its iterations; the
speedup of a repetition is baseline / algorithm for that repetition.

  python3 bench/plot_dsop.py results.jsonl [more.jsonl] -o plots/ [--percentiles 10 50 90]
"""
import argparse
import collections
import json
import os
import random
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.ticker

BASELINE = "allreduce"


def percentile(values, p):
    """numpy's default (linear interpolation) percentile, p in [0, 100]."""
    v = sorted(values)
    if not v:
        return float("nan")
    h = (len(v) - 1) * p / 100.0
    lo = int(h)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])


def bootstrap(values, p, resamples=2000, seed=42):
    """Statistic and its 95 % percentile-bootstrap confidence interval."""
    rng = random.Random(seed)
    n = len(values)
    stats = [percentile([values[rng.randrange(n)] for _ in range(n)], p) for _ in range(resamples)]
    return percentile(values, p), percentile(stats, 2.5), percentile(stats, 97.5)


def load(paths):
    """{(P, n): {algo: {rep: [seconds...]}}} of the kept iterations."""
    runs = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(list)))
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                if r.get("bench") != "dsop_perf" or r.get("warmup"):
                    continue
                runs[(r["P"], r["n"])][r["algo"]][r["rep"]].append(r["seconds"])
    return runs


def speedups(per_algo):
    """Per-repetition speedup of every algorithm over the baseline."""
    base = {rep: statistics.median(v) for rep, v in per_algo.get(BASELINE, {}).items()}
    out = {}
    for algo, reps in per_algo.items():
        s = [base[rep] / statistics.median(v) for rep, v in sorted(reps.items()) if rep in base]
        if s:
            out[algo] = s
    return out


def plot_speedup(runs, P, pct, outdir):
    sizes = sorted(n for (p, n) in runs if p == P)
    algos = sorted({a for (p, n) in runs if p == P for a in runs[(p, n)]})
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, algo in enumerate(algos):
        xs, ys, lo, hi = [], [], [], []
        for n in sizes:
            s = speedups(runs[(P, n)]).get(algo)
            if not s:
                continue
            v, l, h = bootstrap(s, pct)
            xs.append(n)
            ys.append(v)
            lo.append(v - l)
            hi.append(h - v)
        if not xs:
            continue
        offset = (i - len(algos) / 2) * 0.01  # keep overlapping error bars apart
        ax.errorbar([x * (1 + offset) for x in xs], ys, yerr=[lo, hi], marker="o", capsize=3, label=algo)
    ax.axhline(1.0, color="gray", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_yscale("log")  # speedups from well below 1 to tens: ratios read evenly
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(n) for n in sizes])
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda y, _: f"{y:g}x"))
    ax.set_xlabel("N = M")
    ax.set_ylabel(f"speedup over {BASELINE} ({'median' if pct == 50 else f'{pct}th percentile'})")
    ax.set_title(f"DSOP speedup, P = {P}, 95 % bootstrap CI")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(outdir, f"speedup_P{P}_p{pct}.png")
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def plot_violins(runs, P, outdir):
    sizes = sorted(n for (p, n) in runs if p == P)
    algos = sorted({a for (p, n) in runs if p == P for a in runs[(p, n)]})
    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(sizes) * len(algos) / 3), 4.8))
    width = 0.8 / max(1, len(algos))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, algo in enumerate(algos):
        data, pos = [], []
        for j, n in enumerate(sizes):
            reps = runs[(P, n)].get(algo)
            if reps:
                data.append([t * 1e3 for v in reps.values() for t in v])
                pos.append(j + (i - (len(algos) - 1) / 2) * width)
        if not data:
            continue
        parts = ax.violinplot(data, positions=pos, widths=width * 0.95, showextrema=False)
        for body in parts["bodies"]:
            body.set_facecolor(colors[i % len(colors)])
            body.set_alpha(0.6)
        for d, x in zip(data, pos):
            for q, w in ((5, 0.3), (50, 0.45), (95, 0.3)):
                y = percentile(d, q)
                ax.plot([x - w * width, x + w * width], [y, y], color="black", lw=0.8)
        ax.plot([], [], color=colors[i % len(colors)], lw=6, alpha=0.6, label=algo)
    ax.set_yscale("log")
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([f"N = {n}" for n in sizes])
    ax.set_ylabel("runtime per call (ms, max over ranks)")
    ax.set_title(f"DSOP runtime distributions, P = {P} (lines: 5th, 50th, 95th percentile)")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    path = os.path.join(outdir, f"runtime_P{P}.png")
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl", nargs="+", help="dsop_perf -J output files")
    ap.add_argument("-o", "--outdir", default=".", help="directory for the PNGs")
    ap.add_argument("--percentiles", type=int, nargs="+", default=[50], help="speedup percentiles to plot")
    args = ap.parse_args(argv)
    runs = load(args.jsonl)
    if not runs:
        print("no dsop_perf iterations found", file=sys.stderr)
        return 1
    os.makedirs(args.outdir, exist_ok=True)
    for P in sorted({p for (p, _) in runs}):
        for pct in args.percentiles:
            print(plot_speedup(runs, P, pct, args.outdir))
        print(plot_violins(runs, P, args.outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
