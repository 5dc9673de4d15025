#!/usr/bin/env python3
"""torch.topk baseline for bench/topk_perf: top-k by magnitude, torch.topk(x.abs(), k,
sorted=False), on the very inputs topk_perf measured (raw float32 files).

    topk_torch.py --device cuda --kfrac 0.001 --iters 20 --warmup 3 /tmp/x.f32:67108864 ...

Prints one line per (file, k): "torch.topk PATH N k median_us", after a note
"torch <version>, <threads> CPU threads". --threads T sets torch's CPU threads
(0: torch's own choice). Exits 3 (with a note on stdout) when torch is not
importable or the device is unavailable; topk_perf then leaves the comparison
column empty.
"""
import argparse
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--kfrac", default="0.001", help="comma-separated k/N fractions")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    ap.add_argument("files", nargs="+", help="PATH:N raw float32 inputs")
    args = ap.parse_args()
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print(f"torch.topk comparison skipped: {e}")
        return 3
    if args.device == "cuda" and not torch.cuda.is_available():
        print("torch.topk comparison skipped: torch has no CUDA device")
        return 3
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads", flush=True)
    dev = torch.device(args.device)
    for spec in args.files:
        path, n = spec.rsplit(":", 1)
        n = int(n)
        x = torch.from_numpy(np.fromfile(path, dtype=np.float32, count=n)).to(dev)
        for frac in (float(f) for f in args.kfrac.split(",")):
            k = max(1, int(frac * n))
            times = []
            for it in range(args.warmup + args.iters):
                if args.device == "cuda":
                    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    a.record()
                    torch.topk(x.abs(), k, sorted=False)
                    b.record()
                    b.synchronize()
                    t = a.elapsed_time(b) * 1e3
                else:
                    t0 = time.perf_counter()
                    torch.topk(x.abs(), k, sorted=False)
                    t = (time.perf_counter() - t0) * 1e6
                if it >= args.warmup:
                    times.append(t)
            print(f"torch.topk {path} {n} {k} {statistics.median(times):.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
