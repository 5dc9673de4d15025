"""The "sparcoll" torch.distributed backend in one process (world size 1, a
HashStore; MPI as a singleton): registration, every op, Work and futures, the
communicator behind a group, the errors of bad use and of a bad launch, and the
NCCL unique-id exchange through a store (with a fake id: no GPU here). The
multi-rank tests run under mpirun: tests/test_backend_mpirun.py."""

import sys
import threading
from datetime import timedelta

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
pytest.importorskip("mpi4py")

import sparcoll as sc  # noqa: E402
import sparcoll.torch as st  # noqa: E402
from sparcoll import _torch_backend, _torch_work  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture
def world():
    if dist.is_initialized():
        pytest.skip("torch.distributed is already initialized in this process")
    dist.init_process_group("sparcoll", store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield dist.group.WORLD
    finally:
        dist.destroy_process_group()


def test_registered():
    assert "sparcoll" in dist.Backend.backend_list
    assert dist.Backend.SPARCOLL == "sparcoll"
    assert dist.Backend.backend_capability["sparcoll"] == ["cpu", "cuda"]
    assert st.__all__ == ["TopkState", "topk_hook", "dense_hook", "communicator", "init_process_group_mpi"]


def test_ops_world_size_1(world):
    assert dist.get_backend() == "sparcoll"
    for dtype in _torch_backend.DTYPES:
        x = torch.arange(6).to(dtype).reshape(2, 3)
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX):
            y = x.clone()
            dist.all_reduce(y, op=op)
            assert torch.equal(y, x)
        y = x.clone()
        dist.broadcast(y, src=0)
        assert torch.equal(y, x)
        outs = [torch.empty_like(x)]
        dist.all_gather(outs, x)
        assert torch.equal(outs[0], x)
        for shape in ((2, 3), (1, 2, 3)):  # concatenated and stacked
            out = torch.empty(shape, dtype=dtype)
            dist.all_gather_into_tensor(out, x)
            assert torch.equal(out, x.reshape(shape))
        out = torch.empty_like(x)
        dist.reduce_scatter(out, [x])
        assert torch.equal(out, x)
        dist.reduce_scatter_tensor(out, x)
        assert torch.equal(out, x)
    y = torch.ones(4)
    dist.all_reduce(y, op=dist.ReduceOp.AVG)
    assert torch.equal(y, torch.ones(4))
    a, b = torch.ones(3), torch.arange(4.0)[::2]  # the second one non-contiguous
    dist.all_reduce_coalesced([a, b])
    assert torch.equal(b, torch.tensor([0.0, 2.0]))
    dist.barrier()


def test_gloo_dtypes(world):
    """Every dtype gloo takes (bool too), and no other."""
    assert set(_torch_backend.DTYPES) == {torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
                                          torch.int32, torch.int64, torch.uint8, torch.bool}
    x = torch.tensor([True, False, True])
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX, dist.ReduceOp.BAND,
               dist.ReduceOp.BOR, dist.ReduceOp.BXOR):
        y = x.clone()
        dist.all_reduce(y, op=op)
        assert y.dtype == torch.bool and torch.equal(y, x), op


def test_backend_attributes_torch_reads(world):
    """The Backend properties torch's trampoline reads answer (they recursed into it before), and
    batch_isend_irecv, which asks supports_coalescing first, gets the clear error of send."""
    pg = dist.group.WORLD
    b = pg._get_backend(torch.device("cpu"))
    props = [n for n, v in vars(torch._C._distributed_c10d.Backend).items() if isinstance(v, property)]
    assert {"supports_coalescing", "supports_splitting", "supports_shrinking", "options"} <= set(props)
    for name in props:
        try:
            getattr(b, name)
        except RecursionError:
            pytest.fail(f"Backend.{name} recursed")
        except RuntimeError as e:  # torch's own "does not support" of a C++ default (mem_allocator)
            assert "does not support" in str(e), (name, e)
    for name in ("supports_coalescing", "supports_splitting", "supports_shrinking", "supports_reconfigure",
                 "supports_window", "_supports_time_estimate"):
        assert getattr(b, name) is False, name
    assert pg.supports_reconfigure is False and pg.supports_window is False
    assert b.options.backend == "sparcoll" and b.options._timeout == timedelta(minutes=30)
    assert b.options.group_name == pg.group_name
    with pytest.raises(sc.InvalidUsageError, match="^send: sparcoll's torch.distributed backend does not support"):
        dist.batch_isend_irecv([dist.P2POp(dist.isend, torch.ones(2), 0)])
    with pytest.raises(sc.InvalidUsageError, match="^shrink_group: "):
        b.shrink([0])


