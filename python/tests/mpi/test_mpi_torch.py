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


def _train(model, steps, rank, lr=0.1, hook=None, state=None):
    ddp = DDP(model)
    if hook is not None:
        ddp.register_comm_hook(state, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=lr)
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
