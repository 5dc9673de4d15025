"""NCCL-style communicators without MPI: sparcoll.get_unique_id,
Communicator.from_unique_id, and from_torch(transport="nccl"), whose id travels
over the torch.distributed group. The CPU tests check the argument errors and
the clear failures of a build without NCCL or a machine without a GPU; the GPU
tests (marked gpu) run the dense collectives on communicators made this way."""

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import sparcoll as sc
from helpers import gpu_count, rank_data, requires_feature, requires_gpu, requires_torch

HAVE_NCCL = sc.features["nccl"]
FAKE_ID = b"\x5a" * 128  # well-formed; the argument checks run before NCCL sees it


def test_get_unique_id():
    if not HAVE_NCCL:
        with pytest.raises(sc.InvalidUsageError, match="nccl transport"):
            sc.get_unique_id()
        return
    a, b = sc.get_unique_id(), sc.get_unique_id()  # needs no GPU
    assert isinstance(a, bytes) and len(a) == 128 and any(a)
    assert a != b


def test_from_unique_id_bad_arguments():
    if not HAVE_NCCL:
        with pytest.raises(sc.InvalidUsageError, match="lacks"):
            sc.Communicator.from_unique_id(1, FAKE_ID, 0)
        return
    with pytest.raises(TypeError, match="nranks"):
        sc.Communicator.from_unique_id("1", FAKE_ID, 0)
    with pytest.raises(TypeError, match="rank"):
        sc.Communicator.from_unique_id(1, FAKE_ID, 0.0)
    with pytest.raises(TypeError, match="device"):
        sc.Communicator.from_unique_id(1, FAKE_ID, 0, device=None)
    with pytest.raises(TypeError, match="unique_id"):
        sc.Communicator.from_unique_id(1, "not bytes", 0)
    with pytest.raises(sc.InvalidArgumentError, match="nranks"):
        sc.Communicator.from_unique_id(0, FAKE_ID, 0)
    for n, r in [(1, 1), (2, -1), (4, 9)]:
        with pytest.raises(sc.InvalidArgumentError, match="outside"):
            sc.Communicator.from_unique_id(n, FAKE_ID, r)
    with pytest.raises(sc.InvalidArgumentError, match="128 bytes"):
        sc.Communicator.from_unique_id(1, FAKE_ID[:-1], 0)
    with pytest.raises(sc.InvalidArgumentError, match="all zeros"):
        sc.Communicator.from_unique_id(1, bytes(128), 0)
    with pytest.raises(sc.InvalidArgumentError, match="timeout"):
        sc.Communicator.from_unique_id(1, FAKE_ID, 0, timeout=-1)
    with pytest.raises(sc.InvalidArgumentError, match="algorithm"):
        sc.Communicator.from_unique_id(1, FAKE_ID, 0, algo="fastest")


@requires_feature("nccl")
def test_from_unique_id_without_gpu():
    if gpu_count() > 0:
        pytest.skip("a CUDA device is present")
    t0 = time.monotonic()
    with pytest.raises(sc.CudaError, match="needs a CUDA device"):
        sc.Communicator.from_unique_id(1, bytearray(sc.get_unique_id()), 0, device=0)
    assert time.monotonic() - t0 < 20


@pytest.fixture
def world_of_one(tmp_path):
    """torch.distributed with gloo, this process as the only rank (no MPI)."""
    import torch.distributed as dist

    if dist.is_initialized():
        pytest.skip("torch.distributed is already initialized in this process")
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    yield dist
    dist.destroy_process_group()


@requires_torch
def test_from_torch_nccl_needs_no_mpi(world_of_one):
    """The id is made on rank 0 and broadcast through the group; no mpirun, no mpi4py."""
    from sparcoll.torch import _unique_id_of_group

    if not HAVE_NCCL:
        with pytest.raises(sc.InvalidUsageError, match="nccl transport"):
            sc.Communicator.from_torch(transport="nccl")
        return
    size, rank, uid = _unique_id_of_group()
    assert (size, rank) == (1, 0) and isinstance(uid, bytes) and len(uid) == 128
    if gpu_count() == 0:
        with pytest.raises(sc.CudaError, match="CUDA device"):
            sc.Communicator.from_torch(transport="nccl", timeout=30)
        return
    import torch

    torch.cuda.set_device(0)
    with sc.Communicator.from_torch(transport="nccl", timeout=30) as c:
        assert (c.transport, c.rank, c.size, c.is_device, c.device) == ("nccl", 0, 1, True, 0)
        x = torch.arange(1000, dtype=torch.int32, device="cuda")
        assert torch.equal(c.allreduce(x).cpu(), x.cpu())


# ---------------------------------------------------------------------------- GPU
def gpu_test(f):
    for mark in (pytest.mark.gpu, requires_gpu, requires_feature("nccl"), requires_torch):
        f = mark(f)
    return f


def _dense_checks(c, P, dev):
    import torch

    with torch.cuda.device(dev):
        x = torch.from_numpy(rank_data(c.rank, 4096 * P, "int32")).cuda(dev)
        full = sum(rank_data(r, 4096 * P, "int32") for r in range(P))
        out = {}
        for algo in ("auto", "ring", "rabenseifner", "recdbl", "native"):
            out[algo] = c.allreduce(x, algo=algo).cpu().numpy()
        rs = c.reduce_scatter(x, algo="ring").cpu().numpy()
        ag = c.allgather(x[:7], algo="recdbl").cpu().numpy()
        c.barrier()
    for algo, y in out.items():
        np.testing.assert_array_equal(y, full, err_msg=algo)
    np.testing.assert_array_equal(rs, full[c.rank * 4096:(c.rank + 1) * 4096])
    np.testing.assert_array_equal(ag, np.concatenate([rank_data(r, 4096 * P, "int32")[:7] for r in range(P)]))


@gpu_test
@pytest.mark.parametrize("device", [-1, 0])
def test_one_rank_from_unique_id(device):
    import torch

    torch.cuda.set_device(0)  # device -1 means this thread's current device
    with sc.Communicator.from_unique_id(1, sc.get_unique_id(), 0, device=device, timeout=60) as c:
        assert (c.transport, c.rank, c.size, c.is_device) == ("nccl", 0, 1, True)
        _dense_checks(c, 1, 0)


@gpu_test
def test_ranks_on_several_gpus():
    """P ranks as threads of this process, one GPU each (NCCL needs distinct GPUs)."""
    P = min(gpu_count(), 4)
    if P < 2:
        pytest.skip("needs 2 CUDA devices")
    uid = sc.get_unique_id()

    def rank(r):
        with sc.Communicator.from_unique_id(P, uid, r, device=r, timeout=60) as c:
            _dense_checks(c, P, r)

    with ThreadPoolExecutor(P) as ex:
        for f in [ex.submit(rank, r) for r in range(P)]:
            f.result(timeout=300)


@gpu_test
def test_missing_peer_times_out():
    t0 = time.monotonic()
    with pytest.raises(sc.CollectiveTimeoutError, match="deadline"):
        sc.Communicator.from_unique_id(2, sc.get_unique_id(), 0, device=0, timeout=2)
    assert 1.5 < time.monotonic() - t0 < 60