def test_non_contiguous_leaf_that_requires_grad(world):
    """Reduced and broadcast in place as gloo does (the copy back raised before)."""
    gloo = dist.new_group(backend="gloo")
    for group in (None, gloo):
        x = torch.arange(8.0).reshape(2, 4).t().contiguous().t().requires_grad_(True)
        assert x.is_leaf and not x.is_contiguous()
        dist.all_reduce(x, group=group)
        dist.broadcast(x, src=0, group=group)
        dist.all_reduce(x.t(), group=group)  # a view of it
        assert torch.equal(x.detach(), torch.arange(8.0).reshape(2, 4)), group


def test_wait_is_interruptible(world, monkeypatch):
    """A pending op's wait() runs a signal's Python handler within its slice (not when the op ends),
    interrupts the communicator (its interrupt() where it has one) and raises the handler's exception."""
    import signal
    import time

    comm = st.communicator()
    interrupts = []
    monkeypatch.setattr(comm, "interrupt", lambda: interrupts.append(1), raising=False)
    gate = threading.Event()
    comm._run("a blocked call", lambda: gate.wait(5), None, True)  # the worker is busy until the gate opens
    x = torch.ones(4)
    work = dist.all_reduce(x, async_op=True)  # queued behind it

    class Stop(Exception):
        pass

    def handler(signum, frame):
        raise Stop

    old = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        t0 = time.monotonic()
        with pytest.raises(Stop):
            work.wait()
        elapsed = time.monotonic() - t0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        gate.set()
    assert elapsed < 2.0 and interrupts
    assert work.wait() and torch.equal(x, torch.ones(4))  # the recorder stopped nothing: the op ran after


def test_async_ops_hold_their_tensors(world):
    """An async op's temporary input lives until the worker has run the call."""
    gate = threading.Event()
    comm = st.communicator()
    comm._run("a blocked call", lambda: gate.wait(5), None, True)
    out = torch.zeros(1 << 16)
    work = dist.all_gather_into_tensor(out, torch.full((1 << 16,), 7.0), async_op=True)
    [torch.full((1 << 16,), -1.0) for _ in range(8)]  # would reuse the freed input's memory
    gate.set()
    work.wait()
    assert torch.equal(out, torch.full((1 << 16,), 7.0))


def test_async_work_and_future(world):
    x = torch.ones(1 << 16)
    work = dist.all_reduce(x, async_op=True)
    fut = work.get_future()
    assert work.wait() is True
    assert fut.done() and fut.value()[0] is x
    assert torch.equal(fut.then(lambda f: f.value()[0] + 1).wait(), torch.full((1 << 16,), 2.0))
    works = [dist.broadcast(torch.ones(10), src=0, async_op=True) for _ in range(10)]
    works.append(dist.barrier(async_op=True))
    for w in works:
        w.wait()


def test_communicator(world):
    comm = st.communicator()
    assert isinstance(comm, sc.Communicator) and (comm.rank, comm.size) == (0, 1)
    assert st.communicator(dist.group.WORLD) is comm
    assert comm.transport == "mpi"
    gloo = dist.new_group(backend="gloo")
    with pytest.raises(sc.InvalidUsageError, match="backend is 'gloo', not 'sparcoll'"):
        st.communicator(gloo)


def test_communicator_needs_init():
    if dist.is_initialized():
        pytest.skip("torch.distributed is already initialized in this process")
    with pytest.raises(sc.InvalidUsageError, match="init_process_group"):
        st.communicator()


