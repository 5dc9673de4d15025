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
from ._capi import OPS as _OPS
from ._capi import name_of as _name_of
from ._capi import reduce_op as _reduce_op
from .comm import Communicator as _Communicator
from .errors import InvalidArgumentError as _InvalidArgumentError
from .errors import InvalidUsageError as _InvalidUsageError

__all__: list[str] = []

NAME = _w.NAME

#: torch dtypes the backend takes (sparcoll's scDataType_t, sparcoll._capi.DTYPES).
DTYPES = (_torch.float32, _torch.float64, _torch.float16, _torch.bfloat16, _torch.int8, _torch.int32, _torch.int64,
          _torch.uint8)

SUPPORTED = ("all_reduce (SUM, AVG, PRODUCT, MIN, MAX), all_reduce_coalesced, broadcast, all_gather, "
             "all_gather_into_tensor, reduce_scatter, reduce_scatter_tensor, their coalesced forms, barrier")


def _unsupported(torch_name: str):
    def method(self, *args, **kwargs):
        raise _InvalidUsageError(f"{torch_name}: sparcoll's torch.distributed backend does not support this op "
                                 f"(it supports {SUPPORTED}); run it on another process group, e.g. "
                                 "dist.new_group(backend='gloo')")
    method.__name__ = torch_name
    return method


