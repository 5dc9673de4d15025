"""Neighbourhood collectives on distributed graph topologies (sparcoll/neighbor.h):
:class:`Topology`, and Communicator.neighbor_allgather / neighbor_allgatherv,
the methods of NeighborMixin, a base class of Communicator (sparcoll/comm.py)."""

from __future__ import annotations

import operator
import weakref
from typing import List, Optional, Sequence, Tuple

from . import _sparcoll
from ._arrays import as_ref, empty_like_kind, resolve_stream
from ._capi import DTYPE_NAMES, NBR_ALGOS, lookup, name_of, nonneg_int
from .errors import InvalidArgumentError, InvalidUsageError


def _ranks(values, what: str) -> List[int]:
    """A sequence of ints (a list, a tuple, a 1-D integer array) as a list."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{what} must be a sequence of ranks, got {type(values).__name__}")
    out = []
    for v in values:
        try:
            if isinstance(v, bool):
                raise TypeError
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{what} must hold ints, got {v!r}") from None
    return out


class Topology:
    """A directed graph over the ranks of a communicator, for neighbourhood collectives.

    Each rank lists the ranks it receives from (``sources``) and sends to
    (``destinations``), with the semantics of ``MPI_Dist_graph_create_adjacent``:
    repeats and self-loops are allowed, and every edge must be declared by both
    ends (rank j lists i in ``destinations`` as often as rank i lists j in
    ``sources``). Collective over ``comm``: every rank creates its Topology
    together; a bad declaration on any rank raises InvalidArgumentError on every
    rank, naming the rank and argument or one offending edge. The communication
    patterns of every algorithm are computed here, once.

    Use it as a context manager or call :meth:`close` (it is also closed with
    its communicator and at garbage collection).
    """

    def __init__(self, comm, sources: Sequence[int], destinations: Sequence[int]):
        if not isinstance(comm, NeighborMixin):  # a Communicator (comm.py, which imports this module)
            raise TypeError(f"comm must be a sparcoll Communicator, got {type(comm).__name__}")
        src, dst = _ranks(sources, "sources"), _ranks(destinations, "destinations")
        if comm.closed:
            raise InvalidUsageError("the communicator was closed")
        self.comm = comm
        # Collective over comm: in order behind its pending async_op requests.
        self._h = comm._run("Topology", lambda: _sparcoll.TopologyHandle(comm._h, src, dst))
        self.sources: Tuple[int, ...] = tuple(src)
        self.destinations: Tuple[int, ...] = tuple(dst)
        comm._topologies.add(self)

    @property
    def indegree(self) -> int:
        """The number of sources (the ranks this rank receives from)."""
        return len(self.sources)

    @property
    def outdegree(self) -> int:
        """The number of destinations (the ranks this rank sends to)."""
        return len(self.destinations)

    @property
    def closed(self) -> bool:
        """True once `close()` has destroyed the topology (or its communicator was destroyed)."""
        return self._h.closed

    def algo_for(self, nbytes: int) -> str:
        """The algorithm "auto" picks for blocks of nbytes bytes (no communication)."""
        return name_of(NBR_ALGOS, self._handle().algo_for(nonneg_int(nbytes, "nbytes")))

    def estimate(self, nbytes: int, algo: str = "auto") -> Tuple[float, str]:
        """The cost model's prediction for a neighbour allgather of blocks of nbytes
        bytes (no communication): (seconds of ``algo``, or of auto's pick for
        "auto"; the algorithm "auto" would run). native is priced as naive."""
        code = lookup(NBR_ALGOS, algo, "neighbourhood algorithm")
        seconds, pick = self._handle().estimate(nonneg_int(nbytes, "nbytes"), code)
        return seconds, name_of(NBR_ALGOS, pick)

    def cost_terms(self, algo: str) -> dict:
        """The cost model's terms for an explicit algorithm on this topology (no
        communication): {"rounds", "extra_messages", "blocks", "shared_blocks"},
        each an (intra-node, inter-node) pair; estimate(nbytes, algo) is their
        sum priced at nbytes (README "Neighbourhood collectives")."""
        code = lookup(NBR_ALGOS, algo, "neighbourhood algorithm")
        rounds, extra, blocks, shared = self._handle().cost_terms(code)
        return {"rounds": tuple(rounds), "extra_messages": tuple(extra), "blocks": tuple(blocks),
                "shared_blocks": tuple(shared)}

    def friend_group(self) -> dict:
        """This rank's group in the combining pattern: {"k", "theta", "members"}
        (members in the group's order; this rank alone when it is in none)."""
        k, theta, members = self._handle().friend_group()
        return {"k": k, "theta": theta, "members": list(members)}

    def close(self) -> None:
        """Frees the patterns (local: no communication), after the communicator's pending
        async_op requests (which may use them)."""
        self.comm._sync_pending()
        self._h.close()

    def _handle(self):
        if self._h.closed:
            raise InvalidUsageError("the topology was closed")
        return self._h

    def __enter__(self) -> "Topology":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"indegree {self.indegree}, outdegree {self.outdegree}"
        return f"<sparcoll.Topology rank {self.comm.rank}: {state}>"


class NeighborMixin:
    """The neighbourhood methods of Communicator (they use its _h, _input and _output)."""

    def _topologies_init(self) -> None:
        #: The open topologies of this communicator, closed before it (sparcoll/comm.py).
        self._topologies: "weakref.WeakSet[Topology]" = weakref.WeakSet()

    def _close_topologies(self) -> None:
        for t in list(self._topologies):
            t.close()

    def _topology(self, topo) -> Topology:
        if not isinstance(topo, Topology):
            raise TypeError(f"topo must be a sparcoll Topology, got {type(topo).__name__}")
        if topo.comm is not self:
            raise InvalidArgumentError("topo was created on another communicator")
        topo._handle()
        return topo

    def neighbor_allgather(self, send, topo: Topology, algo: str = "auto", *, out=None, stream=None,
                           async_op: bool = False):
        """Sends ``send`` to every out-neighbour of ``topo`` and returns what the
        in-neighbours sent: shape (topo.indegree, *send.shape), row e from
        ``topo.sources[e]`` (MPI's order; a source listed twice fills two rows).

        Every rank passes the same shape, dtype and algo. The result is of
        send's kind (numpy, torch, cupy) or written to ``out``, which must not
        overlap send. algo: "auto" (cost model), "naive", "combining",
        "hierarchical", "native" (README "Neighbourhood collectives").
        async_op=True returns a :class:`sparcoll.Request` (see Communicator.allreduce).
        """
        t = self._topology(topo)
        algc = lookup(NBR_ALGOS, algo, "neighbourhood algorithm")
        src = self._input(send, "send", stream)
        shape = (t.indegree,) + src.shape
        out, dst = self._output(src, out, shape)
        th, st = t._h, resolve_stream(src, stream)
        return self._run("neighbor_allgather", lambda: _sparcoll.neighbor_allgather(
            th, src.ptr, src.size, dst.ptr, src.dtype, algc, st), out, async_op)

    def neighbor_allgatherv(self, send, topo: Topology, recvcounts: Sequence[int],
                            displs: Optional[Sequence[int]] = None, algo: str = "auto", *, out=None, stream=None,
                            async_op: bool = False):
        """neighbor_allgather with blocks of their own sizes: block e, from
        ``topo.sources[e]``, has ``recvcounts[e]`` elements (the size of that
        rank's send) at element ``displs[e]`` of the 1-D result. displs None:
        the blocks packed in order. The result has max(displs[e] + recvcounts[e])
        elements of send's dtype and kind, or is written to ``out`` (any
        contiguous array of at least that many elements, read flat; elements
        outside the blocks are left as they are). Blocks must not overlap.
        async_op=True returns a :class:`sparcoll.Request`.
        """
        t = self._topology(topo)
        algc = lookup(NBR_ALGOS, algo, "neighbourhood algorithm")
        src = self._input(send, "send", stream)
        counts = [nonneg_int(c, f"recvcounts[{e}]") for e, c in enumerate(_ranks(recvcounts, "recvcounts"))]
        if len(counts) != t.indegree:
            raise InvalidArgumentError(f"neighbor_allgatherv: recvcounts has {len(counts)} entries, expected "
                                       f"{t.indegree} (the in-degree)")
        if displs is None:
            offs, at = [], 0
            for c in counts:
                offs.append(at)
                at += c
        else:
            offs = [nonneg_int(d, f"displs[{e}]") for e, d in enumerate(_ranks(displs, "displs"))]
            if len(offs) != t.indegree:
                raise InvalidArgumentError(f"neighbor_allgatherv: displs has {len(offs)} entries, expected "
                                           f"{t.indegree} (the in-degree)")
        span = max((o + c for o, c in zip(offs, counts)), default=0)
        if out is None:
            out = empty_like_kind(src, (span,))
            dst = as_ref(out, "out")
        else:
            dst = as_ref(out, "out")
            self._check_where(dst, "out")
            if dst.dtype != src.dtype:
                raise InvalidArgumentError(f"out has dtype {dst.dtype_name}, expected {DTYPE_NAMES[src.dtype]}")
            if dst.size < span:
                raise InvalidArgumentError(f"out has {dst.size} elements, the blocks need {span}")
            if dst.readonly:
                raise InvalidArgumentError("out is read-only")
            if dst.overlaps(src):
                raise InvalidArgumentError("out overlaps send")
        th, st = t._h, resolve_stream(src, stream)
        return self._run("neighbor_allgatherv", lambda: _sparcoll.neighbor_allgatherv(
            th, src.ptr, src.size, dst.ptr, counts, offs, src.dtype, algc, st), out, async_op)