def test_unsupported_ops_and_dtypes(world):
    t = torch.ones(4)
    with pytest.raises(sc.InvalidUsageError, match="^reduce: sparcoll's torch.distributed backend does not support "
                                                   "this op"):
        dist.reduce(t, dst=0)
    with pytest.raises(sc.InvalidUsageError, match="^all_to_all_single: "):
        dist.all_to_all_single(torch.empty(4), t)
    with pytest.raises(sc.InvalidUsageError, match="^gather: "):
        dist.gather(t, [torch.empty(4)], dst=0)
    with pytest.raises(sc.InvalidArgumentError, match="all_reduce: sparcoll's torch.distributed backend does not "
                                                      "support dtype torch.int16"):
        dist.all_reduce(torch.ones(2, dtype=torch.int16))
    with pytest.raises(sc.InvalidArgumentError, match="ReduceOp.AVG on torch.bool"):
        dist.all_reduce(torch.ones(2, dtype=torch.bool), op=dist.ReduceOp.AVG)
    with pytest.raises(sc.InvalidArgumentError, match="unsupported reduction op ReduceOp.BXOR"):
        dist.all_reduce(torch.ones(2, dtype=torch.int64), op=dist.ReduceOp.BXOR)
    with pytest.raises(sc.InvalidArgumentError, match=r"output 0 has shape \(3,\)"):
        dist.all_gather([torch.empty(3)], t)


def test_mpi_world_must_match():
    """A group whose size or rank is not MPI's (not under mpirun): the error names the fix."""
    b = _torch_backend.SparcollBackend(dist.HashStore(), 1, 2, timedelta(seconds=30))
    with pytest.raises(sc.InvalidUsageError) as ei:
        b.host_comm()
    msg = str(ei.value)
    assert "world_size 2 and rank 1 but MPI has size 1 and rank 0 (the job is not running under mpirun)" in msg
    assert "launch the job with mpirun" in msg and "world_size and rank of MPI" in msg


def test_mpi4py_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(sc.InvalidUsageError, match="mpi4py is not installed .*launch the job with mpirun"):
        _torch_work.mpi_comm(0, 1, [], None)


def test_cuda_without_nccl_says_so():
    if sc.features["nccl"]:
        pytest.skip("this build has nccl")
    b = _torch_backend.SparcollBackend(dist.HashStore(), 0, 2, timedelta(seconds=30))
    with pytest.raises(sc.InvalidUsageError, match="runs CUDA tensors over NCCL, which this sparcoll build lacks"):
        b.device_comm(torch.device("cuda", 0))


@pytest.mark.parametrize("kind", ["hash", "file"])
def test_unique_id_exchange_through_a_store(kind, tmp_path):
    """Rank 0 puts the id in the store, the others wait for it there (threads as ranks)."""
    def store():
        return shared if kind == "hash" else dist.FileStore(str(tmp_path / "store"), 4)

    shared = dist.HashStore() if kind == "hash" else None
    fake = bytes(range(128))
    got, errors = [None] * 4, []

    def rank(r):
        try:
            got[r] = _torch_work.exchange_unique_id(store(), r, "uid/0", make_id=lambda: fake)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=rank, args=(r,)) for r in (3, 2, 1, 0)]  # readers first: they wait
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and got == [fake] * 4


def test_unique_id_failure_reaches_every_rank():
    s = dist.HashStore()

    def fail():
        raise sc.InvalidUsageError("get_unique_id needs the nccl transport")

    with pytest.raises(sc.InvalidUsageError):
        _torch_work.exchange_unique_id(s, 0, "uid/0", make_id=fail)
    with pytest.raises(sc.RemoteError, match="rank 0 could not make the NCCL unique id: InvalidUsageError: "
                                             "get_unique_id needs"):
        _torch_work.exchange_unique_id(s, 1, "uid/0")


def test_timeout():
    assert _torch_work.timeout_seconds(None) is None
    import os

    if not os.environ.get("SPARCOLL_TIMEOUT"):
        assert _torch_work.timeout_seconds(timedelta(minutes=10)) == 600.0
