"""PyTorch integration: the "sparcoll" torch.distributed backend, and a DDP communication hook that sends only the top-k
entries of each gradient bucket, with error feedback, through sparcoll's
sparse allreduce (Renggli, Algorithm 2 "TopK SGD with error correction").

    import sparcoll as sc
    from sparcoll.torch import TopkState, topk_hook

    comm = sc.Communicator.from_torch(transport="nccl")        # or "mpi" with gloo + CPU
    state = TopkState(comm, density=0.01, start_iter=10)
    ddp_model.register_comm_hook(state, topk_hook)

Importing this module registers the torch.distributed backend "sparcoll"
(sparcoll/_torch_backend.py): under mpirun,

    import sparcoll.torch
    dist.init_process_group("sparcoll", init_method=..., rank=mpi_rank, world_size=mpi_size)
    comm = sparcoll.torch.communicator()       # the Communicator behind the group, e.g. for TopkState

CPU tensors run over MPI, CUDA tensors over NCCL (unique id through the store);
dist.new_group(backend="sparcoll") makes sub-communicators.

Shaped like PyTorch's PowerSGD hook: a state object that counts iterations
(advanced when DDP hands over its last bucket), a dense allreduce for the first
``start_iter`` iterations (DDP rebuilds its buckets after the first one, and
early gradients are large), then per bucket: top-k of gradient + residual,
residual kept per bucket index, sparse allreduce (average over ranks) of the
selection, result written into the bucket and returned through a
``torch.futures.Future`` created for the bucket's device.
"""

# No `from __future__ import annotations`: DDP checks the hook annotations at
# registration (dist.GradBucket, torch.futures.Future[torch.Tensor]) as objects.
import math as _math
import os as _os
import typing as _typing

import torch as _torch
import torch.distributed as _dist

# Communicator.from_torch's torch.distributed bootstrap lives in _bootstrap, so
# that comm.py need not import this module (and torch); its helpers stay
# reachable here too, with the rest of the torch integration.
from ._bootstrap import mpi_comm_of_group as _mpi_comm_of_group  # noqa: F401
from ._bootstrap import unique_id_of_group as _unique_id_of_group  # noqa: F401
from . import _torch_backend
from ._capi import TOPK_METHODS as _TOPK_METHODS
from ._topk import TopkFeedback as _TopkFeedback
from ._topk import topk as _topk
from .comm import Communicator as _Communicator
from .errors import InvalidArgumentError as _InvalidArgumentError
from .errors import InvalidUsageError as _InvalidUsageError

__all__ = ["TopkState", "topk_hook", "dense_hook", "communicator", "init_process_group_mpi"]

_torch_backend.register()


def communicator(group=None, device="cpu") -> _Communicator:
    """The sparcoll Communicator behind a "sparcoll" process group (None: the
    default group): for ``device="cpu"`` the mpi communicator of its CPU
    tensors, for "cuda" (or "cuda:i") the nccl communicator of its CUDA
    tensors. Made on first use, so the first call (or the group's first op on
    that device type) is collective over the group. It is the communicator the
    group's ops run on: calls on it are ordered with them (same worker thread).
    Raises InvalidUsageError for a group of another backend."""
    b = _torch_backend.backend_of(group)
    dev = _torch.device(device)
    return b.device_comm(dev) if dev.type == "cuda" else b.host_comm()


