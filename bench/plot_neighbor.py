#!/usr/bin/env python3
"""Plots and ratio tables of neighbor_allgather_perf results.

Reads the JSON lines of one or more `neighbor_allgather_perf -J` runs and writes
one PNG per (ranks, ranks per node, data type): time per call against block
size, one panel per topology, one line per algorithm (the median over
repetitions, bars from the fastest to the slowest repetition), log-log. Rows
of several launches of one run (a "launch" field, scripts/bench-neighbor's
SPARCOLL_BENCH_LAUNCHES) are merged: the median over launches of their times,
and every ratio below the median over launches of that launch's ratio.

  <prefix>-p<P>[-rpn<k>][-<type>].png

With --tables it prints Markdown tables of the ratios that issue 14 asks for
(times paired by repetition: the median over repetitions of one algorithm's
time over the other's in the same repetition, where the run recorded them):
  auto / baseline   per run: the worst and the median over sizes, and the sizes
                    where auto is more than 5 % slower than the baseline;
  combining         at blocks of 8 B .. 1 KiB: naive's messages per rank over
                    combining's, and combining's time over the baseline's and naive's;
  hierarchical      runs with virtual nodes, blocks of 64 KiB .. 4 MiB: naive's
                    inter-node bytes per rank over hierarchical's, and the times
                    of hierarchical, naive and the baseline.
The baseline is "mpi" (MPI_Neighbor_allgather called directly) where the run
has it, else "native" (sparcoll's call of MPI_Ineighbor_allgatherv).

  python3 bench/plot_neighbor.py results.jsonl [more.jsonl] -o bench/results/neighbor [--tables]

A file named *.gz is read gzip-compressed (bench/results keeps its large sweeps so).
"""
import argparse
import collections
import gzip
import json
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ORDER = ["auto", "naive", "combining", "hierarchical", "native", "mpi"]


def load(paths):
    """{(P, rpn, type): {topo: {algorithm: [rows by size]}}}."""
    runs = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(list)))
    for path in paths:
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    if r.get("tool") == "neighbor_allgather_perf":
                        runs[(r["nranks"], r["ranks_per_node"], r["type"])][r["topo"]][r["algorithm"]].append(r)
    for topos in runs.values():
        for algos in topos.values():
            for rows in algos.values():
                rows.sort(key=lambda r: r["size_bytes"])
    return runs


def size_label(b):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift:
            return f"{b / (1 << shift):g} {unit}"
    return f"{b} B"


