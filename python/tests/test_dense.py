"""Dense collectives on numpy arrays across the ranks of a local group (threads),
checked element by element against numpy references."""

import numpy as np
import pytest

from helpers import rank_data, reference, run_ranks

DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64"]
OPS = ["sum", "prod", "max", "min", "avg"]
ALGOS = ["auto", "ring", "rabenseifner", "recdbl", "native"]


def _data(rank, n, dtype, op):
    return rank_data(rank, n, dtype, "prod" if op == "prod" else ("positive" if dtype.startswith("u") else "mixed"))


@pytest.mark.parametrize("P", [1, 3, 4])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_allreduce_dtypes_ops(P, dtype, op):
    n = 37

    def body(c):
        return c.allreduce(_data(c.rank, n, dtype, op), op=op)

    outs = run_ranks(P, body)
    want = reference([_data(r, n, dtype, op) for r in range(P)], op)
    for out in outs:
        assert isinstance(out, np.ndarray) and out.dtype == np.dtype(dtype) and out.shape == (n,)
        if op == "avg" and dtype.startswith("float"):  # sum is exact, the division rounds once
            np.testing.assert_allclose(out, want, rtol={"float16": 1e-3, "float32": 1e-6}.get(dtype, 1e-14))
        else:
            np.testing.assert_array_equal(out, want)
        assert out.tobytes() == outs[0].tobytes()  # bit-identical on every rank


@pytest.mark.parametrize("P", [2, 3, 4, 5])
@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("n", [1, 7, 1000, 40_001])
def test_allreduce_algos(P, algo, n):
    def body(c):
        return c.allreduce(rank_data(c.rank, n, "float32"), algo=algo)

    outs = run_ranks(P, body)
    want = reference([rank_data(r, n, "float32") for r in range(P)], "sum")
    for out in outs:
        np.testing.assert_array_equal(out, want)


def test_allreduce_shape_kept_in_place_and_out():
    def body(c):
        x = rank_data(c.rank, 24, "float64").reshape(2, 3, 4)
        y = c.allreduce(x)
        out = np.empty_like(x)
        z = c.allreduce(x, out=out, op="max")
        w = x.copy()
        v = c.allreduce(w, out=w, op="avg")
        return x, y, z is out, z, v is w, w

    outs = run_ranks(3, body)
    xs = [o[0] for o in outs]
    for x, y, same, z, same2, w in outs:
        assert y.shape == (2, 3, 4) and same and same2
        np.testing.assert_array_equal(y, sum(xs))
        np.testing.assert_array_equal(z, np.maximum.reduce(xs))
        np.testing.assert_array_equal(w, sum(xs) / 3)


def test_allreduce_empty():
    outs = run_ranks(2, lambda c: c.allreduce(np.zeros(0, np.float32)))
    assert all(o.shape == (0,) for o in outs)


@pytest.mark.parametrize("P", [1, 2, 3, 4])
@pytest.mark.parametrize("algo", ["auto", "ring", "rabenseifner", "native"])
@pytest.mark.parametrize("op", ["sum", "max", "avg"])
def test_reduce_scatter(P, algo, op):
    m = 5

    def body(c):
        x = rank_data(c.rank, P * m * 2, "int32").reshape(P * m, 2)
        return c.reduce_scatter(x, op=op, algo=algo)

    outs = run_ranks(P, body)
    full = reference([rank_data(r, P * m * 2, "int32").reshape(P * m, 2) for r in range(P)], op)
    for r, out in enumerate(outs):
        assert out.shape == (m, 2)
        np.testing.assert_array_equal(out, full[r * m:(r + 1) * m])


