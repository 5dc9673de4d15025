"""The "sparcoll" torch.distributed backend under mpirun (launched by
tests/test_backend_mpirun.py with 2 and 4 ranks): the default group is
sparcoll's, a gloo group over the same ranks is the reference. Every op x
dtype, async Work and futures, subgroups, DDP (an MLP and a CNN) and FSDP2
against gloo, topk_hook on the backend, and the errors of bad use."""

import os
import time
from datetime import timedelta

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

import sparcoll as sc  # noqa: E402
import sparcoll.torch as st  # noqa: E402

R = dist.ReduceOp
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int32, torch.int64,
          torch.uint8]
OPS = {"sum": R.SUM, "product": R.PRODUCT, "min": R.MIN, "max": R.MAX, "avg": R.AVG}


@pytest.fixture(scope="module")
def groups():
    """(sparcoll default group, gloo group over every rank)."""
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    st.init_process_group_mpi("sparcoll", world)
    gloo = dist.new_group(backend="gloo")
    yield dist.group.WORLD, gloo


def _data(rank, n, dtype, op="sum", seed=0):
    """Small integers: sums and products are exact in every dtype (no order dependence)."""
    g = torch.Generator().manual_seed(seed * 1000 + rank)
    if op == "product":
        x = torch.randint(1, 3, (n,), generator=g)
    else:
        x = torch.randint(0, 5, (n,), generator=g)
    return x.to(dtype)


def test_backend_and_communicator(groups):
    pg, _ = groups
    assert dist.get_backend(pg) == "sparcoll"
    comm = st.communicator()
    assert isinstance(comm, sc.Communicator)
    assert (comm.rank, comm.size) == (dist.get_rank(), dist.get_world_size())
    assert st.communicator(pg) is comm
    c2 = sc.Communicator.from_torch(pg, transport="mpi", timeout=60)  # its bootstrap runs on the backend
    assert (c2.rank, c2.size) == (comm.rank, comm.size)
    c2.close()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).replace("torch.", ""))
def test_op_grid_against_gloo(groups, dtype):
    pg, gloo = groups
    P, r = dist.get_world_size(), dist.get_rank()
    n = 4 * P + 2
    for name, op in OPS.items():
        if name == "avg" and not dtype.is_floating_point:
            continue
        x = _data(r, n, dtype, name)
        got = x.clone()
        dist.all_reduce(got, op=op)
        want = x.clone()
        if name == "avg":  # gloo has no AVG: its SUM / P
            dist.all_reduce(want, op=R.SUM, group=gloo)
            want = (want.double() / P).to(dtype)
        else:
            dist.all_reduce(want, op=op, group=gloo)
        assert torch.equal(got, want), (name, dtype, got, want)
    # all_reduce_coalesced
    a, b = _data(r, 7, dtype, seed=1), _data(r, 3, dtype, seed=2)
    ga, gb, wa, wb = a.clone(), b.clone(), a.clone(), b.clone()
    dist.all_reduce_coalesced([ga, gb])
    dist.all_reduce_coalesced([wa, wb], group=gloo)
    assert torch.equal(ga, wa) and torch.equal(gb, wb)
    # broadcast from every root
    for root in range(P):
        got, want = _data(r, n, dtype, seed=3), _data(r, n, dtype, seed=3)
        dist.broadcast(got, src=root)
        dist.broadcast(want, src=root, group=gloo)
        assert torch.equal(got, want)
    # all_gather (list) and all_gather_into_tensor
    x = _data(r, 5, dtype, seed=4).reshape(5, 1)
    got, want = [torch.empty_like(x) for _ in range(P)], [torch.empty_like(x) for _ in range(P)]
    dist.all_gather(got, x)
    dist.all_gather(want, x, group=gloo)
    assert all(torch.equal(g, w) for g, w in zip(got, want))
    got, want = torch.empty(P * 5, 1, dtype=dtype), torch.empty(P * 5, 1, dtype=dtype)
    dist.all_gather_into_tensor(got, x)
    dist.all_gather_into_tensor(want, x, group=gloo)
    assert torch.equal(got, want)
    # reduce_scatter (list) and reduce_scatter_tensor
    for name in ("sum", "max", "min"):
        ins = [_data(r, 6, dtype, seed=10 + i) for i in range(P)]
        got, want = torch.empty(6, dtype=dtype), torch.empty(6, dtype=dtype)
        dist.reduce_scatter(got, ins, op=OPS[name])
        dist.reduce_scatter(want, ins, op=OPS[name], group=gloo)
        assert torch.equal(got, want), (name, dtype)
        flat = torch.cat(ins)
        got, want = torch.empty(6, dtype=dtype), torch.empty(6, dtype=dtype)
        dist.reduce_scatter_tensor(got, flat, op=OPS[name])
        dist.reduce_scatter_tensor(want, flat, op=OPS[name], group=gloo)
        assert torch.equal(got, want), (name, dtype)