def plot(runs, prefix):
    paths = []
    for (P, rpn, dtype), topos in sorted(runs.items()):
        names = sorted(topos, key=lambda t: (not t.startswith("moore"), t))
        cols = 4 if len(names) > 4 else len(names)
        rows = (len(names) + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
        for ax, topo in zip(axes.flat, names):
            for algo in ORDER:
                if not topos[topo].get(algo):
                    continue
                data = [r for _, r in sorted(by_size(topos[topo][algo]).items())]
                x = [r["size_bytes"] for r in data]
                y = [r["time_us"] for r in data]
                err = [[r["time_us"] - r["time_us_min"] for r in data], [r["time_us_max"] - r["time_us"] for r in data]]
                ax.errorbar(x, y, yerr=err, marker="o", ms=3, lw=1.2, capsize=2, label=algo)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(topo, fontsize=9)
            ax.set_xlabel("block per rank (bytes)", fontsize=8)
            ax.set_ylabel("time per call (us)", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(True, which="major", alpha=0.3)
        for ax in list(axes.flat)[len(names):]:
            ax.set_visible(False)
        axes.flat[0].legend(fontsize=7)
        nodes = f", nodes of {rpn} ranks" if rpn else ""
        fig.suptitle(f"neighbour allgather, {P} MPI ranks{nodes}, {dtype}: median over repetitions "
                     f"(bars: fastest to slowest)", fontsize=10)
        fig.tight_layout()
        path = f"{prefix}-p{P}" + (f"-rpn{rpn}" if rpn else "") + ("" if dtype == "float" else f"-{dtype}") + ".png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def launches(rows):
    """{launch: {size: row}}: one launch's rows by block size (a file of one launch: launch 0)."""
    out = collections.defaultdict(dict)
    for r in rows:
        out[r.get("launch", 0)][r["size_bytes"]] = r
    return out


def by_size(rows):
    """{size: row}, where a row of several launches is their merge: the median time over
    launches, its range from the fastest repetition of any to the slowest of any."""
    out = collections.defaultdict(list)
    for r in rows:
        out[r["size_bytes"]].append(r)
    merged = {}
    for size, rs in out.items():
        m = dict(rs[0])
        if len(rs) > 1:
            m["time_us"] = statistics.median(r["time_us"] for r in rs)
            m["time_us_min"] = min(r["time_us_min"] for r in rs)
            m["time_us_max"] = max(r["time_us_max"] for r in rs)
        m["launches"] = len(rs)
        merged[size] = m
    return merged


def point_ratios(a_rows, b_rows):
    """{size: a's time over b's}: per launch paired by repetition (ratio), then the median over
    the launches that ran both."""
    la, lb = launches(a_rows), launches(b_rows)
    per = collections.defaultdict(list)
    for k in set(la) & set(lb):
        for s in set(la[k]) & set(lb[k]):
            per[s].append(ratio(la[k][s], lb[k][s]))
    return {s: statistics.median(q) for s, q in per.items()}


def ratio(a, b):
    """a's time over b's: paired by repetition (they ran back to back) and the median over
    repetitions when the run recorded every repetition (rep_us), else the ratio of the medians."""
    ra, rb = a.get("rep_us"), b.get("rep_us")
    if ra and rb:
        q = [x / y for x, y in zip(map(float, ra.split(",")), map(float, rb.split(","))) if y > 0]
        if q:
            return statistics.median(q)
    return a["time_us"] / b["time_us"]


def baseline(algos):
    """The run's baseline: mpi (MPI's own call) where it ran, else native."""
    return "mpi" if algos.get("mpi") else "native"


def tables(runs):
    out = ["### auto against the baseline, same run (mpi: MPI_Neighbor_allgather called directly)", "",
           "| P | nodes | topology | baseline | launches | sizes | auto/baseline median | worst (size) | sizes > 1.05 |",
           "|---|---|---|---|---|---|---|---|---|"]
    for (P, rpn, _dtype), topos in sorted(runs.items()):
        for topo in sorted(topos):
            base = baseline(topos[topo])
            q = point_ratios(topos[topo].get("auto", []), topos[topo].get(base, []))
            a = by_size(topos[topo].get("auto", []))
            sizes = sorted(q)
            if not sizes:
                continue
            worst = max(sizes, key=q.get)
            over = [f"{size_label(s)} ({q[s]:.2f}, {a[s]['auto_choice']})" for s in sizes if q[s] > 1.05]
            nl = len(launches(topos[topo]["auto"]))
            out.append(f"| {P} | {rpn or 'one'} | {topo} | {base} | {nl} | {size_label(sizes[0])}..{size_label(sizes[-1])} | "
                       f"{statistics.median(q.values()):.2f} | {q[worst]:.2f} ({size_label(worst)}) | "
                       f"{', '.join(over) or 'none'} |")
    out += ["", "### combining at blocks of 8 B .. 1 KiB", "",
            "| P | topology | naive/combining msgs per rank | combining/baseline time | combining/naive time |",
            "|---|---|---|---|---|"]
    for (P, rpn, _dtype), topos in sorted(runs.items()):
        if rpn:
            continue
        for topo in sorted(topos):
            rows = {k: topos[topo].get(k, []) for k in ("combining", baseline(topos[topo]), "naive")}
            c, n, v = (by_size(r) for r in rows.values())
            sizes = [s for s in sorted(set(c) & set(n) & set(v)) if s <= 1024]
            if not sizes:
                continue
            cm = c[sizes[0]]["msgs_per_rank_avg"]
            msgs = v[sizes[0]]["msgs_per_rank_avg"] / cm if cm else 1
            qn = point_ratios(rows["combining"], rows[baseline(topos[topo])])
            qv = point_ratios(rows["combining"], rows["naive"])
            tn = [qn[s] for s in sizes if s in qn]
            tv = [qv[s] for s in sizes if s in qv]
            out.append(f"| {P} | {topo} | {msgs:.2f} | {min(tn):.2f}..{max(tn):.2f} | {min(tv):.2f}..{max(tv):.2f} |")
    out += ["", "### hierarchical with virtual nodes, blocks of 64 KiB .. 4 MiB", "",
            "| P | nodes | topology | naive/hierarchical inter-node bytes | hierarchical/naive time | "
            "hierarchical/baseline time | auto picks |", "|---|---|---|---|---|---|---|"]
    for (P, rpn, _dtype), topos in sorted(runs.items()):
        if not rpn:
            continue
        for topo in sorted(topos):
            rows = {k: topos[topo].get(k, []) for k in ("hierarchical", baseline(topos[topo]), "naive", "auto")}
            h, n, v, a = (by_size(r) for r in rows.values())
            sizes = [s for s in sorted(set(h) & set(n) & set(v)) if s >= 64 << 10]
            if not sizes:
                continue
            hi, vi = h[sizes[0]]["inter_node_bytes_per_rank_avg"], v[sizes[0]]["inter_node_bytes_per_rank_avg"]
            cut = f"{vi / hi:.2f}" if hi else ("none sent" if not vi else "inf")
            qv = point_ratios(rows["hierarchical"], rows["naive"])
            qn = point_ratios(rows["hierarchical"], rows[baseline(topos[topo])])
            tv = [qv[s] for s in sizes if s in qv]
            tn = [qn[s] for s in sizes if s in qn]
            picks = sorted({a[s]["auto_choice"] for s in sizes if s in a})
            out.append(f"| {P} | {rpn} | {topo} | {cut} | {min(tv):.2f}..{max(tv):.2f} | "
                       f"{min(tn):.2f}..{max(tn):.2f} | {', '.join(picks)} |")
    return "\n".join(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl", nargs="+", help="neighbor_allgather_perf -J output files")
    ap.add_argument("-o", "--prefix", default="neighbor", help="path prefix of the PNGs")
    ap.add_argument("--tables", action="store_true", help="print the Markdown ratio tables")
    args = ap.parse_args(argv)
    runs = load(args.jsonl)
    if not runs:
        print("no neighbor_allgather_perf results found", file=sys.stderr)
        return 1
    for p in plot(runs, args.prefix):
        print(p)
    if args.tables:
        print(tables(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
