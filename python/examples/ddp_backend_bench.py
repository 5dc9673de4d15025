"""DDP step time of a large MLP (default 5 x 2560 hidden: 27.6 M
parameters) with sparcoll as the torch.distributed backend versus gloo, each
dense (DDP's own allreduce) and with sparcoll's top-k hook (1 % density).

    OMPI_MCA_mpi_yield_when_idle=1 mpirun --oversubscribe -np 4 python python/examples/ddp_backend_bench.py

Needs torch and mpi4py: pip install './python[mpi,torch]'. (As root in a
container, add --allow-run-as-root to mpirun.) Small settings for a quick run:
--hidden 256 --layers 2 --steps 3 --warmup 1.

Four configurations, in turn, from the same initial weights: "gloo dense"
(DDP on a gloo group), "sparcoll dense" (DDP on the default "sparcoll" group),
"gloo top-k" (DDP on the gloo group, topk_hook on a sparcoll communicator made
with Communicator.from_torch(gloo, transport="mpi")), "sparcoll top-k" (DDP on
the sparcoll group, topk_hook on its own communicator). The top-k hook is dense
for --start-iter steps, which fall within the warm-up by default. Each step is
timed on every rank after a barrier; the figure is the median over steps of the
slowest rank's time. Rank 0 prints a table and writes a JSON file to --out
(default: $SPARCOLL_RESULTS, else sparcoll-results in the system's temporary
directory).
"""

import argparse
import json
import os
import statistics
import tempfile
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from mpi4py import MPI
from torch.nn.parallel import DistributedDataParallel as DDP

import sparcoll as sc
import sparcoll.torch as st


def make_model(args):
    torch.manual_seed(0)
    layers, width = [], args.features
    for _ in range(args.layers):
        layers += [nn.Linear(width, args.hidden), nn.ReLU()]
        width = args.hidden
    return nn.Sequential(*layers, nn.Linear(width, 10))


def run(args, world, group, hook_comm=None):
    ddp = DDP(make_model(args), process_group=group, bucket_cap_mb=args.bucket_mb)
    state = None
    if hook_comm is not None:
        state = st.TopkState(hook_comm, density=args.density, start_iter=args.start_iter)
        ddp.register_comm_hook(state, st.topk_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(world.Get_rank())
    x = torch.randn(args.batch, args.features, generator=g)
    y = torch.randint(0, 10, (args.batch,), generator=g)
    times = []
    for step in range(args.warmup + args.steps):
        world.Barrier()
        t0 = time.perf_counter()
        loss = nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        dt = world.allreduce(time.perf_counter() - t0, op=MPI.MAX)
        if step >= args.warmup:
            times.append(dt)
    sent = None if state is None else state.sent_elements / max(1, state.total_elements)
    return statistics.median(times), sum(p.numel() for p in ddp.module.parameters()), sent


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hidden", type=int, default=2560)
    ap.add_argument("--layers", type=int, default=5)
    ap.add_argument("--features", type=int, default=512)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=12)
    ap.add_argument("--density", type=float, default=0.01)
    ap.add_argument("--start-iter", type=int, default=10)
    ap.add_argument("--bucket-mb", type=float, default=25.0)
    ap.add_argument("--configs", default="gloo dense,sparcoll dense,gloo top-k,sparcoll top-k")
    ap.add_argument("--out", default=os.environ.get("SPARCOLL_RESULTS")
                    or os.path.join(tempfile.gettempdir(), "sparcoll-results"))
    args = ap.parse_args()

    world = MPI.COMM_WORLD
    st.init_process_group_mpi("sparcoll", world)
    P = dist.get_world_size()
    gloo = dist.new_group(backend="gloo")
    gloo_comm = sc.Communicator.from_torch(gloo, transport="mpi")
    groups = {"gloo": gloo, "sparcoll": None}
    results = []
    for config in [c.strip() for c in args.configs.split(",")]:
        backend, kind = config.split()
        hook_comm = None if kind == "dense" else (gloo_comm if backend == "gloo" else st.communicator())
        seconds, nparams, sent = run(args, world, groups[backend], hook_comm)
        results.append({"config": config, "step_ms": 1e3 * seconds, "sent_fraction": sent})
        if world.Get_rank() == 0:
            extra = "" if sent is None else f"   sent {100 * sent:.2f} %"
            print(f"{config:15s} {1e3 * seconds:9.2f} ms/step{extra}", flush=True)
    if world.Get_rank() == 0:
        summary = {"ranks": P, "parameters": nparams, "args": vars(args), "results": results}
        print(f"{P} ranks, {nparams / 1e6:.1f} M parameters, median of {args.steps} steps after {args.warmup}")
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, f"ddp_backend_bench_p{P}.json")
        with open(path, "w") as f:
            json.dump(summary, f, indent=1)
        print(f"wrote {path}")
    gloo_comm.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
