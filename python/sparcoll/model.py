"""The cost model without a communicator: what sparcoll's autos would pick, and
how long each algorithm is predicted to take, for any number of ranks.

    import sparcoll.model as m
    m.load("tuning.json")                        # the library's parser: a bad file raises its message
    m.estimate("tuning.json", transport="mpi", nranks=512, machines=64,
               collective="allreduce", count=1 << 20)   # -> (seconds, "ring")
    cm = m.CostModel(None, transport="nccl", nranks=8)  # built-in parameters; reuse for many estimates
    cm.estimate("sparse_allreduce", 1 << 24, density=0.01)

Every number comes from the C library (scCostModelCreate /
scCostModelEstimateTime): the same tuning-file parser, parameters, rules and
formulas as a communicator's ``estimate`` and its autos (README, "Cost
model"). The environment is read as at a communicator's creation:
SPARCOLL_ALPHA / _BETA / _GAMMA override the file's parameters,
SPARCOLL_ALGO sets the dense collectives' default, and with ``tuning=None``
SPARCOLL_TUNING_FILE names the file (unset: the built-in parameters).
Neighbourhood collectives need a graph: use :meth:`sparcoll.Topology.estimate`,
or price a topology's ``cost_terms`` with :meth:`CostModel.neighbor_time`.
"""

from __future__ import annotations

import json as _json
import os as _os

from . import _sparcoll
from ._capi import ALGOS as _ALGOS
from ._capi import COLLECTIVES
from ._capi import DSOP_ALGOS as _DSOP_ALGOS
from ._capi import SPARSE_ALGOS as _SPARSE_ALGOS
from ._capi import TRANSPORTS as _TRANSPORTS
from ._capi import dtype_code as _dtype_code
from ._capi import lookup as _lookup
from ._capi import name_of as _name_of
from ._capi import nonneg_int as _nonneg_int
from .errors import InvalidArgumentError as _InvalidArgumentError

__all__ = ["CostModel", "estimate", "load", "COLLECTIVES"]

# The algorithm enum of each collective.
_ALGO_TABLES = {"allreduce": _ALGOS, "reduce_scatter": _ALGOS, "allgather": _ALGOS, "broadcast": _ALGOS,
                "sparse_allreduce": _SPARSE_ALGOS, "dsop": _DSOP_ALGOS}


def _codes(collective: str, algo: str, dtype, density: float | None) -> tuple[int, int, int, float]:
    """(collective, algorithm, dtype, density) as the C call takes them."""
    coll = _lookup(COLLECTIVES, collective, "collective")
    table = _ALGO_TABLES[collective]
    code = _lookup(table, algo, f"{collective} algorithm")
    dt = _dtype_code(dtype, "dtype")
    if collective == "sparse_allreduce":
        if density is None:
            raise _InvalidArgumentError("sparse_allreduce needs density (each rank's non-zeros / count, in (0, 1])")
        density = float(density)
    else:
        density = 0.0
    return coll, code, dt, density


def _result(collective: str, seconds: float, pick: int) -> tuple[float, str]:
    return seconds, _name_of(_ALGO_TABLES[collective], pick)


def _path(p: str | _os.PathLike | None) -> str | None:
    return None if p is None else _os.fspath(p)


