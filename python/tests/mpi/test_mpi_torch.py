"""torch.distributed integration under mpirun: Communicator.from_torch on a gloo
process group, and the DDP top-k hook on a small CPU model (loss falls, residual
conservation, equality with the dense hook at density 1)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

import sparcoll as sc  # noqa: E402


@pytest.fixture(scope="module")
def tcomm(gloo):
    c = sc.Communicator.from_torch(transport="mpi", timeout=60)
    yield c
    c.close()


def _model(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 3))


def _data(rank, step, n=64):
    g = torch.Generator().manual_seed(1000 * rank + step)
    x = torch.randn(n, 20, generator=g)
    y = (x[:, :3].argmax(dim=1)).long()  # a learnable rule
    return x, y


def _train(model, steps, rank, lr=0.1, hook=None, state=None, momentum=0.0):
    ddp = DDP(model)
    if hook is not None:
        ddp.register_comm_hook(state, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=lr, momentum=momentum)
    losses = []
    for s in range(steps):
        x, y = _data(rank, s)
        loss = nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return ddp, losses


def _params(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def test_from_torch_matches_group(gloo, tcomm):
    dist = gloo
    assert (tcomm.rank, tcomm.size) == (dist.get_rank(), dist.get_world_size())
    t = torch.full((4,), float(dist.get_rank() + 1))
    y = tcomm.allreduce(t)
    assert isinstance(y, torch.Tensor)
    assert torch.equal(y, torch.full((4,), float(sum(range(1, dist.get_world_size() + 1)))))


def test_from_torch_subgroup(gloo):
    dist = gloo
    members = [0, 1]
    pg = dist.new_group(members)  # every rank calls new_group
    if dist.get_rank() in members:
        c = sc.Communicator.from_torch(pg, transport="mpi", timeout=60)
        assert (c.rank, c.size) == (dist.get_rank(pg), 2)
        y = c.allgather(torch.tensor([dist.get_rank()]))
        assert y.tolist() == members
        c.close()


def test_from_torch_rejects_local(gloo):
    with pytest.raises(sc.InvalidArgumentError, match="transport"):
        sc.Communicator.from_torch(transport="local")


def test_topk_hook_loss_falls_and_ranks_agree(gloo, tcomm, world):
    from sparcoll.torch import TopkState, topk_hook

    state = TopkState(tcomm, density=0.05, bucket=128, start_iter=3, seed=1)
    ddp, losses = _train(_model(), 60, tcomm.rank, lr=0.3, hook=topk_hook, state=state)
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    assert last < 0.5 * first, (first, last)  # measured: 1.09 -> 0.24 (dense: 0.20)
    assert state.iter == 60
    assert 0 < state.sent_elements < 0.15 * state.total_elements  # ~5 % sent
    p = _params(ddp.module).numpy()
    ps = world.allgather(p.tobytes())
    assert all(b == ps[0] for b in ps), "replicas diverged"


def test_density_one_matches_dense_hook(gloo, tcomm):
    from sparcoll.torch import TopkState, dense_hook, topk_hook

    dense, _ = _train(_model(3), 8, tcomm.rank, hook=dense_hook, state=tcomm)
    state = TopkState(tcomm, density=1.0, start_iter=2, method="exact")
    topk, _ = _train(_model(3), 8, tcomm.rank, hook=topk_hook, state=state)
    ref, _ = _train(_model(3), 8, tcomm.rank)  # DDP's own gloo allreduce
    torch.testing.assert_close(_params(topk.module), _params(dense.module), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(_params(dense.module), _params(ref.module), rtol=1e-5, atol=1e-6)
    assert state.sent_elements == state.total_elements


def test_momentum_correction_density_one_is_sgd_momentum(gloo, tcomm):
    """At density 1 without masking, the hook's velocity average under SGD
    without momentum is SGD with momentum on the averaged gradient (dense
    warm-up steps and DDP's bucket rebuild after step 1 included)."""
    from sparcoll.torch import TopkState, topk_hook

    state = TopkState(tcomm, density=1.0, start_iter=2, method="exact", momentum=0.9, momentum_masking=False)
    corrected, _ = _train(_model(4), 8, tcomm.rank, hook=topk_hook, state=state)
    ref, _ = _train(_model(4), 8, tcomm.rank, momentum=0.9)  # DDP's own gloo allreduce, SGD's momentum
    torch.testing.assert_close(_params(corrected.module), _params(ref.module), rtol=1e-5, atol=1e-6)
    plain, _ = _train(_model(4), 8, tcomm.rank, hook=topk_hook, state=TopkState(tcomm, density=1.0, start_iter=2,
                                                                                method="exact"))
    assert not torch.allclose(_params(plain.module), _params(ref.module), rtol=1e-3, atol=1e-4)


def test_momentum_factor_masking(gloo, tcomm, world):
    """Below density 1: the velocity is momentum * u + g, the residual takes it
    (error feedback), and the entries sent have velocity 0 afterwards; the
    returned average is of the sent velocity parts."""
    from sparcoll.torch import TopkState, topk_hook

    m = 0.5
    state = TopkState(tcomm, density=0.05, bucket=64, start_iter=1, seed=3, momentum=m)
    records = []

    def recording_hook(st, bucket):
        idx = bucket.index()
        st.follow_layout(bucket)  # the state in this step's layout (DDP rebuilds its buckets after step 1)
        g = bucket.buffer().detach().clone().reshape(-1)
        u_old = st._velocity.get(idx)
        u_old = torch.zeros_like(g) if u_old is None else u_old.clone()
        r_old = st.residual(idx)
        r_old = torch.zeros_like(g) if r_old is None else r_old.clone()
        fut = topk_hook(st, bucket)
        out = fut.value().detach().clone().reshape(-1)
        new = st.residual(idx)
        records.append((st.iter, g, u_old, r_old, None if new is None else new.clone(), st._velocity[idx].clone(),
                        out))
        return fut

    _train(_model(8), 6, tcomm.rank, hook=recording_hook, state=state)
    checked = 0
    for it, g, u_old, r_old, r_new, u_new, out in records:
        u = m * u_old + g
        if r_new is None or it <= 1:  # dense warm-up: the velocity is averaged whole, never masked
            torch.testing.assert_close(u_new, u, rtol=0, atol=0)
            continue
        acc = r_old + u
        sent = r_new == 0
        assert torch.equal(r_new[~sent], acc[~sent])
        assert torch.equal(u_new[~sent], u[~sent]) and not u_new[sent].any()
        sent_sum = world.allreduce((acc - r_new).numpy().astype(np.float64))
        np.testing.assert_allclose(sent_sum, out.numpy().astype(np.float64) * tcomm.size, rtol=1e-5, atol=1e-6)
        checked += 1
    assert checked > 0
    sd = state.state_dict()
    fresh = TopkState(tcomm, density=0.05, start_iter=1, momentum=m)
    fresh.load_state_dict(sd)
    assert sd["velocities"] and all(torch.equal(fresh._velocity[i], u) for i, u in sd["velocities"].items())


def test_state_follows_ddp_bucket_rebuild(gloo, tcomm):
    """DDP rebuilds its buckets after step 1 (reversed parameter order here): each
    parameter's residual and velocity move with it, bit for bit."""
    from sparcoll.torch import TopkState, topk_hook

    state = TopkState(tcomm, density=0.05, bucket=64, start_iter=0, seed=2, momentum=0.5)
    seen = []

    def recording_hook(st, bucket):
        st.follow_layout(bucket)
        idx, params = bucket.index(), bucket.parameters()
        sizes = [p.numel() for p in params]

        def by_param(t):
            return {id(p): piece.clone() for p, piece in zip(params, t.split(sizes))}
        r, u = st.residual(idx), st._velocity.get(idx)
        before = None if r is None else (by_param(r), by_param(u))
        fut = topk_hook(st, bucket)
        seen.append(([id(p) for p in params], before, by_param(st.residual(idx)), by_param(st._velocity[idx])))
        return fut

    _train(_model(9), 2, tcomm.rank, hook=recording_hook, state=state)
    (order0, _, r0, u0), (order1, before1, _, _) = seen
    assert order1 != order0 and sorted(order1) == sorted(order0)  # the rebuild happened
    for pid in order0:
        assert torch.equal(before1[0][pid], r0[pid]) and torch.equal(before1[1][pid], u0[pid])


def test_residual_conservation(gloo, tcomm, world):
    """Per rank, bit-exact: every unsent entry of gradient + old residual is in the
    new residual; summed over ranks: P * (returned average) == sum of the sent parts."""
    from sparcoll.torch import TopkState, topk_hook

    state = TopkState(tcomm, density=0.02, bucket=64, start_iter=1, seed=5)
    records = []

    def recording_hook(st, bucket):
        idx = bucket.index()
        g = bucket.buffer().detach().clone()
        old = st.residual(idx)
        old = torch.zeros_like(g) if old is None else old.clone()
        fut = topk_hook(st, bucket)
        out = fut.value().detach().clone()
        new = st.residual(idx)
        records.append((st.iter, g, old, None if new is None else new.clone(), out))
        return fut

    _train(_model(7), 6, tcomm.rank, hook=recording_hook, state=state)
    checked = 0
    for it, g, old, new, out in records:
        if new is None or it <= 1:  # dense warm-up steps
            continue
        acc = (g + old).reshape(-1)
        kept = new != 0
        assert torch.equal(new[kept], acc[kept])  # unsent entries carried exactly
        sent_sum = world.allreduce((acc - new).numpy().astype(np.float64))
        np.testing.assert_allclose(sent_sum, out.reshape(-1).numpy().astype(np.float64) * tcomm.size,
                                   rtol=1e-5, atol=1e-6)
        checked += 1
    assert checked > 0


def test_stream_ordered_step_reads_nothing_on_the_host(gloo, tcomm):
    """stream_ordered=True: the same selections and training as the default step (the
    sums differ in order only), the same entries sent, and no host read of a count in
    any top-k step (the default step reads them); with momentum masking too."""
    from sparcoll.torch import TopkState, topk_hook

    for kw in ({}, {"momentum": 0.5}):
        default = TopkState(tcomm, density=0.05, bucket=128, start_iter=2, seed=1, method="exact", **kw)
        ordered = TopkState(tcomm, density=0.05, bucket=128, start_iter=2, seed=1, method="exact",
                            stream_ordered=True, **kw)
        a, _ = _train(_model(5), 12, tcomm.rank, lr=0.2, hook=topk_hook, state=default)
        reads = tcomm.stats()["host_reads"]
        b, _ = _train(_model(5), 12, tcomm.rank, lr=0.2, hook=topk_hook, state=ordered)
        assert tcomm.stats()["host_reads"] == reads, kw
        torch.testing.assert_close(_params(b.module), _params(a.module), rtol=1e-4, atol=1e-5)
        assert ordered.sent_elements == default.sent_elements > 0
        assert ordered.total_elements == default.total_elements
        for i in ordered._feedback:
            torch.testing.assert_close(ordered.residual(i), default.residual(i), rtol=1e-4, atol=1e-5)
    with pytest.raises(sc.InvalidArgumentError, match="error_feedback"):
        TopkState(tcomm, stream_ordered=True, error_feedback=False)


def test_hook_without_error_feedback(gloo, tcomm):
    from sparcoll.torch import TopkState, topk_hook

    state = TopkState(tcomm, density=0.1, start_iter=2, error_feedback=False)
    _, losses = _train(_model(1), 30, tcomm.rank, hook=topk_hook, state=state)
    assert np.isfinite(losses).all()
    assert state.residual(0) is None


def test_state_dict_round_trip(gloo, tcomm):
    from sparcoll.torch import TopkState, topk_hook

    state = TopkState(tcomm, density=0.05, start_iter=1)
    _train(_model(2), 4, tcomm.rank, hook=topk_hook, state=state)
    sd = state.state_dict()
    fresh = TopkState(tcomm, density=0.05, start_iter=1)
    fresh.load_state_dict(sd)
    assert fresh.iter == state.iter
    for i, r in sd["residuals"].items():
        assert torch.equal(fresh.residual(i), r)
        assert fresh._feedback[i].step == state._feedback[i].step


def test_state_validation(tcomm):
    from sparcoll.torch import TopkState

    with pytest.raises(sc.InvalidArgumentError, match="density"):
        TopkState(tcomm, density=0)
    with pytest.raises(sc.InvalidArgumentError, match="method"):
        TopkState(tcomm, method="best")
    for bad in (-0.1, 1.0):
        with pytest.raises(sc.InvalidArgumentError, match="momentum"):
            TopkState(tcomm, momentum=bad)
    with pytest.raises(TypeError):
        TopkState(object())


def test_from_torch_nccl_id_travels_over_the_group(gloo):
    """transport "nccl" needs no MPI bootstrap: the group's rank 0 makes the
    unique id and broadcast_object_list hands it to the members (here over
    gloo, in a subgroup whose rank 0 is not global rank 0). Without NCCL, or
    without a GPU, every member fails the same clear way and none is left waiting."""
    from helpers import gpu_count
    from sparcoll.torch import _unique_id_of_group

    dist = gloo
    members = list(range(1, dist.get_world_size()))
    pg = dist.new_group(members)  # every rank calls new_group
    if not sc.features["nccl"]:
        with pytest.raises(sc.InvalidUsageError, match="nccl transport"):
            sc.Communicator.from_torch(transport="nccl")
        return
    size, rank, uid = _unique_id_of_group()
    ids = [None] * size
    dist.all_gather_object(ids, uid)
    assert (size, rank) == (dist.get_world_size(), dist.get_rank())
    assert len(uid) == 128 and len(set(ids)) == 1
    if dist.get_rank() in members:
        sub_size, sub_rank, sub_uid = _unique_id_of_group(pg)
        sub_ids = [None] * sub_size
        dist.all_gather_object(sub_ids, sub_uid, group=pg)
        assert (sub_size, sub_rank) == (len(members), dist.get_rank(pg))
        assert len(set(sub_ids)) == 1 and sub_uid != uid
    if gpu_count() == 0:
        with pytest.raises(sc.CudaError, match="CUDA device"):
            sc.Communicator.from_torch(transport="nccl", timeout=30)
