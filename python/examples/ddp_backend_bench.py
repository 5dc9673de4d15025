"""DDP step time of a large MLP (default 5 x 2560 hidden: 27.6 M
parameters) with sparcoll as the torch.distributed backend versus gloo, each
dense (DDP's own allreduce) and with sparcoll's top-k hook (1 % density), and
with --data digits the held-out accuracy each reaches.

    OMPI_MCA_mpi_yield_when_idle=1 mpirun --oversubscribe -np 4 python python/examples/ddp_backend_bench.py

Needs torch and mpi4py: pip install './python[mpi,torch]'; --data digits also
needs scikit-learn: pip install './python[mpi,torch,examples]'. (As root in a
container, add --allow-run-as-root to mpirun.) Small settings for a quick run:
--hidden 256 --layers 2 --steps 3 --warmup 1.

Four configurations, in turn, from the same initial weights: "gloo dense"
(DDP on a gloo group), "sparcoll dense" (DDP on the default "sparcoll" group),
"gloo top-k" (DDP on the gloo group, topk_hook on a sparcoll communicator made
with Communicator.from_torch(gloo, transport="mpi")), "sparcoll top-k" (DDP on
the sparcoll group, topk_hook on its own communicator). The top-k hook is dense
for --start-iter steps, which fall within the warm-up by default. Each step is
timed on every rank after a barrier; the figure is the median over steps of the
slowest rank's time.

--data synthetic (default) repeats one random batch per rank for --warmup +
--steps steps. --data digits trains the MLP (input width 64) for --epochs on
scikit-learn's digits (it ships with the package: nothing is downloaded; 80/20
split, rank r trains on every P-th training sample, the same order in every
configuration) and reports the test accuracy after each epoch; the run fails
(exit 1) when a configuration ends more than --tolerance points below gloo
dense. --momentum-correction moves SGD's momentum into the top-k hook
(TopkState(momentum=...)), as Deep Gradient Compression does.

Rank 0 prints a table and writes ddp_backend_bench[_digits]_p<P>.json to --out
(default: $SPARCOLL_RESULTS, else sparcoll-results in the system's temporary
directory).
"""

import argparse
import json
import os
import statistics
import tempfile
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from mpi4py import MPI
from torch.nn.parallel import DistributedDataParallel as DDP

import sparcoll as sc
import sparcoll.torch as st


CONFIGS = ("gloo dense", "sparcoll dense", "gloo top-k", "sparcoll top-k")


def make_model(args):
    torch.manual_seed(0)
    layers, width = [], args.features
    for _ in range(args.layers):
        layers += [nn.Linear(width, args.hidden), nn.ReLU()]
        width = args.hidden
    return nn.Sequential(*layers, nn.Linear(width, 10))


def digits(args, rank, size):
    """scikit-learn's digits, split 80/20 (stratified, --seed), standardized on
    the training part; rank r trains on every size-th training sample."""
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
    except ImportError:
        raise SystemExit("--data digits needs scikit-learn: pip install './python[mpi,torch,examples]'") from None
    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=args.seed, stratify=y)
    mean, std = Xtr.mean(0), Xtr.std(0) + 1e-3
    Xtr, Xte = (Xtr - mean) / std, (Xte - mean) / std
    per_rank = len(Xtr) // size  # the same step count on every rank
    shard = slice(rank, rank + size * per_rank, size)
    return (torch.from_numpy(Xtr[shard]), torch.from_numpy(ytr[shard]).long(),
            torch.from_numpy(Xte), torch.from_numpy(yte).long())


def batches(args, rank, data):
    """The training steps' (x, y): one fixed random batch per rank repeated
    (--data synthetic), or --epochs passes over the rank's digits shard in an
    order drawn per epoch and rank."""
    if data is None:
        g = torch.Generator().manual_seed(rank)
        x = torch.randn(args.batch, args.features, generator=g)
        y = torch.randint(0, 10, (args.batch,), generator=g)
        for _ in range(args.warmup + args.steps):
            yield x, y
        return
    Xtr, ytr = data[0], data[1]
    for epoch in range(args.epochs):
        order = torch.randperm(len(Xtr), generator=torch.Generator().manual_seed(1000 * epoch + rank))
        for s in range(0, len(Xtr) - args.batch + 1, args.batch):
            idx = order[s:s + args.batch]
            yield Xtr[idx], ytr[idx]


