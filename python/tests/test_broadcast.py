"""Communicator.broadcast on the ranks of a local group (threads): every P in
1..5, every root and algorithm, numpy and torch CPU, in place (the call returns
x itself), async_op, and its argument errors. Results are compared exactly
(bytes) with root's input."""

import numpy as np
import pytest

import sparcoll as sc
from helpers import has_torch, run_ranks

ALGOS = ["auto", "binomial", "scatter_allgather", "native"]
DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64"]


def _data(rank, n, dtype):
    """Bytes that differ per rank at every position (any bit pattern: NaNs included)."""
    rng = np.random.default_rng(1000 + rank)
    return rng.integers(0, 256, size=n * np.dtype(dtype).itemsize, dtype=np.uint8).view(dtype)


@pytest.mark.parametrize("P", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("algo", ALGOS)
def test_every_root_numpy(P, algo):
    counts = [0, 1, P + 1, 1000, 40_001]

    def body(c):
        got = []
        for root in range(P):
            for n in counts:
                x = _data(c.rank, n, "float32")
                y = c.broadcast(x, root=root, algo=algo)
                assert y is x
                got.append(x.tobytes())
        return got

    outs = run_ranks(P, body)
    want = [_data(root, n, "float32").tobytes() for root in range(P) for n in counts]
    for rank, got in enumerate(outs):
        assert got == want, f"rank {rank}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_and_shapes(dtype):
    P = 3

    def body(c):
        x = _data(c.rank, 24, dtype).reshape(2, 3, 4)
        c.broadcast(x, root=2)
        return x

    for x in run_ranks(P, body):
        assert x.shape == (2, 3, 4) and x.dtype == np.dtype(dtype)
        assert x.tobytes() == _data(2, 24, dtype).tobytes()


@pytest.mark.skipif(not has_torch(), reason="torch not installed")
@pytest.mark.parametrize("P", [1, 2, 4, 5])
def test_torch_cpu(P):
    import torch

    def body(c):
        out = []
        for root in range(P):
            for dt in (torch.float32, torch.bfloat16, torch.int64):
                t = torch.arange(100, dtype=torch.float64).mul(c.rank + 1).to(dt)
                assert c.broadcast(t, root=root, algo="scatter_allgather" if root % 2 else "binomial") is t
                out.append(t.clone())
        return out

    outs = run_ranks(P, body)
    i = 0
    for root in range(P):
        for dt in (torch.float32, torch.bfloat16, torch.int64):
            want = torch.arange(100, dtype=torch.float64).mul(root + 1).to(dt)
            for rank in range(P):
                assert torch.equal(outs[rank][i], want), (root, dt, rank)
            i += 1


def test_async_op():
    P = 4

    def body(c):
        x = _data(c.rank, 5000, "float64")
        req = c.broadcast(x, root=1, async_op=True)
        assert isinstance(req, sc.Request)
        y = req.wait()
        assert y is x
        return x

    for x in run_ranks(P, body):
        assert x.tobytes() == _data(1, 5000, "float64").tobytes()


def test_bad_root_and_arguments():
    P = 3

    def body(c):
        x = np.zeros(8, np.float32)
        for root in (-1, P, 100):
            with pytest.raises(sc.InvalidArgumentError,
                               match=rf"^broadcast: root {root} is out of range: the communicator has 3 ranks, "
                                     r"root must be in \[0, 3\)$"):
                c.broadcast(x, root=root)
        with pytest.raises(TypeError, match="root must be an int"):
            c.broadcast(x, root=1.0)
        for algo in ("ring", "rabenseifner", "recdbl"):
            with pytest.raises(sc.InvalidArgumentError,
                               match=f"algorithm '{algo}' is not available for broadcast \\(broadcast: binomial, "
                                     "scatter_allgather, native, auto\\)"):
                c.broadcast(x, algo=algo)
        ro = np.zeros(8, np.float32)
        ro.flags.writeable = False
        with pytest.raises(sc.InvalidArgumentError, match="read-only"):
            c.broadcast(ro)
        with pytest.raises(sc.InvalidArgumentError, match="not C-contiguous"):
            c.broadcast(np.zeros((4, 4), np.float32)[:, 1])
        with pytest.raises(sc.InvalidArgumentError, match="not available for allreduce"):
            c.allreduce(x, algo="binomial")
        # The communicator still works.
        y = np.full(8, c.rank, np.float32)
        c.broadcast(y, root=P - 1)
        return y

    for y in run_ranks(P, body):
        np.testing.assert_array_equal(y, np.full(8, P - 1, np.float32))


def test_estimate():
    (c,) = sc.local_group(1)
    try:
        _, pick = c.estimate("broadcast", 1000)
        assert pick in ("binomial", "scatter_allgather")
    finally:
        c.close()
    import sparcoll.model as m

    cm = m.CostModel(None, transport="mpi", nranks=8)
    assert cm.estimate("broadcast", 16)[1] == "binomial"
    assert cm.estimate("broadcast", 1 << 24)[1] == "scatter_allgather"
    with pytest.raises(sc.InvalidArgumentError, match="not available for broadcast"):
        cm.estimate("broadcast", 16, algo="ring")
