"""DDP with sparcoll as the torch.distributed backend ("sparcoll"), checked
against the same training on a gloo process group, and optionally with the
top-k hook (sparcoll.torch.topk_hook) on top of the sparcoll group.

    OMPI_MCA_mpi_yield_when_idle=1 mpirun --oversubscribe -np 4 python python/examples/ddp_backend.py

Needs torch and mpi4py: pip install './python[mpi,torch]'. (As root in a
container, add --allow-run-as-root to mpirun.)

`import sparcoll.torch` registers the backend; `dist.init_process_group("sparcoll",
...)` under mpirun then runs DDP's parameter broadcast and gradient allreduces
on sparcoll's MPI transport (CPU tensors). A gloo group over the same ranks
(`dist.new_group(backend="gloo")`) trains the same model from the same data as
the reference: the parameters must agree to float32 rounding. With `--topk
DENSITY`, a third training registers topk_hook with a TopkState on the
backend's own communicator (`sparcoll.torch.communicator()`). Rank 0 prints
the losses and writes a JSON summary to --out (default: $SPARCOLL_RESULTS,
else sparcoll-results in the system's temporary directory).
"""

import argparse
import json
import os
import tempfile
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from mpi4py import MPI
from torch.nn.parallel import DistributedDataParallel as DDP

import sparcoll.torch as st


def model(args):
    torch.manual_seed(args.seed)
    layers, width = [], args.features
    for _ in range(args.layers):
        layers += [nn.Linear(width, args.hidden), nn.ReLU()]
        width = args.hidden
    return nn.Sequential(*layers, nn.Linear(width, args.classes))


def batch(args, rank, step):
    """A learnable synthetic task: the class is the argmax of a fixed projection of x."""
    g = torch.Generator().manual_seed(10_000 * rank + step)
    x = torch.randn(args.batch, args.features, generator=g)
    w = torch.Generator().manual_seed(7)
    proj = torch.randn(args.features, args.classes, generator=w)
    return x, (x @ proj).argmax(dim=1)


def train(args, group=None, hook=None):
    ddp = DDP(model(args), process_group=group)
    if hook is not None:
        ddp.register_comm_hook(*hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    losses, t0 = [], time.perf_counter()
    for step in range(args.steps):
        x, y = batch(args, dist.get_rank(), step)
        loss = nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    seconds = (time.perf_counter() - t0) / args.steps
    params = torch.cat([p.detach().reshape(-1) for p in ddp.module.parameters()])
    return params, losses, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--features", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--classes", type=int, default=4)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--topk", type=float, default=None, metavar="DENSITY",
                    help="also train with topk_hook at this density (e.g. 0.01)")
    ap.add_argument("--start-iter", type=int, default=10, help="dense iterations before top-k starts")
    ap.add_argument("--out", default=os.environ.get("SPARCOLL_RESULTS")
                    or os.path.join(tempfile.gettempdir(), "sparcoll-results"))
    args = ap.parse_args()

    world = MPI.COMM_WORLD
    st.init_process_group_mpi("sparcoll", world)
    P, rank = dist.get_world_size(), dist.get_rank()
    gloo = dist.new_group(backend="gloo")

    p_sc, l_sc, t_sc = train(args)  # the default group: sparcoll
    p_gl, l_gl, t_gl = train(args, group=gloo)
    diff = (p_sc - p_gl).abs().max().item()
    summary = {"ranks": P, "steps": args.steps, "parameters": p_sc.numel(), "max_param_diff_vs_gloo": diff,
               "losses": {"sparcoll": l_sc, "gloo": l_gl}, "step_ms": {"sparcoll": 1e3 * t_sc, "gloo": 1e3 * t_gl}}
    if args.topk is not None:
        state = st.TopkState(st.communicator(), density=args.topk, start_iter=args.start_iter)
        _, l_tk, t_tk = train(args, hook=(state, st.topk_hook))
        summary["losses"]["sparcoll top-k"] = l_tk
        summary["step_ms"]["sparcoll top-k"] = 1e3 * t_tk
        summary["topk"] = {"density": args.topk, "sent_fraction": state.sent_elements / max(1, state.total_elements)}

    if rank == 0:
        print(f"{P} ranks, {p_sc.numel()} parameters, {args.steps} steps")
        for name, losses in summary["losses"].items():
            print(f"  {name:15s} loss {losses[0]:.4f} -> {losses[-1]:.4f}   {summary['step_ms'][name]:.2f} ms/step")
        print(f"  max |parameter difference| sparcoll vs gloo: {diff:.3g}")
        if "topk" in summary:
            print(f"  top-k sent {100 * summary['topk']['sent_fraction']:.2f} % of the gradient entries")
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, f"ddp_backend_p{P}.json")
        with open(path, "w") as f:
            json.dump(summary, f, indent=1)
        print(f"wrote {path}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
