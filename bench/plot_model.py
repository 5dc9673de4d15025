#!/usr/bin/env python3
"""The cost model's campaign report (scripts/model-campaign): per network and
rank count, the fitted parameters, the model's prediction error and auto's
regret at the validation sizes, from the files of a campaign directory:

  NET-pP.json              the tuning file sparcoll-tune wrote
  NET-pP-check.jsonl       sparcoll-tune --points NET-pP-validate.jsonl
                           --validate NET-pP.json --raw: one line per
                           collective, size (density) and algorithm of the
                           validation run, with the measured and predicted
                           seconds, auto's pick, the best algorithm and
                           auto's regret

and writes

  <prefix>.md              one table of fits, one of errors and regrets (with
                           the worst point of each cell), and a list of the
                           points where auto's regret exceeds 10 %;
  <prefix>/NET.png         per P, allreduce time against size: each algorithm
                           measured (points) and predicted (line), auto's pick
                           circled.

Prediction error is predicted / measured - 1 over the explicit algorithms
(native is priced as ring and left out, as the validation does). Regret is
auto's time / the best algorithm's time - 1, at every size (and density).

  python3 bench/plot_model.py bench/results/model-2026-11-24 -o bench/results/model-2026-11-24

With --launches, it compares two or more campaign directories measured the
same way instead: per network and P, how far apart separate launches measure
the same point (collective, explicit dense algorithm, size), from their
NET-pP-raw.jsonl (the tuning runs) and NET-pP-validate.jsonl files. A model
fitted on one launch and judged on another cannot be more accurate than that.

  python3 bench/plot_model.py --launches DIR1 DIR2 [DIR3...] [-o PREFIX]

A .jsonl file may be stored gzip-compressed as .jsonl.gz (bench/results keeps
its campaigns' files so); the plain file is read where both are there.
"""
import argparse
import collections
import gzip
import json
import os
import re
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

NAME = re.compile(r"^(?P<net>[a-z0-9.]+)-p(?P<P>\d+)-check\.jsonl(\.gz)?$")
DENSE = ("allreduce", "reduce_scatter", "allgather", "broadcast")
COLLECTIVES = DENSE + ("sparse_allreduce", "dsop")
NETWORK_LABEL = {"shm": "shared memory", "tcp": "TCP (loopback)"}


def network_key(net):
    """shm, tcp, then rates from fast to slow."""
    if net in ("shm", "tcp"):
        return (0 if net == "shm" else 1, 0.0)
    m = re.match(r"^([0-9.]+)(mbit|gbit)$", net)
    rate = float(m.group(1)) * (1e9 if m.group(2) == "gbit" else 1e6) if m else 0.0
    return (2, -rate)


def network_label(net):
    if net in NETWORK_LABEL:
        return NETWORK_LABEL[net]
    return f"TCP shaped to {net.replace('gbit', ' Gbit/s').replace('mbit', ' Mbit/s')} (shared medium)"


def human_bytes(b):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            v = b / scale
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{b:.0f} B"


def campaign_files(directory, pattern):
    """(match, path) of the files of directory whose name matches pattern; NAME.gz is left out where
    NAME is there too."""
    names = sorted(os.listdir(directory))
    return [(m, os.path.join(directory, name)) for name in names
            if (m := pattern.match(name)) and not (name.endswith(".gz") and name[:-3] in names)]


