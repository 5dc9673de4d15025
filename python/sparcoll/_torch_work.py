"""The pieces of the torch.distributed backend (sparcoll/_torch_backend.py)
below the ops: the Work objects, how one op is launched (synchronously or on
the communicator's worker thread, with the copies it needs after the call),
and the bootstrap of the communicators (MPI for CPU tensors, an NCCL unique id
through the process group's store for CUDA tensors).

Work and futures. torch's ProcessGroup calls the backend's Python methods
through its PyBackend trampoline and expects a ``torch._C._distributed_c10d._Work``
back (``dist._Work``); ``get_future()`` returns a ``torch.futures.Future``
whose value is the op's output tensors (what DDP's default hook reads).

- CPU: a blocking op runs in the caller's thread (behind the communicator's
  pending requests, if any) and returns a done Work. With ``opts.asyncOp`` the
  C call and the copies after it (list outputs, non-contiguous tensors) run as
  one task on the communicator's worker thread (``Communicator._run``: GIL
  released, calls in issue order); ``wait()`` waits for that task's Request.
  The torch future is made only when ``get_future()`` asks for it (a blocking
  op, and an async one that is only waited on, never need one).
- CUDA (torch's stream semantics, as ProcessGroupNCCL): a blocking op is
  enqueued on the current stream before the call returns; an async op runs
  on a side stream that first waits for the current stream, its tensors are
  marked used there (``record_stream``), and the future is a CUDA future
  (``Future(devices=[dev])``) completed under that side stream, so ``wait()``
  and ``get_future().wait()`` make the caller's current stream wait for the
  collective, without blocking the host on the GPU.

``wait()`` of a pending op waits in slices of 100 ms, so that a signal's
Python handler (Ctrl-C) runs during the wait; when it raises, the
communicator is interrupted (``Communicator.interrupt``: the call in flight
raises, the peers get a RemoteError) and the exception goes on. The worker is
a daemon thread: it does not keep the process alive. (The torch future's own
``wait()`` is torch's C++ wait, which no Python code can make interruptible:
wait on the Work.)
"""

from __future__ import annotations

import os as _os
import threading as _threading

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

#: Seconds between two checks for a signal while a Work waits.
WAIT_SLICE = 0.1

_future_lock = _threading.Lock()  # get_future() makes a pending Work's torch future once


class Work(_dist._Work):
    """torch.distributed's handle of one op of the sparcoll backend: a done CPU op
    (blocking, or every subclass's base). ``outputs``: the future's value."""

    def __init__(self, outputs):
        super().__init__()
        self._outputs = outputs
        self._future = None

    def wait(self, timeout=None) -> bool:
        # The communicator's own timeout bounds every op; torch's timeout is not needed here.
        return True

    def get_future(self) -> _torch.futures.Future:
        fut = self._future
        if fut is None:
            with _future_lock:
                fut = self._future
                if fut is None:
                    fut = self._future = self._make_future()
        return fut

    def _make_future(self) -> _torch.futures.Future:
        fut = _torch.futures.Future()
        fut.set_result(self._outputs)
        return fut


class _PendingWork(Work):
    """A CPU op running on the communicator's worker: ``req`` is the Request of
    its task (the C call and the copies after it)."""

    def __init__(self, outputs, comm: _Communicator, req):
        super().__init__(outputs)
        self._comm, self._req = comm, req

    def wait(self, timeout=None) -> bool:
        wait_request(self._req, self._comm)  # raises the op's own exception (sparcoll's class)
        return True

    def _make_future(self) -> _torch.futures.Future:
        raw, fut = _futures(None)
        outputs = self._outputs

        def done(f):  # on the worker, right after the task; at once if it has already ended
            exc = f.exception()
            raw.set_result(outputs if exc is None else _Failure(exc))

        self._req.get_future().add_done_callback(done)
        return fut


