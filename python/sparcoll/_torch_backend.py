"""The "sparcoll" torch.distributed backend, registered by ``import sparcoll.torch``:

    import sparcoll.torch                      # registers the backend
    dist.init_process_group("sparcoll", init_method=..., rank=r, world_size=P)   # under mpirun

Written in Python over the extension's bindings, as a subclass of c10d's
``Backend`` (``torch._C._distributed_c10d.Backend``, the class behind torch's
own pure-Python backends such as ``torch.distributed._nccl4py``): torch's
ProcessGroup calls the methods below through its PyBackend trampoline. Why not
a C++ torch extension: it would compile against torch's headers (minutes of
build on top of the library's, and a CUDA toolchain matching torch's), and
bind to one torch version's C++ ABI, so that every torch upgrade would need a
rebuild and a wheel per torch version; the Python trampoline is a stable
public surface, and the collectives themselves run in sparcoll's C library
with the GIL released anyway (the Python overhead is a few microseconds per
op, small beside a gradient bucket's allreduce).

Communicators are made lazily, on a group's first op on a device type: CPU
tensors use the mpi transport (MPI_COMM_WORLD for the default group, an MPI
communicator of the group's global ranks for a subgroup; the job must run
under mpirun with torch's world_size and ranks equal to MPI's); CUDA tensors
use the nccl transport, its unique id handed over through the group's store.
The ops and their Work objects: sparcoll/_torch_work.py.
"""

from __future__ import annotations

import threading as _threading

import torch as _torch
import torch.distributed as _dist
from torch._C._distributed_c10d import Backend as _C10dBackend

from . import _sparcoll
from . import _torch_work as _w
from ._capi import ALGOS as _ALGOS
from ._capi import DTYPES as _CODES
from ._capi import OPS as _OPS
from ._capi import reduce_op as _reduce_op
from .comm import Communicator as _Communicator
from .errors import InvalidArgumentError as _InvalidArgumentError
from .errors import InvalidUsageError as _InvalidUsageError

__all__: list[str] = []

NAME = _w.NAME

#: torch dtypes the backend takes: gloo's (complex ones arrive as their real view). bool
#: travels as uint8 (one byte, 0 or 1).
DTYPES = (_torch.float32, _torch.float64, _torch.float16, _torch.bfloat16, _torch.int8, _torch.int32, _torch.int64,
          _torch.uint8, _torch.bool)

SUPPORTED = ("all_reduce (SUM, AVG, PRODUCT, MIN, MAX; on bool also BAND, BOR, BXOR), all_reduce_coalesced, "
             "broadcast, all_gather, all_gather_into_tensor, reduce_scatter, reduce_scatter_tensor, their coalesced "
             "forms, barrier")

# Computed once, so that an op maps its dtype and ReduceOp with one dict lookup.
_DT = {d: _CODES["uint8" if d is _torch.bool else str(d).replace("torch.", "")] for d in DTYPES}
_R = _dist.ReduceOp.RedOpType
_AUTO = _ALGOS["auto"]
_NUMBER_OPS = {_R.SUM: "sum", _R.PRODUCT: "prod", _R.MIN: "min", _R.MAX: "max", _R.AVG: "avg"}
# bool as gloo reduces it (SUM is a logical or, PRODUCT an and, ...), on 0/1 bytes: max and min
# never leave {0, 1}; BXOR is the parity of the byte sum (exact mod 256, so at any group size).
_BOOL_OPS = {_R.SUM: "max", _R.PRODUCT: "min", _R.MIN: "min", _R.MAX: "max", _R.BAND: "min", _R.BOR: "max",
             _R.BXOR: "sum"}
#: (dtype, ReduceOp.RedOpType) -> (sparcoll dtype code, op code, whether the result is a byte sum's parity)
_REDUCTIONS = {(d, r): (_DT[d], _OPS[name], d is _torch.bool and r == _R.BXOR)
               for d in DTYPES for r, name in (_BOOL_OPS if d is _torch.bool else _NUMBER_OPS).items()}


