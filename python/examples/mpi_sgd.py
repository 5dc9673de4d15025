"""MPI-SGD (Renggli, thesis §2.2 and §4.2): data-parallel mini-batch SGD for
logistic regression and a linear SVM, where each rank's naturally sparse
gradient goes through sparcoll's sparse allreduce, compared with the dense
allreduce of the same gradient.

    OMPI_MCA_mpi_yield_when_idle=1 mpirun --oversubscribe -np 4 python python/examples/mpi_sgd.py

Needs scipy, matplotlib and mpi4py: pip install './python[mpi,examples]'.
(As root in a container, add --allow-run-as-root to mpirun.)

Data: a synthetic URL-like data set (default 4M features; feature frequencies
follow a power law, so a mini-batch touches a few thousand features, a handful
of them in almost every batch); each rank generates its own shard.
Per step, per rank: margins of its B samples, the loss gradient restricted to
the features the batch touches (indices + values), then
  sparse: comm.sparse_allreduce_sparse(indices, values, dim) and w[idx] -= lr*g
  dense:  g = zeros(dim); g[idx] = values; comm.allreduce(g); w -= lr*g
Both compute exactly the same update (the sum over ranks), so the loss curves
coincide; only the time differs. Each epoch runs both variants back to back
(separate models), so machine noise hits both alike.

Prints the epoch time (computation / communication split, like MPI-SGD's
profiling); rank 0 writes a loss-curve PNG and a JSON summary to --out (default:
$SPARCOLL_RESULTS, else sparcoll-results in the system's temporary directory).
"""

import argparse
import json
import os
import tempfile
import time

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

import sparcoll as sc


def power_law_features(rng, count, dim, s):
    """Feature ids with P(i) ~ (i+1)^-s over [0, dim) (inverse CDF of the continuous law),
    scattered over the index space by a fixed multiplicative permutation."""
    u = rng.random(count)
    a = 1.0 - s
    x = ((dim ** a - 1.0) * u + 1.0) ** (1.0 / a)  # in [1, dim]
    rank_ = np.minimum(x.astype(np.int64) - 1, dim - 1)
    return (rank_ * 2654435761) % dim  # dim is a power of two and the multiplier odd: a bijection


def make_shard(rank, size, args):
    """This rank's samples: CSR features (values 1/sqrt(nnz) per row) and +-1 labels of a sparse true model."""
    rng = np.random.default_rng(args.seed + 7919 * rank)
    m = args.samples // size
    nnz_row = 1 + rng.poisson(args.nnz - 1, m)
    indptr = np.concatenate([[0], np.cumsum(nnz_row)])
    cols = power_law_features(rng, int(indptr[-1]), args.dim, args.zipf)
    vals = np.repeat(1.0 / np.sqrt(nnz_row), nnz_row).astype(np.float32)
    X = sp.csr_matrix((vals, cols, indptr), shape=(m, args.dim))
    X.sum_duplicates()
    # Labels from a true model known to every rank (same seed): its weights on the frequent features decide.
    trng = np.random.default_rng(args.seed)
    support = power_law_features(trng, 20_000, args.dim, args.zipf)
    w_true = np.zeros(args.dim, np.float32)
    w_true[support] = trng.standard_normal(support.size).astype(np.float32)
    margin = X @ w_true + 0.05 * rng.standard_normal(m).astype(np.float32)
    y = np.where(margin >= 0, 1.0, -1.0).astype(np.float32)
    return X, y


def loss_and_coeff(model, margin, y):
    """Per-sample loss and d loss / d margin."""
    z = y * margin
    if model == "logreg":
        loss = np.logaddexp(0.0, -z)
        coeff = -y / (1.0 + np.exp(np.minimum(z, 50.0)))
    else:  # hinge loss of the linear SVM: a zero gradient for every sample outside the margin
        loss = np.maximum(0.0, 1.0 - z)
        coeff = np.where(z < 1.0, -y, 0.0)
    return loss, coeff.astype(np.float32)


