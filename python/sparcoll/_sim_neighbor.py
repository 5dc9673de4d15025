"""sparcoll-sim's neighbourhood collectives.

The neighbourhood model prices the patterns a topology builds at creation
(friend groups, levels), which takes the ranks themselves. So the simulator
builds the topology for real: on P local ranks (threads of this process),
priced as the simulated transport (SPARCOLL_MODEL_TRANSPORT), spread over the
simulated machines (SPARCOLL_MACHINES), with the tuning file loaded. Every
number is then scTopologyEstimateTime's on that topology: what auto would
pick, and each algorithm's predicted time, on a job of that size.

Graphs are named as neighbor_allgather_perf's --topo names them, and built by
the same definitions (tests/neighbor/graphs/nbr_graphs.cpp), so a spec gives
the benchmark's graph edge for edge:
  moore:d=D,r=R[,periodic=0|1]   Moore neighbourhood on the grid of P ranks
  random:p=X[,seed=S]            directed Erdős–Rényi graph
  file:PATH                      an edge list, one "i j" per line
"""

from __future__ import annotations

import math as _math
import os as _os
import re as _re
from concurrent.futures import ThreadPoolExecutor as _Pool
from typing import Sequence as _Sequence

import numpy as _np

ALGOS = ("naive", "combining", "hierarchical")
_M64 = (1 << 64) - 1


def mix(a, b=0, c=0):
    """ntest::mix: 64-bit mixing of three words; numpy uint64 arrays or ints."""
    u = _np.uint64
    with _np.errstate(over="ignore"):
        x = (_np.asarray(a, dtype=u) * u(0x9E3779B97F4A7C15)) ^ (_np.asarray(b, dtype=u) + u(0x632BE59BD9B4E019)) \
            ^ (_np.asarray(c, dtype=u) * u(0xD1B54A32D192ED03))
        x = (x ^ (x >> u(30))) * u(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> u(27))) * u(0x94D049BB133111EB)
        return x ^ (x >> u(31))


def grid_dims(P: int, d: int) -> list[int]:
    """MPI_Dims_create's balanced shape, largest first (ntest::gridDims)."""
    dims = [1] * d
    primes, n, f = [], P, 2
    while n > 1:
        if n % f == 0:
            primes.append(f)
            n //= f
        else:
            f += 1
    for p in sorted(primes, reverse=True):
        dims[dims.index(min(dims))] *= p
    return sorted(dims, reverse=True)


def moore(P: int, d: int, r: int, periodic: bool) -> list[list[int]]:
    """Every offset in [-r, r]^d but 0; periodic grids wrap (repeats, self-loops)."""
    dims = grid_dims(P, d)
    side = 2 * r + 1
    dst = []
    for rank in range(P):
        c, rest = [0] * d, rank
        for k in range(d - 1, -1, -1):
            c[k], rest = rest % dims[k], rest // dims[k]
        out = []
        for o in range(side ** d):
            rest, target, inside, zero = o, 0, True, True
            for k in range(d):
                off = rest % side - r
                rest //= side
                zero = zero and off == 0
                x = c[k] + off
                if periodic:
                    x %= dims[k]
                inside = inside and 0 <= x < dims[k]
                target = target * dims[k] + x
            if not zero and inside:
                out.append(target)
        dst.append(out)
    return dst


def erdos_renyi(P: int, p: float, seed: int) -> list[list[int]]:
    """Each edge i -> j (i != j) with probability p, drawn by mix(seed, i, j)."""
    i, j = _np.meshgrid(_np.arange(P, dtype=_np.uint64), _np.arange(P, dtype=_np.uint64), indexing="ij")
    draw = (mix(seed, i, j) >> _np.uint64(11)).astype(_np.float64) * 2.0 ** -53
    keep = (draw < p) & (i != j)
    return [list(map(int, _np.nonzero(keep[a])[0])) for a in range(P)]