class CostModel:
    """The model a communicator of ``nranks`` ranks on ``machines`` machines would
    hold if it were created here with this tuning file (None: SPARCOLL_TUNING_FILE,
    else the built-in parameters).

    transport: "mpi", "nccl" or "local"; memory: "host" or "device" (default:
    device for nccl, host otherwise; nccl is device-only, mpi host-only).
    machines > 1 prices dense, sparse and DSOP collectives with the tuning file's
    inter-node parameters. ``algo`` is scConfig_t.algo: what the dense autos
    resolve to first ("auto": rules, then the model). The file is read once, here.
    """

    def __init__(self, tuning: str | _os.PathLike | None = None, *, transport: str = "mpi",
                 memory: str | None = None, nranks: int, machines: int = 1, algo: str = "auto"):
        code = _lookup(_TRANSPORTS, transport, "transport")
        memory = memory or ("device" if transport == "nccl" else "host")
        if memory not in ("host", "device"):
            raise _InvalidArgumentError(f"memory must be 'host' or 'device', got {memory!r}")
        self.transport, self.memory = transport, memory
        self.nranks, self.machines = int(nranks), int(machines)
        self._h = _sparcoll.CostModel(_path(tuning), code, memory == "device", self.nranks, self.machines,
                                      _lookup(_ALGOS, algo, "algorithm"))

    def estimate(self, collective: str, count: int, dtype="float32", algo: str = "auto",
                 density: float | None = None) -> tuple[float, str]:
        """(predicted seconds of ``algo`` — of auto's pick for "auto" —, the algorithm
        auto would run) for one call; see :func:`estimate` for the arguments."""
        coll, code, dt, d = _codes(collective, algo, dtype, density)
        return _result(collective, *self._h.estimate(coll, code, _nonneg_int(count, "count"), dt, d))

    def neighbor_time(self, terms: dict, nbytes: int) -> float:
        """A neighbour allgather's cost terms (:meth:`sparcoll.Topology.cost_terms`'
        dict, recorded or made up) priced for blocks of ``nbytes`` bytes with this
        model (scCostModelNeighborTime): with the model the topology's communicator
        holds, exactly ``topo.estimate(nbytes, algo)[0]``. Raises
        InvalidArgumentError for a negative or non-finite term."""
        keys = ("rounds", "extra_messages", "blocks", "shared_blocks")
        missing = [k for k in keys if k not in terms]
        if missing:
            raise _InvalidArgumentError(f"terms lacks {', '.join(missing)} (the keys of Topology.cost_terms)")
        return self._h.neighbor_time([tuple(float(x) for x in terms[k]) for k in keys],
                                     _nonneg_int(nbytes, "nbytes"))

    def close(self) -> None:
        self._h.close()

    def __repr__(self) -> str:
        return (f"<sparcoll.model.CostModel {self.transport}/{self.memory}, {self.nranks} ranks on "
                f"{self.machines} machine{'s' if self.machines != 1 else ''}>")


def estimate(tuning: str | _os.PathLike | None = None, *, transport: str = "mpi", memory: str | None = None,
             nranks: int, machines: int = 1, collective: str, count: int, dtype="float32",
             algo: str = "auto", density: float | None = None) -> tuple[float, str]:
    """The cost model's prediction for one call on ``nranks`` ranks spanning
    ``machines`` machines: (seconds of ``algo`` — of auto's pick for "auto" —,
    the algorithm "auto" would run: a tuning-file rule when one matches, else the
    model's fastest).

    collective and count, as in the call: "allreduce" (count), "reduce_scatter"
    (recvcount), "allgather" (sendcount), "sparse_allreduce" (count = the
    dimension N, dtype = the value type, density = each rank's non-zeros / N in
    (0, 1]; every rank alike, uniform indices, dense output), "dsop" (n = m =
    count, dtype = the input type). dtype: a name ("float32"), a numpy dtype or
    scalar type (np.float32), or a torch dtype. algo: the collective's algorithm
    names as its call takes them; native is priced as ring. Other arguments as for
    :class:`CostModel`. Raises InvalidArgumentError for a bad tuning file (the
    library's message: file, JSON path, problem) or bad arguments.
    """
    m = CostModel(tuning, transport=transport, memory=memory, nranks=nranks, machines=machines)
    try:
        return m.estimate(collective, count, dtype, algo, density)
    finally:
        m.close()


def load(path: str | _os.PathLike) -> dict:
    """Checks a tuning file with the library's own parser (what a communicator's
    creation does: a bad file raises InvalidArgumentError with the same message)
    and returns its contents as a dict ("format", "version", "models", "rules",
    and "created" / "source" when present)."""
    path = _os.fspath(path)
    # The parse at model creation is the check; any transport serves for it.
    _sparcoll.CostModel(path, _TRANSPORTS["local"], False, 1, 1, _ALGOS["auto"]).close()
    with open(path, "rb") as f:
        doc = _json.load(f)
    doc.setdefault("models", [])
    doc.setdefault("rules", [])
    return doc
