"""The communicator: creation (MPI, NCCL unique id, local threads,
torch.distributed) and the dense collectives. The area collectives (sparse
allreduce, DSOP, neighbourhood collectives) are methods too, inherited from
the mixins of _sparse.py, _dsop.py and _neighbor.py."""

from __future__ import annotations

import atexit as _atexit
import os as _os
import threading as _threading
import weakref as _weakref
from typing import Sequence as _Sequence

from . import _bootstrap, _sparcoll
from . import model as _model
from ._arrays import ArrayRef as _ArrayRef
from ._arrays import as_ref as _as_ref
from ._arrays import empty_like_kind as _empty_like_kind
from ._arrays import on_stream as _on_stream
from ._arrays import raw_view as _raw_view
from ._arrays import resolve_stream as _resolve_stream
from ._arrays import stream_handle as _stream_handle
from ._bootstrap import get_unique_id  # sparcoll.comm is public: its names stay
from ._capi import ALGOS as _ALGOS
from ._capi import DTYPE_NAMES as _DTYPE_NAMES
from ._capi import TRANSPORTS as _TRANSPORTS
from ._capi import feature_summary as _feature_summary
from ._capi import lookup as _lookup
from ._capi import name_of as _name_of
from ._capi import nonneg_int as _nonneg_int
from ._capi import reduce_op as _reduce_op
from ._capi import require_nccl as _require_nccl
from ._capi import subset as _subset
from ._dsop import DsopMixin as _DsopMixin
from ._neighbor import NeighborMixin as _NeighborMixin
from ._request import AsyncMixin as _AsyncMixin
from ._request import Request
from ._sparse import SparseMixin as _SparseMixin
from .errors import InvalidArgumentError as _InvalidArgumentError
from .errors import InvalidUsageError as _InvalidUsageError

__all__ = ["Communicator", "local_group", "get_unique_id", "Request"]

# Transports the MPI and torch.distributed bootstraps can set up.
_BOOTSTRAP_TRANSPORTS = _subset(_TRANSPORTS, "mpi", "nccl")


# Communicators still open at interpreter exit are destroyed before mpi4py
# finalizes MPI (Python's atexit runs before mpi4py's MPI_Finalize hook).
_live: "_weakref.WeakSet[Communicator]" = _weakref.WeakSet()
_live_lock = _threading.Lock()


@_atexit.register
def _close_all() -> None:
    with _live_lock:
        comms = list(_live)
    for c in comms:
        c.close()


