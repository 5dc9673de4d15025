"""sparcoll-sim: what the cost model predicts at scales no one has at hand.

Given a tuning file (sparcoll-tune writes one; README, "Cost model"), prints
and plots the predicted time of every algorithm, and auto's pick, for P = 2 ..
4096 ranks and 1 KiB .. 1 GiB, for the dense collectives, sparse allreduce
(the uniform expected-union model at a given density) and DSOP. Every
number comes from the library's own model (sparcoll.model.CostModel), so the
simulator predicts what auto would pick on a communicator of that size with
that file loaded. The neighbourhood allgather (--neighbor SPEC) is priced on
the topology itself, built on P local ranks of this process
(sparcoll._sim_neighbor), for P = 8, 64, 512 by default.

    sparcoll-sim tuning.json -o sim/                 # every collective, tables + PNGs
    sparcoll-sim tuning.json --collectives allreduce --density 0.01
    sparcoll-sim tuning.json --seed-report -o seed/  # ring vs halving-doubling, two experiments
    sparcoll-sim --defaults --transport mpi ...      # the built-in parameters instead of a file
    sparcoll-sim tuning.json --collectives none --neighbor moore:d=3,r=1 --neighbor random:p=0.1 -o sim/

Sizes are the full vector's bytes per rank (float32), the tuning file's
"bytes": allreduce count = bytes/4, reduce-scatter recvcount = bytes/(4P),
allgather sendcount = bytes/(4P); sparse allreduce N = bytes/4 with density
d (each rank's non-zeros / N); DSOP n = m = sqrt(bytes/4) (the n x m float32
result).
"""

from __future__ import annotations

import argparse as _argparse
import json as _json
import math as _math
import os as _os
import re as _re
import sys as _sys
from typing import Sequence as _Sequence

from . import _capi
from . import _sim_neighbor
from . import model as _model

__all__ = ["main", "algorithms", "Model", "sweep", "table", "disagreements", "plot_collective", "plot_picks",
           "load_measured", "seed_report", "parse_args", "parse_size", "human", "seconds", "DENSE", "COLLECTIVES",
           "DEFAULT_P", "DEFAULT_SIZES", "NBR_P", "NBR_SIZES", "TABLE_P", "SHORT", "KIB"]

DENSE = ("allreduce", "reduce_scatter", "allgather")
COLLECTIVES = DENSE + ("sparse_allreduce", "dsop")
KIB = 1024
# P = 2, 3, 4, 6, 8, 12, ... 4096: powers of two and the non-powers between
# them (Rabenseifner's fold and the folded sparse schedules differ there).
DEFAULT_P = sorted({p for k in range(1, 13) for p in (1 << k, 3 << (k - 1)) if 2 <= p <= 4096})
DEFAULT_SIZES = [KIB << (2 * i) for i in range(11)]  # 1 KiB .. 1 GiB, x4
NBR_P = [8, 64, 512]  # --neighbor: each P is that many threads building the topology
NBR_SIZES = [8 << (2 * i) for i in range(10)]  # blocks of 8 B .. 2 MiB, x4
TABLE_P = (2, 3, 8, 64, 512, 4096)
SHORT = {"rabenseifner": "rab", "recdbl": "rdb", "ring": "ring", "ssar_recdbl": "ssar_rd",
         "ssar_split_allgather": "ssar_ag", "dsar_split_allgather": "dsar_ag", "dsar_early_switch": "dsar_es",
         "dense": "dense", "allgather": "ag", "allreduce": "ar", "allreduce_ring": "ar_ring",
         "g_rabenseifner": "g_rab", "all_scatter": "scatter", "naive": "naive", "combining": "comb",
         "hierarchical": "hier"}


def algorithms(collective: str) -> list[str]:
    """The algorithms the model prices for a collective (auto and native excluded:
    auto is the pick, native is priced as ring)."""
    if collective == "neighbor_allgather":
        return list(_sim_neighbor.ALGOS)
    table = {"allreduce": _capi.ALGOS, "reduce_scatter": _capi.ALGOS, "allgather": _capi.ALGOS,
             "sparse_allreduce": _capi.SPARSE_ALGOS, "dsop": _capi.DSOP_ALGOS}[collective]
    # binomial and scatter_allgather are broadcast's, which the simulator does not sweep.
    names = [n for n in table if n not in ("auto", "native", "binomial", "scatter_allgather")]
    if collective == "reduce_scatter":
        names = [n for n in names if n != "recdbl"]
    if collective == "allgather":
        names = [n for n in names if n != "rabenseifner"]
    return names