class _CudaWork(Work):
    """A CUDA op: ``raw`` is completed (under the op's stream) with its outputs or a _Failure,
    ``future`` is the one handed out; ``req`` the Request of an async op's call."""

    def __init__(self, outputs, raw, future, comm=None, req=None, barrier_device=None):
        super().__init__(outputs)
        self._raw, self._future, self._comm, self._req = raw, future, comm, req
        self._barrier_device = barrier_device  # a CUDA barrier also blocks the host, as torch's does

    def wait(self, timeout=None) -> bool:
        if self._req is not None:
            wait_request(self._req, self._comm)
        value = self._raw.wait()  # set by the request's done-callback: at most that callback's time
        if isinstance(value, _Failure):  # the op's own exception (sparcoll's class), not a RuntimeError
            raise value.error
        self._future.wait()  # makes the current stream wait for the op's stream
        if self._barrier_device is not None:
            _torch.cuda.current_stream(self._barrier_device).synchronize()
        return True


class CoalescedWork(Work):
    """One Work of several ops (issued in order on the same communicators)."""

    def __init__(self, works):
        super().__init__(None)
        self._works = works

    def wait(self, timeout=None) -> bool:
        for w in self._works:
            w.wait()
        return True

    def _make_future(self) -> _torch.futures.Future:
        futs = [w.get_future() for w in self._works]
        return _torch.futures.collect_all(futs).then(lambda f: [t for x in f.value() for t in x.value()])


def wait_request(req, comm) -> None:
    """Waits for an async call's Request in slices of WAIT_SLICE seconds, so that a
    signal's Python handler runs meanwhile (the main thread runs handlers only
    between bytecodes); when one raises (KeyboardInterrupt), the call is still
    running: the communicator is interrupted, so that the call ends and the
    peers learn of it, and the exception goes on."""
    try:
        while True:
            try:
                req.wait(WAIT_SLICE)
                return
            except TimeoutError:
                if req.is_completed():
                    raise  # the call's own error (CollectiveTimeoutError is a TimeoutError)
    except BaseException:
        if not req.is_completed():
            interrupt(comm)
        raise


def interrupt(comm) -> None:
    """Interrupts the communicator's blocked call, where this sparcoll has
    ``Communicator.interrupt``; quietly: it is called on the way out of a wait that
    a signal ended, which re-raises the signal's exception."""
    fn = getattr(comm, "interrupt", None)
    if fn is None:
        return
    try:
        fn()
    except Exception:  # noqa: BLE001 - closed or aborted meanwhile: nothing left to interrupt
        pass


def run_host(comm: _Communicator, what: str, task, outputs, async_op: bool, keep=()) -> Work:
    """Runs a CPU op's ``task()`` (its C call and the copies after it): now, behind
    the communicator's pending requests (a done Work), or with async_op on its
    worker thread (a pending one). ``keep``: the tensors the call reads or writes."""
    if not async_op:
        comm._run(what, task, None, False)
        return Work(outputs)
    return _PendingWork(outputs, comm, comm._run(what, _holding(task, keep), None, True))


def _holding(task, keep):
    """``task`` holding ``keep`` until it has run: the C call sees only addresses, and the
    caller may drop its tensors (a temporary input) and the Work before the worker runs it."""
    def held():
        task()
        return keep
    return held


def launch(comm: _Communicator, device: _torch.device, what: str, call, outputs, async_op: bool, *, keep=(),
           post=None, barrier=False) -> Work:
    """Runs one op. ``call(stream)`` makes the C call (``stream``: the cudaStream_t as
    an int, 0 for CPU tensors); ``post()`` copies results to where torch wants
    them, after the call; ``outputs`` is the future's value; ``keep``: tensors
    the call reads or writes (held until it has run, marked used on a CUDA op's
    side stream)."""
    if device.type != "cuda":
        if post is None:
            return run_host(comm, what, lambda: call(0), outputs, async_op, keep)

        def task():
            call(0)
            post()
        return run_host(comm, what, task, outputs, async_op, keep)

    current = _torch.cuda.current_stream(device)
    raw, fut = _futures(device)
    if not async_op:  # enqueued on the current stream, in order with the caller's kernels
        handle = current.cuda_stream
        comm._run(what, lambda: call(handle), None, False)
        if post is not None:
            post()
        raw.set_result(outputs)  # a CUDA future: records an event on the current stream
        return _CudaWork(outputs, raw, fut, barrier_device=device if barrier else None)
    side = _side_stream(comm, device)
    side.wait_stream(current)
    for t in keep:
        t.record_stream(side)
    handle = side.cuda_stream
    req = comm._run(what, _holding(lambda: call(handle), keep), None, True)

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
    return _CudaWork(outputs, raw, fut, comm, req, device if barrier else None)


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