def test_non_contiguous_and_in_place(groups):
    pg, gloo = groups
    P, r = dist.get_world_size(), dist.get_rank()
    # gloo reads non-contiguous tensors as if they were contiguous: the reference is computed here
    def base(q):
        return _data(q, 24, torch.float32).reshape(4, 6)

    got, want = base(r), base(r)
    dist.all_reduce(got[:, ::2])
    want[:, ::2] = sum(base(q)[:, ::2] for q in range(P))
    assert torch.equal(got, want)  # the strided elements reduced, the others untouched
    got = base(r)
    dist.broadcast(got.t(), src=P - 1)
    assert torch.equal(got, base(P - 1))
    parents = [torch.zeros(4, 6) for _ in range(P)]
    dist.all_gather([p[:, ::2] for p in parents], base(r)[:, 1::2])
    assert all(torch.equal(p[:, ::2], base(q)[:, 1::2]) and not p[:, 1::2].any() for q, p in enumerate(parents))
    out = torch.zeros(P * 3, 2)
    x = out[r * 3:(r + 1) * 3]
    x.copy_(_data(r, 6, torch.float32).reshape(3, 2))
    dist.all_gather_into_tensor(out, x)  # in place: the input is this rank's block of the output
    assert torch.equal(out, torch.cat([_data(q, 6, torch.float32).reshape(3, 2) for q in range(P)]))
    big = torch.zeros(8, P * 2)
    dist.reduce_scatter_tensor(big[:, :2].t(), _data(r, 16 * P, torch.float32).reshape(2 * P, 8))  # non-contig. out
    want = torch.empty(16)
    dist.reduce_scatter_tensor(want, _data(r, 16 * P, torch.float32), group=gloo)
    assert torch.equal(big[:, :2].t().reshape(-1), want)


def test_async_work_and_futures(groups):
    pg, gloo = groups
    P, r = dist.get_world_size(), dist.get_rank()
    xs = [torch.full((1000,), float(r + i)) for i in range(5)]
    works = [dist.all_reduce(x, async_op=True) for x in xs]
    outs = [torch.empty(P * 1000) for _ in range(2)]
    works += [dist.all_gather_into_tensor(o, xs[0] * 0 + r, async_op=True) for o in outs]
    works.append(dist.barrier(async_op=True))
    for w in reversed(works):  # in any order
        assert w.wait()
        assert w.get_future().done()  # (Work.is_completed is C++'s flag: torch does not route it to Python)
    total = sum(range(P))
    for i, x in enumerate(xs):
        assert torch.equal(x, torch.full((1000,), float(total + P * i)))
    for o in outs:
        assert torch.equal(o, torch.arange(P).repeat_interleave(1000).float())
    # futures: the value is the op's output list, and then() chains as with gloo/nccl
    y = torch.ones(10)
    fut = dist.all_reduce(y, async_op=True).get_future()
    chained = fut.then(lambda f: f.value()[0] * 2)
    assert torch.equal(chained.wait(), torch.full((10,), 2.0 * P))
    assert fut.value()[0] is y
    fut = dist.broadcast(torch.full((3,), float(r)), src=0, async_op=True).get_future()
    assert torch.equal(fut.wait()[0], torch.zeros(3))
    # ops stay ordered with blocking ones
    z = torch.ones(4)
    w = dist.all_reduce(z, async_op=True)
    dist.all_reduce(z)
    w.wait()
    assert torch.equal(z, torch.full((4,), float(P * P)))


