"""The C API as Python tables: the names each C enum accepts, and the build's features.

The tables are built from the enums the extension exports
(``_sparcoll.RedOp``, ...; see python/src/enums.cpp), never written out here,
so Python accepts a name exactly when the C library has the value. This module
imports no other sparcoll module but ``errors``: every other module can import
it without forming a cycle.
"""

from __future__ import annotations

import operator
from typing import Dict, Mapping

from . import _sparcoll
from .errors import InvalidArgumentError, InvalidUsageError


def _table(enum) -> Dict[str, int]:
    """name -> C value of an exported enum, in the C declaration order."""
    return {name: int(value) for name, value in enum.__members__.items()}


#: scDataType_t by the name numpy / torch / cupy give the dtype.
DTYPES = _table(_sparcoll.DataType)
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
ITEMSIZE = {int(v): v.itemsize for v in _sparcoll.DataType.__members__.values()}
#: scIndexType_t by the unsigned dtype it reads ("uint32", "uint64").
INDEX_TYPES = _table(_sparcoll.IndexType)
OPS = _table(_sparcoll.RedOp)
ALGOS = _table(_sparcoll.Algo)
TRANSPORTS = _table(_sparcoll.Transport)
SPARSE_ALGOS = _table(_sparcoll.SparseAlgo)
DSOP_ALGOS = _table(_sparcoll.DsopAlgo)
NBR_ALGOS = _table(_sparcoll.NbrAlgo)
#: scCollective_t by the tuning file's names ("allreduce", ..., "dsop").
COLLECTIVES = _table(_sparcoll.Collective)
TOPK_METHODS = _table(_sparcoll.TopkMethod)
TOPK_OUTPUTS = _table(_sparcoll.TopkOutput)
#: DLPack device types and dtype codes sparcoll reads (dlpack.h's values).
DL_DEVICES = _table(_sparcoll.DLDeviceType)
DL_CODE_NAMES = {v: k for k, v in _table(_sparcoll.DLDataTypeCode).items()}


def subset(table: Mapping[str, int], *names: str) -> Dict[str, int]:
    """The entries of table for these names (which must all exist)."""
    return {n: table[n] for n in names}


def lookup(table: Mapping[str, int], name, what: str) -> int:
    """Maps a user-facing name ("ring", "sum", ...) to its C enum value."""
    if not isinstance(name, str) or name not in table:
        raise InvalidArgumentError(f"unknown {what} {name!r}; expected one of: {', '.join(table)}")
    return table[name]


def name_of(table: Mapping[str, int], code: int) -> str:
    """The user-facing name of a C enum value the library returned."""
    return next(k for k, v in table.items() if v == code)


def feature_summary() -> str:
    return ", ".join(f"{k}={'yes' if v else 'no'}" for k, v in _sparcoll.features.items())


def require_nccl(what: str) -> None:
    if not _sparcoll.features["nccl"]:
        raise InvalidUsageError(f"{what} needs the nccl transport, which this sparcoll build lacks "
                                f"(built with: {feature_summary()}; build with SPARCOLL_CUDA=ON and NCCL)")


def nonneg_int(v, what: str) -> int:
    """v as a C size argument: an int (not a bool) >= 0."""
    try:
        if isinstance(v, bool):
            raise TypeError
        v = operator.index(v)
    except TypeError:
        raise InvalidArgumentError(f"{what} must be a non-negative int, got {v!r}") from None
    if v < 0:
        raise InvalidArgumentError(f"{what} must be a non-negative int, got {v}")
    return v