def _unsupported(torch_name: str):
    def method(self, *args, **kwargs):
        raise _InvalidUsageError(f"{torch_name}: sparcoll's torch.distributed backend does not support this op "
                                 f"(it supports {SUPPORTED}); run it on another process group, e.g. "
                                 "dist.new_group(backend='gloo')")
    method.__name__ = torch_name
    return method


def _false(self) -> bool:
    return False


class SparcollBackend(_C10dBackend):
    """The c10d backend of one process group (the group's rank and size)."""

    def __init__(self, store, rank: int, size: int, timeout, global_ranks=(), options=None):
        super().__init__(rank, size)
        self._store, self._global_ranks = store, list(global_ranks)
        self._timeout = _w.timeout_seconds(timeout)
        if options is None:
            options = _C10dBackend.Options(NAME, timeout) if timeout is not None else _C10dBackend.Options(NAME)
            options.global_ranks_in_group = self._global_ranks
        self._options = options
        self._host: _Communicator | None = None
        self._devices: dict[int, _Communicator] = {}
        self._lock = _threading.Lock()

    def getBackendName(self) -> str:
        return NAME

    # ---------------------------------------------------------------- what torch asks the backend
    # Backend's C++ properties, overridden: torch's PyBackend trampoline reads these Python
    # attributes, and the inherited ones would call back into the trampoline (RecursionError).
    # False: no ncclGroupStart-style coalescing (torch then issues batch_isend_irecv's ops one
    # by one, and send is refused), no split / shrink / merge of communicators, no time
    # estimates, no reconfiguration, no symmetric-memory windows.
    supports_coalescing = property(_false)
    supports_splitting = property(_false)
    supports_shrinking = property(_false)
    supports_reconfigure = property(_false)
    supports_window = property(_false)
    _supports_time_estimate = property(_false)

    @property
    def options(self):
        """The group's Backend.Options (name, timeout, global ranks), as gloo's and nccl4py's."""
        return self._options

    # ---------------------------------------------------------------- communicators
    def host_comm(self) -> _Communicator:
        """The mpi communicator of CPU tensors (made on first use: collective over the group)."""
        with self._lock:
            if self._host is None:
                self._host = _w.mpi_comm(self.rank(), self.size(), self._global_ranks, self._timeout)
            return self._host

    def device_comm(self, device=None) -> _Communicator:
        """The nccl communicator of CUDA tensors on ``device`` (None: the current one; made on
        first use: collective over the group)."""
        device = _torch.device("cuda", _torch.cuda.current_device()) if device is None else _torch.device(device)
        index = device.index if device.index is not None else _torch.cuda.current_device()
        with self._lock:
            comm = self._devices.get(index)
            if comm is None:
                comm = _w.nccl_comm(self._store, self.rank(), self.size(), _torch.device("cuda", index),
                                    len(self._devices), self._timeout)
                self._devices[index] = comm
            return comm

    def _comm_for(self, device: _torch.device) -> _Communicator:
        return self.device_comm(device) if device.type == "cuda" else self.host_comm()

    def comms(self) -> list[_Communicator]:
        return ([self._host] if self._host is not None else []) + list(self._devices.values())

    def shutdown(self) -> None:
        for c in self.comms():
            c.close()
        self._host, self._devices = None, {}

    def abort(self) -> None:
        for c in self.comms():
            c.abort()

    # ---------------------------------------------------------------- checks
    def _check(self, what: str, tensors) -> _torch.device:
        """The one device of the tensors (CPU or CUDA), after checking their dtypes."""
        devices = {t.device for t in tensors}
        if len(devices) > 1:
            raise _InvalidArgumentError(f"{what}: the tensors are on different devices: "
                                        f"{', '.join(sorted(map(str, devices)))}")
        for t in tensors:
            if t.dtype not in _DT:
                raise _InvalidArgumentError(
                    f"{what}: sparcoll's torch.distributed backend does not support dtype {t.dtype}; supported: "
                    + ", ".join(str(d).replace("torch.", "") for d in DTYPES))
            if t.device.type not in ("cpu", "cuda"):
                raise _InvalidArgumentError(f"{what}: a tensor on {t.device}; sparcoll's backend takes CPU "
                                            "(mpi) and CUDA (nccl) tensors")
        return devices.pop() if devices else _torch.device("cpu")

    @staticmethod
    def _single(what: str, tensors):
        if len(tensors) != 1:
            raise _InvalidArgumentError(f"{what}: expected one tensor per process, got {len(tensors)}")
        return tensors[0]

    # ---------------------------------------------------------------- ops
    # The C calls are the extension's, with the arguments Communicator's methods give them
    # (sparcoll/comm.py): the checks here are torch's (shapes, dtypes, devices), and a
    # tensor's pointer, length and dtype code go to the call directly. The Communicator
    # methods would check and view the same arrays again on every op: about 7 us of Python
    # at 1 rank, where the call itself takes 0.3 us (python/examples/torch_overhead_bench.py).
    def allreduce(self, tensors, opts):
        if len(tensors) == 1:  # the common case first: one contiguous CPU tensor, reduced in place
            t = tensors[0]
            spec = _REDUCTIONS.get((t.dtype, opts.reduceOp.op))
            if spec is not None and not spec[2] and t.is_cpu and t.is_contiguous():
                comm = self._host or self.host_comm()
                h, p, n, dt, op = comm._h, t.data_ptr(), t.numel(), spec[0], spec[1]
                return _w.run_host(comm, "all_reduce", lambda: _sparcoll.allreduce(h, p, p, n, dt, op, _AUTO, 0),
                                   tensors, opts.asyncOp, tensors)
        t = self._single("all_reduce", tensors)
        return self._allreduce("all_reduce", [t], opts.reduceOp, opts.asyncOp, tensors)

    def allreduce_coalesced(self, tensors, opts):
        return self._allreduce("all_reduce_coalesced", list(tensors), opts.reduceOp,
                               getattr(opts, "asyncOp", True), tensors)

    def _allreduce(self, what, ts, reduce_op, async_op, outputs):
        dev = self._check(what, ts)
        if len({t.dtype for t in ts}) > 1:
            raise _InvalidArgumentError(f"{what}: the tensors have different dtypes: "
                                        + ", ".join(str(t.dtype) for t in ts))
        dt, op, parity = _reduction(what, ts[0].dtype, reduce_op)
        comm = self._comm_for(dev)
        # Detached: the C call writes memory autograd does not see, and the copies back do the
        # same (as gloo's: an in-place op on a leaf that requires grad is allowed).
        ds = [t.detach() for t in ts]
        if len(ds) == 1 and ds[0].is_contiguous():
            buf, back = ds[0], None
        else:  # one flat buffer: a non-contiguous tensor, or the coalesced list
            buf = ds[0].contiguous() if len(ds) == 1 else _torch.cat([t.reshape(-1) for t in ds])

            def back():
                if len(ds) == 1:
                    ds[0].copy_(buf)
                    return
                off = 0
                for t in ds:
                    t.copy_(buf[off:off + t.numel()].view_as(t))
                    off += t.numel()
        h, p, n = comm._h, buf.data_ptr(), buf.numel()
        return _w.launch(comm, dev, what, lambda s: _sparcoll.allreduce(h, p, p, n, dt, op, _AUTO, s), outputs,
                         async_op, keep=[buf, *ts], post=_then(_parity(buf) if parity else None, back))

    def broadcast(self, tensors, opts):
        t = self._single("broadcast", tensors)
        dev = self._check("broadcast", [t])
        root = int(opts.rootRank)
        if not 0 <= root < self.size():
            raise _InvalidArgumentError(f"broadcast: root {root} is not a rank of the group (size {self.size()})")
        comm = self._comm_for(dev)
        d = t.detach()
        buf = d if d.is_contiguous() else d.contiguous()
        post = None if buf is d else (lambda: d.copy_(buf))
        h, p, n, dt = comm._h, buf.data_ptr(), buf.numel(), _DT[t.dtype]
        return _w.launch(comm, dev, "broadcast", lambda s: _sparcoll.broadcast(h, p, n, dt, root, _AUTO, s),
                         tensors, opts.asyncOp, keep=[buf, t], post=post)

    def _check_list(self, op, what, tensors, other, ref) -> int:
        """The group's size P, once `tensors` (the op's list side) holds P tensors of `ref`'s
        shape and dtype (gloo's rule)."""
        P = self.size()
        if len(tensors) != P:
            raise _InvalidArgumentError(f"{op}: the {what} list has {len(tensors)} tensors, expected the "
                                        f"group's size {P}")
        for i, t in enumerate(tensors):
            if t.shape != ref.shape or t.dtype != ref.dtype:
                raise _InvalidArgumentError(f"{op}: {what} {i} has shape {tuple(t.shape)} and dtype {t.dtype}, "
                                            f"expected the {other}'s shape {tuple(ref.shape)} and dtype {ref.dtype}")
        return P

    def _check_big(self, op, what, big, other, small) -> None:
        """`big` (the op's whole tensor) is P blocks of `small`: concatenated along the first
        dimension or stacked (torch's two forms; gloo takes only the first)."""
        P = self.size()
        if big.dtype != small.dtype:
            raise _InvalidArgumentError(f"{op}: the {what} has dtype {big.dtype}, expected the {other}'s "
                                        f"{small.dtype}")
        s = tuple(small.shape)
        forms = [(P,) + s] if not s else [(P * s[0],) + s[1:], (P,) + s]
        if tuple(big.shape) not in forms:
            raise _InvalidArgumentError(
                f"{op}: the {what} has shape {tuple(big.shape)}, expected "
                + " or ".join(map(str, dict.fromkeys(forms))) + f" (the group's {P} {other}s of shape {s}, "
                "concatenated along the first dimension or stacked)")

    def allgather(self, output_lists, inputs, opts):
        inp = self._single("all_gather", inputs)
        outs = self._single("all_gather", output_lists)
        dev = self._check("all_gather", [inp, *outs])
        P = self._check_list("all_gather", "output", outs, "input", inp)
        comm = self._comm_for(dev)
        src = inp.detach().contiguous()
        flat = _torch.empty(P * inp.numel(), dtype=inp.dtype, device=inp.device)
        n, ds = inp.numel(), [o.detach() for o in outs]

        def post():
            for i, o in enumerate(ds):
                o.copy_(flat[i * n:(i + 1) * n].view_as(o))
        h, ps, pf, dt = comm._h, src.data_ptr(), flat.data_ptr(), _DT[inp.dtype]
        return _w.launch(comm, dev, "all_gather", lambda s: _sparcoll.allgather(h, ps, pf, n, dt, _AUTO, s),
                         [outs], opts.asyncOp, keep=[src, flat, *outs], post=post)

    def all_gather_single(self, output, input, opts):  # all_gather_into_tensor, _allgather_base
        dev = self._check("all_gather_into_tensor", [output, input])
        self._check_big("all_gather_into_tensor", "output", output, "input", input)
        comm = self._comm_for(dev)
        src = input.detach().contiguous().reshape(-1)
        out = output.detach()
        dst = out if out.is_contiguous() else out.contiguous()
        post = None if dst is out else (lambda: out.copy_(dst))
        in_place = src.numel() > 0 and src.data_ptr() == dst.data_ptr() + self.rank() * src.nbytes
        if not in_place and src.numel() and _overlaps(dst, src):  # in place is torch's convention too
            src = src.clone()
        h, ps, pd, n, dt = comm._h, src.data_ptr(), dst.data_ptr(), src.numel(), _DT[input.dtype]
        return _w.launch(comm, dev, "all_gather_into_tensor",
                         lambda s: _sparcoll.allgather(h, ps, pd, n, dt, _AUTO, s), [output], opts.asyncOp,
                         keep=[src, dst, output], post=post)

    def reduce_scatter(self, outputs, input_lists, opts):
        out = self._single("reduce_scatter", outputs)
        ins = self._single("reduce_scatter", input_lists)
        dev = self._check("reduce_scatter", [out, *ins])
        self._check_list("reduce_scatter", "input", ins, "output", out)
        spec = _reduction("reduce_scatter", out.dtype, opts.reduceOp)
        comm = self._comm_for(dev)
        flat = _torch.cat([t.detach().reshape(-1) for t in ins]) if ins else _torch.empty(0, dtype=out.dtype)
        return self._rs("reduce_scatter", comm, dev, flat, out, spec, opts.asyncOp)

    def reduce_scatter_single(self, output, input, opts):  # reduce_scatter_tensor, _reduce_scatter_base
        dev = self._check("reduce_scatter_tensor", [output, input])
        self._check_big("reduce_scatter_tensor", "input", input, "output", output)
        spec = _reduction("reduce_scatter_tensor", output.dtype, opts.reduceOp)
        comm = self._comm_for(dev)
        flat = input.detach().contiguous().reshape(-1)
        if output.numel() and _overlaps(output, flat):
            flat = flat.clone()
        return self._rs("reduce_scatter_tensor", comm, dev, flat, output, spec, opts.asyncOp)

    def _rs(self, what, comm, dev, flat, out, spec, async_op):
        dt, op, parity = spec
        d = out.detach()
        dst = d if d.is_contiguous() else _torch.empty(d.shape, dtype=d.dtype, device=d.device)
        back = None if dst is d else (lambda: d.copy_(dst))
        h, pf, pd, n = comm._h, flat.data_ptr(), dst.data_ptr(), dst.numel()
        return _w.launch(comm, dev, what, lambda s: _sparcoll.reduce_scatter(h, pf, pd, n, dt, op, _AUTO, s),
                         [out], async_op, keep=[flat, dst, out], post=_then(_parity(dst) if parity else None, back))

    def all_gather_single_coalesced(self, outputs, inputs, opts):  # all_gather_into_tensor_coalesced (DTensor)
        return self._coalesced([self.all_gather_single(o, i, opts) for o, i in zip(outputs, inputs)])

    def reduce_scatter_single_coalesced(self, outputs, inputs, opts):  # reduce_scatter_tensor_coalesced
        return self._coalesced([self.reduce_scatter_single(o, i, opts) for o, i in zip(outputs, inputs)])

    @staticmethod
    def _coalesced(works):
        return works[0] if len(works) == 1 else _w.CoalescedWork(works)

    def barrier(self, opts):
        """On the host communicator, or on a device one where the group works on CUDA: the
        device of opts.device_ids, the group's CUDA communicator when it has no host one yet,
        or the current CUDA device of a build with NCCL before any op (no MPI needed then)."""
        ids = list(getattr(opts, "device_ids", None) or ())
        if ids:
            dev = _torch.device("cuda", int(ids[0]))
        elif self._host is None and self._devices:
            dev = _torch.device("cuda", next(iter(self._devices)))
        elif self._host is None and _sparcoll.features["nccl"] and _torch.cuda.is_available():
            dev = _torch.device("cuda", _torch.cuda.current_device())
        else:
            dev = _torch.device("cpu")
        comm = self._comm_for(dev)
        h = comm._h
        return _w.launch(comm, dev, "barrier", lambda s: _sparcoll.barrier(h, s), [],
                         getattr(opts, "asyncOp", True), barrier=dev.type == "cuda")

    # ---------------------------------------------------------------- the rest: a clear error
    send = _unsupported("send")
    recv = _unsupported("recv")
    recv_anysource = _unsupported("recv (any source)")
    gather = _unsupported("gather")
    gather_into_tensor = _unsupported("gather_into_tensor")
    scatter = _unsupported("scatter")
    reduce = _unsupported("reduce")
    alltoall = _unsupported("all_to_all")
    alltoall_base = _unsupported("all_to_all_single")
    all_to_all_single = _unsupported("all_to_all_single")
    allgather_coalesced = _unsupported("all_gather_coalesced")
    allreduce_sparse = _unsupported("all_reduce of sparse tensors")
    monitored_barrier = _unsupported("monitored_barrier")
    split = _unsupported("split_group")
    merge = _unsupported("merge")
    shrink = _unsupported("shrink_group")
    new_window = _unsupported("new_window")


