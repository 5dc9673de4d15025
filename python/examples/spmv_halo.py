"""Distributed sparse matrix-vector products whose halo exchange is one
neighbour allgatherv (sparcoll/neighbor.h), checked against scipy.

    OMPI_MCA_mpi_yield_when_idle=1 mpirun --oversubscribe -np 4 python python/examples/spmv_halo.py  # MPI ranks
    python python/examples/spmv_halo.py --local 4        # 4 ranks as threads of this process, no MPI

Needs scipy (and mpi4py under mpirun): pip install './python[mpi,examples]'.

A is n x n: a band (a discretised 1-D operator) plus a few random entries far
from the diagonal (long-range coupling), diagonally dominant. It is
distributed by block rows: rank q owns rows [first[q], first[q+1]) and the
same entries of x. To multiply, q needs the x entries of the columns its rows
touch outside its block: its halo, owned by a few other ranks.

Set-up, once, through sparcoll alone:
  1. every rank tells all (one allgather of P flags) from which owners it
     needs entries: the sources of the halo topology H, whose transpose gives
     the destinations;
  2. on the reverse topology R (requesters -> owners), one neighbor_allgather
     of list lengths and one neighbor_allgatherv of the requested columns: each
     owner learns what its requesters need and sends, from then on, the union
     (its boundary): allgather semantics, the same block to every neighbour;
  3. on H, the requesters learn each owner's boundary (its columns) once, and
     renumber the halo part of their rows to positions in the halo buffer.
Per product: halo = comm.neighbor_allgatherv(x_local[boundary], H, counts), then
y_local = A_own @ x_local + A_halo @ halo. The example runs a power iteration
(y = A x, x = y / ||y||, the norm by an allreduce) and compares every rank's
block with scipy's product on the whole matrix: one product and the final
iterate, to 1e-12 relative.
"""

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

import sparcoll as sc


def make_matrix(n, band, far, seed):
    """The whole A (every rank builds the same one from the seed; each uses its block rows)."""
    rng = np.random.default_rng(seed)
    offsets = list(range(-band, band + 1))
    A = sp.diags([np.full(n - abs(k), -1.0) for k in offsets], offsets, shape=(n, n), format="lil")
    rows = rng.integers(0, n, far)
    cols = rng.integers(0, n, far)
    A[rows, cols] = rng.uniform(-1, 1, far)
    A.setdiag(2.0 * band + 2.0 + rng.random(n))
    return A.tocsr()


def build_halo(comm, A, first, algo):
    """The set-up above. Returns what each product needs."""
    P, q = comm.size, comm.rank
    lo, hi = int(first[q]), int(first[q + 1])
    rows = A[lo:hi]
    owner_of = np.searchsorted(first, np.arange(A.shape[1]), side="right") - 1
    outside = np.unique(rows.indices[(rows.indices < lo) | (rows.indices >= hi)])
    owners = owner_of[outside]
    sources = [int(o) for o in np.unique(owners)]
    # 1. who needs whom: row q of the P x P flags
    flags = np.zeros(P, np.int8)
    flags[sources] = 1
    needs = comm.allgather(flags).reshape(P, P)
    destinations = [int(r) for r in np.flatnonzero(needs[:, q])]
    # 2. requests, on the reverse topology (requesters -> owners)
    with sc.Topology(comm, destinations, sources) as R:
        lengths = comm.neighbor_allgather(np.array([outside.size], np.int64), R, algo=algo).ravel()
        asked = comm.neighbor_allgatherv(outside.astype(np.int64), R, lengths, algo=algo)
    boundary = np.unique(asked[(asked >= lo) & (asked < hi)]).astype(np.int64)  # global columns, sorted
    # 3. each owner's boundary, on H (owners -> requesters), and the halo renumbering
    H = sc.Topology(comm, sources, destinations)
    counts = comm.neighbor_allgather(np.array([boundary.size], np.int64), H, algo=algo).ravel()
    columns = comm.neighbor_allgatherv(boundary, H, counts, algo=algo)  # halo position -> global column
    position = {int(c): i for i, c in enumerate(columns)}
    A_own = rows[:, lo:hi].tocsr()
    A_rest = rows.tocoo()
    keep = (A_rest.col < lo) | (A_rest.col >= hi)
    halo_cols = np.array([position[int(c)] for c in A_rest.col[keep]], np.int64)
    A_halo = sp.csr_matrix((A_rest.data[keep], (A_rest.row[keep], halo_cols)), shape=(hi - lo, columns.size))
    return {"H": H, "counts": counts, "send": boundary - lo, "A_own": A_own, "A_halo": A_halo,
            "degrees": (len(sources), len(destinations)), "halo": int(columns.size), "boundary": int(boundary.size)}


