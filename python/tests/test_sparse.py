"""Communicator.sparse_allreduce / sparse_allreduce_sparse across the ranks of
a local group (threads), against numpy references; errors reported on every rank."""

import numpy as np
import pytest

import sparcoll as sc
from helpers import requires_torch, run_ranks

ALGOS = ["auto", "ssar_recdbl", "ssar_split_allgather", "dsar_split_allgather", "dsar_early_switch", "dense"]


def sparse_input(rank, dim, nnz, seed=0, itype=np.uint32, vtype=np.float32):
    rng = np.random.default_rng(seed * 1000 + rank)
    idx = np.sort(rng.choice(dim, size=min(nnz, dim), replace=False)).astype(itype)
    val = rng.integers(-8, 9, size=idx.size).astype(vtype)
    return idx, val


def dense_of(idx, val, dim):
    d = np.zeros(dim, val.dtype)
    d[idx.astype(np.int64)] = val
    return d


@pytest.mark.parametrize("P", [1, 2, 3, 4])
@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("dim,nnz", [(2000, 20), (3000, 900), (16, 16)])
def test_sparse_allreduce(P, algo, dim, nnz):
    def body(c):
        idx, val = sparse_input(c.rank, dim, nnz)
        return c.sparse_allreduce(idx, val, dim, algo=algo), c.sparse_allreduce(idx, val, dim, op="avg", algo=algo)

    outs = run_ranks(P, body)
    want = sum(dense_of(*sparse_input(r, dim, nnz), dim) for r in range(P))
    for s, a in outs:
        assert s.shape == (dim,) and s.dtype == np.float32
        np.testing.assert_array_equal(s, want)
        np.testing.assert_allclose(a, want / P, rtol=1e-6)
        assert s.tobytes() == outs[0][0].tobytes()


@pytest.mark.parametrize("itype", [np.uint32, np.int32, np.uint64, np.int64])
@pytest.mark.parametrize("vtype", [np.float64, np.int32, np.float16])
def test_index_and_value_types(itype, vtype):
    dim = 500

    def body(c):
        return c.sparse_allreduce(*sparse_input(c.rank, dim, 30, 1, itype, vtype), dim)

    want = sum(dense_of(*sparse_input(r, dim, 30, 1, itype, vtype), dim) for r in range(3))
    for out in run_ranks(3, body):
        assert out.dtype == vtype
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("algo", ALGOS)
def test_sparse_result(algo):
    dim, P = 50_000, 4

    def body(c):
        return c.sparse_allreduce_sparse(*sparse_input(c.rank, dim, 40, 2), dim, algo=algo)

    want = sum(dense_of(*sparse_input(r, dim, 40, 2), dim) for r in range(P))
    for res in run_ranks(P, body):
        assert isinstance(res, sc.SparseReduction)
        if res.is_dense:
            assert res.indices is None
            np.testing.assert_array_equal(res.values, want)
        else:
            assert np.all(np.diff(res.indices.astype(np.int64)) > 0)
            np.testing.assert_array_equal(dense_of(res.indices, res.values, dim), want)


def test_sort_input_sums_duplicates():
    def body(c):
        idx = np.array([7, 2, 7, 0], np.uint32)
        val = np.array([1, 2, 3, 4], np.float32)
        return c.sparse_allreduce(idx, val, 8, sort_input=True)

    for out in run_ranks(2, body):
        np.testing.assert_array_equal(out, [8, 0, 4, 0, 0, 0, 0, 8])


def test_out_and_empty_contributions():
    def body(c):
        out = np.full(10, -1.0, np.float32)
        idx = np.array([c.rank], np.uint32) if c.rank == 0 else np.zeros(0, np.uint32)
        val = np.ones(idx.size, np.float32)
        res = c.sparse_allreduce(idx, val, 10, out=out)
        return res is out, out

    for same, out in run_ranks(3, body):
        assert same
        np.testing.assert_array_equal(out, np.eye(10, dtype=np.float32)[0])


@requires_torch
def test_torch_tensors():
    import torch

    def body(c):
        idx = torch.tensor([c.rank, 5], dtype=torch.int64)
        val = torch.tensor([1.0, 2.0])
        d = c.sparse_allreduce(idx, val, 8)
        s = c.sparse_allreduce_sparse(idx.to(torch.int32), val, 8)
        return d, s

    for d, s in run_ranks(2, body):
        assert isinstance(d, torch.Tensor)
        assert d.tolist() == [1, 1, 0, 0, 0, 4, 0, 0]
        dense = torch.zeros(8)
        if s.is_dense:
            dense = s.values
        else:
            assert isinstance(s.indices, torch.Tensor)
            dense[s.indices.long()] = s.values
        assert dense.tolist() == [1, 1, 0, 0, 0, 4, 0, 0]


def test_algo_for():
    def body(c):
        return (c.sparse_algo_for([10] * c.size, 10_000_000), c.sparse_algo_for([900_000] * c.size, 1_000_000))

    for sparse_pick, dense_pick in run_ranks(4, body):
        assert sparse_pick in ALGOS and sparse_pick != "dense"
        assert dense_pick in ALGOS


def test_errors_on_every_rank():
    def body(c):
        errs = []
        with pytest.raises(sc.InvalidArgumentError) as e:  # unsorted indices on rank 1 only
            idx = np.array([3, 1] if c.rank == 1 else [1, 3], np.uint32)
            c.sparse_allreduce(idx, np.ones(2, np.float32), 10)
        errs.append(e.value.code_name)
        with pytest.raises(sc.InvalidArgumentError):  # index >= dim
            c.sparse_allreduce(np.array([10], np.uint32), np.ones(1, np.float32), 10)
        with pytest.raises(sc.InvalidArgumentError):  # dims differ across ranks
            c.sparse_allreduce(np.array([0], np.uint32), np.ones(1, np.float32), 10 + c.rank)
        with pytest.raises(sc.InvalidArgumentError):  # max is not a sparse op
            c.sparse_allreduce(np.array([0], np.uint32), np.ones(1, np.float32), 10, op="max")
        # the communicator is still usable
        out = c.sparse_allreduce(np.array([c.rank], np.uint32), np.ones(1, np.float32), 3)
        return errs, out

    for errs, out in run_ranks(3, body):
        assert errs == ["scInvalidArgument"]
        np.testing.assert_array_equal(out, [1, 1, 1])


def test_python_level_errors():
    c = sc.local_group(1)[0]
    with pytest.raises(sc.InvalidArgumentError, match="2 indices for 3 values"):
        c.sparse_allreduce(np.zeros(2, np.uint32), np.zeros(3, np.float32), 10)
    with pytest.raises(sc.InvalidArgumentError,
                       match=r"indices: dtype float32 is not supported \(supported: uint32, int32, uint64, int64\)"):
        c.sparse_allreduce(np.zeros(2, np.float32), np.zeros(2, np.float32), 10)
    with pytest.raises(sc.InvalidArgumentError, match="unknown sparse algorithm"):
        c.sparse_allreduce(np.zeros(1, np.uint32), np.zeros(1, np.float32), 10, algo="ring")
    with pytest.raises(sc.InvalidArgumentError, match="dim"):
        c.sparse_allreduce(np.zeros(1, np.uint32), np.zeros(1, np.float32), -1)
    with pytest.raises(sc.InvalidArgumentError, match="expected 10"):
        c.sparse_allreduce(np.zeros(1, np.uint32), np.zeros(1, np.float32), 10, out=np.zeros(9, np.float32))
    c.close()
