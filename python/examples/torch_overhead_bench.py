"""Per-op cost of the "sparcoll" torch.distributed backend: a blocking
``dist.all_reduce`` of one tensor on the sparcoll group, on a gloo group of the
same ranks, and the same allreduce made directly on the group's own
``sparcoll.Communicator`` (``sparcoll.torch.communicator().allreduce(x, out=x)``).

    python python/examples/torch_overhead_bench.py                 # 1 rank (MPI singleton)
    OMPI_MCA_mpi_yield_when_idle=1 mpirun --oversubscribe -np 2 python python/examples/torch_overhead_bench.py

Needs torch and mpi4py: pip install './python[mpi,torch]'. (As root in a
container, add --allow-run-as-root to mpirun.)

Sizes: --sizes in bytes of float32 (default 4 and 64 MiB). Configurations:
"gloo", "sparcoll" (the backend, blocking), "sparcoll async"
(``dist.all_reduce(x, async_op=True).wait()``), "direct" (the Communicator).
Each round times every configuration once: an MPI barrier, then --iters calls
(after --warmup untimed ones); the figure of a round is the slowest rank's
mean time per call. The rounds go through every order of the configurations
(24 rounds: each order once), so that neither a slow phase of a loaded
machine nor the configuration before (a 64 MiB gloo call slows the next 64
MiB call down by about 10 %, whatever it is) falls on one of them more than on
another. The table gives the median over --rounds rounds, and each ratio is
the median of the per-round ratios (paired within a round). Rank 0 prints the table and writes
torch_overhead_bench_p<P>.json to --out (default: $SPARCOLL_RESULTS, else
sparcoll-results in the system's temporary directory).
"""

import argparse
import itertools
import json
import os
import statistics
import tempfile
import time

import torch
import torch.distributed as dist
from mpi4py import MPI

import sparcoll.torch as st

CONFIGS = ("gloo", "sparcoll", "sparcoll async", "direct")
ORDERS = list(itertools.permutations(CONFIGS))
RATIOS = (("sparcoll", "gloo"), ("sparcoll", "direct"), ("sparcoll async", "gloo"), ("direct", "gloo"))


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="4,67108864", help="message sizes in bytes (float32), comma-separated")
    ap.add_argument("--rounds", type=int, default=len(ORDERS))
    ap.add_argument("--iters", default="2000,5", help="timed calls per round, one per size (or one for all)")
    ap.add_argument("--warmup", default="200,1", help="untimed calls before each timed block, as --iters")
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    ap.add_argument("--out", default=os.environ.get("SPARCOLL_RESULTS",
                                                    os.path.join(tempfile.gettempdir(), "sparcoll-results")))
    return ap.parse_args()


def per_size(text, n):
    vals = [int(v) for v in text.split(",")]
    return vals * n if len(vals) == 1 else vals


def main():
    args = parse()
    torch.set_num_threads(args.threads)
    world = MPI.COMM_WORLD
    st.init_process_group_mpi("sparcoll")
    gloo = dist.new_group(backend="gloo")
    comm = st.communicator()
    P, rank = world.Get_size(), world.Get_rank()
    sizes = [int(s) for s in args.sizes.split(",")]
    iters, warmup = per_size(args.iters, len(sizes)), per_size(args.warmup, len(sizes))
    results = {}
    for size, n_it, n_warm in zip(sizes, iters, warmup):
        x = torch.ones(max(1, size // 4))
        calls = {"gloo": lambda: dist.all_reduce(x, group=gloo),
                 "sparcoll": lambda: dist.all_reduce(x),
                 "sparcoll async": lambda: dist.all_reduce(x, async_op=True).wait(),
                 "direct": lambda: comm.allreduce(x, out=x)}
        times = {c: [] for c in CONFIGS}
        for r in range(args.rounds):
            for c in ORDERS[r % len(ORDERS)]:
                call = calls[c]
                for _ in range(n_warm):
                    call()
                world.Barrier()
                t0 = time.perf_counter()
                for _ in range(n_it):
                    call()
                mine = (time.perf_counter() - t0) / n_it
                times[c].append(world.allreduce(mine, op=MPI.MAX))
        results[size] = {
            "us": {c: statistics.median(v) * 1e6 for c, v in times.items()},
            "ratios": {f"{a} / {b}": statistics.median(x / y for x, y in zip(times[a], times[b])) for a, b in RATIOS},
            "rounds_us": {c: [t * 1e6 for t in v] for c, v in times.items()}}
    if rank == 0:
        print(f"# {P} rank(s), torch {torch.__version__}, {args.threads} torch thread(s), {args.rounds} rounds, "
              f"iters {iters}, warm-up {warmup}")
        for size, res in results.items():
            print(f"{size} bytes: " + ", ".join(f"{c} {res['us'][c]:.2f} us" for c in CONFIGS))
            print(f"{size} bytes: " + ", ".join(f"{k} {v:.3f}x" for k, v in res["ratios"].items()))
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, f"torch_overhead_bench_p{P}.json")
        with open(path, "w") as f:
            json.dump({"ranks": P, "torch": torch.__version__, "threads": args.threads, "rounds": args.rounds,
                       "iters": iters, "warmup": warmup, "results": results}, f, indent=1)
        print(f"# wrote {path}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
