"""Neighbourhood collectives (sc.Topology, Communicator.neighbor_allgather and
neighbor_allgatherv) across the ranks of a local group (threads), checked
against a reference built from every rank's known data: every algorithm, every
dtype, repeated edges, self-loops and degree 0, out=, gaps in allgatherv's
result, the traffic counters (inter-node with virtual nodes), and each error."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sparcoll as sc
from helpers import has_torch, rank_data, run_ranks

ALGOS = ["auto", "naive", "combining", "hierarchical", "native"]
DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64"]


def ring(P):
    """Rank r sends to r+1 and r+2 (mod P): (sources, destinations) per rank."""
    dst = [[(r + 1) % P, (r + 2) % P] for r in range(P)]
    return _with_sources(P, dst)


def _with_sources(P, dst, reverse=False):
    src = [[] for _ in range(P)]
    for i in range(P):
        for j in dst[i]:
            src[j].append(i)
    if reverse:
        src = [s[::-1] for s in src]
    return src, dst


def messy(P):
    """Repeated edges, self-loops, and rank 0 with no edges at all."""
    dst = [[] for _ in range(P)]
    for r in range(1, P):
        dst[r] = [r, (r % (P - 1)) + 1, (r % (P - 1)) + 1, ((r + 1) % (P - 1)) + 1] if P > 2 else [r, r]
    return _with_sources(P, dst, reverse=True)


def dense(P):
    """Every rank sends to every other: common neighbourhoods for friend groups."""
    return _with_sources(P, [[j for j in range(P) if j != i] for i in range(P)])


def block(rank, shape, dtype):
    return rank_data(rank, int(np.prod(shape)), dtype, "positive" if dtype.startswith("u") else "mixed").reshape(shape)


@pytest.mark.parametrize("P", [1, 3, 5])
@pytest.mark.parametrize("graph", [ring, messy, dense])
@pytest.mark.parametrize("algo", ALGOS)
def test_allgather_every_algorithm(P, graph, algo):
    if graph is messy and P == 1:
        pytest.skip("messy needs a rank besides 0")
    src, dst = graph(P)
    shape = (3, 2)

    def body(c):
        with sc.Topology(c, src[c.rank], dst[c.rank]) as t:
            assert (t.indegree, t.outdegree) == (len(src[c.rank]), len(dst[c.rank]))
            return c.neighbor_allgather(block(c.rank, shape, "float64"), t, algo=algo)

    for r, out in enumerate(run_ranks(P, body)):
        assert isinstance(out, np.ndarray) and out.shape == (len(src[r]),) + shape
        for e, s in enumerate(src[r]):
            np.testing.assert_array_equal(out[e], block(s, shape, "float64"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_allgather_dtypes(dtype):
    P = 4
    src, dst = ring(P)

    def body(c):
        with sc.Topology(c, src[c.rank], dst[c.rank]) as t:
            return [c.neighbor_allgather(block(c.rank, (7,), dtype), t, algo=a) for a in ALGOS]

    for r, outs in enumerate(run_ranks(P, body)):
        for out in outs:
            assert out.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(out, np.stack([block(s, (7,), dtype) for s in src[r]]))


def test_allgather_into_out_and_zero_copy():
    P = 3
    src, dst = dense(P)

    def body(c):
        t = sc.Topology(c, src[c.rank], dst[c.rank])
        out = np.full((len(src[c.rank]), 4), -1, np.int32)
        got = c.neighbor_allgather(np.arange(4, dtype=np.int32) + 10 * c.rank, t, out=out)
        t.close()
        return got is out, out

    for r, (same, out) in enumerate(run_ranks(P, body)):
        assert same
        np.testing.assert_array_equal(out, [np.arange(4) + 10 * s for s in src[r]])


@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("packed", [True, False])
def test_allgatherv(algo, packed):
    P = 5
    src, dst = messy(P)
    n = [0 if r == 2 else 3 * r + 1 for r in range(P)]  # rank 2 sends nothing

    def body(c):
        me = src[c.rank]
        counts = [n[s] for s in me]
        if packed:
            displs, size = None, sum(counts)
        else:  # reverse order with a gap of 2 after every block
            displs, at = [0] * len(me), 0
            for e in reversed(range(len(me))):
                displs[e] = at
                at += counts[e] + 2
            size = at + 1
        out = np.full(size, -7, np.int64)
        with sc.Topology(c, me, dst[c.rank]) as t:
            got = c.neighbor_allgatherv(rank_data(c.rank, n[c.rank], "int64"), t, counts, displs, algo=algo,
                                        out=None if packed else out)
        return counts, displs, got if packed else out

    for r, (counts, displs, out) in enumerate(run_ranks(P, body)):
        want = np.full(out.size, -7, np.int64)
        at = 0
        for e, s in enumerate(src[r]):
            d = at if displs is None else displs[e]
            want[d:d + counts[e]] = rank_data(s, n[s], "int64")
            at += counts[e]
        np.testing.assert_array_equal(out, want)  # the gaps are untouched


def test_traffic_counters_and_virtual_nodes(monkeypatch):
    """naive sends one message per out-edge; with nodes of 2 ranks, hierarchical
    sends each block across to a remote node once, and the inter-node counters
    say so."""
    monkeypatch.setenv("SPARCOLL_RANKS_PER_NODE", "2")
    P, n = 6, 1000
    src, dst = dense(P)

    def body(c):
        with sc.Topology(c, src[c.rank], dst[c.rank]) as t:
            x = np.ones(n, np.float32)
            seen = {}
            for algo in ("naive", "hierarchical"):
                c.reset_stats()
                c.neighbor_allgather(x, t, algo=algo)
                seen[algo] = c.stats()
            return seen

    for seen in run_ranks(P, body):
        naive, hier = seen["naive"], seen["hierarchical"]
        assert naive["msgs_sent"] == P - 1 and naive["bytes_sent"] == (P - 1) * 4 * n
        assert naive["inter_node_msgs_sent"] == P - 2 and naive["inter_node_bytes_sent"] == (P - 2) * 4 * n
        assert hier["inter_node_bytes_sent"] == (P // 2 - 1) * 4 * n  # one block per remote node


def test_topology_queries():
    P = 4
    src, dst = dense(P)

    def body(c):
        with sc.Topology(c, np.array(src[c.rank]), tuple(dst[c.rank])) as t:
            return t.algo_for(8), t.algo_for(1 << 22), t.friend_group(), t.sources, repr(t)

    for r, (small, big, fg, sources, text) in enumerate(run_ranks(P, body)):
        assert small in ALGOS[1:] and big in ALGOS[1:]
        assert fg["k"] >= 1 and r in fg["members"] and 1 <= len(fg["members"]) <= fg["k"]
        assert sources == tuple(src[r]) and "indegree 3" in text


def test_cost_terms_price_the_estimate(tmp_path, monkeypatch):
    """cost_terms(algo) summed with the file's parameters is estimate(nbytes, algo);
    a large message_overhead makes auto pick combining on the complete graph."""
    P, alpha, beta, bs, o = 6, 1e-6, 1e-9, 3e-10, 1e-4
    tuning = tmp_path / "t.json"
    tuning.write_text('{"format": "sparcoll-tuning", "version": 1, "models": [{"transport": "local", '
                      f'"alpha": {alpha}, "beta": {beta}, "gamma": 0, "beta_shared": {bs}, '
                      f'"message_overhead": {o}}}]}}')
    monkeypatch.setenv("SPARCOLL_TUNING_FILE", str(tuning))
    src, dst = dense(P)

    def body(c):
        with sc.Topology(c, src[c.rank], dst[c.rank]) as t:
            out = {a: (t.cost_terms(a), t.estimate(1024, a)[0]) for a in ("naive", "combining", "hierarchical")}
            with pytest.raises(sc.InvalidArgumentError, match="explicit algorithm"):
                t.cost_terms("auto")
            return out, t.algo_for(8)

    for terms, pick in run_ranks(P, body):
        for algo, (c, seconds) in terms.items():
            assert c["rounds"][1] == c["extra_messages"][1] == c["blocks"][1] == c["shared_blocks"][1] == 0
            assert seconds == pytest.approx(c["rounds"][0] * alpha + c["extra_messages"][0] * o
                                            + 1024 * (c["blocks"][0] * beta + c["shared_blocks"][0] * bs),
                                            rel=1e-12), algo
        assert terms["naive"][0] == {"rounds": (1, 0), "extra_messages": (P - 2, 0), "blocks": (P - 1, 0),
                                     "shared_blocks": (P * (P - 1), 0)}
        assert terms["combining"][0]["extra_messages"][0] < P - 2
        assert pick == "combining"


def test_asymmetric_declaration_fails_on_every_rank():
    P = 3

    def body(c):
        dst = [1] if c.rank == 0 else []  # rank 1 does not list 0 in its sources
        with pytest.raises(sc.InvalidArgumentError, match="asymmetric edge 0 -> 1") as e:
            sc.Topology(c, [], dst)
        return isinstance(e.value, ValueError)

    assert all(run_ranks(P, body))


def test_bad_ranks_fail_on_every_rank():
    def body(c):
        with pytest.raises(sc.InvalidArgumentError, match=r"rank 1: sources\[0\] = 7 is not a rank in \[0, 2\)"):
            sc.Topology(c, [7] if c.rank == 1 else [], [])
        return True

    assert all(run_ranks(2, body))


def test_call_errors():
    P = 2
    src, dst = ring(P)

    def body(c):
        t = sc.Topology(c, src[c.rank], dst[c.rank])
        x = np.zeros(3, np.float32)
        with pytest.raises(sc.InvalidArgumentError, match="unknown neighbourhood algorithm 'ring'"):
            c.neighbor_allgather(x, t, algo="ring")
        with pytest.raises(TypeError, match="topo must be a sparcoll Topology"):
            c.neighbor_allgather(x, "topo")
        with pytest.raises(sc.InvalidArgumentError, match="recvcounts has 1 entries, expected 2"):
            c.neighbor_allgatherv(x, t, [3])
        with pytest.raises(sc.InvalidArgumentError, match="displs has 3 entries"):
            c.neighbor_allgatherv(x, t, [3, 3], [0, 3, 6])
        with pytest.raises(sc.InvalidArgumentError, match="out has 5 elements, the blocks need 6"):
            c.neighbor_allgatherv(x, t, [3, 3], out=np.zeros(5, np.float32))
        with pytest.raises(sc.InvalidArgumentError, match="out has dtype float64"):
            c.neighbor_allgather(x, t, out=np.zeros((2, 3), np.float64))
        with pytest.raises(sc.InvalidArgumentError, match="recvcounts\\[1\\] must be a non-negative int"):
            c.neighbor_allgatherv(x, t, [3, -1])
        with pytest.raises(TypeError, match="sources must hold ints"):
            sc.Topology(c, [0.5], [])
        with pytest.raises(sc.InvalidArgumentError, match="overlap"):  # checked by the library: blocks 0 and 1
            c.neighbor_allgatherv(x, t, [3, 3], [0, 2])
        ok = c.neighbor_allgather(x, t)  # still works after the errors
        t.close()
        assert t.closed
        with pytest.raises(sc.InvalidUsageError, match="the topology was closed"):
            c.neighbor_allgather(x, t)
        with pytest.raises(sc.InvalidUsageError, match="the topology was closed"):
            t.algo_for(8)
        return ok.shape

    assert run_ranks(P, body) == [(2, 3)] * P


def test_topology_of_another_communicator_and_closed_communicator():
    P = 2
    src, dst = ring(P)

    def body(c):
        t = sc.Topology(c, src[c.rank], dst[c.rank])
        return t

    comms_a = sc.local_group(P, timeout=30)
    comms_b = sc.local_group(P, timeout=30)
    try:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(P) as ex:
            topos = list(ex.map(body, comms_a))
        with pytest.raises(sc.InvalidArgumentError, match="created on another communicator"):
            comms_b[0].neighbor_allgather(np.zeros(1), topos[0])
        comms_a[0].close()  # closes its topology first
        assert topos[0].closed and not topos[1].closed
        with pytest.raises(sc.InvalidUsageError):
            comms_a[0].neighbor_allgather(np.zeros(1), topos[0])
        with pytest.raises(sc.InvalidUsageError, match="the communicator was closed"):
            sc.Topology(comms_a[0], [], [])
    finally:
        for c in comms_a + comms_b:
            c.close()
    assert topos[1].closed


@pytest.mark.torch
@pytest.mark.skipif(not has_torch(), reason="PyTorch is not installed")
def test_torch_tensors():
    import torch

    P = 3
    src, dst = ring(P)

    def body(c):
        with sc.Topology(c, src[c.rank], dst[c.rank]) as t:
            x = torch.arange(5, dtype=torch.bfloat16) + c.rank
            y = c.neighbor_allgather(x, t)
            v = c.neighbor_allgatherv(torch.arange(c.rank + 1, dtype=torch.int32), t, [s + 1 for s in src[c.rank]])
            return y, v

    for r, (y, v) in enumerate(run_ranks(P, body)):
        assert isinstance(y, torch.Tensor) and y.dtype == torch.bfloat16 and y.shape == (2, 5)
        for e, s in enumerate(src[r]):
            assert torch.equal(y[e], torch.arange(5, dtype=torch.bfloat16) + s)
        assert torch.equal(v, torch.cat([torch.arange(s + 1, dtype=torch.int32) for s in src[r]]))


@pytest.mark.parametrize("algo", ["auto", "combining"])
def test_example_spmv_halo_local(tmp_path, algo):
    """The halo-exchange SpMV example on 4 local ranks (threads) agrees with scipy."""
    pytest.importorskip("scipy")
    script = Path(__file__).resolve().parent.parent / "examples" / "spmv_halo.py"
    proc = subprocess.run([sys.executable, str(script), "--local", "4", "--n", "2000", "--far", "40", "--iters", "5",
                           "--algo", algo], cwd=tmp_path, env=dict(os.environ, OMP_NUM_THREADS="1"),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert proc.returncode == 0 and "  OK" in proc.stdout, proc.stdout[-4000:]