class Model:
    """One tuning file (or the built-in parameters) on one transport and memory."""

    def __init__(self, tuning: str | None, transport: str, memory: str, ranks_per_node: int):
        self.tuning = tuning
        self.transport = transport
        self.memory = memory
        self.ranks_per_node = ranks_per_node  # 0: every rank on one machine
        self._models: dict[int, object] = {}

    def machines(self, P: int) -> int:
        return 1 if self.ranks_per_node <= 0 else max(1, -(-P // self.ranks_per_node))

    def count(self, collective: str, P: int, nbytes: int) -> int:
        """The estimate call's count for `nbytes` of the collective on P ranks."""
        elems = max(1, nbytes // 4)
        if collective in ("reduce_scatter", "allgather"):
            return max(1, elems // P)
        if collective == "dsop":
            return max(1, int(_math.isqrt(elems)))
        return elems

    def estimate(self, collective: str, algo: str, P: int, nbytes: int, density: float) -> tuple[float, str]:
        cm = self._models.get(P)
        if cm is None:  # one parsed model per P (the file is read once each)
            cm = self._models[P] = _model.CostModel(self.tuning, transport=self.transport, memory=self.memory,
                                                    nranks=P, machines=self.machines(P))
        count = self.count(collective, P, nbytes)
        return cm.estimate(collective, count, "float32", algo,
                           density if collective == "sparse_allreduce" else None)


def sweep(m: Model, collective: str, ps: _Sequence[int], sizes: _Sequence[int], density: float) -> list[dict]:
    """Every algorithm's prediction and auto's pick at every (P, size)."""
    rows = []
    algos = algorithms(collective)
    for P in ps:
        for n in sizes:
            times = {a: m.estimate(collective, a, P, n, density)[0] for a in algos}
            t_auto, pick = m.estimate(collective, "auto", P, n, density)
            best = min(times, key=times.get)
            rows.append({"collective": collective, "P": P, "bytes": n, "density": density, "times": times,
                         "auto": pick, "auto_s": t_auto, "best": best, "best_s": times[best]})
    return rows


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:g}{unit}" if n == int(n) else f"{n:.3g}{unit}"
        n /= 1024
    return str(n)


def seconds(t: float) -> str:
    if not _math.isfinite(t):
        return "-"
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if t >= f or unit == "us":
            return f"{t / f:.3g}{unit}"
    return f"{t:g}"


def table(rows: list[dict], ps: _Sequence[int], sizes: _Sequence[int]) -> str:
    """auto's pick and predicted time: one line per P, one column per size."""
    at = {(r["P"], r["bytes"]): r for r in rows}
    head = ["P"] + [human(n) for n in sizes]
    lines = [head]
    for P in ps:
        cells = [str(P)]
        for n in sizes:
            r = at.get((P, n))
            cells.append("" if r is None else f"{SHORT.get(r['auto'], r['auto'])} {seconds(r['auto_s'])}")
        lines.append(cells)
    widths = [max(len(l[i]) for l in lines) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(l, widths)) for l in lines)


def disagreements(rows: list[dict]) -> list[dict]:
    """Points where auto's pick is not the model's fastest: a tuning-file rule overrides the model
    there, or (sparse allreduce) no sparse algorithm beats dense by the required margin."""
    return [r for r in rows if r["auto"] != r["best"] and r["auto_s"] > r["best_s"] * (1 + 1e-9)]


def plot_collective(rows: list[dict], collective: str, plot_ps: _Sequence[int], path: str, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    algos = algorithms(collective)
    fig, axes = plt.subplots(1, len(plot_ps), figsize=(5 * len(plot_ps), 4.2), squeeze=False)
    for ax, P in zip(axes[0], plot_ps):
        rs = sorted((r for r in rows if r["P"] == P), key=lambda r: r["bytes"])
        if not rs:
            continue
        x = [r["bytes"] for r in rs]
        for a in algos:
            ax.plot(x, [r["times"][a] for r in rs], label=a, lw=1.4)
        ax.plot(x, [r["auto_s"] for r in rs], "k.", ms=7, label="auto's pick")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("block bytes" if collective == "neighbor_allgather" else "bytes per rank")
        ax.set_ylabel("predicted seconds")
        ax.set_title(f"P = {P}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_picks(rows: list[dict], collective: str, path: str, title: str) -> None:
    """auto's pick over P x size, one colour per algorithm."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    algos = algorithms(collective)
    ps = sorted({r["P"] for r in rows})
    sizes = sorted({r["bytes"] for r in rows})
    grid = [[float("nan")] * len(sizes) for _ in ps]
    for r in rows:
        grid[ps.index(r["P"])][sizes.index(r["bytes"])] = algos.index(r["auto"]) if r["auto"] in algos else -1
    cmap = ListedColormap(["C%d" % i for i in range(len(algos))])
    fig, ax = plt.subplots(figsize=(7, 5))
    ax.imshow(grid, aspect="auto", origin="lower", cmap=cmap, vmin=-0.5, vmax=len(algos) - 0.5,
              interpolation="nearest")
    ax.set_xticks(range(len(sizes)), [human(s) for s in sizes], rotation=45, fontsize=7)
    ax.set_yticks(range(len(ps)), [str(p) for p in ps], fontsize=7)
    ax.set_xlabel("bytes per rank")
    ax.set_ylabel("P")
    handles = [plt.Rectangle((0, 0), 1, 1, color="C%d" % i) for i in range(len(algos))]
    ax.legend(handles, algos, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def load_measured(path: str) -> list[dict]:
    """all_reduce_perf -J lines (out-of-place rows), for --seed-report overlays."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                r = _json.loads(line)
                if r.get("collective") == "AllReduce" and not r.get("in_place", False):
                    out.append(r)
    return out


def seed_report(m: Model, out: str | None, measured: list[dict], plots: bool) -> str:
    """The seed report's two experiments (ring vs recursive halving-doubling,
    i.e. Rabenseifner): allreduce of 1 KB .. 100 MB at P = 16, and P = 2..16 at
    10 MB; measured points (all_reduce_perf -J) are drawn beside the curves."""
    sizes = [10 ** e for e in range(3, 9)]  # 1 KB .. 100 MB, as the report's table
    ps = [2, 4, 8, 16]
    algos = ("ring", "rabenseifner")
    text = ["Experiment 1: allreduce at P = 16 (predicted seconds)", "bytes        ring  rabenseifner  auto"]
    exp1 = []
    for n in sizes:
        t = {a: m.estimate("allreduce", a, 16, n, 0)[0] for a in algos}
        pick = m.estimate("allreduce", "auto", 16, n, 0)[1]
        exp1.append((n, t))
        text.append(f"{n:>10} {t['ring']:>9.4g} {t['rabenseifner']:>13.4g}  {pick}")
    text += ["", "Experiment 2: allreduce of 10 MB (predicted seconds)", "P        ring  rabenseifner  auto"]
    exp2 = []
    for P in ps:
        t = {a: m.estimate("allreduce", a, P, 10 ** 7, 0)[0] for a in algos}
        pick = m.estimate("allreduce", "auto", P, 10 ** 7, 0)[1]
        exp2.append((P, t))
        text.append(f"{P:>3} {t['ring']:>10.4g} {t['rabenseifner']:>13.4g}  {pick}")
    if plots and out:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
        for i, a in enumerate(algos):
            a1.plot([n for n, _ in exp1], [t[a] for _, t in exp1], f"C{i}-", label=f"{a} (model)")
            a2.plot([p for p, _ in exp2], [t[a] for _, t in exp2], f"C{i}-", label=f"{a} (model)")
            m1 = sorted((r["size_bytes"], r["time_us"] * 1e-6) for r in measured
                        if r["algorithm"] == a and r["nranks"] == 16)
            m2 = sorted((r["nranks"], r["time_us"] * 1e-6) for r in measured
                        if r["algorithm"] == a and abs(r["size_bytes"] - 10 ** 7) <= 10 ** 7 * 0.05)
            if m1:
                a1.plot(*zip(*m1), f"C{i}o", label=f"{a} (measured)")
            if m2:
                a2.plot(*zip(*m2), f"C{i}o", label=f"{a} (measured)")
        a1.set(xscale="log", yscale="log", xlabel="bytes", ylabel="seconds", title="allreduce, P = 16")
        a2.set(xlabel="P", ylabel="seconds", title="allreduce of 10 MB")
        for ax in (a1, a2):
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(_os.path.join(out, "seed-report.png"), dpi=110)
        plt.close(fig)
    return "\n".join(text)


def parse_args(argv: _Sequence[str] | None) -> _argparse.Namespace:
    ap = _argparse.ArgumentParser(prog="sparcoll-sim", description=__doc__.split("\n\n")[0],
                                  formatter_class=_argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tuning", nargs="?", help="tuning file (JSON, schema 1)")
    ap.add_argument("--defaults", action="store_true", help="use the built-in parameters (no tuning file)")
    ap.add_argument("--transport", default=None, choices=("mpi", "nccl", "local"),
                    help="the model entry to use (default: the file's first model's transport, else mpi)")
    ap.add_argument("--memory", default=None, choices=("host", "device"), help="default: host (nccl: device)")
    ap.add_argument("--ranks-per-node", type=int, default=0,
                    help="ranks per machine; more ranks span several machines (inter-node level). 0: one machine")
    ap.add_argument("--collectives", default=",".join(COLLECTIVES),
                    help="comma-separated subset of " + ", ".join(COLLECTIVES) + ", or none")
    ap.add_argument("--neighbor", action="append", default=[], metavar="SPEC",
                    help="also the neighbour allgather on this graph (neighbor_allgather_perf's --topo: "
                         "moore:d=D,r=R[,periodic=1], random:p=X[,seed=S], file:PATH); repeatable")
    ap.add_argument("--nbr-ranks", default=None, help="--neighbor: comma-separated P (default 8,64,512)")
    ap.add_argument("--nbr-sizes", default=None, help="--neighbor: block sizes in bytes (default 8..2M x4)")
    ap.add_argument("--density", type=float, default=0.01, help="sparse allreduce: non-zeros / N per rank")
    ap.add_argument("--ranks", default=None, help="comma-separated P values (default 2..4096)")
    ap.add_argument("--sizes", default=None, help="comma-separated byte sizes (K/M/G suffixes; default 1K..1G x4)")
    ap.add_argument("--seed-report", action="store_true",
                    help="the ring vs halving-doubling report's two experiments (P = 16 sizes; 10 MB over P)")
    ap.add_argument("--measured", default=None, help="--seed-report: all_reduce_perf -J lines to draw beside")
    ap.add_argument("-o", "--out", default=None, help="directory for PNGs and sim.jsonl")
    ap.add_argument("--no-plots", action="store_true", help="tables only")
    a = ap.parse_args(argv)
    if bool(a.tuning) == a.defaults:
        ap.error("give a tuning file or --defaults (not both)")
    if not 0 < a.density <= 1:
        ap.error(f"--density {a.density} must be in (0, 1]")
    if a.ranks_per_node < 0:
        ap.error("--ranks-per-node must be >= 0")
    a.collectives = [] if a.collectives in ("", "none") else a.collectives.split(",")
    bad = [c for c in a.collectives if c not in COLLECTIVES]
    if bad:
        ap.error(f"unknown collective(s) {', '.join(bad)}; choose from {', '.join(COLLECTIVES)}, or none")
    try:
        a.neighbor = [(t, _sim_neighbor.parse_spec(t)) for t in a.neighbor]
    except ValueError as e:
        ap.error(f"--neighbor: {e}")
    try:
        a.ranks = [int(x) for x in a.ranks.split(",")] if a.ranks else list(DEFAULT_P)
        a.sizes = [parse_size(x) for x in a.sizes.split(",")] if a.sizes else list(DEFAULT_SIZES)
        a.nbr_ranks = [int(x) for x in a.nbr_ranks.split(",")] if a.nbr_ranks else list(NBR_P)
        a.nbr_sizes = [parse_size(x) for x in a.nbr_sizes.split(",")] if a.nbr_sizes else list(NBR_SIZES)
    except ValueError as e:
        ap.error(str(e))
    if any(p < 2 for p in a.ranks):
        ap.error("--ranks: every P must be >= 2")
    if any(p < 1 for p in a.nbr_ranks):
        ap.error("--nbr-ranks: every P must be >= 1")
    return a


def parse_size(s: str) -> int:
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    s = s.strip()
    try:
        n = int(s[:-1]) * mult[s[-1].upper()] if s and s[-1].upper() in mult else int(s)
    except ValueError:
        raise ValueError(f"size '{s}' is not a byte count like 4096, 64K, 16M, 1G") from None
    if n < 1:
        raise ValueError(f"size '{s}' must be positive")
    return n


def main(argv: _Sequence[str] | None = None) -> int:
    a = parse_args(argv)
    tuning = None
    transport, memory = a.transport, a.memory
    try:
        if a.tuning:
            summary = _model.load(a.tuning)  # the library's parser: a bad file fails here, with its message
            tuning = a.tuning
            models = summary.get("models", [])
            if transport is None and models:
                transport = models[0]["transport"]
                memory = memory or models[0].get("memory")
    except (OSError, ValueError, RuntimeError) as e:
        print(f"sparcoll-sim: {e}", file=_sys.stderr)
        return 2
    transport = transport or "mpi"
    memory = memory or ("device" if transport == "nccl" else "host")
    m = Model(tuning, transport, memory, a.ranks_per_node)
    plots = not a.no_plots and a.out is not None
    if plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("sparcoll-sim: PNGs need matplotlib (pip install matplotlib), or pass --no-plots", file=_sys.stderr)
            return 2
    if a.out:
        _os.makedirs(a.out, exist_ok=True)
    src = a.tuning or "built-in parameters"
    print(f"# sparcoll-sim: {src}, transport {transport}, memory {memory}, "
          f"{'one machine' if a.ranks_per_node <= 0 else f'{a.ranks_per_node} ranks per machine'}")
    if a.seed_report:
        measured = load_measured(a.measured) if a.measured else []
        print(seed_report(m, a.out, measured, plots))
        return 0
    if a.neighbor and transport == "local" and memory == "device":
        print("sparcoll-sim: --neighbor builds host-memory local ranks; it cannot price local device-memory "
              "communicators (--transport mpi or nccl, or --memory host)", file=_sys.stderr)
        return 2
    all_rows = []
    for c in a.collectives:
        rows = sweep(m, c, a.ranks, a.sizes, a.density)
        all_rows += rows
        what = {"sparse_allreduce": f" (density {a.density:g})"}.get(c, "")
        print(f"\n## {c}{what}: auto's pick and its predicted time")
        print(table(rows, [p for p in TABLE_P if p in a.ranks] or a.ranks[:6], a.sizes))
        dis = disagreements(rows)
        if dis:
            print(f"  ({len(dis)} point(s) where auto does not run the fastest prediction: a tuning-file rule, "
                  "or the sparse algorithms' margin over dense)")
        if plots:
            plot_ps = [p for p in (8, 64, 4096) if p in a.ranks] or a.ranks[-1:]
            plot_collective(rows, c, plot_ps, _os.path.join(a.out, f"{c}.png"), f"{c}{what}: {src}")
            plot_picks(rows, c, _os.path.join(a.out, f"{c}-picks.png"), f"{c}{what}: auto's pick")
    for text, _ in a.neighbor:
        try:
            rows = _sim_neighbor.simulate(tuning, transport, m.machines, text, a.nbr_ranks, a.nbr_sizes)
        except ValueError as e:
            print(f"sparcoll-sim: --neighbor {text}: {e}", file=_sys.stderr)
            return 2
        all_rows += rows
        ks = ", ".join(f"P = {r['P']}: k {r['k']}" for r in rows if r["bytes"] == a.nbr_sizes[0])
        print(f"\n## neighbor_allgather on {text} (blocks; friend groups {ks}): auto's pick and its predicted time")
        print(table(rows, a.nbr_ranks, a.nbr_sizes))
        if plots:
            name = "neighbor_allgather-" + _re.sub(r"[^A-Za-z0-9.=-]+", "_", text)
            plot_collective(rows, "neighbor_allgather", a.nbr_ranks[-3:], _os.path.join(a.out, name + ".png"),
                            f"neighbor_allgather on {text}: {src}")
    if a.out:
        with open(_os.path.join(a.out, "sim.jsonl"), "w") as f:
            for r in all_rows:
                f.write(_json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    _sys.exit(main())