def test_subgroups(groups):
    pg, gloo = groups
    P, r = dist.get_world_size(), dist.get_rank()
    specs = [list(range(0, P, 2)), [0, P - 1], list(range(P)), list(range(1, P))]
    subs = [(ranks, dist.new_group(ranks, backend="sparcoll"), dist.new_group(ranks, backend="gloo"))
            for ranks in specs]
    for ranks, sub, gsub in subs:
        if r not in ranks:
            assert sub == dist.GroupMember.NON_GROUP_MEMBER
            continue
        assert dist.get_backend(sub) == "sparcoll"
        comm = st.communicator(sub)
        assert (comm.size, comm.rank) == (len(ranks), ranks.index(r))
        x, want = _data(r, 9, torch.float32, seed=5), _data(r, 9, torch.float32, seed=5)
        dist.all_reduce(x, group=sub)
        dist.all_reduce(want, group=gsub)
        assert torch.equal(x, want)
        got, want = torch.empty(9 * len(ranks)), torch.empty(9 * len(ranks))
        dist.all_gather_into_tensor(got, x, group=sub)
        dist.all_gather_into_tensor(want, x, group=gsub)
        assert torch.equal(got, want)
        b = torch.full((4,), float(r))
        dist.broadcast(b, src=ranks[-1], group=sub)  # src is a global rank
        assert torch.equal(b, torch.full((4,), float(ranks[-1])))
        dist.barrier(group=sub)
    dist.barrier()


def _mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 3))


def _cnn(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3),
                         nn.ReLU(), nn.Flatten(), nn.Linear(16 * 2 * 2, 3))


def _batch(kind, rank, step, n=32):
    g = torch.Generator().manual_seed(1000 * rank + step)
    x = torch.randn(n, 20, generator=g) if kind == "mlp" else torch.randn(n, 1, 8, 8, generator=g)
    y = (x.reshape(n, -1)[:, :3].argmax(dim=1)).long()
    return x, y