def init_process_group_mpi(backend: str = "sparcoll", mpi_comm=None, **kwargs) -> None:
    """``torch.distributed.init_process_group(backend, ...)`` for a job started by
    mpirun: rank and world size are the MPI communicator's (None: MPI_COMM_WORLD),
    and its rank 0 picks a free TCP port for torch's store and hands it to the
    others over MPI, so no MASTER_ADDR/MASTER_PORT is needed. The address is
    127.0.0.1 when every rank runs on rank 0's host, else rank 0's host name
    (env MASTER_ADDR overrides it). kwargs go to init_process_group (timeout,
    device_id, ...). Collective over mpi_comm; needs mpi4py."""
    import socket

    try:
        from mpi4py import MPI
    except ImportError as e:
        raise _InvalidUsageError("init_process_group_mpi needs mpi4py (pip install './python[mpi]')") from e
    world = MPI.COMM_WORLD if mpi_comm is None else mpi_comm
    host = socket.gethostname()
    one_host = all(h == host for h in world.allgather(host))
    addr = None
    if world.Get_rank() == 0:
        addr = _os.environ.get("MASTER_ADDR") or ("127.0.0.1" if one_host else host)
        with socket.socket() as sock:  # a free port: the OS picks it, the store binds it right after
            sock.bind(("127.0.0.1" if addr == "127.0.0.1" else "", 0))
            addr = f"{addr}:{sock.getsockname()[1]}"
    addr = world.bcast(addr, root=0)
    _dist.init_process_group(backend, init_method=f"tcp://{addr}", rank=world.Get_rank(),
                             world_size=world.Get_size(), **kwargs)

_GOLDEN = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1