class Communicator(_SparseMixin, _DsopMixin, _NeighborMixin, _AsyncMixin):
    """A group of ranks that run collectives together.

    Create one with :meth:`from_mpi`, :meth:`from_unique_id`, :meth:`from_torch`
    or :func:`local_group`.
    A communicator is used by one thread at a time; collectives release the GIL,
    so the communicators of a local group run concurrently in their threads.

    Arrays stay where they are (zero copy): host arrays (numpy, torch CPU, ...)
    on host communicators (transports "mpi" and host "local"), CUDA arrays
    (torch CUDA, cupy, DLPack / ``__cuda_array_interface__``) on device
    communicators ("nccl", device "local"), where the work is enqueued on the
    caller's current stream (``stream=`` overrides it).

    Every collective method takes ``async_op=True``: it checks its arguments
    and allocates its output at once, then returns a :class:`sparcoll.Request`
    while the call runs on the communicator's worker thread (one per
    communicator, calls in the order issued); ``req.wait()`` returns the
    result. A blocking call made while requests are pending runs after them.
    """

    def __init__(self, handle, transport: str):
        self._h = handle
        self.transport = transport
        self._topologies_init()
        with _live_lock:
            _live.add(self)

    # ---------------------------------------------------------------- creation
    @classmethod
    def from_mpi(cls, mpi_comm=None, transport: str = "mpi", *, device: int = -1,
                 timeout: float | None = None, algo: str = "auto", pipeline_bytes: int = 0,
                 tuning_file: str | None = None, topology_file: str | None = None) -> "Communicator":
        """One communicator per MPI rank over an mpi4py communicator (None: MPI.COMM_WORLD).

        transport "mpi" works on host arrays; "nccl" bootstraps an NCCL
        communicator over MPI and works on CUDA arrays on ``device`` (-1: the
        node-local rank). Collective over ``mpi_comm``. ``timeout`` (seconds)
        bounds every blocking wait (default: env SPARCOLL_TIMEOUT or 300);
        ``algo`` is what "auto" resolves to ("auto" = the tuning file's rules,
        then the cost model). ``tuning_file``: a tuning file (README, "Cost
        model"; None: env SPARCOLL_TUNING_FILE), read once here; a bad one raises
        InvalidArgumentError naming the file and the key. ``topology_file``:
        the network's tree (scripts/cluster's JSON; None: env
        SPARCOLL_TOPOLOGY_FILE): rings run in its depth-first order of the
        hosts; transport "mpi" only; errors as for the tuning file, on every rank.
        """
        code = _lookup(_BOOTSTRAP_TRANSPORTS, transport, "transport for from_mpi")
        need = "nccl" if transport == "nccl" else "mpi"
        if not _sparcoll.features[need]:
            raise _InvalidUsageError(f"this sparcoll build has no {need} transport "
                                     f"(built with: {_feature_summary()})")
        try:
            from mpi4py import MPI
        except ImportError as e:
            raise _InvalidUsageError("Communicator.from_mpi needs mpi4py (pip install mpi4py)") from e
        comm = MPI.COMM_WORLD if mpi_comm is None else mpi_comm
        if not isinstance(comm, MPI.Comm):
            raise TypeError(f"mpi_comm must be an mpi4py communicator, got {type(mpi_comm).__name__}")
        if comm == MPI.COMM_NULL:
            raise _InvalidArgumentError("mpi_comm is MPI.COMM_NULL")
        h = _sparcoll.init_mpi(MPI._addressof(comm), code, int(device), _timeout(timeout),
                               _lookup(_ALGOS, algo, "algorithm"), int(pipeline_bytes), _tuning(tuning_file),
                               _tuning(topology_file))
        return cls(h, transport)

    @classmethod
    def from_unique_id(cls, nranks: int, unique_id: bytes, rank: int, *, device: int = -1,
                       timeout: float | None = None, algo: str = "auto",
                       pipeline_bytes: int = 0, tuning_file: str | None = None) -> "Communicator":
        """Rank ``rank`` of ``nranks`` on the nccl transport (CUDA arrays), NCCL-style, without MPI.

        One process calls :func:`get_unique_id` and hands the bytes to every
        rank (any channel); each rank then calls this with the same ``nranks``
        and id. Collective: returns once every rank has joined, or raises
        CollectiveTimeoutError after ``timeout``. ``device``: CUDA device, -1 =
        the calling thread's current device (e.g. ``torch.cuda.set_device``'s).
        Other arguments as for :meth:`from_mpi`.
        """
        _require_nccl("Communicator.from_unique_id")
        for name, v in (("nranks", nranks), ("rank", rank), ("device", device)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"{name} must be an int, got {type(v).__name__}")
        if not isinstance(unique_id, (bytes, bytearray, memoryview)):
            raise TypeError(f"unique_id must be the bytes of get_unique_id(), got {type(unique_id).__name__}")
        h = _sparcoll.init_rank(nranks, bytes(unique_id), rank, device, _timeout(timeout),
                                _lookup(_ALGOS, algo, "algorithm"), int(pipeline_bytes), _tuning(tuning_file))
        return cls(h, "nccl")

    @classmethod
    def from_torch(cls, process_group=None, transport: str = "nccl", **kwargs) -> "Communicator":
        """A communicator with the ranks of a torch.distributed process group, in its rank order.

        Collective over the process group (default: the world group).
        transport "nccl" (CUDA tensors) needs no MPI: the group's rank 0 makes
        a unique id, torch.distributed.broadcast_object_list hands it to the
        members, and each calls :meth:`from_unique_id` (``device`` -1: the
        current CUDA device, so call torch.cuda.set_device first, as for an
        NCCL process group). transport "mpi" (CPU tensors, e.g. with a gloo
        group) is bootstrapped over MPI: the job must run under mpirun with
        mpi4py; the members exchange their MPI ranks through the process group
        and build the matching MPI communicator. kwargs as for :meth:`from_mpi`.
        """
        _lookup(_BOOTSTRAP_TRANSPORTS, transport, "transport for from_torch")
        if transport == "nccl":
            # Checked on every member before the broadcast, so none is left waiting.
            _require_nccl("Communicator.from_torch(transport='nccl')")
            size, rank, uid = _bootstrap.unique_id_of_group(process_group)
            return cls.from_unique_id(size, uid, rank, **kwargs)
        sub = _bootstrap.mpi_comm_of_group(process_group)
        try:
            return cls.from_mpi(sub, transport, **kwargs)
        finally:
            sub.Free()

    # ---------------------------------------------------------------- queries
    @property
    def rank(self) -> int:
        """This rank's number in the communicator, 0 .. size - 1."""
        return self._h.rank

    @property
    def size(self) -> int:
        """The number of ranks."""
        return self._h.size

    @property
    def is_device(self) -> bool:
        """True when the communicator works on CUDA arrays."""
        return self._h.is_device

    @property
    def device(self) -> int:
        """The CUDA device of a device communicator (put its arrays there), -1 for a host one."""
        return self._h.device

    @property
    def closed(self) -> bool:
        """True once `close()` (or a `with` block's end) has destroyed the communicator."""
        return self._h.closed

    def stats(self) -> dict:
        """Traffic of sparcoll's own schedules on this rank since the last reset:
        {"bytes_sent", "bytes_recv", "msgs_sent", "msgs_recv"}, and "inter_node_bytes_sent",
        "inter_node_msgs_sent": the part sent to another node, as the neighbourhood collectives
        count it by their topology's nodes; "host_reads": the times the host read a size that
        the data determines (sparse collectives; on a GPU each one waits for the stream);
        the structure of the calls: "rounds" of messages posted, "rendezvous" (handshakes with
        another rank's host: one per message of the mpi and local transports, one per barrier),
        "host_syncs" (waits of the host for the device), "events_created" (CUDA events; pooled,
        so none once the pool holds the few a call has in flight) and "scratch_allocs" (scratch buffers
        grown; kept, so 0 likewise); "max_link_bytes": with a topology file, the bytes this rank's
        sends put on the tree link they load most; "msgs_reduced": the received messages that were
        reduced as they arrived (in-process ranks on host memory or one GPU: no staging buffer).
        Native calls are not counted."""
        return self._h.stats()

    def reset_stats(self) -> None:
        """Sets every counter of `stats()` (and the topology's link counts) back to zero."""
        self._h.reset_stats()

    def algo_for(self, nbytes: int) -> str:
        """The dense allreduce algorithm "auto" picks for a message of nbytes bytes."""
        return _name_of(_ALGOS, self._h.algo_for(int(nbytes)))

    def estimate(self, collective: str, count: int, dtype="float32", algo: str = "auto",
                 density: float | None = None) -> tuple[float, str]:
        """The cost model's prediction for one call on this communicator, without
        running it (local, no communication): (seconds of ``algo`` — of auto's
        pick for "auto" —, the algorithm "auto" would run here).

        collective: "allreduce" (count), "reduce_scatter" (recvcount),
        "allgather" (sendcount), "sparse_allreduce" (count = the dimension,
        dtype = the value type, density = each rank's non-zeros / count in
        (0, 1]), "dsop" (n = m = count, dtype = the input type). dtype: a name
        ("float32"), a numpy dtype or scalar type, or a torch dtype. Native
        algorithms are priced as ring. See sparcoll.model for the same
        prediction at other sizes.
        """
        coll, code, dt, d = _model._codes(collective, algo, dtype, density)
        return _model._result(collective, *self._h.estimate(coll, code, _nonneg_int(count, "count"), dt, d))

    def close(self) -> None:
        """Destroys the communicator (also done at garbage collection and at exit), and
        first the topologies created on it. Waits for the requests of async_op calls
        still pending (each ends, at the latest, at the communicator's timeout)."""
        self._stop_worker()
        self._close_topologies()
        self._h.close()

    def __enter__(self) -> "Communicator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return f"<sparcoll.Communicator {self.transport} closed>"
        return f"<sparcoll.Communicator {self.transport} rank {self.rank} of {self.size}>"

    # ---------------------------------------------------------------- helpers
    def _check_where(self, ref: _ArrayRef, what: str) -> None:
        if self.is_device and ref.device is None:
            raise _InvalidArgumentError(
                f"{what} is in host memory but this {self.transport} communicator works on CUDA arrays")
        if not self.is_device and ref.device is not None:
            raise _InvalidArgumentError(
                f"{what} is on {ref.where()} but this {self.transport} communicator works on host arrays")

    def _input(self, x, what: str, stream=None, accepted=None) -> _ArrayRef:
        """A checked view of an input array; ``accepted``: its dtype family (index dtypes, ...)."""
        ref = _as_ref(x, what, stream if isinstance(stream, int) else None, accepted)
        self._check_where(ref, what)
        return ref

    def _output(self, src: _ArrayRef, out, shape, what: str = "out", dtype: int | None = None,
                allow_same: bool = False, inplace_offset: int | None = None):
        """(out object, its ArrayRef): a new array of the caller's kind, or the checked out=."""
        dtype = src.dtype if dtype is None else dtype
        if out is None:
            out = _empty_like_kind(src, shape, dtype)
            return out, _as_ref(out, what)
        ref = _as_ref(out, what)
        self._check_where(ref, what)
        if ref.dtype != dtype:
            raise _InvalidArgumentError(f"{what} has dtype {ref.dtype_name}, expected {_DTYPE_NAMES[dtype]}")
        if ref.size != _prod(shape):
            raise _InvalidArgumentError(
                f"{what} has {ref.size} elements, expected {_prod(shape)} (shape {tuple(shape)})")
        if ref.readonly:
            raise _InvalidArgumentError(f"{what} is read-only")
        if ref.device != src.device and ref.device is not None and src.device is not None \
                and ref.device >= 0 and src.device >= 0:
            raise _InvalidArgumentError(f"{what} is on {ref.where()} but the input is on {src.where()}")
        if ref.overlaps(src):
            in_place = (allow_same and ref.ptr == src.ptr) or \
                       (inplace_offset is not None and ref.ptr == src.ptr + inplace_offset)
            if not in_place:
                raise _InvalidArgumentError(f"{what} overlaps the input without being the in-place position")
        return out, ref

    # ---------------------------------------------------------------- dense collectives
    def allreduce(self, x, out=None, op="sum", algo: str = "auto", stream=None, *, async_op: bool = False):
        """out[i] = op over ranks of x[i]. Returns out (a new array of x's kind
        and shape when out is None); ``comm.allreduce(x, out=x)`` works in place.

        op: "sum", "prod" (or "product"), "max", "min", "avg" (or "average"), in
        any case; mpi4py's MPI.SUM/PROD/MAX/MIN; torch.distributed.ReduceOp.SUM/
        PRODUCT/MAX/MIN/AVG. algo: "auto", "ring", "rabenseifner", "recdbl",
        "native". async_op=True returns a :class:`sparcoll.Request` at once (its
        wait() returns out); every collective method takes it.
        """
        opc, algc = _reduce_op(op), _lookup(_ALGOS, algo, "algorithm")
        src = self._input(x, "x", stream)
        out, dst = self._output(src, out, src.shape, allow_same=True)
        h, st = self._h, _resolve_stream(src, stream)
        return self._run("allreduce", lambda: _sparcoll.allreduce(h, src.ptr, dst.ptr, src.size, src.dtype, opc, algc,
                                                                  st), out, async_op)

    def reduce_scatter(self, x, out=None, op="sum", algo: str = "auto", stream=None, *, async_op: bool = False):
        """Reduces x over ranks; rank r keeps block r of x's first dimension (its
        length for 1-D), the rows of ``numpy.array_split(x, size)[r]``: with n =
        x.shape[0], the first n % size ranks get n // size + 1 rows, the others
        n // size (0 when n < size). The result has shape (rows, *x.shape[1:]).
        In place when out is block r of x: ``out=x[off:off + rows]`` with off =
        r * (n // size) + min(r, n % size) (``x[r * n // size:(r + 1) * n // size]``
        when n divides by size).

        When n divides by size the call is zero-copy. Otherwise the C call needs
        equal blocks: x is copied into a scratch array of x's kind (same device
        and stream) of size * ceil(n / size) rows, block r padded to ceil(n /
        size) rows, reduce-scattered there, and this rank's rows are copied to
        out: one extra copy of x and of the result, and the padding's traffic.

        op: as for :meth:`allreduce`. algo: "auto", "ring", "rabenseifner"
        (recursive halving), "native".
        """
        opc, algc = _reduce_op(op), _lookup(_ALGOS, algo, "algorithm")
        src = self._input(x, "x", stream)
        P, r = self.size, self.rank
        if len(src.shape) == 0:
            raise _InvalidArgumentError("reduce_scatter: x is 0-d (shape ()); it needs a first dimension to split "
                                        "over the ranks")
        n, rest = src.shape[0], src.shape[1:]
        base, extra = divmod(n, P)
        h, st = self._h, _resolve_stream(src, stream)
        if extra == 0:  # even: zero copy
            shape = (base,) + rest
            recv = _prod(shape)
            out, dst = self._output(src, out, shape, inplace_offset=r * recv * src.itemsize)
            return self._run("reduce_scatter", lambda: _sparcoll.reduce_scatter(h, src.ptr, dst.ptr, recv, src.dtype,
                                                                                opc, algc, st), out, async_op)
        row = _prod(rest)
        rows, q = base + (r < extra), base + 1
        out, dst = self._output(src, out, (rows,) + rest, inplace_offset=(r * base + min(r, extra)) * row
                                * src.itemsize)
        scratch = _empty_like_kind(src, (P * q * row,))
        S = self._input(scratch, "reduce_scatter's scratch array")
        recv = q * row

        def call():  # on the worker too when async: the copy reads x in the order of the calls
            with _on_stream(src, st):  # block b of x (array_split's) -> rows b*q ... of the scratch array
                padded, X = _raw_view(S).reshape(P, q, row), _raw_view(src).reshape(n, row)
                padded[:extra] = X[:extra * q].reshape(extra, q, row)
                padded[extra:, :base] = X[extra * q:].reshape(P - extra, base, row)
            _sparcoll.reduce_scatter(h, S.ptr, S.ptr + r * recv * S.itemsize, recv, S.dtype, opc, algc, st)
            with _on_stream(src, st):  # this rank's rows of its block (reduced in place) -> out
                _raw_view(dst).reshape(rows, row)[...] = _raw_view(S).reshape(P, q, row)[r, :rows]

        return self._run("reduce_scatter", call, out, async_op)

    def allgather(self, x, out=None, algo: str = "auto", stream=None, *, async_op: bool = False):
        """Concatenates every rank's x along the first dimension: shape
        (size * x.shape[0], *x.shape[1:]) ((size,) for a 0-d x). In place when x
        is block rank of out: ``comm.allgather(out[rank * n:(rank + 1) * n], out=out)``.

        algo: "auto", "ring", "recdbl" (recursive doubling), "native".
        """
        algc = _lookup(_ALGOS, algo, "algorithm")
        src = self._input(x, "x", stream)
        P = self.size
        shape = (P,) if len(src.shape) == 0 else (P * src.shape[0],) + src.shape[1:]
        out, dst = self._output(src, out, shape, inplace_offset=-self.rank * src.nbytes)
        h, st = self._h, _resolve_stream(src, stream)
        return self._run("allgather", lambda: _sparcoll.allgather(h, src.ptr, dst.ptr, src.size, src.dtype, algc, st),
                         out, async_op)

    def broadcast(self, x, root: int = 0, algo: str = "auto", stream=None, *, async_op: bool = False):
        """Copies rank root's x into x on every rank, in place; returns x. x must
        be writable and C-contiguous, with the same shape and dtype on every
        rank; root's x is the source and keeps its contents. root: an int in
        [0, size).

        algo: "auto", "binomial" (a binomial tree, small messages),
        "scatter_allgather" (a binomial scatter then a ring allgather, large
        messages), "native" (MPI_Bcast / ncclBroadcast).
        """
        algc = _lookup(_ALGOS, algo, "algorithm")
        if isinstance(root, bool) or not isinstance(root, int):
            raise TypeError(f"root must be an int, got {type(root).__name__}")
        if not 0 <= root < self.size:
            raise _InvalidArgumentError(f"broadcast: root {root} is out of range: the communicator has "
                                        f"{self.size} ranks, root must be in [0, {self.size})")
        ref = self._input(x, "x", stream)
        if ref.readonly:
            raise _InvalidArgumentError("x is read-only; broadcast writes it in place")
        h, st = self._h, _resolve_stream(ref, stream)
        return self._run("broadcast", lambda: _sparcoll.broadcast(h, ref.ptr, ref.size, ref.dtype, int(root), algc,
                                                                  st), x, async_op)

    def barrier(self, stream=None, *, async_op: bool = False):
        """Returns once every rank has called barrier (bounded by the timeout);
        None, or a :class:`sparcoll.Request` with async_op=True."""
        h, st = self._h, _stream_handle(stream) if self.is_device else 0
        return self._run("barrier", lambda: _sparcoll.barrier(h, st), None, async_op)

    def abort(self) -> None:
        """Gives up on this communicator (scCommAbort): peers waiting on this rank
        fail with a RemoteError naming it within about a second, and every later
        call here raises. Not while another thread is inside a call on it: with
        async_op requests pending, it first waits for them (each ends, at the
        latest, at the communicator's timeout)."""
        self._sync_pending()
        _sparcoll.abort(self._h)

    def interrupt(self) -> None:
        """Interrupts this communicator from any thread, while another thread is
        blocked in a call on it (scCommInterrupt; safe in a signal handler): the
        blocked call raises CollectiveInterruptedError within about 100 ms, the
        communicator is aborted as a failed call leaves it, and peers waiting on
        this rank get a RemoteError naming it. Ctrl-C does this by itself: a
        signal whose Python handler raises (KeyboardInterrupt) during a blocking
        call interrupts the call and raises the handler's exception."""
        _sparcoll.interrupt(self._h)

    def shrink(self, exclude: _Sequence[int]) -> "Communicator":
        """A new communicator of this one's ranks less ``exclude`` (scCommShrink),
        renumbered in rank order: how a job goes on without a dead rank. Called
        by every rank not excluded, with the same list; works on an aborted
        communicator (after a failure), which stays open until closed.
        Transports: local; nccl with NCCL >= 2.27; mpi only with a ULFM MPI."""
        if isinstance(exclude, (str, bytes)) or not all(isinstance(r, int) and not isinstance(r, bool)
                                                         for r in exclude):
            raise TypeError("exclude must be a sequence of int ranks")
        ranks, h = [int(r) for r in exclude], self._h
        return type(self)(self._run("shrink", lambda: _sparcoll.shrink(h, ranks)), self.transport)


