"""The pieces of the torch.distributed backend (sparcoll/_torch_backend.py)
below the ops: the Work objects, how one op is launched (synchronously or on
the communicator's worker thread, with the copies it needs before and after),
and the bootstrap of the communicators (MPI for CPU tensors, an NCCL unique id
through the process group's store for CUDA tensors).

Work and futures. torch's ProcessGroup calls the backend's Python methods
through its PyBackend trampoline and expects a ``torch._C._distributed_c10d._Work``
back (``dist._Work``); ours wraps a ``torch.futures.Future`` whose value is the
op's output tensors (what DDP's default hook reads). ``wait()`` waits on that
future and ``get_future()`` returns it.

- CPU: with ``opts.asyncOp`` the C call goes to the communicator's worker
  thread (``async_op=True``: GIL released, calls in issue order); when it ends,
  a done-callback on that thread copies results where they belong (list
  outputs, non-contiguous tensors) and completes the torch future. A blocking
  op runs in the caller's thread and returns a completed Work.
- CUDA (torch's stream semantics, as ProcessGroupNCCL): a blocking op is
  enqueued on the current stream before the call returns; an async op runs
  on a side stream that first waits for the current stream, its tensors are
  marked used there (``record_stream``), and the future is a CUDA future
  (``Future(devices=[dev])``) completed under that side stream, so ``wait()``
  and ``get_future().wait()`` make the caller's current stream wait for the
  collective, without blocking the host on the GPU.
"""

from __future__ import annotations

import os as _os

import torch as _torch
import torch.distributed as _dist

from . import _bootstrap
from . import _sparcoll
from ._capi import feature_summary as _feature_summary
from .comm import Communicator as _Communicator
from .errors import InvalidUsageError as _InvalidUsageError
from .errors import RemoteError as _RemoteError
from .errors import SparcollError as _SparcollError

__all__: list[str] = []

NAME = "sparcoll"


class Work(_dist._Work):
    """torch.distributed's handle of one op of the sparcoll backend."""

    def __init__(self, future: _torch.futures.Future, barrier_device=None, inner=None):
        super().__init__()
        self._future, self._inner = future, inner
        self._barrier_device = barrier_device  # a CUDA barrier also blocks the host, as torch's does

    def wait(self, timeout=None) -> bool:
        # The communicator's own timeout bounds every op; torch's timeout is not needed here.
        if self._inner is not None:
            value = self._inner.wait()
            if isinstance(value, _Failure):  # the op's own exception (sparcoll's class), not a RuntimeError
                raise value.error
        self._future.wait()
        if self._barrier_device is not None:
            _torch.cuda.current_stream(self._barrier_device).synchronize()
        return True

    def get_future(self) -> _torch.futures.Future:
        return self._future


def launch(comm: _Communicator, device: _torch.device, issue, outputs, async_op: bool, *, keep=(), post=None,
           barrier=False) -> Work:
    """Runs one op. ``issue(stream, async_op)`` makes the Communicator call
    (returns a sparcoll.Request when async_op); ``post()`` copies results to
    where torch wants them, after the call; ``outputs`` is the future's value;
    ``keep``: tensors the call reads or writes (marked used on the side stream)."""
    if device.type != "cuda":
        raw, fut = _futures(None)
        if not async_op:
            issue(None, False)
            if post is not None:
                post()
            raw.set_result(outputs)
            return Work(fut, inner=raw)
        req = issue(None, True)

        def done(f):
            exc = f.exception()
            if exc is None and post is not None:
                try:
                    post()
                except BaseException as e:  # noqa: BLE001 - handed to the waiter
                    exc = e
            if exc is not None:
                raw.set_result(_Failure(exc))
            else:
                raw.set_result(outputs)

        req.get_future().add_done_callback(done)
        return Work(fut, inner=raw)

    current = _torch.cuda.current_stream(device)
    raw, fut = _futures(device)
    if not async_op:  # enqueued on the current stream, in order with the caller's kernels
        issue(current, False)
        if post is not None:
            post()
        raw.set_result(outputs)  # a CUDA future: records an event on the current stream
        return Work(fut, device if barrier else None, raw)
    side = _side_stream(comm, device)
    side.wait_stream(current)
    for t in keep:
        t.record_stream(side)
    req = issue(side, True)

    def done_cuda(f):
        exc = f.exception()
        if exc is not None:
            raw.set_result(_Failure(exc))
            return
        try:
            with _torch.cuda.device(device), _torch.cuda.stream(side):
                if post is not None:
                    post()
                raw.set_result(outputs)  # the event is recorded on the side stream
        except BaseException as e:  # noqa: BLE001 - handed to the waiter
            if not raw.done():
                raw.set_result(_Failure(e))

    req.get_future().add_done_callback(done_cuda)
    return Work(fut, device if barrier else None, raw)