def _train(model, kind, steps=20, **ddp_kw):
    hook = ddp_kw.pop("hook", None)
    ddp = DDP(model, **ddp_kw)
    if hook is not None:
        ddp.register_comm_hook(*hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for s in range(steps):
        x, y = _batch(kind, dist.get_rank(), s)
        loss = nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _params(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_ddp_matches_gloo(groups, kind):
    pg, gloo = groups
    make = _mlp if kind == "mlp" else _cnn
    a, b = make(1), make(2)  # different seeds: DDP's broadcast from rank 0 must make them equal
    if dist.get_rank() == 0:
        b.load_state_dict(a.state_dict())
    la = _train(a, kind, bucket_cap_mb=0.01)  # several buckets
    lb = _train(b, kind, process_group=gloo, bucket_cap_mb=0.01)
    torch.testing.assert_close(_params(a), _params(b), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(torch.tensor(la), torch.tensor(lb), rtol=1e-5, atol=1e-6)  # the same run
    # every rank ends with the same parameters
    p = _params(a)
    ps = [torch.empty_like(p) for _ in range(dist.get_world_size())]
    dist.all_gather(ps, p, group=gloo)
    assert all(torch.equal(q, p) for q in ps)


def test_fsdp2_matches_gloo(groups):
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.fsdp import fully_shard

    pg, gloo = groups
    runs = []
    for group in (pg, gloo):
        model = _mlp(3)
        mesh = DeviceMesh.from_group(group, "cpu")
        for layer in model:
            if isinstance(layer, nn.Linear):
                fully_shard(layer, mesh=mesh)
        fully_shard(model, mesh=mesh)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        for s in range(20):
            x, y = _batch("mlp", dist.get_rank(), s)
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        runs.append(torch.cat([p.full_tensor().detach().reshape(-1) for p in model.parameters()]))
    torch.testing.assert_close(runs[0], runs[1], rtol=1e-5, atol=1e-6)


def test_topk_hook_on_the_backend(groups):
    pg, gloo = groups
    comm = st.communicator()
    # density 1 with the exact method: the sparse average is the dense one, so DDP matches gloo's
    a, b = _mlp(4), _mlp(4)
    state = st.TopkState(comm, density=1.0, start_iter=2, method="exact")
    _train(a, "mlp", hook=(state, st.topk_hook))
    _train(b, "mlp", process_group=gloo)
    torch.testing.assert_close(_params(a), _params(b), rtol=1e-5, atol=1e-6)
    assert state.iter == 20 and state.sent_elements == state.total_elements > 0
    # 5 % density: it trains, sends about 5 %, and the ranks stay identical
    c = _mlp(5)
    state = st.TopkState(comm, density=0.05, start_iter=2)
    losses = _train(c, "mlp", steps=30, hook=(state, st.topk_hook))
    assert 0 < state.sent_elements / state.total_elements < 0.2
    assert min(losses[-5:]) < losses[0]
    p = _params(c)
    ps = [torch.empty_like(p) for _ in range(dist.get_world_size())]
    dist.all_gather(ps, p)
    assert all(torch.equal(q, p) for q in ps)


def test_unsupported_ops_raise(groups):
    P, r = dist.get_world_size(), dist.get_rank()
    t = torch.ones(4)
    cases = [("send", lambda: dist.send(t, (r + 1) % P)),
             ("recv", lambda: dist.recv(t, (r + 1) % P)),
             ("all_to_all_single", lambda: dist.all_to_all_single(torch.empty(4 * P), torch.ones(4 * P))),
             ("gather", lambda: dist.gather(t, [torch.empty(4) for _ in range(P)] if r == 0 else None, dst=0)),
             ("scatter", lambda: dist.scatter(t, [torch.ones(4) for _ in range(P)] if r == 0 else None, src=0)),
             ("reduce", lambda: dist.reduce(t, dst=0))]
    for name, call in cases:
        with pytest.raises(sc.InvalidUsageError, match=f"^{name}: sparcoll's torch.distributed backend does not "
                                                       "support this op"):
            call()
    with pytest.raises(sc.InvalidArgumentError, match="does not support dtype torch.int16"):
        dist.all_reduce(torch.ones(2, dtype=torch.int16))
    with pytest.raises(sc.InvalidArgumentError, match="unsupported reduction op ReduceOp.BAND"):
        dist.all_reduce(torch.ones(2, dtype=torch.int32), op=R.BAND)
    dist.barrier()  # nothing was sent: the group still works
    x = torch.ones(3)
    dist.all_reduce(x)
    assert torch.equal(x, torch.full((3,), float(P)))


def test_shape_mismatch_fails_without_hanging(groups):
    """Shapes that differ across ranks: an error on every rank (the library's
    checks, or its timeout, SPARCOLL_TIMEOUT), not a hang. A group of its own:
    a failed communicator is not used again."""
    P, r = dist.get_world_size(), dist.get_rank()
    old = os.environ.get("SPARCOLL_TIMEOUT")
    os.environ["SPARCOLL_TIMEOUT"] = "3"
    try:
        sub = dist.new_group(list(range(P)), backend="sparcoll")
        st.communicator(sub)  # made now, with the small timeout
    finally:
        if old is None:
            del os.environ["SPARCOLL_TIMEOUT"]
        else:
            os.environ["SPARCOLL_TIMEOUT"] = old
    t0 = time.monotonic()
    with pytest.raises(sc.SparcollError):
        dist.all_reduce(torch.ones(1000 + (r == 0) * 24), group=sub)  # 1024 elements on rank 0, 1000 elsewhere
    assert time.monotonic() - t0 < 30
    with pytest.raises(sc.SparcollError, match="aborted"):  # an async op's error comes out of wait()
        dist.all_reduce(torch.ones(4), group=sub, async_op=True).wait()
    with pytest.raises(RuntimeError, match="InvalidUsageError: .*aborted"):  # torch's futures: RuntimeError
        dist.all_reduce(torch.ones(4), group=sub, async_op=True).get_future().wait()
    time.sleep(1.0)  # let every rank get past its failure before the world group is used again
    dist.barrier(group=dist.new_group(backend="gloo"))
    x = torch.ones(3)
    dist.all_reduce(x)  # the default group is unaffected
    assert torch.equal(x, torch.full((3,), float(P)))


def test_timeout_is_the_groups(groups):
    """Without SPARCOLL_TIMEOUT the process group's timeout bounds the communicator's waits."""
    from sparcoll import _torch_work

    assert _torch_work.timeout_seconds(timedelta(seconds=7)) in (None, 7.0)
    saved = os.environ.pop("SPARCOLL_TIMEOUT", None)
    try:
        assert _torch_work.timeout_seconds(timedelta(seconds=7)) == 7.0
    finally:
        if saved is not None:
            os.environ["SPARCOLL_TIMEOUT"] = saved