def _reduction(what: str, dtype, reduce_op):
    """(dtype code, op code, parity) of a reduction; InvalidArgumentError naming what is not supported."""
    spec = _REDUCTIONS.get((dtype, reduce_op.op))
    if spec is not None:
        return spec
    if dtype is _torch.bool and reduce_op.op == _R.AVG:
        raise _InvalidArgumentError(f"{what}: ReduceOp.AVG on torch.bool: the average of booleans is no boolean "
                                    "(gloo refuses it too); use MAX / BOR (any) or MIN / BAND (all)")
    try:
        _reduce_op(reduce_op)  # the error naming the op and the supported ones (BAND, PREMUL_SUM, ...)
    except _InvalidArgumentError as e:
        raise _InvalidArgumentError(f"sparcoll's torch.distributed backend: {e}") from None
    raise _InvalidArgumentError(f"{what}: {reduce_op.op} on {dtype} is not supported")


def _parity(buf: _torch.Tensor):
    """bool BXOR's last step: the byte sum's low bit."""
    return lambda: buf.view(_torch.uint8).bitwise_and_(1)


def _then(first, second):
    """One post-call step of two optional ones, in order."""
    if first is None or second is None:
        return first or second

    def both():
        first()
        second()
    return both


def _overlaps(a: _torch.Tensor, b: _torch.Tensor) -> bool:
    if a.device != b.device:
        return False
    a0, b0 = a.data_ptr(), b.data_ptr()
    return a0 < b0 + b.numel() * b.element_size() and b0 < a0 + a.numel() * a.element_size()