class _Failure:
    """An op's exception, carried as the value of the inner future (see _futures)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


def _unwrap(f):
    value = f.value()
    if isinstance(value, _Failure):
        raise value.error
    return value


def _futures(device):
    """(inner, outer): the op completes the inner future with its outputs or a _Failure; the
    outer one, which Work hands out, raises the failure. Why not Future.set_exception: it
    marks the error in the Python wrapper only (an unwrap function), which is lost when
    the future goes through C++ (Work.get_future() via the ProcessGroup), so a waiter would
    get the exception object as a value; an exception raised in a then() callback is set
    on the C++ future itself."""
    inner = _torch.futures.Future() if device is None else _torch.futures.Future(devices=[device])
    return inner, inner.then(_unwrap)


def _side_stream(comm, device):
    s = getattr(comm, "_torch_side_stream", None)
    if s is None:
        s = _torch.cuda.Stream(device=device)
        comm._torch_side_stream = s
    return s


def timeout_seconds(timeout) -> float | None:
    """The communicator's timeout: env SPARCOLL_TIMEOUT when set, else the process group's."""
    if _os.environ.get("SPARCOLL_TIMEOUT") or timeout is None:
        return None
    return max(1.0, float(timeout.total_seconds()))


# ---------------------------------------------------------------- bootstrap
_FIX = ("launch the job with mpirun (e.g. `mpirun -np 4 python train.py`) with mpi4py installed, and pass "
        "init_process_group the world_size and rank of MPI (MPI.COMM_WORLD's size and rank)")


def mpi_comm(rank: int, size: int, global_ranks, timeout) -> _Communicator:
    """The host communicator of a group: MPI_COMM_WORLD for the default group,
    an MPI communicator made of the group's global ranks for a subgroup
    (MPI_Comm_create_group: collective over the group's members only)."""
    what = f"the '{NAME}' torch.distributed backend runs CPU tensors over MPI"
    if not _sparcoll.features["mpi"]:
        raise _InvalidUsageError(f"{what}, which this sparcoll build lacks (built with: {_feature_summary()})")
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise _InvalidUsageError(f"{what}: mpi4py is not installed (pip install mpi4py); {_FIX}") from e
    world = MPI.COMM_WORLD
    wsize, wrank = world.Get_size(), world.Get_rank()
    if not global_ranks:  # the default group: torch's world is MPI's
        if (wsize, wrank) != (size, rank):
            raise _InvalidUsageError(
                f"{what}: the process group has world_size {size} and rank {rank} but MPI has size {wsize} and "
                f"rank {wrank}" + (" (the job is not running under mpirun)" if wsize == 1 else "") + f"; {_FIX}")
        return _Communicator.from_mpi(world, timeout=timeout)
    ranks = [int(r) for r in global_ranks]
    default = _dist.distributed_c10d._get_default_group()
    if (default.size(), default.rank()) != (wsize, wrank) or max(ranks) >= wsize:
        raise _InvalidUsageError(
            f"{what}: the default process group has world_size {default.size()} and rank {default.rank()} but "
            f"MPI has size {wsize} and rank {wrank}; {_FIX}")
    group = world.Get_group().Incl(ranks)
    try:
        sub = world.Create_group(group)
    finally:
        group.Free()
    try:
        return _Communicator.from_mpi(sub, timeout=timeout)
    finally:
        sub.Free()


def exchange_unique_id(store, rank: int, key: str, make_id=None) -> bytes:
    """The group's rank 0 makes an NCCL unique id and puts it in the store under
    ``key``; the other ranks read it (store.get waits for it, up to the store's
    timeout). A failure on rank 0 is put there instead, so no rank waits for an
    id that never comes."""
    make_id = _bootstrap.get_unique_id if make_id is None else make_id
    if rank == 0:
        try:
            uid = bytes(make_id())
        except _SparcollError as e:
            store.set(key, b"E" + f"{type(e).__name__}: {e}".encode())
            raise
        store.set(key, b"I" + uid)
        return uid
    value = bytes(store.get(key))
    if value[:1] == b"E":
        raise _RemoteError(f"the process group's rank 0 could not make the NCCL unique id: {value[1:].decode()}")
    return value[1:]


def nccl_comm(store, rank: int, size: int, device: _torch.device, serial: int, timeout) -> _Communicator:
    """The device communicator of a group on ``device``, through an NCCL unique id in the group's store."""
    if not _sparcoll.features["nccl"]:  # checked on every rank before the exchange: no one waits
        raise _InvalidUsageError(
            f"the '{NAME}' torch.distributed backend runs CUDA tensors over NCCL, which this sparcoll build lacks "
            f"(built with: {_feature_summary()}); build sparcoll with CUDA and NCCL (SPARCOLL_CUDA=ON), or keep "
            "the tensors on the CPU")
    uid = exchange_unique_id(store, rank, f"sparcoll/nccl_uid/{serial}")
    index = device.index if device.index is not None else _torch.cuda.current_device()
    return _Communicator.from_unique_id(size, uid, rank, device=index, timeout=timeout)
