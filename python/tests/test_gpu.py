"""CUDA arrays (torch CUDA tensors, cupy, __cuda_array_interface__) on device
communicators, and CPU/GPU agreement of top-k. Skipped without a GPU or with
a CPU-only build of sparcoll (pip builds default to SPARCOLL_CUDA=OFF: build
with SPARCOLL_CUDA=ON to run these)."""

import numpy as np
import pytest

import sparcoll as sc
from helpers import gpu_count, rank_data, reference, requires_gpu, run_ranks

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


@pytest.mark.parametrize("method", ["bracket", "approx", "approx_at_most", "exact", "threshold"])
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


# GPU time a side stream is held busy before the data a call reads is written
# there (torch.cuda._sleep counts clock cycles: about a quarter second).
_SLEEP_CYCLES = 500_000_000


@pytest.mark.parametrize("how", ["stream_argument", "current_stream"])
def test_work_runs_on_the_given_stream(how):
    """The input is written on a side stream after a long sleep, then the call
    is given that stream (stream= or as torch's current stream). The call is
    stream-ordered: it returns while the side stream still sleeps (an event
    recorded after it is pending), and it reads the input only after the
    write (run on another stream it would read the zeros written before)."""
    import torch

    n = 1 << 22

    def body(c):
        dev = torch.device("cuda", _devices(2)[c.rank])
        with torch.cuda.device(dev):
            side = torch.cuda.Stream(device=dev)
            x = torch.zeros(n, device=dev)
            torch.cuda.synchronize(dev)
            with torch.cuda.stream(side):
                torch.cuda._sleep(_SLEEP_CYCLES)
                x.fill_(float(c.rank + 1))
            if how == "stream_argument":
                y = c.allreduce(x, stream=side)
            else:
                with torch.cuda.stream(side):
                    y = c.allreduce(x)
            after = torch.cuda.Event()
            after.record(side)
            pending = not after.query()
            side.synchronize()
            return pending, y.cpu()

    for pending, y in run_ranks(2, body, devices=_devices(2)):
        assert pending, "the call waited for its stream instead of enqueueing on it"
        assert torch_all_equal(y, 3.0)