def parse_spec(text: str) -> dict:
    """A --topo spec, checked as the benchmark checks it; ValueError naming the problem."""
    kind, _, body = text.partition(":")
    if kind == "file":
        if not body:
            raise ValueError("topology 'file:PATH' needs a path")
        edges = []
        try:
            with open(body) as f:
                for n, line in enumerate(f, 1):
                    words = line.split("#", 1)[0].split()
                    if not words:
                        continue
                    if len(words) != 2 or not all(_re.fullmatch(r"\d+", w) and int(w) < 1 << 24 for w in words):
                        raise ValueError(f"{body}:{n}: expected an edge 'i j' of two ranks in [0, 2^24), "
                                         f"got '{line.rstrip()}'")
                    edges.append((int(words[0]), int(words[1])))
        except OSError as e:
            raise ValueError(f"cannot read the edge list '{body}': {e.strerror}") from None
        return {"kind": "file", "text": text, "edges": edges}
    keys = {"moore": ("d", "r", "periodic"), "random": ("p", "seed")}.get(kind)
    if keys is None:
        raise ValueError(f"unknown topology '{text}' (moore:d=D,r=R[,periodic=1], random:p=X[,seed=S] or file:PATH)")
    s = {"kind": kind, "text": text, "d": 2, "r": 1, "periodic": False, "p": 0.1, "seed": 1}
    for item in body.split(",") if body else []:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"topology '{text}': expected key=value, got '{item}'")
        if key not in keys:
            raise ValueError(f"topology '{text}': unknown parameter '{key}' (takes {', '.join(keys)})")
        whole = _re.fullmatch(r"-?\d+", value) is not None
        if key == "d" and not (whole and 1 <= int(value) <= 6):
            raise ValueError(f"topology '{text}': d must be an integer in [1, 6], got '{value}'")
        if key == "r" and not (whole and 1 <= int(value) <= 1000):
            raise ValueError(f"topology '{text}': r must be an integer in [1, 1000], got '{value}'")
        if key == "periodic" and value not in ("0", "1"):
            raise ValueError(f"topology '{text}': periodic must be 0 or 1, got '{value}'")
        if key == "seed" and not (whole and int(value) >= 0):
            raise ValueError(f"topology '{text}': seed must be an integer >= 0, got '{value}'")
        if key == "p":
            try:
                x = float(value)
            except ValueError:
                x = float("nan")
            if not (_math.isfinite(x) and 0 < x <= 1):
                raise ValueError(f"topology '{text}': p must be a probability in (0, 1], got '{value}'")
            s["p"] = x
        elif key == "periodic":
            s["periodic"] = value == "1"
        else:
            s[key] = int(value)
    if kind == "moore" and (2 * s["r"] + 1) ** s["d"] > 10 ** 6:
        raise ValueError(f"topology '{text}': (2r+1)^d offsets is more than a million")
    return s


def build(spec: dict, P: int) -> list[list[int]]:
    """The destinations of every rank for the spec on P ranks."""
    if spec["kind"] == "moore":
        return moore(P, spec["d"], spec["r"], spec["periodic"])
    if spec["kind"] == "random":
        return erdos_renyi(P, spec["p"], spec["seed"])
    top = max((max(e) for e in spec["edges"]), default=-1)
    if top >= P:
        raise ValueError(f"the edge list of '{spec['text']}' names rank {top}, but the simulation has {P} ranks")
    dst: list[list[int]] = [[] for _ in range(P)]
    for a, b in spec["edges"]:
        dst[a].append(b)
    return dst


def sources(dst: list[list[int]]) -> list[list[int]]:
    src: list[list[int]] = [[] for _ in dst]
    for i, out in enumerate(dst):
        for j in out:
            src[j].append(i)
    return src


class _Env:
    """Environment variables set for the topology's creation, restored after."""

    def __init__(self, values: dict):
        self.values = values

    def __enter__(self):
        self.saved = {k: _os.environ.get(k) for k in self.values}
        for k, v in self.values.items():
            if v is None:
                _os.environ.pop(k, None)
            else:
                _os.environ[k] = v

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                _os.environ.pop(k, None)
            else:
                _os.environ[k] = v


def simulate(tuning: str | None, transport: str, machines, spec_text: str, ps: _Sequence[int],
             sizes: _Sequence[int]) -> list[dict]:
    """Every algorithm's prediction and auto's pick for blocks of `sizes` bytes on the
    spec's graph at each P; machines(P) gives the machines the ranks span."""
    from . import comm as _comm
    from ._neighbor import Topology

    spec = parse_spec(spec_text)
    rows = []
    for P in ps:
        dst = build(spec, P)
        src = sources(dst)
        env = {"SPARCOLL_MODEL_TRANSPORT": transport, "SPARCOLL_MACHINES": str(machines(P)),
               "SPARCOLL_RANKS_PER_NODE": None, "SPARCOLL_TUNING_FILE": None}

        def body(c):
            with Topology(c, src[c.rank], dst[c.rank]) as t:
                if c.rank != 0:
                    return None
                k = t.friend_group()["k"]
                out = []
                for n in sizes:
                    times = {a: t.estimate(n, a)[0] for a in ALGOS}
                    t_auto, pick = t.estimate(n, "auto")
                    best = min(times, key=times.get)
                    out.append({"collective": "neighbor_allgather", "topology": spec_text, "P": P, "bytes": n,
                                "times": times, "auto": pick, "auto_s": t_auto, "best": best,
                                "best_s": times[best], "k": k, "edges": sum(len(d) for d in dst)})
                return out

        # The communicators read the model's variables at creation, the
        # topologies SPARCOLL_RANKS_PER_NODE at theirs.
        with _Env(env):
            comms = _comm.local_group(P, tuning_file=tuning)
            try:
                with _Pool(P) as pool:
                    results = [f.result() for f in [pool.submit(body, c) for c in comms]]
            finally:
                for c in comms:
                    c.close()
        rows += results[0]
    return rows