def spmv(comm, h, x_local, algo):
    halo = comm.neighbor_allgatherv(x_local[h["send"]], h["H"], h["counts"], algo=algo)
    return h["A_own"] @ x_local + h["A_halo"] @ halo


def rank_main(comm, args):
    P, q = comm.size, comm.rank
    A = make_matrix(args.n, args.band, args.far, args.seed)
    first = np.linspace(0, args.n, P + 1).astype(np.int64)
    lo, hi = int(first[q]), int(first[q + 1])
    x0 = np.random.default_rng(args.seed + 1).standard_normal(args.n)
    t0 = time.perf_counter()
    h = build_halo(comm, A, first, args.algo)
    setup = time.perf_counter() - t0

    # One product against scipy's.
    y = spmv(comm, h, x0[lo:hi].copy(), args.algo)
    ref = A @ x0
    err1 = np.abs(y - ref[lo:hi]).max() / np.abs(ref).max()

    # The power iteration, timed.
    x = x0[lo:hi].copy()
    comm.barrier()
    t0 = time.perf_counter()
    for _ in range(args.iters):
        y = spmv(comm, h, x, args.algo)
        x = y / np.sqrt(comm.allreduce(np.array([y @ y]))[0])
    seconds = (time.perf_counter() - t0) / max(args.iters, 1)
    xr = x0.copy()
    for _ in range(args.iters):
        yr = A @ xr
        xr = yr / np.linalg.norm(yr)
    err2 = np.abs(x - xr[lo:hi]).max() / np.abs(xr).max()

    mean_block = comm.allreduce(np.array([h["boundary"] * 8.0]), op="avg")[0]
    stats = comm.allgather(np.array([h["degrees"][0], h["halo"], h["boundary"], hi - lo], np.int64)).reshape(P, 4)
    errs = comm.allgather(np.array([err1, err2, setup, seconds]))
    chosen = h["H"].algo_for(int(mean_block))
    h["H"].close()
    return {"P": P, "nnz": A.nnz, "stats": stats, "errs": errs.reshape(P, 4), "auto": chosen}


def report(args, res):
    P, stats, errs = res["P"], res["stats"], res["errs"]
    print(f"spmv_halo: n = {args.n}, nnz = {res['nnz']}, P = {P} ranks, band {args.band}, {args.far} far entries, "
          f"algo {args.algo} (auto picks {res['auto']} for the mean boundary block)")
    print(f"  in-neighbours per rank: mean {stats[:, 0].mean():.1f}, max {stats[:, 0].max()}; halo entries per rank: "
          f"mean {stats[:, 1].mean():.0f}, max {stats[:, 1].max()} (of {stats[:, 3].mean():.0f} rows); "
          f"boundary sent: mean {stats[:, 2].mean():.0f}")
    print(f"  set-up {errs[:, 2].max() * 1e3:.1f} ms; per product (halo exchange + local SpMV + norm): "
          f"{errs[:, 3].max() * 1e6:.0f} us")
    worst = max(errs[:, 0].max(), errs[:, 1].max())
    print(f"  max relative error against scipy: one product {errs[:, 0].max():.1e}, "
          f"after {args.iters} power iterations {errs[:, 1].max():.1e}")
    ok = worst < 1e-12
    print("  OK" if ok else "  WRONG: the distributed product differs from scipy's")
    return ok


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20000, help="rows (and columns) of A")
    ap.add_argument("--band", type=int, default=3, help="half-width of the band")
    ap.add_argument("--far", type=int, default=200, help="random entries anywhere in A")
    ap.add_argument("--iters", type=int, default=20, help="power iterations")
    ap.add_argument("--algo", default="auto", choices=["auto", "naive", "combining", "hierarchical", "native"])
    ap.add_argument("--local", type=int, default=0, metavar="P",
                    help="P ranks as threads of this process (default: one rank per MPI process)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if args.n < 1 or args.band < 0 or args.far < 0 or args.iters < 0:
        ap.error("--n must be >= 1 and --band, --far, --iters >= 0")
    if args.local:
        comms = sc.local_group(args.local)
        try:
            with ThreadPoolExecutor(args.local) as ex:
                results = list(ex.map(lambda c: rank_main(c, args), comms))
        finally:
            for c in comms:
                c.close()
        return 0 if report(args, results[0]) else 1
    comm = sc.Communicator.from_mpi()
    res = rank_main(comm, args)
    ok = report(args, res) if comm.rank == 0 else True
    comm.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
