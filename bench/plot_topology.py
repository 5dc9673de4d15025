#!/usr/bin/env python3
"""Plots of scripts/bench-topology's sweep: allreduce time against size, one
PNG per placement (BASE-interleaved.png, BASE-consecutive.png), one panel per
number of ranks; each sparcoll variant's measured median (solid, markers)
beside the cost model's prediction for it (dashed, same colour), and
MPI_Allreduce measured.

  python bench/plot_topology.py BASE.jsonl BASE

Needs matplotlib (the project's venv: scripts/python-env). Small files:
dpi 72, a 256-colour palette.
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

COLORS = {
    "ring_topology": "tab:blue",
    "ring_rank": "tab:red",
    "rabenseifner": "tab:green",
    "recdbl": "tab:purple",
    "auto": "tab:orange",
    "mpi_allreduce": "tab:gray",
}
LABELS = {
    "ring_topology": "ring, topology order",
    "ring_rank": "ring, rank order",
    "rabenseifner": "rabenseifner",
    "recdbl": "recdbl",
    "auto": "auto",
    "mpi_allreduce": "MPI_Allreduce",
}


def palette(png):
    """Re-encodes a PNG with a 256-colour palette, as bench/results/README.md keeps
    plots (Pillow comes with matplotlib); left as it is without Pillow."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(png) as im:
        small = im.convert("RGB").quantize(256)
    small.save(png, optimize=True)


def main(path, base):
    with open(path) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    header = lines[0]["header"]
    pts = [j for j in lines[1:] if "variant" in j]
    written = []
    for placement in header["placements"]:
        ranks = [p for p in header["ranks"] if any(j["nranks"] == p and j["placement"] == placement for j in pts)]
        if not ranks:
            continue
        fig, axes = plt.subplots(1, len(ranks), figsize=(4.2 * len(ranks), 3.6), squeeze=False, sharey=True)
        for ax, P in zip(axes[0], ranks):
            for v, c in COLORS.items():
                sel = sorted((j for j in pts if j["nranks"] == P and j["placement"] == placement and j["variant"] == v),
                             key=lambda j: j["size_bytes"])
                if not sel:
                    continue
                x = [j["size_bytes"] / 2**20 for j in sel]
                ax.plot(x, [j["median_s"] for j in sel], "o-", color=c, ms=3, lw=1.2, label=LABELS[v])
                if v not in ("auto", "mpi_allreduce") and "predicted_s" in sel[0]:
                    ax.plot(x, [j["predicted_s"] for j in sel], "--", color=c, lw=1, alpha=0.8)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"P = {P}, {placement}", fontsize=9)
            ax.set_xlabel("MiB per rank", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(True, which="major", lw=0.3)
        axes[0][0].set_ylabel("seconds per call (median)", fontsize=8)
        axes[0][0].plot([], [], "k--", lw=1, label="predicted (scEstimateTime)")
        axes[0][0].legend(fontsize=6.5, loc="upper left")
        env = " ".join(f"{k}={v}" for k, v in header.get("env", {}).items())
        fig.suptitle("Allreduce on two switches, 1 Gbit/s uplink, 10 Gbit/s host links "
                     "(virtual cluster: shaped veths, shared CPUs)" + (f"\n{env}" if env else ""), fontsize=8.5)
        fig.tight_layout()
        out = f"{base}-{placement}.png"
        fig.savefig(out, dpi=72)
        plt.close(fig)
        palette(out)
        written.append(out)
    print("plots: " + ", ".join(written))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