class TopkState:
    """State of :func:`topk_hook` (one per DDP model).

    Args:
        comm: the sparcoll communicator of the DDP ranks (same rank order as
            DDP's process group, e.g. ``Communicator.from_torch(pg)``); a host
            communicator for CPU models, a device one for CUDA models.
        density: fraction of each bucket's entries sent (k = ceil(density * n)).
        bucket: bucket length of the approximate top-k methods (elements per
            selection bucket; not DDP's gradient bucket); None derives it from
            the density (about 32 / density, at least 32 slots per bucket).
        start_iter: iterations that use the dense allreduce before top-k starts.
        error_feedback: keep the unsent remainder per DDP bucket and add it to
            the next gradient (Algorithm 2); False: plain top-k (unsent mass is lost).
        seed: key of the selection's random stream (mixed with rank and bucket index).
        method: "bracket" (default: the k largest nonzero entries, in one pass),
            "exact", "threshold", "approx" (k in expectation; sends far less of
            the gradient's energy: README, "Top-k selection"), "approx_at_most".
        momentum: momentum correction (Lin et al., Deep Gradient Compression,
            §3.2), for SGD with momentum: each rank keeps the velocity
            u = momentum * u + g of its own gradient, and top-k selects from u
            (plus the residual), not from g. The hook returns the averaged
            velocity, so the optimizer must run WITHOUT momentum
            (``SGD(momentum=0)``). In the dense warm-up, and at density 1
            without masking, this is exactly SGD with momentum. 0 (default):
            off, the hook returns the averaged gradient.
        momentum_masking: momentum factor masking (same section): the sent
            entries of u restart from 0, so that an entry that waited in the
            residual is not pushed again by its stale velocity (the cause of
            the instability of top-k under plain SGD momentum). Only with
            momentum > 0 and only in top-k steps.
        stream_ordered: a top-k step that never waits for the device, so
            that it can be captured into a CUDA graph: the selection goes
            into buffers of k slots kept per DDP bucket
            (TopkFeedback.select_into), and the static-size sparse allreduce
            (Communicator.sparse_allreduce_static) sums the P x k slots with
            the counts read in stream order. Needs error_feedback. The same
            selection as the default step; the sums run in rank order
            instead of the count-driven schedules' order. ``sent_elements``
            then reads the counts from the device when asked.
    """

    def __init__(self, comm: _Communicator, density: float = 0.01, bucket: _typing.Optional[int] = None,
                 start_iter: int = 10, error_feedback: bool = True, seed: int = 0, method: str = "bracket",
                 momentum: float = 0.0, momentum_masking: bool = True, stream_ordered: bool = False):
        if not isinstance(comm, _Communicator):
            raise TypeError(f"comm must be a sparcoll.Communicator, got {type(comm).__name__}")
        if not 0.0 < float(density) <= 1.0:
            raise _InvalidArgumentError(f"density must be in (0, 1], got {density}")
        if bucket is not None and int(bucket) < 1:
            raise _InvalidArgumentError(f"bucket must be >= 1 or None, got {bucket}")
        if int(start_iter) < 0:
            raise _InvalidArgumentError(f"start_iter must be >= 0, got {start_iter}")
        if method not in _TOPK_METHODS:
            raise _InvalidArgumentError(
                f"unknown top-k method {method!r}; expected one of: {', '.join(_TOPK_METHODS)}")
        if not 0.0 <= float(momentum) < 1.0:
            raise _InvalidArgumentError(f"momentum must be in [0, 1), got {momentum}")
        if stream_ordered and not error_feedback:
            raise _InvalidArgumentError("stream_ordered=True needs error_feedback=True (the selection's state "
                                        "keeps what does not fit in the k slots)")
        self.comm, self.density, self.bucket = comm, float(density), None if bucket is None else int(bucket)
        self.momentum, self.momentum_masking = float(momentum), bool(momentum_masking)
        self._velocity: dict[int, _torch.Tensor] = {}  # DDP bucket index -> u (momentum > 0 only)
        # DDP bucket index -> (ids of its parameters, their sizes), to follow DDP's bucket rebuild.
        self._layouts: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        self._pieces: dict[tuple[str, int], _torch.Tensor] = {}  # ("r" or "u", parameter id) -> state piece
        self._steps: dict[int, int] = {}  # random-stream steps of the buckets before the rebuild
        self.start_iter, self.error_feedback, self.seed, self.method = int(start_iter), bool(error_feedback), \
            int(seed), method
        self.iter = 0
        self._feedback: dict[int, _TopkFeedback] = {}  # DDP bucket index
        self.stream_ordered = bool(stream_ordered)
        self._slots: dict[int, _Slots] = {}  # DDP bucket index -> the stream-ordered step's buffers
        self._sent = 0  # entries this rank sent through top-k, counted on the host
        self.total_elements = 0

    @property
    def sent_elements(self) -> int:
        """Entries this rank sent through top-k (statistics). Stream-ordered steps keep their
        counts on the device: reading this waits for them."""
        return self._sent + sum(int(s.sent.item()) for s in self._slots.values())

    def slots(self, index: int, like: _torch.Tensor, k: int) -> "_Slots":
        """The stream-ordered step's buffers of DDP bucket ``index`` (made on first use, and
        again when the bucket's size, dtype, device or k changed)."""
        s = self._slots.get(index)
        if s is None or s.idx.numel() != k or s.vals.dtype != like.dtype or s.vals.device != like.device \
                or s.n != like.numel():
            if s is not None:
                self._sent += int(s.sent.item())
            s = self._slots[index] = _Slots(like, k)
        return s

    def maybe_increase_iter(self, bucket: _dist.GradBucket) -> None:
        """Counts an iteration when DDP hands over its last bucket (as PowerSGD does)."""
        if bucket.is_last():
            self.iter += 1

    def k_for(self, n: int) -> int:
        return max(1, min(n, _math.ceil(self.density * n)))

    def seed_for(self, index: int) -> int:
        """Philox key of a bucket: seed mixed with the rank and the bucket index."""
        return (self.seed + _GOLDEN * (1 + index + (self.comm.rank << 20))) & _MASK64

    def feedback(self, index: int, like: _torch.Tensor):
        """The error-feedback state of DDP bucket ``index`` (created on first use,
        re-created if the bucket's size or dtype changed, e.g. after DDP rebuilt buckets)."""
        dtype = str(like.dtype).replace("torch.", "")
        device = like.device.index if like.device.type == "cuda" else None
        fb = self._feedback.get(index)
        if fb is None or fb.n != like.numel() or fb.dtype != dtype or fb.device != device:
            fb = _TopkFeedback(like.numel(), dtype, device)
            self._feedback[index] = fb
        return fb

    def follow_layout(self, bucket: _dist.GradBucket) -> None:
        """Keeps each parameter's residual and velocity with the parameter when DDP
        rebuilds its buckets (after the first iteration, in gradient-ready order:
        the same bucket index then holds other parameters, or the same ones in
        another order). On the first bucket seen with a new layout, every
        bucket's state is cut into per-parameter pieces; each bucket then
        assembles its own from them (zeros for a parameter with no piece)."""
        index = bucket.index()
        params = bucket.parameters()
        layout = (tuple(id(p) for p in params), tuple(p.numel() for p in params))
        old = self._layouts.get(index)
        if old == layout:
            return
        if old is not None:
            self._pieces = {}
            for i, (ids, sizes) in self._layouts.items():
                fb, u = self._feedback.get(i), self._velocity.get(i)
                for which, t in (("r", None if fb is None else fb.residual(like=_torch.empty(0))), ("u", u)):
                    if t is not None and t.numel() == sum(sizes):
                        for pid, piece in zip(ids, t.split(list(sizes))):
                            self._pieces[(which, pid)] = piece.clone()
            self._steps = {i: fb.step for i, fb in self._feedback.items()}
            self._layouts, self._feedback, self._velocity = {}, {}, {}
        self._layouts[index] = layout
        pieces = self._pieces
        if not any(("r", pid) in pieces or ("u", pid) in pieces for pid in layout[0]):
            return
        like = bucket.buffer().view(-1)

        def gather(which):
            return _torch.cat([pieces.pop((which, pid), None) if (which, pid) in pieces
                               else _torch.zeros(n, dtype=like.dtype, device=like.device)
                               for pid, n in zip(*layout)]).to(like.device)
        if any(("u", pid) in pieces for pid in layout[0]):
            self._velocity[index] = gather("u")
        if any(("r", pid) in pieces for pid in layout[0]):
            r = gather("r")
            fb = self.feedback(index, like)
            fb.residual(like=_torch.empty(0)).copy_(r)
            fb.step = self._steps.get(index, 0)

    def velocity(self, index: int, grad: _torch.Tensor) -> _torch.Tensor:
        """Bucket ``index``'s velocity after this step's gradient: u = momentum * u + grad
        (zeros before the first step, and again if the bucket's size, dtype or device changed)."""
        u = self._velocity.get(index)
        if u is None or u.shape != grad.shape or u.dtype != grad.dtype or u.device != grad.device:
            u = self._velocity[index] = _torch.zeros_like(grad)
        return u.mul_(self.momentum).add_(grad)

    def residual(self, index: int) -> "_torch.Tensor | None":
        """The residual of DDP bucket ``index`` (a zero-copy torch view), or None before its first top-k step."""
        fb = self._feedback.get(index)
        if fb is None:
            return None
        return fb.residual(like=_torch.empty(0))

    def state_dict(self) -> dict:
        """Iteration, residuals and velocities (CPU copies) and random-stream steps, for checkpoints."""
        return {"iter": self.iter,
                "residuals": {i: self.residual(i).detach().cpu().clone() for i in self._feedback},
                "steps": {i: fb.step for i, fb in self._feedback.items()},
                "velocities": {i: u.detach().cpu().clone() for i, u in self._velocity.items()}}

    def load_state_dict(self, sd: dict) -> None:
        self.iter = int(sd["iter"])
        for i, r in sd["residuals"].items():
            like = r if self.comm.is_device is False else r.cuda()
            fb = self.feedback(int(i), like)
            fb.residual(like=_torch.empty(0)).copy_(r.reshape(-1))
            fb.step = int(sd["steps"][i])
        for i, u in sd.get("velocities", {}).items():
            self._velocity[int(i)] = u.clone() if self.comm.is_device is False else u.cuda()