def sparse_gradient(Xb, coeff):
    """Gradient sum over the batch as (sorted unique indices, values): X_b^T coeff on the touched features."""
    keep = coeff != 0
    if not keep.all():
        Xb = Xb[keep]
        coeff = coeff[keep]
    rows = np.repeat(coeff, np.diff(Xb.indptr))
    idx, inv = np.unique(Xb.indices, return_inverse=True)
    vals = np.bincount(inv, weights=Xb.data * rows, minlength=idx.size).astype(np.float32)
    return idx.astype(np.uint32), vals


def global_loss(comm, model, X, y, w):
    loss, _ = loss_and_coeff(model, X @ w, y)
    tot = comm.allreduce(np.array([loss.sum(), loss.size], np.float64))
    return float(tot[0] / tot[1])


def run_epoch(comm, model, mode, X, y, w, order, args, algo):
    B, P = args.batch, comm.size
    lr = args.lr / (B * P)
    t_comp = t_comm = 0.0
    nnz_sent = 0
    union = 0
    t_start = time.perf_counter()
    for s in range(0, len(order) - B + 1, B):
        t0 = time.perf_counter()
        rows = order[s:s + B]
        Xb = X[rows]
        _, coeff = loss_and_coeff(model, Xb @ w, y[rows])
        idx, vals = sparse_gradient(Xb, coeff)
        nnz_sent += idx.size
        if mode == "dense":  # densifying is part of the dense variant's computation
            g = np.zeros(args.dim, np.float32)
            g[idx] = vals
        t1 = time.perf_counter()
        if mode == "sparse":
            res = comm.sparse_allreduce_sparse(idx, vals, args.dim, algo=algo)
        else:
            comm.allreduce(g, out=g)
        t2 = time.perf_counter()
        if mode == "dense":
            w -= lr * g
        elif res.is_dense:
            w -= lr * res.values
            union += args.dim
        else:
            w[res.indices] -= lr * res.values
            union += res.indices.size
        t3 = time.perf_counter()
        t_comp += (t1 - t0) + (t3 - t2)
        t_comm += t2 - t1
    return time.perf_counter() - t_start, t_comp, t_comm, nnz_sent, union


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=["logreg", "svm", "both"], default="both")
    ap.add_argument("--dim", type=int, default=1 << 22, help="number of features (a power of two)")
    ap.add_argument("--samples", type=int, default=65536, help="samples over all ranks")
    ap.add_argument("--nnz", type=int, default=30, help="mean non-zero features per sample")
    ap.add_argument("--zipf", type=float, default=1.1, help="power-law exponent of feature frequencies")
    ap.add_argument("--batch", type=int, default=256, help="samples per rank per step (global batch: P x this)")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--lr", type=float, default=20.0)
    ap.add_argument("--algo", default="auto", help="sparse algorithm (auto, ssar_recdbl, ...)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.environ.get("SPARCOLL_RESULTS") or
                    os.path.join(tempfile.gettempdir(), "sparcoll-results"),
                    help="directory for mpi_sgd_p<P>.json / .png (rank 0; default: %(default)s)")
    args = ap.parse_args()
    if args.dim & (args.dim - 1):
        ap.error("--dim must be a power of two")

    world = MPI.COMM_WORLD
    comm = sc.Communicator.from_mpi(world)
    rank, P = comm.rank, comm.size
    X, y = make_shard(rank, P, args)
    models = ["logreg", "svm"] if args.model == "both" else [args.model]
    summary = {"P": P, "dim": args.dim, "samples": args.samples, "nnz_per_sample": args.nnz, "zipf": args.zipf,
               "batch_per_rank": args.batch, "epochs": args.epochs, "lr": args.lr, "models": {}}
    for model in models:
        w = {"sparse": np.zeros(args.dim, np.float32), "dense": np.zeros(args.dim, np.float32)}
        hist = {m: {"loss": [global_loss(comm, model, X, y, w[m])], "time": [0.0], "epoch": [], "comp": [],
                    "comm": []} for m in w}
        density = []
        for e in range(args.epochs):
            order = np.random.default_rng(args.seed * 100 + e + 17 * rank).permutation(X.shape[0])
            for mode in ("sparse", "dense"):
                world.Barrier()
                t, tc, tm, nnz_sent, union = run_epoch(comm, model, mode, X, y, w[mode], order, args, args.algo)
                t = world.allreduce(t, op=MPI.MAX)
                h = hist[mode]
                h["epoch"].append(t)
                h["comp"].append(world.allreduce(tc, op=MPI.MAX))
                h["comm"].append(world.allreduce(tm, op=MPI.MAX))
                h["time"].append(h["time"][-1] + t)
                h["loss"].append(global_loss(comm, model, X, y, w[mode]))
                if mode == "sparse":
                    steps = X.shape[0] // args.batch
                    density.append((nnz_sent / steps, union / steps))
            if rank == 0:
                print(f"[{model}] epoch {e + 1}: sparse {hist['sparse']['epoch'][-1]:.3f} s "
                      f"(comm {hist['sparse']['comm'][-1]:.3f} s) loss {hist['sparse']['loss'][-1]:.4f} | "
                      f"dense {hist['dense']['epoch'][-1]:.3f} s (comm {hist['dense']['comm'][-1]:.3f} s) "
                      f"loss {hist['dense']['loss'][-1]:.4f}", flush=True)
        # Skip the first epoch in the averages (warm-up: page faults, first-touch allocation).
        skip = 1 if args.epochs > 1 else 0
        avg = {m: float(np.mean(hist[m]["epoch"][skip:])) for m in hist}
        gap = float(np.max(np.abs(np.array(hist["sparse"]["loss"]) - np.array(hist["dense"]["loss"]))))
        summary["models"][model] = {
            "epoch_time_sparse_s": avg["sparse"], "epoch_time_dense_s": avg["dense"],
            "speedup": avg["dense"] / avg["sparse"],
            "comm_time_sparse_s": float(np.mean(hist["sparse"]["comm"][skip:])),
            "comm_time_dense_s": float(np.mean(hist["dense"]["comm"][skip:])),
            "nnz_per_rank_per_step": float(np.mean([d[0] for d in density])),
            "union_nnz_per_step": float(np.mean([d[1] for d in density])),
            "loss_sparse": hist["sparse"]["loss"], "loss_dense": hist["dense"]["loss"],
            "max_loss_gap": gap, "history": hist}
        if rank == 0:
            s = summary["models"][model]
            print(f"[{model}] P={P}: epoch time sparse {s['epoch_time_sparse_s']:.3f} s, dense "
                  f"{s['epoch_time_dense_s']:.3f} s -> speedup {s['speedup']:.1f}x; "
                  f"{s['nnz_per_rank_per_step']:.0f} non-zeros per rank and step "
                  f"({100 * s['nnz_per_rank_per_step'] / args.dim:.3f} % of {args.dim}), union "
                  f"{s['union_nnz_per_step']:.0f}; final loss sparse {s['loss_sparse'][-1]:.4f} dense "
                  f"{s['loss_dense'][-1]:.4f}", flush=True)
    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        base = os.path.join(args.out, f"mpi_sgd_p{P}")
        with open(base + ".json", "w") as f:
            json.dump(summary, f, indent=1)
        plot(summary, base + ".png")
        print(f"wrote {base}.json and {base}.png")
    comm.close()


def plot(summary, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(summary["models"])
    fig, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 4.2), squeeze=False)
    for ax, model in zip(axes[0], models):
        h = summary["models"][model]["history"]
        for mode, style in (("sparse", "o-"), ("dense", "s--")):
            ax.plot(h[mode]["time"], h[mode]["loss"], style, label=f"{mode} allreduce")
        s = summary["models"][model]
        ax.set_title(f"{'logistic regression' if model == 'logreg' else 'linear SVM'}, P={summary['P']}: "
                     f"{s['speedup']:.1f}x faster epochs")
        ax.set_xlabel("training time (s)")
        ax.set_ylabel("training loss")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(f"MPI-SGD on synthetic power-law data (dim {summary['dim']}, {summary['samples']} samples)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