def open_text(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def load(directory):
    """{(net, P): {"fit": [model dicts], "points": [validation rows]}}"""
    runs = {}
    for m, path in campaign_files(directory, NAME):
        net, P = m.group("net"), int(m.group("P"))
        with open_text(path) as f:
            # The first line of a --raw file is the run's {"source": ...}.
            points = [p for p in (json.loads(line) for line in f if line.strip()) if "collective" in p]
        tuning = os.path.join(directory, f"{net}-p{P}.json")
        models, sizes = [], None
        if os.path.exists(tuning):
            with open(tuning) as f:
                doc = json.load(f)
            models, sizes = doc.get("models", []), doc.get("source", {}).get("sizes")
        runs[(net, P)] = {"fit": models, "points": points, "sizes": sizes}
    if not runs:
        raise SystemExit(f"plot_model: no NET-pP-check.jsonl files in {directory}")
    return runs


def where(p):
    s = f"{p['collective']} {human_bytes(p['bytes'])}"
    if p["collective"] == "sparse_allreduce":
        s += f" d={p['density']:g}"
    return s


def summarize(points):
    """Per collective: |errors| (explicit algorithms), per (collective,
    algorithm) the same, and one regret per call site."""
    err = collections.defaultdict(list)
    per_algo = collections.defaultdict(list)
    regrets = collections.defaultdict(dict)
    for p in points:
        coll = p["collective"]
        if p["algorithm"] != "native" and p.get("predicted") is not None and p["seconds"] > 0:
            err[coll].append(abs(p["predicted"] / p["seconds"] - 1))
            per_algo[(coll, p["algorithm"])].append(abs(p["predicted"] / p["seconds"] - 1))
        if p.get("regret") is not None:
            regrets[coll][(p["bytes"], p["density"])] = (p["regret"], p)
    return err, per_algo, regrets


def twin_spread(points):
    """At P = 2, allreduce ring and rabenseifner send the same two messages:
    how far apart their measured times are is the measurement's own noise
    (median and max of |a / b - 1| over the sizes)."""
    by_size = collections.defaultdict(dict)
    for p in points:
        if p["collective"] == "allreduce" and p["algorithm"] in ("ring", "rabenseifner"):
            by_size[p["bytes"]][p["algorithm"]] = p["seconds"]
    d = [abs(v["ring"] / v["rabenseifner"] - 1) for v in by_size.values() if len(v) == 2]
    return (statistics.median(d), max(d)) if d else None


def sweep(sizes):
    if not sizes or len(sizes) != 3:
        return "?"
    return f"{human_bytes(sizes[0])} .. {human_bytes(sizes[1])} x{sizes[2]}"


def regret_cell(sites):
    if not sites:
        return "–"
    values = [r for r, _ in sites.values()]
    worst_r, worst_p = max(sites.values(), key=lambda rp: rp[0])
    within = sum(r <= 0.10 for r in values)
    cell = f"{within}/{len(values)} ≤ 10 %"
    if worst_r > 0.10:
        cell += f"; max {100 * worst_r:.0f} % ({human_bytes(worst_p['bytes'])}"
        cell += f" d={worst_p['density']:g})" if worst_p["collective"] == "sparse_allreduce" else ")"
    return cell


def report(runs, directory):
    keys = sorted(runs, key=lambda k: (network_key(k[0]), k[1]))
    lines = [
        f"# Cost model campaign: fits, prediction error and auto's regret ({os.path.basename(directory.rstrip('/'))})",
        "",
        "Per network and rank count P, `sparcoll-tune` fitted a tuning file on a sweep (dense sizes: 'tuned at'),",
        "then `sparcoll-tune --validate` loaded it and measured again at the sizes in between, which the fit never",
        "saw. Prediction error: predicted / measured - 1 over the explicit algorithms (native excluded: the model",
        "prices it as ring). Regret: auto's time / the best algorithm's time - 1, per size (and density).",
        "",
        "## Fits",
        "",
        "| network | P | level | α | β | γ | R² | points (dropped) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for net, P in keys:
        for m in runs[(net, P)]["fit"]:
            fit = m.get("fit", {})
            lines.append(
                f"| {network_label(net)} | {P} | {m.get('level', '')} | {1e6 * m['alpha']:.1f} µs | "
                f"{1e9 * m['beta']:.3f} ns/B | {1e9 * m['gamma']:.3f} ns/B | {fit.get('r2', float('nan')):.3f} | "
                f"{fit.get('points', '')} ({fit.get('dropped', '')}) |")
    lines += [
        "",
        "## Prediction error and regret at the validation sizes",
        "",
        "| network | P | tuned at | dense median abs. error | worst dense algorithm (median) | "
        + " | ".join(f"regret {c}" for c in COLLECTIVES) + " |",
        "|---|---|---|---|---|" + "---|" * len(COLLECTIVES),
    ]
    over, noise = [], []
    totals = collections.Counter()
    for net, P in keys:
        err, per_algo, regrets = summarize(runs[(net, P)]["points"])
        dense_err = [e for c in DENSE for e in err.get(c, [])]
        med = f"{100 * statistics.median(dense_err):.1f} % ({len(dense_err)})" if dense_err else "–"
        algo_med = {k: statistics.median(v) for k, v in per_algo.items() if k[0] in DENSE}
        worst = max(algo_med.items(), key=lambda kv: kv[1]) if algo_med else None
        worst_cell = f"{worst[0][0]} {worst[0][1]} {100 * worst[1]:.1f} %" if worst else "–"
        totals["algo_ok"] += bool(algo_med) and worst[1] <= 0.20
        twin = twin_spread(runs[(net, P)]["points"]) if P == 2 else None
        if twin:
            noise.append(f"{network_label(net)}: median {100 * twin[0]:.1f} %, max {100 * twin[1]:.1f} %")
        cells = [regret_cell(regrets.get(c, {})) for c in COLLECTIVES]
        lines.append(f"| {network_label(net)} | {P} | {sweep(runs[(net, P)]['sizes'])} | {med} | {worst_cell} | "
                     + " | ".join(cells) + " |")
        for c in COLLECTIVES:
            for r, p in regrets.get(c, {}).values():
                totals["sites"] += 1
                totals["within"] += r <= 0.10
                if r > 0.10:
                    over.append((net, P, r, p))
        totals["err_ok"] += bool(dense_err) and statistics.median(dense_err) <= 0.20
        totals["runs"] += 1
    lines += [
        "",
        f"Dense median abs. error ≤ 20 %: {totals['err_ok']} of {totals['runs']} runs; every dense algorithm's "
        f"median ≤ 20 %: {totals['algo_ok']} of {totals['runs']} runs. "
        f"Auto within 10 % of the best: {totals['within']} of {totals['sites']} points.",
        "",
    ]
    if noise:
        lines += ["The measurement's own noise: at P = 2, allreduce ring and rabenseifner send the same two "
                  "messages, yet their measured times differ by " + "; ".join(noise) + ". A regret below that "
                  "cannot be told from chance.", ""]
    if over:
        lines += ["## Points where auto's regret exceeds 10 %", "",
                  "| network | P | where | auto | best | regret |", "|---|---|---|---|---|---|"]
        for net, P, r, p in sorted(over, key=lambda x: (network_key(x[0]), x[1], -x[2])):
            lines.append(f"| {network_label(net)} | {P} | {where(p)} | {p['auto']} | {p['best']} | {100 * r:.1f} % |")
        lines.append("")
    return "\n".join(lines)


def plot(runs, outdir):
    os.makedirs(outdir, exist_ok=True)
    written = []
    for net in sorted({k[0] for k in runs}, key=network_key):
        Ps = sorted(P for n, P in runs if n == net)
        fig, axes = plt.subplots(1, len(Ps), figsize=(4.5 * len(Ps), 4), squeeze=False)
        for ax, P in zip(axes[0], Ps):
            pts = [p for p in runs[(net, P)]["points"] if p["collective"] == "allreduce"]
            algos = sorted({p["algorithm"] for p in pts})
            for i, algo in enumerate(algos):
                row = sorted((p for p in pts if p["algorithm"] == algo), key=lambda p: p["bytes"])
                color = f"C{i}"
                ax.plot([p["bytes"] for p in row], [p["seconds"] for p in row], "o", color=color, label=algo)
                if algo != "native":
                    ax.plot([p["bytes"] for p in row], [p["predicted"] for p in row], "-", color=color, alpha=0.6)
            picks = [p for p in pts if p["algorithm"] == p["auto"]]
            ax.plot([p["bytes"] for p in picks], [p["seconds"] for p in picks], "o", markersize=12,
                    markerfacecolor="none", markeredgecolor="black", label="auto's pick")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"allreduce, P = {P}")
            ax.set_xlabel("bytes per rank")
            ax.grid(True, which="both", alpha=0.3)
        axes[0][0].set_ylabel("seconds per call (points measured, lines model)")
        axes[0][0].legend(fontsize=8)
        fig.suptitle(network_label(net))
        fig.tight_layout()
        path = os.path.join(outdir, f"{net}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


RAW = re.compile(r"^(?P<net>[a-z0-9.]+)-p(?P<P>\d+)-(?P<kind>raw|validate)\.jsonl(\.gz)?$")


def measured(directory):
    """{(net, P, kind): {(collective, algorithm, bytes): seconds}} of a
    campaign's dense explicit algorithms (native and broadcast left out: the
    errors leave native out, and broadcast was timed from one root before
    2026-11-25)."""
    out = collections.defaultdict(dict)
    for m, path in campaign_files(directory, RAW):
        with open_text(path) as f:
            for p in (json.loads(line) for line in f if line.strip()):
                if p.get("collective") in DENSE[:3] and p.get("algorithm") != "native" and p.get("seconds", 0) > 0:
                    out[(m.group("net"), int(m.group("P")), m.group("kind"))][
                        (p["collective"], p["algorithm"], p["bytes"])] = p["seconds"]
    return out


def launches(directories):
    """The report of --launches: per (network, P), max(t_a, t_b) / min(t_a,
    t_b) - 1 over every pair of directories and every point both measured."""
    runs = [measured(d) for d in directories]
    keys = sorted({(net, P) for r in runs for net, P, _ in r}, key=lambda k: (network_key(k[0]), k[1]))
    lines = [
        "# The same points measured in separate launches",
        "",
        "Campaigns: " + ", ".join(f"`{os.path.basename(d.rstrip('/'))}`" for d in directories) + ". Per network "
        "and P, the slower launch's time over the faster's, minus 1, for every point (collective, explicit algorithm, size; allreduce, reduce-scatter "
        "and allgather) that two launches both measured, over every pair of campaigns, tuning and validation "
        "runs apart.",
        "",
        "| network | P | points | median | 90th percentile | max |",
        "|---|---|---|---|---|---|",
    ]
    rows = 0
    for net, P in keys:
        d = []
        for a in range(len(runs)):
            for b in range(a + 1, len(runs)):
                for kind in ("raw", "validate"):
                    x, y = runs[a].get((net, P, kind), {}), runs[b].get((net, P, kind), {})
                    d += [max(x[k], y[k]) / min(x[k], y[k]) - 1 for k in x.keys() & y.keys()]
        if not d:
            continue
        d.sort()
        rows += 1
        lines.append(f"| {network_label(net)} | {P} | {len(d)} | {100 * statistics.median(d):.1f} % | "
                     f"{100 * d[min(len(d) - 1, int(0.9 * len(d)))]:.1f} % | {100 * d[-1]:.1f} % |")
    if not rows:
        raise SystemExit("plot_model: no point measured in two of " + ", ".join(directories))
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", nargs="?", help="a campaign directory (scripts/model-campaign --out)")
    ap.add_argument("-o", "--output", help="prefix: writes PREFIX.md and PREFIX/NET.png (with --launches: PREFIX.md)")
    ap.add_argument("--launches", nargs="+", metavar="DIR",
                    help="compare these campaign directories' measurements of the same points")
    args = ap.parse_args(argv)
    if args.launches:
        if args.directory or len(args.launches) < 2:
            ap.error("--launches takes two or more campaign directories, and no other directory")
        text = launches(args.launches)
        if args.output:
            with open(args.output + ".md", "w") as f:
                f.write(text)
        print(text)
        return
    if not args.directory or not args.output:
        ap.error("a campaign directory and -o PREFIX are required (or --launches DIR DIR...)")
    runs = load(args.directory)
    text = report(runs, args.directory)
    with open(args.output + ".md", "w") as f:
        f.write(text)
    pngs = plot(runs, args.output)
    print(text)
    print(f"wrote {args.output}.md, " + ", ".join(pngs))


if __name__ == "__main__":
    main()