def _future(value: _torch.Tensor) -> _torch.futures.Future[_torch.Tensor]:
    fut = _torch.futures.Future(devices=[value.device]) if value.device.type == "cuda" else _torch.futures.Future()
    fut.set_result(value)
    return fut


def dense_hook(comm: _Communicator, bucket: _dist.GradBucket) -> _torch.futures.Future[_torch.Tensor]:
    """DDP hook: the bucket's average over ranks with sparcoll's dense allreduce
    (the baseline the top-k hook is compared against)."""
    buf = bucket.buffer()
    comm.allreduce(buf, out=buf, op="avg")
    return _future(buf)


def topk_hook(state: "TopkState", bucket: _dist.GradBucket) -> _torch.futures.Future[_torch.Tensor]:
    """DDP communication hook: dense average for the first ``state.start_iter``
    iterations, then top-k (+ error feedback) and the sparse allreduce average;
    of the rank's velocity instead of its gradient when ``state.momentum`` > 0."""
    buf = bucket.buffer()
    comm = state.comm
    index = bucket.index()
    flat = buf.view(-1)
    state.follow_layout(bucket)
    # With momentum correction the rank's velocity takes the gradient's place.
    grad = state.velocity(index, flat) if state.momentum > 0 else flat
    if state.iter < state.start_iter:
        comm.allreduce(grad, out=flat, op="avg")
        state.maybe_increase_iter(bucket)
        return _future(buf)

    n = buf.numel()
    k = state.k_for(n)
    if state.stream_ordered:
        _stream_ordered_step(state, state.feedback(index, flat), grad, flat, index, k)
        state.maybe_increase_iter(bucket)
        return _future(buf)
    # int32 indices: half the index traffic of int64 (buckets are far below 2^31 entries).
    itype = "int32" if n < 2**31 else "int64"
    if state.error_feedback:
        fb = state.feedback(index, flat)
        idx, vals = fb.select(grad, k, state.method, bucket=state.bucket, seed=state.seed_for(index),
                              index_dtype=itype)
    else:
        idx, vals = _topk(grad, k, state.method, bucket=state.bucket, seed=state.seed_for(index), step=state.iter,
                         index_dtype=itype)
    state._sent += int(idx.numel())
    state.total_elements += n
    comm.sparse_allreduce(idx, vals, n, op="avg", out=flat)
    if state.momentum > 0 and state.momentum_masking:
        grad.index_fill_(0, idx.long(), 0)  # momentum factor masking: a sent entry's velocity restarts
    state.maybe_increase_iter(bucket)
    return _future(buf)


