"""Data-parallel training with PyTorch DDP and sparcoll's top-k communication
hook (top-k + error feedback at 1 % density, sparse allreduce), compared with
dense gradient averaging, on scikit-learn's digits data set (ships with
scikit-learn: nothing is downloaded).

    OMPI_MCA_mpi_yield_when_idle=1 mpirun --oversubscribe -np 4 python python/examples/ddp_topk_digits.py

Needs torch, scikit-learn and mpi4py: pip install './python[mpi,torch,examples]'.
(As root in a container, add --allow-run-as-root to mpirun.)

Every rank runs the same trainings from the same initial weights and the same
data order: DDP's own allreduce (gloo), the dense sparcoll hook
(sparcoll.torch.dense_hook), and the top-k hook (sparcoll.torch.topk_hook,
dense for the first --start-iter iterations) with its default selection,
bracket (the largest entries), and with each method of --also (default approx,
the thesis's sampling) for comparison. Prints the test accuracy of each
and the time per training step; rank 0 writes a JSON summary to --out (default:
$SPARCOLL_RESULTS, else sparcoll-results in the system's temporary directory).
"""

import argparse
import json
import os
import tempfile
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from mpi4py import MPI
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch.nn.parallel import DistributedDataParallel as DDP

import sparcoll as sc
from sparcoll.torch import TopkState, dense_hook, init_process_group_mpi, topk_hook


def data(rank, size, seed):
    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=seed, stratify=y)
    mean, std = Xtr.mean(0), Xtr.std(0) + 1e-3
    Xtr, Xte = (Xtr - mean) / std, (Xte - mean) / std
    shard = slice(rank, None, size)  # rank r trains on every size-th sample
    return (torch.from_numpy(Xtr[shard]), torch.from_numpy(ytr[shard]).long(), torch.from_numpy(Xte),
            torch.from_numpy(yte).long())


def model(seed, hidden):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, 10))


def train(variant, comm, args, Xtr, ytr, Xte, yte):
    net = model(args.seed, args.hidden)
    ddp = DDP(net)
    state = None
    if variant == "sparcoll dense":
        ddp.register_comm_hook(comm, dense_hook)
    elif variant.startswith("sparcoll top-k"):
        method = variant.split()[-1] if variant != "sparcoll top-k" else "bracket"  # the hook's default
        state = TopkState(comm, density=args.density, start_iter=args.start_iter, seed=args.seed, method=method)
        ddp.register_comm_hook(state, topk_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=args.momentum)
    n = Xtr.shape[0]
    step_times = []
    for epoch in range(args.epochs):
        order = torch.randperm(n, generator=torch.Generator().manual_seed(1000 * epoch + comm.rank))
        for s in range(0, n - args.batch + 1, args.batch):
            idx = order[s:s + args.batch]
            t0 = time.perf_counter()
            loss = nn.functional.cross_entropy(ddp(Xtr[idx]), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step_times.append(time.perf_counter() - t0)
    with torch.no_grad():
        acc = (net(Xte).argmax(1) == yte).float().mean().item()
    skip = min(len(step_times) // 4, 20)  # warm-up (and top-k's dense start) excluded
    sent = None if state is None else state.sent_elements / max(1, state.total_elements)
    return acc, float(np.median(step_times[skip:])), len(step_times), sent


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--batch", type=int, default=32, help="samples per rank per step")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--momentum", type=float, default=0.5)
    ap.add_argument("--density", type=float, default=0.01)
    ap.add_argument("--start-iter", type=int, default=10)
    ap.add_argument("--tolerance", type=float, default=0.02, help="accuracy gap accepted for top-k vs dense")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--also", type=lambda s: [m for m in s.split(",") if m], default=["approx"],
                    help="top-k methods trained besides the hook's default, bracket (default: approx; '' for none)")
    ap.add_argument("--out", default=os.environ.get("SPARCOLL_RESULTS") or
                    os.path.join(tempfile.gettempdir(), "sparcoll-results"),
                    help="directory for ddp_topk_digits_p<P>.json (rank 0; default: %(default)s)")
    args = ap.parse_args()

    torch.set_num_threads(1)
    world = MPI.COMM_WORLD
    init_process_group_mpi("gloo", world)
    comm = sc.Communicator.from_torch(transport="mpi")
    Xtr, ytr, Xte, yte = data(comm.rank, comm.size, args.seed)
    results = {}
    variants = ["DDP (gloo allreduce)", "sparcoll dense", "sparcoll top-k"]
    variants += [f"sparcoll top-k {m}" for m in args.also if m != "bracket"]
    for variant in variants:
        acc, step, steps, sent = train(variant, comm, args, Xtr, ytr, Xte, yte)
        step = world.allreduce(step, op=MPI.MAX)
        results[variant] = {"test_accuracy": acc, "step_time_ms": 1e3 * step, "steps": steps, "sent_fraction": sent}
        if comm.rank == 0:
            extra = f", {100 * sent:.2f} % of the gradient entries sent" if sent is not None else ""
            print(f"{variant:24s} test accuracy {100 * acc:.2f} %  time per step {1e3 * step:.2f} ms{extra}",
                  flush=True)
    gap = results["sparcoll dense"]["test_accuracy"] - results["sparcoll top-k"]["test_accuracy"]
    ok = gap <= args.tolerance
    if comm.rank == 0:
        nparams = sum(p.numel() for p in model(0, args.hidden).parameters())
        print(f"P={comm.size}, {nparams} parameters, density {args.density}: top-k is "
              f"{100 * gap:+.2f} points from dense -> {'within' if ok else 'OUTSIDE'} the "
              f"{100 * args.tolerance:.0f}-point tolerance")
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, f"ddp_topk_digits_p{comm.size}.json")
        with open(path, "w") as f:
            json.dump({"P": comm.size, "parameters": nparams, "args": vars(args), "results": results,
                       "accuracy_gap": gap, "within_tolerance": ok}, f, indent=1)
        print(f"wrote {path}")
    comm.close()
    dist.destroy_process_group()
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
