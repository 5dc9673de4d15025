"""Communicator.dsop / dsop_sparse across the ranks of a local group, against
numpy's sum of outer products."""

import numpy as np
import pytest

import sparcoll as sc
from helpers import rank_data, run_ranks

ALGOS = ["auto", "allgather", "allreduce", "allreduce_ring", "g_rabenseifner", "all_scatter"]


@pytest.mark.parametrize("P", [1, 2, 3, 4])
@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("n,m", [(1, 1), (2, 9), (17, 12)])
def test_dsop(P, algo, n, m):
    def body(c):
        return c.dsop(rank_data(c.rank, n, "float32"), rank_data(c.rank + 5, m, "float32"), algo=algo)

    want = sum(np.outer(rank_data(r, n, "float32"), rank_data(r + 5, m, "float32")) for r in range(P))
    outs = run_ranks(P, body)
    for G in outs:
        assert G.shape == (n, m) and G.dtype == np.float32
        np.testing.assert_array_equal(G, want)
        assert G.tobytes() == outs[0].tobytes()


def test_half_inputs_give_float32_and_out():
    def body(c):
        out = np.empty((4, 3), np.float32)
        G = c.dsop(rank_data(c.rank, 4, "float16"), rank_data(c.rank, 3, "float16"), out=out)
        return G is out, out

    want = sum(np.outer(rank_data(r, 4, "float32"), rank_data(r, 3, "float32")) for r in range(2))
    for same, G in run_ranks(2, body):
        assert same
        np.testing.assert_array_equal(G, want)


@pytest.mark.parametrize("algo", ["auto", "allgather", "g_rabenseifner"])
def test_dsop_sparse(algo):
    n, m, P = 30, 20, 3

    def inputs(r):
        rng = np.random.default_rng(r)
        ai = np.sort(rng.choice(n, 5, replace=False)).astype(np.uint64)
        bi = np.sort(rng.choice(m, 4, replace=False)).astype(np.int64)
        return ai, rng.integers(-3, 4, 5).astype(np.float64), bi, rng.integers(-3, 4, 4).astype(np.float64)

    def dense(i, v, d):
        x = np.zeros(d)
        x[i.astype(np.int64)] = v
        return x

    def body(c):
        ai, av, bi, bv = inputs(c.rank)
        return c.dsop_sparse(ai, av, n, bi, bv, m, algo=algo)

    want = sum(np.outer(dense(a, x, n), dense(b, y, m)) for a, x, b, y in map(inputs, range(P)))
    for G in run_ranks(P, body):
        np.testing.assert_array_equal(G, want)


def test_algo_for():
    outs = run_ranks(2, lambda c: c.dsop_algo_for(1000, 1000))
    assert all(o in ALGOS[1:] for o in outs)


def test_errors():
    c = sc.local_group(1)[0]
    with pytest.raises(sc.InvalidArgumentError):  # integer inputs: the library refuses them
        c.dsop(np.ones(3, np.int32), np.ones(2, np.int32))
    with pytest.raises(sc.InvalidArgumentError, match="a is float32 but b is float64"):
        c.dsop(np.ones(3, np.float32), np.ones(2, np.float64))
    with pytest.raises(sc.InvalidArgumentError, match="unknown DSOP algorithm"):
        c.dsop(np.ones(3, np.float32), np.ones(2, np.float32), algo="ring")
    with pytest.raises(sc.InvalidArgumentError, match="expected 6"):
        c.dsop(np.ones(3, np.float32), np.ones(2, np.float32), out=np.zeros(5, np.float32))
    with pytest.raises(sc.InvalidArgumentError):  # n == 0
        c.dsop(np.ones(0, np.float32), np.ones(2, np.float32))
    c.close()