def create(opts, backend_options=None) -> SparcollBackend:
    """The creator torch calls for each process group of this backend (extended API:
    ``opts`` is a c10d DistributedBackendOptions with the group's store, rank, size,
    timeout and global ranks, [] for the default group)."""
    ranks = list(opts.global_ranks_in_group or ())
    options = backend_options if isinstance(backend_options, _C10dBackend.Options) else \
        _C10dBackend.Options(NAME, opts.timeout)
    options._timeout = opts.timeout
    options.global_ranks_in_group = ranks
    options.group_name = opts.group_id
    return SparcollBackend(opts.store, opts.group_rank, opts.group_size, opts.timeout, ranks, options)


def register() -> None:
    """Registers the backend with torch.distributed (once; ``import sparcoll.torch`` calls it)."""
    if NAME.upper() in _dist.Backend._plugins:
        return
    _dist.Backend.register_backend(NAME, create, extended_api=True, devices=["cpu", "cuda"])


def backend_of(group=None) -> SparcollBackend:
    """The SparcollBackend behind a process group (None: the default group)."""
    if not _dist.is_initialized():
        raise _InvalidUsageError("torch.distributed is not initialized: call "
                                 f"dist.init_process_group('{NAME}', ...) first")
    pg = _dist.group.WORLD if group is None else group
    if pg is None or pg is _dist.GroupMember.NON_GROUP_MEMBER:
        raise _InvalidUsageError("this process is not a member of the process group")
    for device in ("cpu", "cuda"):
        try:
            b = pg._get_backend(_torch.device(device))
        except Exception:  # noqa: BLE001 - no backend for that device
            continue
        if isinstance(b, SparcollBackend):
            return b
    raise _InvalidUsageError(f"the process group's backend is {_dist.get_backend(pg)!r}, not '{NAME}': "
                             f"create it with init_process_group('{NAME}') or new_group(backend='{NAME}')")