class SparcollBackend(_C10dBackend):
    """The c10d backend of one process group (the group's rank and size)."""

    def __init__(self, store, rank: int, size: int, timeout, global_ranks=()):
        super().__init__(rank, size)
        self._store, self._global_ranks = store, list(global_ranks)
        self._timeout = _w.timeout_seconds(timeout)
        self._host: _Communicator | None = None
        self._devices: dict[int, _Communicator] = {}
        self._lock = _threading.Lock()

    def getBackendName(self) -> str:
        return NAME

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
            if t.dtype not in DTYPES:
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
    def allreduce(self, tensors, opts):
        t = self._single("all_reduce", tensors)
        return self._allreduce("all_reduce", [t], opts.reduceOp, opts.asyncOp, tensors)

    def allreduce_coalesced(self, tensors, opts):
        return self._allreduce("all_reduce_coalesced", list(tensors), opts.reduceOp,
                               getattr(opts, "asyncOp", True), tensors)

    def _allreduce(self, what, ts, reduce_op, async_op, outputs):
        dev = self._check(what, ts)
        op = _op(reduce_op)  # InvalidArgumentError naming ReduceOp.BAND, PREMUL_SUM, ...
        if len({t.dtype for t in ts}) > 1:
            raise _InvalidArgumentError(f"{what}: the tensors have different dtypes")
        comm = self._comm_for(dev)
        if len(ts) == 1 and ts[0].is_contiguous():
            buf, post = ts[0], None
        else:  # one flat buffer: non-contiguous tensors and the coalesced list
            buf = ts[0].contiguous() if len(ts) == 1 else _torch.cat([t.reshape(-1) for t in ts])

            def post():
                if len(ts) == 1:
                    ts[0].copy_(buf)
                    return
                off = 0
                for t in ts:
                    t.copy_(buf[off:off + t.numel()].view_as(t))
                    off += t.numel()
        return _w.launch(comm, dev, lambda s, a: comm.allreduce(buf, out=buf, op=op, stream=s, async_op=a),
                         list(outputs), async_op, keep=[buf, *ts], post=post)

    def broadcast(self, tensors, opts):
        t = self._single("broadcast", tensors)
        dev = self._check("broadcast", [t])
        root = int(opts.rootRank)
        if not 0 <= root < self.size():
            raise _InvalidArgumentError(f"broadcast: root {root} is not a rank of the group (size {self.size()})")
        comm = self._comm_for(dev)
        buf = t if t.is_contiguous() else t.contiguous()
        post = None if buf is t else (lambda: t.copy_(buf))
        return _w.launch(comm, dev, lambda s, a: comm.broadcast(buf, root=root, stream=s, async_op=a),
                         [t], opts.asyncOp, keep=[buf, t], post=post)

    def _check_list(self, op, what, tensors, other, ref) -> int:
        """The group's size P, once `tensors` (the op's list side) holds P tensors like `ref`."""
        P = self.size()
        if len(tensors) != P:
            raise _InvalidArgumentError(f"{op}: the {what} list has {len(tensors)} tensors, expected the "
                                        f"group's size {P}")
        for i, t in enumerate(tensors):
            if t.numel() != ref.numel() or t.dtype != ref.dtype:
                raise _InvalidArgumentError(f"{op}: {what} {i} has {t.numel()} elements of {t.dtype}, "
                                            f"expected the {other}'s {ref.numel()} of {ref.dtype}")
        return P

    def allgather(self, output_lists, inputs, opts):
        inp = self._single("all_gather", inputs)
        outs = self._single("all_gather", output_lists)
        dev = self._check("all_gather", [inp, *outs])
        P = self._check_list("all_gather", "output", outs, "input", inp)
        comm = self._comm_for(dev)
        src = inp.contiguous()
        flat = _torch.empty(P * inp.numel(), dtype=inp.dtype, device=inp.device)
        n = inp.numel()

        def post():
            for i, o in enumerate(outs):
                o.copy_(flat[i * n:(i + 1) * n].view_as(o))
        return _w.launch(comm, dev, lambda s, a: comm.allgather(src.reshape(-1), out=flat, stream=s, async_op=a),
                         [outs], opts.asyncOp, keep=[src, flat, *outs], post=post)

    def all_gather_single(self, output, input, opts):  # all_gather_into_tensor, _allgather_base
        dev = self._check("all_gather_into_tensor", [output, input])
        P = self.size()
        if output.numel() != P * input.numel() or output.dtype != input.dtype:
            raise _InvalidArgumentError(
                f"all_gather_into_tensor: the output has {output.numel()} elements of {output.dtype}, expected "
                f"{P} x the input's {input.numel()} of {input.dtype}")
        comm = self._comm_for(dev)
        src = input.contiguous().reshape(-1)
        dst = output if output.is_contiguous() else output.contiguous()
        post = None if dst is output else (lambda: output.copy_(dst))
        in_place = src.numel() > 0 and src.data_ptr() == dst.data_ptr() + self.rank() * src.nbytes
        if not in_place and src.numel() and _overlaps(dst, src):  # in place is torch's convention too
            src = src.clone()
        return _w.launch(comm, dev, lambda s, a: comm.allgather(src, out=dst.reshape(-1), stream=s, async_op=a),
                         [output], opts.asyncOp, keep=[src, dst, output], post=post)

    def reduce_scatter(self, outputs, input_lists, opts):
        out = self._single("reduce_scatter", outputs)
        ins = self._single("reduce_scatter", input_lists)
        dev = self._check("reduce_scatter", [out, *ins])
        P = self._check_list("reduce_scatter", "input", ins, "output", out)
        op = _op(opts.reduceOp)
        comm = self._comm_for(dev)
        flat = _torch.cat([t.reshape(-1) for t in ins]) if ins else _torch.empty(0, dtype=out.dtype)
        return self._rs(comm, dev, flat, out, op, opts.asyncOp)

    def reduce_scatter_single(self, output, input, opts):  # reduce_scatter_tensor, _reduce_scatter_base
        dev = self._check("reduce_scatter_tensor", [output, input])
        if input.numel() != self.size() * output.numel() or output.dtype != input.dtype:
            raise _InvalidArgumentError(
                f"reduce_scatter_tensor: the input has {input.numel()} elements of {input.dtype}, expected "
                f"{self.size()} x the output's {output.numel()} of {output.dtype}")
        op = _op(opts.reduceOp)
        comm = self._comm_for(dev)
        flat = input.contiguous().reshape(-1)
        if output.numel() and _overlaps(output, flat):
            flat = flat.clone()
        return self._rs(comm, dev, flat, output, op, opts.asyncOp)

    def _rs(self, comm, dev, flat, out, op, async_op):
        dst = out if out.is_contiguous() else _torch.empty(out.shape, dtype=out.dtype, device=out.device)
        post = None if dst is out else (lambda: out.copy_(dst))
        return _w.launch(comm, dev, lambda s, a: comm.reduce_scatter(flat, out=dst.reshape(-1), op=op, stream=s,
                                                                     async_op=a),
                         [out], async_op, keep=[flat, dst, out], post=post)

    def all_gather_single_coalesced(self, outputs, inputs, opts):  # all_gather_into_tensor_coalesced (DTensor)
        return self._coalesced([self.all_gather_single(o, i, opts) for o, i in zip(outputs, inputs)])

    def reduce_scatter_single_coalesced(self, outputs, inputs, opts):  # reduce_scatter_tensor_coalesced
        return self._coalesced([self.reduce_scatter_single(o, i, opts) for o, i in zip(outputs, inputs)])

    @staticmethod
    def _coalesced(works):
        """One Work of several ops (issued in order on the same communicators)."""
        if len(works) == 1:
            return works[0]
        futs = [w.get_future() for w in works]
        return _w.Work(_torch.futures.collect_all(futs).then(lambda f: [t for x in f.value() for t in x.value()]))

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
        return _w.launch(comm, dev, lambda s, a: comm.barrier(stream=s, async_op=a), [],
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


def _op(reduce_op) -> str:
    """sparcoll's name of a torch ReduceOp (InvalidArgumentError naming the op if unsupported)."""
    try:
        return _name_of(_OPS, _reduce_op(reduce_op))
    except _InvalidArgumentError as e:
        raise _InvalidArgumentError(f"sparcoll's torch.distributed backend: {e}") from None


def _overlaps(a: _torch.Tensor, b: _torch.Tensor) -> bool:
    if a.device != b.device:
        return False
    a0, b0 = a.data_ptr(), b.data_ptr()
    return a0 < b0 + b.numel() * b.element_size() and b0 < a0 + a.numel() * a.element_size()


def create(opts, backend_options=None) -> SparcollBackend:
    """The creator torch calls for each process group of this backend (extended API:
    ``opts`` is a c10d DistributedBackendOptions with the group's store, rank, size,
    timeout and global ranks, [] for the default group)."""
    return SparcollBackend(opts.store, opts.group_rank, opts.group_size, opts.timeout,
                           list(opts.global_ranks_in_group or ()))


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