def test_reduce_scatter_in_place():
    P, m = 4, 6

    def body(c):
        x = rank_data(c.rank, P * m, "float32")
        blk = x[c.rank * m:(c.rank + 1) * m]
        res = c.reduce_scatter(x, out=blk)
        return res is blk, blk.copy()

    outs = run_ranks(P, body)
    full = sum(rank_data(r, P * m, "float32") for r in range(P))
    for r, (same, blk) in enumerate(outs):
        assert same
        np.testing.assert_array_equal(blk, full[r * m:(r + 1) * m])


@pytest.mark.parametrize("P", [1, 2, 3, 4])
@pytest.mark.parametrize("algo", ["auto", "ring", "recdbl", "native"])
def test_allgather(P, algo):
    def body(c):
        return c.allgather(rank_data(c.rank, 6, "uint8").reshape(3, 2), algo=algo)

    outs = run_ranks(P, body)
    want = np.concatenate([rank_data(r, 6, "uint8").reshape(3, 2) for r in range(P)])
    for out in outs:
        assert out.shape == (3 * P, 2)
        np.testing.assert_array_equal(out, want)


def test_allgather_scalar_and_in_place():
    P = 3

    def body(c):
        s = c.allgather(np.array(c.rank * 10, dtype=np.int64))
        buf = np.zeros(P * 4, np.float32)
        mine = buf[c.rank * 4:(c.rank + 1) * 4]
        mine[:] = c.rank + 1
        res = c.allgather(mine, out=buf)
        return s, res is buf, buf

    for s, same, buf in run_ranks(P, body):
        np.testing.assert_array_equal(s, [0, 10, 20])
        assert same
        np.testing.assert_array_equal(buf, np.repeat([1, 2, 3], 4).astype(np.float32))


@pytest.mark.parametrize("P", [2, 3, 4])
def test_stats_ring_traffic(P):
    """Ring allreduce sends 2(P-1)/P of the vector per rank (Patarasuk & Yuan)."""
    n = 1200 * P

    def body(c):
        c.reset_stats()
        assert c.stats() == {"bytes_sent": 0, "bytes_recv": 0, "msgs_sent": 0, "msgs_recv": 0,
                             "inter_node_bytes_sent": 0, "inter_node_msgs_sent": 0, "host_reads": 0,
                             "rounds": 0, "rendezvous": 0, "host_syncs": 0, "events_created": 0,
                             "scratch_allocs": 0, "max_link_bytes": 0, "msgs_reduced": 0}
        c.allreduce(rank_data(c.rank, n, "float32"), algo="ring")
        s = c.stats()
        c.reset_stats()
        return s, c.stats()

    for s, after in run_ranks(P, body):
        assert s["bytes_sent"] == s["bytes_recv"] == 2 * (P - 1) * (n // P) * 4
        assert s["msgs_sent"] >= 2 * (P - 1) and s["msgs_recv"] == s["msgs_sent"]
        assert s["rounds"] == 2 * (P - 1)  # 1200 elements a block: one slice per step
        assert s["rendezvous"] == s["msgs_sent"] + s["msgs_recv"]
        assert s["host_syncs"] == s["events_created"] == 0
        # In-process ranks on host memory: each reduce-scatter step's slice is
        # reduced as it arrives, with no staging slices to allocate.
        assert s["msgs_reduced"] == P - 1 and s["scratch_allocs"] == 0
        assert after["bytes_sent"] == 0


def test_barrier_and_queries():
    def body(c):
        c.barrier()
        return c.rank, c.size, c.is_device, c.transport, repr(c), c.device

    outs = run_ranks(3, body)
    assert [o[0] for o in outs] == [0, 1, 2]
    assert all(o[1] == 3 and o[2] is False and o[3] == "local" and o[5] == -1 for o in outs)
    assert "rank 1 of 3" in outs[1][4]


def test_algo_for_names_an_algorithm():
    def body(c):
        return c.algo_for(8), c.algo_for(64 << 20)

    for small, big in run_ranks(2, body):
        assert small in ("ring", "rabenseifner", "recdbl", "native")
        assert big in ("ring", "rabenseifner", "recdbl", "native")
