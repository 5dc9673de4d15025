"""Neighbourhood collectives across MPI ranks (Communicator.from_mpi), checked
against MPI's own: mpi4py's Neighbor_allgather(v) on a dist-graph
communicator with the same edges, for every algorithm, with and without
virtual nodes (hierarchical's three levels)."""

import numpy as np
import pytest

import sparcoll as sc
from helpers import rank_data

ALGOS = ["auto", "naive", "combining", "hierarchical", "native"]


def graph(P, p, seed):
    """A random directed graph with repeated edges and self-loops, the same on every rank."""
    rng = np.random.default_rng(seed)
    dst = [[int(j) for j in range(P) if rng.random() < p] for _ in range(P)]
    for i in range(P):
        if dst[i] and rng.random() < 0.5:
            dst[i].append(dst[i][0])  # a repeat (a self-loop when dst[i][0] == i)
    src = [[] for _ in range(P)]
    for i in range(P):
        for j in dst[i]:
            src[j].append(i)
    return src, [list(reversed(d)) for d in dst]


def mpi_answer(world, src, dst, send, counts=None):
    """MPI's result. The nonblocking calls (those sparcoll's native makes): Open MPI 4.1's blocking
    MPI_Neighbor_allgather hangs on some graphs with repeated self-loops, where these complete."""
    from mpi4py import MPI

    dg = world.Create_dist_graph_adjacent(src, dst, reorder=False)
    try:
        if counts is None:
            recv = np.empty((len(src),) + send.shape, send.dtype)
            dg.Ineighbor_allgather(send, recv).Wait()
        else:
            recv = np.empty(sum(counts), send.dtype)
            dg.Ineighbor_allgatherv(send, [recv, counts, None, MPI.INT64_T]).Wait()
        return recv
    finally:
        dg.Free()


@pytest.mark.parametrize("rpn", ["", "2"])
@pytest.mark.parametrize("p", [0.3, 0.8])
def test_neighbor_allgather_matches_mpi(comm, world, monkeypatch, rpn, p):
    monkeypatch.setenv("SPARCOLL_RANKS_PER_NODE", rpn)
    src, dst = graph(comm.size, p, seed=int(p * 10))
    me = comm.rank
    x = rank_data(me, 257, "float32").reshape(257)
    want = mpi_answer(world, src[me], dst[me], x)
    with sc.Topology(comm, src[me], dst[me]) as t:
        for algo in ALGOS:
            y = comm.neighbor_allgather(x, t, algo=algo)
            np.testing.assert_array_equal(y, want, err_msg=algo)


@pytest.mark.parametrize("algo", ALGOS)
def test_neighbor_allgatherv_matches_mpi(comm, world, monkeypatch, algo):
    monkeypatch.setenv("SPARCOLL_RANKS_PER_NODE", "2")
    src, dst = graph(comm.size, 0.6, seed=3)
    me = comm.rank
    n = [5 * r + (r % 2) * 100 for r in range(comm.size)]
    x = rank_data(me, n[me], "int64")
    counts = [n[s] for s in src[me]]
    want = mpi_answer(world, src[me], dst[me], x, counts)
    with sc.Topology(comm, src[me], dst[me]) as t:
        np.testing.assert_array_equal(comm.neighbor_allgatherv(x, t, counts, algo=algo), want)


def test_bad_declaration_raises_everywhere(comm):
    dst = [(comm.rank + 1) % comm.size]  # no rank lists its sender in sources
    with pytest.raises(sc.InvalidArgumentError, match="asymmetric edge"):
        sc.Topology(comm, [], dst)
    with sc.Topology(comm, [(comm.rank - 1) % comm.size], dst) as t:  # the communicator still works
        y = comm.neighbor_allgather(np.array([comm.rank], np.int32), t)
    assert int(y[0, 0]) == (comm.rank - 1) % comm.size
