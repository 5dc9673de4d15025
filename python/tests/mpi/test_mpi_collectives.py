"""Every collective on numpy arrays across MPI ranks (Communicator.from_mpi),
checked against numpy references computed from every rank's known data."""

import numpy as np
import pytest

import sparcoll as sc
from helpers import rank_data, reference


def test_rank_and_size(comm, world):
    assert (comm.rank, comm.size, comm.transport, comm.is_device) == (world.Get_rank(), world.Get_size(), "mpi", False)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float16", "float32", "float64", "uint8"])
@pytest.mark.parametrize("op", ["sum", "max", "min", "avg", "prod"])
def test_allreduce(comm, dtype, op):
    kind = "prod" if op == "prod" else ("positive" if dtype == "uint8" else "mixed")
    x = rank_data(comm.rank, 1001, dtype, kind)
    y = comm.allreduce(x, op=op)
    want = reference([rank_data(r, 1001, dtype, kind) for r in range(comm.size)], op)
    if op == "avg" and dtype.startswith("float"):
        np.testing.assert_allclose(y, want, rtol=1e-3 if dtype == "float16" else 1e-6)
    else:
        np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("algo", ["auto", "ring", "rabenseifner", "recdbl", "native"])
def test_allreduce_algos_bit_identical(comm, world, algo):
    x = rank_data(comm.rank, 100_003, "float32") / 7  # non-integer values: rounding differs by order
    y = comm.allreduce(x, algo=algo)
    ys = world.allgather(y.tobytes())
    assert all(b == ys[0] for b in ys)  # every rank holds the same bits
    np.testing.assert_allclose(y, sum(rank_data(r, 100_003, "float32") / 7 for r in range(comm.size)),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("algo", ["auto", "ring", "rabenseifner", "native"])
def test_reduce_scatter(comm, algo):
    P, m = comm.size, 129
    y = comm.reduce_scatter(rank_data(comm.rank, P * m, "int64"), algo=algo)
    full = sum(rank_data(r, P * m, "int64") for r in range(P))
    np.testing.assert_array_equal(y, full[comm.rank * m:(comm.rank + 1) * m])


@pytest.mark.parametrize("algo", ["auto", "ring", "recdbl", "native"])
def test_allgather(comm, algo):
    y = comm.allgather(rank_data(comm.rank, 77, "float64"), algo=algo)
    np.testing.assert_array_equal(y, np.concatenate([rank_data(r, 77, "float64") for r in range(comm.size)]))


def test_sub_communicator(world):
    sub = world.Split(color=world.Get_rank() % 2, key=-world.Get_rank())  # reversed order inside each half
    c = sc.Communicator.from_mpi(sub, timeout=60)
    assert (c.rank, c.size) == (sub.Get_rank(), sub.Get_size())
    y = c.allgather(np.array([world.Get_rank()], np.int32))
    np.testing.assert_array_equal(y, sub.allgather(world.Get_rank()))
    c.close()
    sub.Free()


def test_stats_ring(comm):
    P, n = comm.size, 4096 * comm.size
    comm.reset_stats()
    comm.allreduce(np.ones(n, np.float32), algo="ring")
    s = comm.stats()
    assert s["bytes_sent"] == s["bytes_recv"] == 2 * (P - 1) * (n // P) * 4


def _sparse_input(rank, dim, nnz, seed=0):
    rng = np.random.default_rng(seed * 1000 + rank)
    idx = np.sort(rng.choice(dim, size=nnz, replace=False)).astype(np.uint32)
    val = rng.integers(-8, 9, size=nnz).astype(np.float32)
    return idx, val


def _dense_of(idx, val, dim):
    d = np.zeros(dim, val.dtype)
    d[idx.astype(np.int64)] = val
    return d


SPARSE_ALGOS = ["auto", "ssar_recdbl", "ssar_split_allgather", "dsar_split_allgather", "dsar_early_switch", "dense"]


@pytest.mark.parametrize("algo", SPARSE_ALGOS)
@pytest.mark.parametrize("dim,nnz", [(1000, 10), (5000, 800), (64, 64)])
def test_sparse_allreduce(comm, algo, dim, nnz):
    idx, val = _sparse_input(comm.rank, dim, nnz)
    y = comm.sparse_allreduce(idx, val, dim, algo=algo)
    want = sum(_dense_of(*_sparse_input(r, dim, nnz), dim) for r in range(comm.size))
    np.testing.assert_array_equal(y, want)
    a = comm.sparse_allreduce(idx.astype(np.int64), val, dim, op="avg", algo=algo)
    np.testing.assert_allclose(a, want / comm.size, rtol=1e-6)


@pytest.mark.parametrize("algo", SPARSE_ALGOS)
def test_sparse_allreduce_sparse_result(comm, algo):
    dim, nnz = 100_000, 50
    idx, val = _sparse_input(comm.rank, dim, nnz, seed=1)
    res = comm.sparse_allreduce_sparse(idx, val, dim, algo=algo)
    want = sum(_dense_of(*_sparse_input(r, dim, nnz, seed=1), dim) for r in range(comm.size))
    if res.is_dense:
        np.testing.assert_array_equal(res.values, want)
    else:
        assert np.all(np.diff(res.indices.astype(np.int64)) > 0)
        np.testing.assert_array_equal(_dense_of(res.indices, res.values, dim), want)
    assert res.algo in SPARSE_ALGOS


def test_sparse_allreduce_errors_on_every_rank(comm):
    idx = np.array([3, 1], np.uint32)  # unsorted on every rank
    with pytest.raises(sc.InvalidArgumentError):
        comm.sparse_allreduce(idx, np.ones(2, np.float32), 10)
    # still usable afterwards
    y = comm.sparse_allreduce(np.array([comm.rank], np.uint32), np.ones(1, np.float32), comm.size)
    np.testing.assert_array_equal(y, np.ones(comm.size, np.float32))


DSOP_ALGOS = ["auto", "allgather", "allreduce", "allreduce_ring", "g_rabenseifner", "all_scatter"]


@pytest.mark.parametrize("algo", DSOP_ALGOS)
@pytest.mark.parametrize("n,m", [(7, 5), (64, 33)])
def test_dsop(comm, algo, n, m):
    a, b = rank_data(comm.rank, n, "float64"), rank_data(comm.rank + 7, m, "float64")
    G = comm.dsop(a, b, algo=algo)
    want = sum(np.outer(rank_data(r, n, "float64"), rank_data(r + 7, m, "float64")) for r in range(comm.size))
    assert G.shape == (n, m)
    np.testing.assert_array_equal(G, want)


@pytest.mark.parametrize("algo", ["auto", "allgather", "g_rabenseifner"])
def test_dsop_sparse(comm, algo):
    n, m = 50, 40

    def inputs(r):
        ai, av = _sparse_input(r, n, 6, seed=2)
        bi, bv = _sparse_input(r, m, 4, seed=3)
        return ai.astype(np.uint64), av, bi.astype(np.int64), bv

    ai, av, bi, bv = inputs(comm.rank)
    G = comm.dsop_sparse(ai, av, n, bi, bv, m, algo=algo)
    want = sum(np.outer(_dense_of(a, x, n), _dense_of(b, y, m)) for a, x, b, y in map(inputs, range(comm.size)))
    np.testing.assert_array_equal(G, want)


def test_nccl_needs_cuda_build(world):
    if sc.features["nccl"]:
        pytest.skip("NCCL build: covered by the GPU tests")
    with pytest.raises(sc.InvalidUsageError, match="no nccl transport"):
        sc.Communicator.from_mpi(world, transport="nccl")
