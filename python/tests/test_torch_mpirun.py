"""The "sparcoll" torch.distributed backend against gloo on 2 ranks, for what
one process cannot show: bool reductions (gloo's semantics: SUM is a logical
or, PRODUCT an and, BXOR a parity), DDP on a model with a bool buffer, a
non-contiguous leaf that requires grad, and the shape checks of the list and
tensor forms of all_gather / reduce_scatter. Under pytest this file launches
itself with ``mpirun -np 2``; under mpirun it runs the checks (each rank
prints "ok" at the end)."""

import os
import shutil
import subprocess
import sys

import pytest


@pytest.mark.mpi
@pytest.mark.torch
def test_torch_backend_two_ranks():
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not found")
    pytest.importorskip("mpi4py")
    pytest.importorskip("torch")
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1", OMPI_MCA_rmaps_base_oversubscribe="1",
               OMP_NUM_THREADS="1", SPARCOLL_TIMEOUT=os.environ.get("SPARCOLL_TIMEOUT", "60"))
    cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "2", sys.executable, os.path.abspath(__file__)]
    # cwd: not python/, whose source tree would shadow the installed package.
    proc = subprocess.run(cmd, cwd=os.path.dirname(os.path.abspath(__file__)), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.count("rank ok") == 2, proc.stdout[-8000:]


def _raises(fn, *pieces):
    """fn() raises; every piece is in its message. Returns the message."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the test looks at any error's message
        msg = str(e)
        assert all(p in msg for p in pieces), (pieces, msg)
        return msg
    raise AssertionError(f"no error; expected one with {pieces}")


def _main():
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    import sparcoll.torch as st

    R = dist.ReduceOp
    st.init_process_group_mpi("sparcoll")
    gloo = dist.new_group(backend="gloo")
    P, r = dist.get_world_size(), dist.get_rank()
    assert P == 2

    # bool: every op gloo takes, the same result (rank 0 and 1 hold every pair of values)
    a = torch.tensor([True, True, False, False]) if r == 0 else torch.tensor([True, False, True, False])
    for op in (R.SUM, R.PRODUCT, R.MIN, R.MAX, R.BAND, R.BOR, R.BXOR):
        got, want = a.clone(), a.clone()
        dist.all_reduce(got, op=op)
        dist.all_reduce(want, op=op, group=gloo)
        assert got.dtype == torch.bool and torch.equal(got, want), (op, got, want)
        got = a.clone()
        dist.all_reduce(got, op=op, async_op=True).wait()
        assert torch.equal(got, want), op
        nc = torch.zeros(4, 2, dtype=torch.bool)
        nc[:, 0] = a
        dist.all_reduce(nc[:, 0], op=op)  # non-contiguous
        assert torch.equal(nc[:, 0], want) and not nc[:, 1].any(), op
        got, want = torch.empty(2, dtype=torch.bool), torch.empty(2, dtype=torch.bool)
        dist.reduce_scatter_tensor(got, a, op=op)
        dist.reduce_scatter_tensor(want, a, op=op, group=gloo)
        assert torch.equal(got, want), ("reduce_scatter_tensor", op, got, want)
    _raises(lambda: dist.all_reduce(a.clone(), op=R.AVG), "ReduceOp.AVG on torch.bool")
    got, want = a.clone(), a.clone()
    dist.broadcast(got, src=1)
    dist.broadcast(want, src=1, group=gloo)
    assert torch.equal(got, want)
    got, want = [torch.empty(4, dtype=torch.bool) for _ in range(P)], [torch.empty(4, dtype=torch.bool)
                                                                       for _ in range(P)]
    dist.all_gather(got, a)
    dist.all_gather(want, a, group=gloo)
    assert all(torch.equal(g, w) for g, w in zip(got, want))
    got = torch.empty(P * 4, dtype=torch.bool)
    dist.all_gather_into_tensor(got, a)
    assert torch.equal(got, torch.cat(want))

    # DDP on a model with a bool buffer: constructs (the buffers are broadcast from rank 0) and trains
    def model():
        torch.manual_seed(0)
        m = nn.Sequential(nn.Linear(8, 4))
        m.register_buffer("flag", torch.tensor([r == 0, r == 1, True]))
        return m

    params = []
    for group in (None, gloo):
        ddp = DDP(model(), process_group=group)
        assert torch.equal(ddp.module.flag, torch.tensor([True, False, True]))  # rank 0's
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
        for step in range(3):
            torch.manual_seed(10 * step + r)
            ddp(torch.randn(5, 8)).square().sum().backward()
            opt.step()
            opt.zero_grad()
        params.append(torch.cat([p.detach().reshape(-1) for p in ddp.parameters()]))
    torch.testing.assert_close(params[0], params[1])

    # a non-contiguous leaf that requires grad: reduced in place as gloo does (autograd is not told)
    for group in (None, gloo):
        x = torch.full((2, 4), float(r + 1)).t().contiguous().t().requires_grad_(True)
        assert x.is_leaf and not x.is_contiguous()
        dist.all_reduce(x, group=group)
        assert torch.equal(x.detach(), torch.full((2, 4), 3.0)), group
        y = torch.full((2, 4), float(r)).t().contiguous().t().requires_grad_(True)
        dist.broadcast(y, src=1, group=group)
        assert torch.equal(y.detach(), torch.ones(2, 4)), group

    # shapes: the list forms take tensors of the other side's shape only (gloo's rule); the tensor forms
    # take the concatenation along dim 0 or the stack (torch's two forms), nothing else of that size
    x = torch.arange(6.0).reshape(2, 3)
    for group in (None, gloo):
        _raises(lambda: dist.all_gather([torch.empty(3, 2) for _ in range(P)], x, group=group), "(3, 2)")
        _raises(lambda: dist.all_gather_into_tensor(torch.empty(3 * P, 2), x, group=group))
        _raises(lambda: dist.reduce_scatter(torch.empty(6), [x] * P, group=group), "(6")
        _raises(lambda: dist.reduce_scatter_tensor(torch.empty(3, 2), torch.ones(2 * P, 3), group=group))
    _raises(lambda: dist.all_gather([torch.empty(3, 2) for _ in range(P)], x), "all_gather: output 0 has shape (3, 2)",
            "expected the input's shape (2, 3)")
    _raises(lambda: dist.all_gather_into_tensor(torch.empty(6 * P), x), "the output has shape (12,)",
            "expected (4, 3) or (2, 2, 3)")
    _raises(lambda: dist.reduce_scatter_tensor(torch.empty(3, 2), torch.ones(2 * P, 3)),
            "the input has shape (4, 3), expected (6, 2) or (2, 3, 2)")
    _raises(lambda: dist.reduce_scatter(torch.empty(6), [x] * P), "reduce_scatter: input 0 has shape (2, 3)",
            "expected the output's shape (6,)")
    out = torch.empty(P, 2, 3)
    dist.all_gather_into_tensor(out, x + r)  # the stacked form
    assert torch.equal(out, torch.stack([x, x + 1]))
    got = torch.empty(2, 3)
    dist.reduce_scatter_tensor(got, torch.stack([x, x + 10]) + r)  # the stacked form
    assert torch.equal(got, 2 * (x + 10 * r) + 1)

    dist.barrier()
    dist.destroy_process_group()
    print(f"rank ok {r}", flush=True)


if __name__ == "__main__":
    _main()