class _Slots:
    """A DDP bucket's buffers for the stream-ordered top-k step: k index and value
    slots, the selection's counts (written on the device), the sparse allreduce's
    status word, the running count of sent entries, and, with momentum masking,
    the entries sent (n + 1 flags: the last absorbs the unused slots)."""

    def __init__(self, like: _torch.Tensor, k: int):
        n = self.n = like.numel()
        itype = _torch.int32 if n < 2**31 else _torch.int64
        # Slots beyond a step's count keep what they held: index 0 at first, so always in range.
        self.idx = _torch.zeros(k, dtype=itype, device=like.device)
        self.vals = _torch.zeros(k, dtype=like.dtype, device=like.device)
        self.counts = _torch.zeros(3, dtype=_torch.int64, device=like.device)
        self.status = _torch.zeros(1, dtype=_torch.int64, device=like.device)
        self.sent = _torch.zeros((), dtype=_torch.int64, device=like.device)
        self.mask: "_torch.Tensor | None" = None
        self.slot: "_torch.Tensor | None" = None

    def masking(self) -> "tuple[_torch.Tensor, _torch.Tensor]":
        if self.mask is None:
            self.mask = _torch.zeros(self.n + 1, dtype=_torch.bool, device=self.vals.device)
            self.slot = _torch.arange(self.idx.numel(), device=self.vals.device)
        return self.mask, self.slot


def _stream_ordered_step(state: "TopkState", fb, grad: _torch.Tensor, flat: _torch.Tensor, index: int, k: int):
    """select_into + sparse_allreduce_static: nothing waits for the device."""
    n = flat.numel()
    s = state.slots(index, flat, k)
    fb.select_into(grad, k, s.idx, s.vals, s.counts, state.method, bucket=state.bucket, seed=state.seed_for(index))
    state.comm.sparse_allreduce_static(s.idx, s.vals, n, nnz=s.counts[:1], op="avg", out=flat, status=s.status)
    s.sent.add_(s.counts[0])
    state.total_elements += n
    if state.momentum > 0 and state.momentum_masking:
        # The first counts[0] slots are this step's; the others go to the mask's spare entry.
        mask, slot = s.masking()
        used = _torch.where(slot < s.counts[0], s.idx.long(), n)
        mask.fill_(False).index_fill_(0, used, True)  # True: sent this step
        grad.masked_fill_(mask[:n], 0)
