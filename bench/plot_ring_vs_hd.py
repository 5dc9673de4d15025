#!/usr/bin/env python3
"""Ring against halving-doubling (Rabenseifner) allreduce: measured times
beside the cost model's curves, one panel per rank count.

Reads the JSON lines of `all_reduce_perf -A ring,rabenseifner -J ...` runs (one
or more files, any rank counts) and a tuning file, and writes

  <prefix>.png   time per call against size, log-log: measured points (out of
                 place) and the model's line for each algorithm, per P;
  <prefix>.md    per P and algorithm: the model's median absolute relative
                 error over the sizes, and the crossover (the smallest size
                 from which ring stays faster), measured and predicted.

The model is the library's own (sparcoll.model.CostModel over the tuning file,
with P ranks): nothing here restates its formulas.

  python3 bench/plot_ring_vs_hd.py p2.jsonl p4.jsonl p8.jsonl --tuning net.json -o bench/results/ring-vs-hd
"""
import argparse
import collections
import json
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ALGOS = ("ring", "rabenseifner")
COLORS = {"ring": "tab:blue", "rabenseifner": "tab:orange"}


def load(paths):
    """{P: {algorithm: {bytes: seconds}}} of the float32 out-of-place rows."""
    runs = collections.defaultdict(lambda: collections.defaultdict(dict))
    for path in paths:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                if r.get("algorithm") in ALGOS and not r.get("in_place") and r.get("type") == "float":
                    runs[int(r["nranks"])][r["algorithm"]][int(r["size_bytes"])] = 1e-6 * float(r["time_us"])
    if not runs:
        raise SystemExit("no ring or rabenseifner float rows in " + ", ".join(paths))
    return runs


def crossover(times):
    """The smallest size from which ring is faster at every larger size, or None."""
    sizes = sorted(set(times["ring"]) & set(times["rabenseifner"]))
    cross = None
    for s in reversed(sizes):
        if times["ring"][s] < times["rabenseifner"][s]:
            cross = s
        else:
            break
    return cross


def human(n):
    if n is None:
        return "none"
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= f:
            return f"{n / f:g} {unit}"
    return f"{n} B"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jsonl", nargs="+")
    ap.add_argument("--tuning", required=True, help="tuning file whose model is drawn (sparcoll-tune output)")
    ap.add_argument("--transport", default="mpi")
    ap.add_argument("--title", default="allreduce, float32")
    ap.add_argument("-o", "--output", required=True, help="prefix of the .png and .md files")
    args = ap.parse_args()

    from sparcoll.model import CostModel

    runs = load(args.jsonl)
    Ps = sorted(runs)
    fig, axes = plt.subplots(1, len(Ps), figsize=(5 * len(Ps), 4.2), squeeze=False)
    rows = []
    for ax, P in zip(axes[0], Ps):
        model = CostModel(args.tuning, transport=args.transport, nranks=P)
        predicted = {a: {} for a in ALGOS}
        for a in ALGOS:
            sizes = sorted(runs[P][a])
            if not sizes:
                continue
            for s in sizes:
                predicted[a][s] = model.estimate("allreduce", s // 4, algo=a)[0]
            ax.loglog(sizes, [runs[P][a][s] for s in sizes], "o", color=COLORS[a], label=f"{a} measured")
            ax.loglog(sizes, [predicted[a][s] for s in sizes], "-", color=COLORS[a], label=f"{a} model")
            errs = [abs(predicted[a][s] / runs[P][a][s] - 1) for s in sizes]
            rows.append((P, a, len(sizes), 100 * statistics.median(errs), 100 * max(errs)))
        model.close()
        ax.set_title(f"P = {P}")
        ax.set_xlabel("bytes")
        ax.set_ylabel("seconds per call")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        runs[P]["_pred"] = predicted
    fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.output + ".png", dpi=110)

    with open(args.output + ".md", "w") as f:
        f.write(f"# {args.title}: ring vs halving-doubling (rabenseifner), measured and modelled\n\n")
        f.write(f"Model: `{args.tuning}` ({args.transport}). Measured: {', '.join(args.jsonl)}.\n\n")
        f.write("| P | algorithm | sizes | model's median abs. error | max |\n|---|---|---|---|---|\n")
        for P, a, n, med, mx in rows:
            f.write(f"| {P} | {a} | {n} | {med:.1f} % | {mx:.1f} % |\n")
        f.write("\n| P | ring faster from (measured) | (model) |\n|---|---|---|\n")
        for P in Ps:
            measured = {a: runs[P][a] for a in ALGOS}
            f.write(f"| {P} | {human(crossover(measured))} | {human(crossover(runs[P]['_pred']))} |\n")
    print(f"wrote {args.output}.png, {args.output}.md")


if __name__ == "__main__":
    main()