def local_group(n: int, devices: _Sequence[int] | None = None, *, timeout: float | None = None,
                algo: str = "auto", pipeline_bytes: int = 0, tuning_file: str | None = None,
                topology_file: str | None = None) -> list[Communicator]:
    """n communicators of one process, rank i = element i, for n threads.

    devices None: host memory (numpy / CPU tensors). Otherwise devices[i] is
    rank i's CUDA device (ranks may share a device). Each communicator must be
    driven by its own thread, concurrently (collectives block until every rank
    takes part); e.g. with concurrent.futures.ThreadPoolExecutor(n).
    Other arguments as for :meth:`Communicator.from_mpi`.
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    devs = None if devices is None else [int(d) for d in devices]
    if devs is not None and not _sparcoll.features["cuda"]:
        raise _InvalidUsageError("local_group(devices=...) needs a CUDA build of sparcoll "
                                 f"(built with: {_feature_summary()})")
    hs = _sparcoll.init_local(n, devs, _timeout(timeout), _lookup(_ALGOS, algo, "algorithm"), int(pipeline_bytes),
                              _tuning(tuning_file), _tuning(topology_file))
    return [Communicator(h, "local") for h in hs]


def _timeout(t: float | None) -> float:
    if t is None:
        return 0.0
    t = float(t)
    if not t > 0:
        raise _InvalidArgumentError(f"timeout must be > 0 seconds, got {t}")
    return t


def _tuning(path) -> str | None:
    return None if path is None else _os.fspath(path)


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n
