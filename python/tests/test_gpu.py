"""CUDA arrays (torch CUDA tensors, cupy, __cuda_array_interface__) on device
communicators, and CPU/GPU agreement of top-k. Skipped without a GPU or with
a CPU-only build of sparcoll (pip builds default to SPARCOLL_CUDA=OFF: build
with SPARCOLL_CUDA=ON to run these)."""

import numpy as np
import pytest

import sparcoll as sc
from helpers import gpu_count, rank_data, requires_gpu, run_ranks

pytestmark = [pytest.mark.gpu, requires_gpu]


def _devices(P):
    return [r % gpu_count() for r in range(P)]


@pytest.mark.parametrize("P", [1, 2, 3])
@pytest.mark.parametrize("algo", ["auto", "ring", "rabenseifner", "recdbl"])
def test_torch_cuda_dense(P, algo):
    import torch

    def body(c):
        dev = torch.device("cuda", _devices(P)[c.rank])
        with torch.cuda.device(dev):
            x = torch.from_numpy(rank_data(c.rank, 10_001, "float32")).to(dev)
            y = c.allreduce(x, algo=algo)
            rs = c.reduce_scatter(x[:9996])  # divisible by P = 1, 2, 3
            ag = c.allgather(x[:5])
            torch.cuda.current_stream().synchronize()
            return y.cpu(), rs.cpu(), ag.cpu(), y.device

    outs = run_ranks(P, body, devices=_devices(P))
    full = sum(rank_data(r, 10_001, "float32") for r in range(P))
    for r, (y, rs, ag, dev) in enumerate(outs):
        assert dev.type == "cuda"
        np.testing.assert_array_equal(y.numpy(), full)
        m = 9996 // P
        np.testing.assert_array_equal(rs.numpy(), full[r * m:(r + 1) * m])
        np.testing.assert_array_equal(ag.numpy(), np.concatenate([rank_data(q, 5, "float32") for q in range(P)]))


def test_torch_cuda_on_user_stream():
    import torch

    def body(c):
        dev = torch.device("cuda", _devices(2)[c.rank])
        with torch.cuda.device(dev):
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                x = torch.full((1 << 20,), float(c.rank + 1), device=dev)
                c.allreduce(x, out=x)  # enqueued on s (the current stream)
            s.synchronize()
            return x.cpu()

    for x in run_ranks(2, body, devices=_devices(2)):
        assert torch_all_equal(x, 3.0)


def torch_all_equal(t, v):
    return bool((t == v).all())


def test_host_array_on_device_comm_rejected():
    c = sc.local_group(1, devices=[0])[0]
    with pytest.raises(sc.InvalidArgumentError, match="host memory"):
        c.allreduce(np.zeros(4, np.float32))
    c.close()


def test_cupy_arrays():
    cp = pytest.importorskip("cupy")

    def body(c):
        with cp.cuda.Device(_devices(2)[c.rank]):
            x = cp.asarray(rank_data(c.rank, 1000, "float64"))
            y = c.allreduce(x)
            cp.cuda.get_current_stream().synchronize()
            return type(y), cp.asnumpy(y)

    for kind, y in run_ranks(2, body, devices=_devices(2)):
        assert kind is cp.ndarray
        np.testing.assert_array_equal(y, sum(rank_data(r, 1000, "float64") for r in range(2)))


@pytest.mark.parametrize("method", ["approx", "approx_at_most", "exact", "threshold"])
def test_topk_gpu_matches_cpu(method):
    """The same (seed, step, input) selects bit-for-bit the same entries on CPU and GPU."""
    import torch

    x = torch.randn(100_000, generator=torch.Generator().manual_seed(0))
    ci, cv = sc.topk(x, 1000, method=method, seed=3, step=2)
    gi, gv = sc.topk(x.cuda(), 1000, method=method, seed=3, step=2)
    torch.cuda.synchronize()
    assert torch.equal(ci, gi.cpu()) and torch.equal(cv, gv.cpu())


def test_topk_feedback_gpu_residual():
    import torch

    fb = sc.TopkFeedback(50_000, "float32", device=0)
    g = torch.randn(50_000, device="cuda:0")
    idx, val = fb.select(g, 500, method="exact")
    res = fb.residual()
    torch.cuda.synchronize()
    assert res.device.type == "cuda" and bool((res[idx] == 0).all())
    assert torch.equal(val, g[idx])


def test_sparse_allreduce_torch_cuda():
    import torch

    def body(c):
        dev = torch.device("cuda", _devices(2)[c.rank])
        with torch.cuda.device(dev):
            idx = torch.tensor([c.rank, 7], dtype=torch.int32, device=dev)
            val = torch.tensor([1.0, 2.0], device=dev)
            d = c.sparse_allreduce(idx, val, 10)
            torch.cuda.current_stream().synchronize()
            return d.cpu()

    for d in run_ranks(2, body, devices=_devices(2)):
        assert d.tolist() == [1, 1, 0, 0, 0, 0, 0, 4, 0, 0]