def test_growing_sizes_on_a_side_stream():
    """Calls of growing sizes queued on a torch side stream (non-blocking) behind
    a sleep, without a host wait between them: the communicator's scratch
    grows while earlier calls may still be pending. Every result is checked."""
    import torch

    P = 3

    def body(c):
        dev = torch.device("cuda", _devices(P)[c.rank])
        outs = []
        with torch.cuda.device(dev):
            side = torch.cuda.Stream(device=dev)
            with torch.cuda.stream(side):
                for n in (999, 70_002, (1 << 20) + 2, (1 << 22) + 1):
                    x = torch.from_numpy(rank_data(c.rank, n, "float32")).to(dev)
                    idx = torch.arange(c.rank, n, 7, dtype=torch.int64, device=dev)
                    torch.cuda._sleep(_SLEEP_CYCLES // 10)
                    step = {"n": n}
                    for algo in ("ring", "rabenseifner", "recdbl"):
                        step["allreduce", algo] = c.allreduce(x, algo=algo)
                    for algo in ("ring", "rabenseifner"):
                        step["reduce_scatter", algo] = c.reduce_scatter(x, algo=algo)
                    for algo in ("ring", "recdbl"):
                        step["allgather", algo] = c.allgather(x[:1000 + n // 100], algo=algo)
                    for algo in ("binomial", "scatter_allgather"):
                        step["broadcast", algo] = c.broadcast(x.clone(), root=P - 1, algo=algo)
                    step["sparse"] = c.sparse_allreduce(idx, x[idx], n)
                    step["topk"] = sc.topk(x, n // 100 + 1, method="approx", seed=1, step=n)
                    outs.append(step)
            side.synchronize()
        return [{k: (tuple(t.cpu() for t in v) if isinstance(v, tuple) else v.cpu() if hasattr(v, "cpu") else v)
                 for k, v in step.items()} for step in outs]

    results = run_ranks(P, body, devices=_devices(P))
    for r, steps in enumerate(results):
        for step in steps:
            n = step["n"]
            data = [rank_data(q, n, "float32") for q in range(P)]
            full = sum(data)
            for algo in ("ring", "rabenseifner", "recdbl"):
                np.testing.assert_array_equal(step["allreduce", algo].numpy(), full, err_msg=f"allreduce {algo} n={n}")
            rows = np.array_split(np.arange(n), P)[r]
            for algo in ("ring", "rabenseifner"):
                np.testing.assert_array_equal(step["reduce_scatter", algo].numpy(), full[rows],
                                              err_msg=f"reduce_scatter {algo} n={n}")
            m = 1000 + n // 100
            for algo in ("ring", "recdbl"):
                np.testing.assert_array_equal(step["allgather", algo].numpy(), np.concatenate([d[:m] for d in data]),
                                              err_msg=f"allgather {algo} n={n}")
            for algo in ("binomial", "scatter_allgather"):
                np.testing.assert_array_equal(step["broadcast", algo].numpy(), data[P - 1],
                                              err_msg=f"broadcast {algo} n={n}")
            want = np.zeros(n, np.float32)
            for q in range(P):
                want[np.arange(q, n, 7)] += data[q][np.arange(q, n, 7)]
            np.testing.assert_array_equal(step["sparse"].numpy(), want, err_msg=f"sparse n={n}")
            ci, cv = sc.topk(torch.from_numpy(data[r]), n // 100 + 1, method="approx", seed=1, step=n)
            gi, gv = step["topk"]
            assert torch.equal(ci, gi) and torch.equal(cv, gv), f"topk n={n}"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_tensors(dtype):
    """float16 / bfloat16 CUDA tensors (integer values: every sum is exact)
    through allreduce, reduce_scatter, allgather, broadcast, the sparse
    allreduce, DSOP (float32 result) and top-k (CPU and GPU agree)."""
    import torch

    tdt = getattr(torch, dtype)
    n, P = 10_002, 2

    def body(c):
        dev = torch.device("cuda", _devices(P)[c.rank])
        with torch.cuda.device(dev):
            x = torch.from_numpy(rank_data(c.rank, n, "float32")).to(dev, tdt)
            y = c.allreduce(x)
            rs = c.reduce_scatter(x, op="max")
            ag = c.allgather(x[:7])
            bc = c.broadcast(x.clone(), root=1)
            idx = torch.arange(c.rank, n, 5, dtype=torch.int32, device=dev)
            sp = c.sparse_allreduce(idx, x[idx.long()], n)
            G = c.dsop(x[:40], x[100:130])
            torch.cuda.current_stream().synchronize()
            return [t.cpu() for t in (y, rs, ag, bc, sp, G)]

    data = [rank_data(r, n, "float32") for r in range(P)]
    for r, (y, rs, ag, bc, sp, G) in enumerate(run_ranks(P, body, devices=_devices(P))):
        assert y.dtype == tdt and G.dtype == torch.float32
        np.testing.assert_array_equal(y.float().numpy(), sum(data))
        np.testing.assert_array_equal(rs.float().numpy(), np.maximum(*data)[r * n // P:(r + 1) * n // P])
        np.testing.assert_array_equal(ag.float().numpy(), np.concatenate([d[:7] for d in data]))
        np.testing.assert_array_equal(bc.float().numpy(), data[1])
        want = np.zeros(n, np.float32)
        for q in range(P):
            want[q::5] += data[q][q::5]
        np.testing.assert_array_equal(sp.float().numpy(), want)
        np.testing.assert_array_equal(G.numpy(), sum(np.outer(d[:40], d[100:130]) for d in data))
    x = torch.randn(50_000, generator=torch.Generator().manual_seed(1)).to(tdt)
    for method in ("approx", "exact"):
        ci, cv = sc.topk(x, 500, method=method, seed=2)
        gi, gv = sc.topk(x.cuda(), 500, method=method, seed=2)
        torch.cuda.synchronize()
        assert torch.equal(ci, gi.cpu()) and torch.equal(cv.view(torch.int16), gv.cpu().view(torch.int16))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_offset_views(dtype):
    """x[1:] starts one element past the allocation (misaligned for 16-byte
    accesses): inputs and outputs that are such views give the same results."""
    import torch

    tdt = getattr(torch, dtype)
    n, P = 40_001, 2

    def body(c):
        dev = torch.device("cuda", _devices(P)[c.rank])
        with torch.cuda.device(dev):
            base = torch.from_numpy(rank_data(c.rank, n + 1, "float32")).to(dev, tdt)
            x = base[1:]
            out = torch.full((n + 1,), -1.0, device=dev, dtype=tdt)
            c.allreduce(x, out=out[1:], algo="ring")
            rs = c.reduce_scatter(x[: n - 1], algo="rabenseifner")
            ag = c.allgather(x[:5])
            positions = torch.arange(c.rank, n, 3, dtype=torch.int64, device=dev)
            values = x[positions]
            sp = c.sparse_allreduce(positions[1:], values[1:], n)  # both arrays offset views
            G = c.dsop(x[:30], x[31:50], algo="allreduce_ring")
            ti, tv = sc.topk(x, 400, method="approx", seed=4)
            torch.cuda.current_stream().synchronize()
            return [t.cpu() for t in (out, rs, ag, sp, G, ti, tv)]

    data = [rank_data(r, n + 1, "float32")[1:] for r in range(P)]
    for r, (out, rs, ag, sp, G, ti, tv) in enumerate(run_ranks(P, body, devices=_devices(P))):
        assert float(out[0]) == -1.0, "the element before the output view was written"
        np.testing.assert_array_equal(out[1:].float().numpy(), sum(data))
        h = (n - 1) // P
        np.testing.assert_array_equal(rs.float().numpy(), sum(d[: n - 1] for d in data)[r * h:(r + 1) * h])
        np.testing.assert_array_equal(ag.float().numpy(), np.concatenate([d[:5] for d in data]))
        want = np.zeros(n, np.float32)
        for q in range(P):
            pos = np.arange(q, n, 3)[1:]
            want[pos] += data[q][pos]
        np.testing.assert_array_equal(sp.float().numpy(), want)
        np.testing.assert_array_equal(G.numpy(), sum(np.outer(d[:30], d[31:50]) for d in data))
        ci, cv = sc.topk(torch.from_numpy(rank_data(r, n + 1, "float32")).to(tdt)[1:], 400, method="approx", seed=4)
        bits = torch.int16 if dtype == "float16" else torch.int32
        assert torch.equal(ci, ti) and torch.equal(cv.view(bits), tv.view(bits))


@pytest.mark.parametrize("P", [2, 3])
@pytest.mark.parametrize("algo", ["auto", "allgather", "allreduce", "allreduce_ring", "g_rabenseifner", "all_scatter"])
def test_dsop_cuda_tensors(P, algo):
    """DSOP on CUDA tensors (float32 and float64), and dsop_sparse with int64
    CUDA index tensors, against numpy's sum of outer products."""
    import torch

    n, m = 257, 130

    def body(c):
        dev = torch.device("cuda", _devices(P)[c.rank])
        with torch.cuda.device(dev):
            a = torch.from_numpy(rank_data(c.rank, n, "float64")).to(dev)
            b = torch.from_numpy(rank_data(c.rank + 5, m, "float64")).to(dev)
            G64 = c.dsop(a, b, algo=algo)
            out = torch.empty((n, m), device=dev)
            G32 = c.dsop(a.float(), b.float(), algo=algo, out=out)
            sparse = None
            if algo in ("auto", "allgather", "g_rabenseifner"):
                ai = torch.arange(c.rank, n, 4, dtype=torch.int64, device=dev)
                bi = torch.arange(2 * c.rank, m, 3, dtype=torch.int64, device=dev)
                sparse = c.dsop_sparse(ai, a[ai], n, bi, b[bi], m, algo=algo).cpu()
            torch.cuda.current_stream().synchronize()
            return G64.cpu(), G32 is out, out.cpu(), sparse

    want = sum(np.outer(rank_data(r, n, "float64"), rank_data(r + 5, m, "float64")) for r in range(P))
    ws = np.zeros((n, m))
    for r in range(P):
        a, b = np.zeros(n), np.zeros(m)
        a[r::4] = rank_data(r, n, "float64")[r::4]
        b[2 * r::3] = rank_data(r + 5, m, "float64")[2 * r::3]
        ws += np.outer(a, b)
    outs = run_ranks(P, body, devices=_devices(P))
    for G64, same, G32, sparse in outs:
        assert same and G64.dtype == torch.float64 and G32.dtype == torch.float32
        np.testing.assert_array_equal(G64.numpy(), want)
        np.testing.assert_array_equal(G32.numpy(), want.astype(np.float32))
        if sparse is not None:
            np.testing.assert_array_equal(sparse.numpy(), ws)
    assert all(torch.equal(o[0], outs[0][0]) for o in outs)


@pytest.mark.parametrize("n", [10_000, 10_001, 3])
@pytest.mark.parametrize("op", ["sum", "avg", "max"])
def test_reduce_scatter_two_ranks(n, op):
    """reduce_scatter at P = 2 on the rows of a 2-D CUDA tensor: an even split
    (zero copy), uneven ones (padded through a scratch tensor on the call's
    stream; n = 3 gives 2 rows and 1), out of place and in place (out = this
    rank's block of x)."""
    import torch

    P = 2

    def body(c):
        dev = torch.device("cuda", _devices(P)[c.rank])
        with torch.cuda.device(dev):
            x = torch.from_numpy(rank_data(c.rank, n * 3, "float32").reshape(n, 3)).to(dev)
            rs = c.reduce_scatter(x, op=op)
            rows = np.array_split(np.arange(n), P)
            off, cnt = int(rows[c.rank][0]) if len(rows[c.rank]) else 0, len(rows[c.rank])
            y = x.clone()
            inplace = c.reduce_scatter(y, out=y[off:off + cnt], op=op)
            torch.cuda.current_stream().synchronize()
            return rs.cpu(), inplace.cpu()

    data = [rank_data(r, n * 3, "float32").reshape(n, 3) for r in range(P)]
    full = reference(data, op)
    rows = np.array_split(np.arange(n), P)
    for r, (rs, inplace) in enumerate(run_ranks(P, body, devices=_devices(P))):
        assert tuple(rs.shape) == (len(rows[r]), 3)
        np.testing.assert_array_equal(rs.numpy(), full[rows[r]])
        np.testing.assert_array_equal(inplace.numpy(), full[rows[r]])


@pytest.mark.parametrize("P", [2, 4])
def test_native_on_one_gpu_is_the_host_paths_result(P):
    """Local ranks sharing one GPU: algo="native" is the direct kernel, and gives the
    host path's bits (random floats: the fold's order shows)."""
    import torch

    rng = np.random.default_rng(3)
    data = [rng.standard_normal(30_001).astype(np.float32) for _ in range(P)]
    host = run_ranks(P, lambda c: c.allreduce(data[c.rank], algo="native"))

    def body(c):
        with torch.cuda.device(0):
            y = c.allreduce(torch.from_numpy(data[c.rank]).cuda(), algo="native")
            torch.cuda.current_stream().synchronize()
            return y.cpu().numpy()

    for d, h in zip(run_ranks(P, body, devices=[0] * P), host):
        np.testing.assert_array_equal(d, h)


def test_topk_into_static_sparse_captured_in_a_graph():
    """select_into then sparse_allreduce_static (the stream-ordered DDP step) on a CUDA
    tensor, captured with torch.cuda.graph and replayed with new gradients: each replay
    equals the eager steps of a second state fed the same gradients."""
    import torch

    n, k = 50_000, 500

    def body(c):
        dev = torch.device("cuda", 0)
        with torch.cuda.device(dev):
            graphed, eager = sc.TopkFeedback(n, "float32", 0), sc.TopkFeedback(n, "float32", 0)
            grad = torch.zeros(n, device=dev)
            idx = torch.zeros(k, dtype=torch.int32, device=dev)
            val = torch.zeros(k, device=dev)
            counts = torch.zeros(3, dtype=torch.int64, device=dev)
            status = torch.zeros(1, dtype=torch.int64, device=dev)
            out = torch.zeros(n, device=dev)
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):  # warm-up: the state's scratch is grown outside the capture
                graphed.select_into(grad, k, idx, val, counts, method="exact")
                c.sparse_allreduce_static(idx, val, n, nnz=counts[:1], op="avg", out=out, status=status)
            torch.cuda.current_stream().wait_stream(s)
            eager.select_into(grad, k, idx.clone(), val.clone(), counts.clone(), method="exact")
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                graphed.select_into(grad, k, idx, val, counts, method="exact")
                c.sparse_allreduce_static(idx, val, n, nnz=counts[:1], op="avg", out=out, status=status)
            gen = torch.Generator(device=dev).manual_seed(7 + c.rank)
            ei, ev, ec = idx.clone(), val.clone(), counts.clone()
            eout = torch.zeros_like(out)
            for _ in range(20):
                grad.copy_(torch.randn(n, device=dev, generator=gen))
                g.replay()
                eager.select_into(grad, k, ei, ev, ec, method="exact")
                c.sparse_allreduce_static(ei, ev, n, nnz=ec[:1], op="avg", out=eout, status=status)
                assert torch.equal(out, eout) and torch.equal(counts, ec)
            torch.cuda.synchronize()
            assert int(status.item()) == 0
            return torch.equal(graphed.residual(like=grad), eager.residual(like=grad))

    assert all(run_ranks(1, body, devices=[0]))