def run(args, world, group, data, hook_comm=None):
    ddp = DDP(make_model(args), process_group=group, bucket_cap_mb=args.bucket_mb)
    state, momentum = None, args.momentum
    if hook_comm is not None:
        # Momentum correction: the hook keeps the velocity, the optimizer runs without momentum.
        hook_momentum = args.momentum if args.momentum_correction else 0.0
        momentum -= hook_momentum
        state = st.TopkState(hook_comm, density=args.density, start_iter=args.start_iter, seed=args.seed,
                             momentum=hook_momentum)
        ddp.register_comm_hook(state, st.topk_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=momentum)
    def accuracy():
        with torch.no_grad():
            return (ddp.module(data[2]).argmax(1) == data[3]).float().mean().item()

    per_epoch = None if data is None else len(data[0]) // args.batch
    times, curve = [], []
    for step, (x, y) in enumerate(batches(args, world.Get_rank(), data)):
        world.Barrier()
        t0 = time.perf_counter()
        loss = nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        dt = world.allreduce(time.perf_counter() - t0, op=MPI.MAX)
        if step >= args.warmup:
            times.append(dt)
        if per_epoch and (step + 1) % per_epoch == 0:
            curve.append(accuracy())  # outside the timed window
    if not times:
        raise SystemExit(f"no timed step: {step + 1} steps in all, --warmup {args.warmup}")
    acc = curve[-1] if curve else None
    sent = None if state is None else state.sent_elements / max(1, state.total_elements)
    return {"step_ms": 1e3 * statistics.median(times), "steps": step + 1, "sent_fraction": sent,
            "test_accuracy": acc, "test_accuracy_per_epoch": curve or None}, sum(p.numel() for p in ddp.module.parameters())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", choices=("synthetic", "digits"), default="synthetic")
    ap.add_argument("--hidden", type=int, default=2560)
    ap.add_argument("--layers", type=int, default=5)
    ap.add_argument("--features", type=int, default=512, help="input width with --data synthetic")
    ap.add_argument("--batch", type=int, default=32, help="samples per rank per step")
    ap.add_argument("--steps", type=int, default=20, help="timed steps with --data synthetic")
    ap.add_argument("--epochs", type=int, default=10, help="passes over the data with --data digits")
    ap.add_argument("--warmup", type=int, default=12, help="untimed steps at the start")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--momentum", type=float, default=0.0, help="SGD momentum")
    ap.add_argument("--momentum-correction", action="store_true",
                    help="top-k configs: the momentum goes into the hook (TopkState(momentum=...)), not SGD")
    ap.add_argument("--density", type=float, default=0.01)
    ap.add_argument("--start-iter", type=int, default=10)
    ap.add_argument("--bucket-mb", type=float, default=25.0)
    ap.add_argument("--threads", type=int, default=0, help="torch threads per rank (0: torch's default)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tolerance", type=float, default=0.5,
                    help="accuracy points by which top-k may trail gloo dense (--data digits)")
    ap.add_argument("--configs", default="gloo dense,sparcoll dense,gloo top-k,sparcoll top-k")
    ap.add_argument("--out", default=os.environ.get("SPARCOLL_RESULTS")
                    or os.path.join(tempfile.gettempdir(), "sparcoll-results"))
    args = ap.parse_args()
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    for c in configs:
        if c not in CONFIGS:
            ap.error(f"unknown config {c!r}; expected some of: {', '.join(CONFIGS)}")
    if args.threads > 0:
        torch.set_num_threads(args.threads)

    world = MPI.COMM_WORLD
    st.init_process_group_mpi("sparcoll", world)
    P, rank = dist.get_world_size(), dist.get_rank()
    data = None
    if args.data == "digits":
        data = digits(args, rank, P)
        args.features = data[0].shape[1]
    gloo = dist.new_group(backend="gloo")
    gloo_comm = sc.Communicator.from_torch(gloo, transport="mpi")
    groups = {"gloo": gloo, "sparcoll": None}
    results = []
    for config in configs:
        backend, kind = config.split()
        hook_comm = None if kind == "dense" else (gloo_comm if backend == "gloo" else st.communicator())
        res, nparams = run(args, world, groups[backend], data, hook_comm)
        results.append({"config": config, **res})
        if rank == 0:
            extra = "" if res["sent_fraction"] is None else f"   sent {100 * res['sent_fraction']:.2f} %"
            if res["test_accuracy"] is not None:
                last = res["test_accuracy_per_epoch"][-5:]
                extra += (f"   test accuracy {100 * res['test_accuracy']:.2f} % "
                          f"(mean of the last {len(last)} epochs {100 * sum(last) / len(last):.2f} %)")
            print(f"{config:15s} {res['step_ms']:9.2f} ms/step{extra}", flush=True)
    summary = {"ranks": P, "parameters": nparams, "args": vars(args), "results": results}
    ok = True
    if rank == 0:
        print(f"{P} ranks, {nparams / 1e6:.1f} M parameters, median of {len(results) and results[0]['steps'] - args.warmup}"
              f" steps after {args.warmup}")
        by = {r["config"]: r for r in results}
        base = by.get("gloo dense")
        for r in results:
            if base is not None and r is not base:
                r["speedup_vs_gloo_dense"] = base["step_ms"] / r["step_ms"]
                line = f"{r['config']}: {r['speedup_vs_gloo_dense']:.2f}x gloo dense"
                if r["test_accuracy"] is not None:
                    r["accuracy_points_vs_gloo_dense"] = 100 * (r["test_accuracy"] - base["test_accuracy"])
                    within = r["accuracy_points_vs_gloo_dense"] >= -args.tolerance
                    ok = ok and within
                    line += (f", accuracy {r['accuracy_points_vs_gloo_dense']:+.2f} points "
                             f"({'within' if within else 'OUTSIDE'} the {args.tolerance}-point tolerance)")
                print(line)
        os.makedirs(args.out, exist_ok=True)
        name = "ddp_backend_bench" + ("_digits" if data is not None else "") + f"_p{P}.json"
        path = os.path.join(args.out, name)
        with open(path, "w") as f:
            json.dump(summary, f, indent=1)
        print(f"wrote {path}")
    ok = world.bcast(ok, root=0)
    gloo_comm.close()
    dist.destroy_process_group()
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
