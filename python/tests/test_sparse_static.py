"""Communicator.sparse_allreduce_static across local ranks (threads): sums in
rank order then list order, bit for bit; the count as an int or a uint64 array;
data errors raised on every rank, with the status word kept."""

import numpy as np
import pytest

import sparcoll as sc
from helpers import run_ranks


def static_input(rank, cap, dim, seed=0):
    rng = np.random.default_rng(seed * 1000 + rank)
    idx = rng.integers(0, max(1, dim // 4), size=cap).astype(np.uint32)  # unsorted, repeats
    val = (rng.integers(-1000, 1001, size=cap) / 1000.0 * 2.0 ** rng.integers(-20, 20, size=cap)).astype(np.float32)
    nnz = int(rng.integers(0, cap + 1))
    return idx, val, nnz


def reference(P, cap, dim, op):
    out, seen = np.zeros(dim, np.float32), np.zeros(dim, bool)
    for r in range(P):
        idx, val, nnz = static_input(r, cap, dim)
        for i, v in zip(idx[:nnz], val[:nnz]):
            out[i] = out[i] + v if seen[i] else v  # float32 arithmetic, in order
            seen[i] = True
    return out / np.float32(P) if op == "avg" else out


@pytest.mark.parametrize("P", [1, 2, 3, 5])
@pytest.mark.parametrize("op", ["sum", "avg"])
def test_static_matches_ordered_reference(P, op):
    cap, dim = 40, 200

    def body(c):
        idx, val, nnz = static_input(c.rank, cap, dim)
        a = c.sparse_allreduce_static(idx, val, dim, nnz, op=op)
        b = c.sparse_allreduce_static(idx, val, dim, np.array([nnz], np.uint64), op=op)
        return a, b

    want = reference(P, cap, dim, op)
    for a, b in run_ranks(P, body):
        assert a.dtype == np.float32 and a.shape == (dim,)
        assert a.tobytes() == want.tobytes() and b.tobytes() == want.tobytes()


def test_static_errors_on_every_rank():
    def body(c):
        idx = np.array([1, 2, 10 if c.rank == 1 else 3], np.uint32)
        status = np.zeros(1, np.uint64)
        with pytest.raises(sc.InvalidArgumentError, match=r"rank 1's indices\[2\] = 10 is not below dim = 10"):
            c.sparse_allreduce_static(idx, np.ones(3, np.float32), 10, status=status)
        with pytest.raises(sc.InvalidArgumentError, match="rank 1's count 4 exceeds capacity = 3"):
            c.sparse_allreduce_static(idx, np.ones(3, np.float32), 10, 4 if c.rank == 1 else 3)
        out = c.sparse_allreduce_static(np.array([0, 0], np.uint32), np.ones(2, np.float32), 3)
        return int(status[0]), out

    for word, out in run_ranks(3, body):
        assert word >> 42 == 1 and (word >> 2) & ((1 << 40) - 1) == 2 and word & 3 == 2
        np.testing.assert_array_equal(out, [6, 0, 0])


def test_static_advice_and_argument_errors():
    c = sc.local_group(1)[0]
    assert c.sparse_static_advised(16, 1 << 22) in (True, False)
    with pytest.raises(sc.InvalidArgumentError, match="at least 1"):
        c.sparse_allreduce_static(np.zeros(0, np.uint32), np.zeros(0, np.float32), 10)
    with pytest.raises(sc.InvalidArgumentError, match="2 indices for 3 values"):
        c.sparse_allreduce_static(np.zeros(2, np.uint32), np.zeros(3, np.float32), 10)
    with pytest.raises(sc.InvalidArgumentError, match="status must have 1 element"):
        c.sparse_allreduce_static(np.zeros(1, np.uint32), np.zeros(1, np.float32), 10, status=np.zeros(2, np.uint64))
    c.close()
