"""The C API as Python tables: the names each C enum accepts, and the build's features.

The tables are built from the enums the extension exports
(``_sparcoll.RedOp``, ...; see python/src/enums.cpp), never written out here,
so Python accepts a name exactly when the C library has the value. This module
imports no other sparcoll module but ``errors``: every other module can import
it without forming a cycle.
"""

from __future__ import annotations

import operator
import os
import sys
import warnings
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
    """Maps a user-facing name ("ring", "sum", ...) to its C enum value. An old
    spelling (DEPRECATED_NAMES) of one of the table's names is accepted with a
    DeprecationWarning."""
    new = DEPRECATED_NAMES.get(name) if isinstance(name, str) and name not in table else None
    if new in table:
        warn_deprecated(f"{what} {name!r} is deprecated: it is spelled {new!r} now (as in the C library, the "
                        f"benchmarks and tuning files)")
        name = new
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


# ---------------------------------------------------------------- names with an old spelling
#: Old spellings still accepted (with a DeprecationWarning), by the table's name now.
DEPRECATED_NAMES = {"ssar_rec_dbl": "ssar_recdbl"}
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def warn_deprecated(message: str) -> None:
    """A DeprecationWarning attributed to the first caller outside the sparcoll package."""
    level, f = 2, sys._getframe(1)  # stacklevel 2: warn_deprecated's caller
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _PACKAGE_DIR:
        level, f = level + 1, f.f_back
    warnings.warn(message, DeprecationWarning, stacklevel=level)


# ---------------------------------------------------------------- reduction ops
#: Other spellings of the ops (after lower-casing): torch's name of prod, and of avg.
_OP_ALIASES = {"product": "prod", "average": "avg"}
_MPI_OPS = {"SUM": "sum", "PROD": "prod", "MAX": "max", "MIN": "min"}
_MPI_OTHER = ("LAND", "BAND", "LOR", "BOR", "LXOR", "BXOR", "MAXLOC", "MINLOC", "REPLACE", "NO_OP")
_TORCH_OPS = {"SUM": "sum", "PRODUCT": "prod", "MAX": "max", "MIN": "min", "AVG": "avg"}


def _accepted_ops(names) -> str:
    mpi = "/".join(k for k, v in _MPI_OPS.items() if v in names)
    torch = "/".join(k for k, v in _TORCH_OPS.items() if v in names)
    aliases = ", ".join(f"{a!r}" for a, v in _OP_ALIASES.items() if v in names)
    return (f"{', '.join(names)} (any case{'; also ' + aliases if aliases else ''}), "
            + (f"mpi4py's MPI.{mpi}, " if mpi else "") + f"torch.distributed.ReduceOp.{torch}")


def _mpi_op_name(op):
    """(our name or None, how to show op) for an mpi4py MPI.Op; None when op is no mpi4py object."""
    if not type(op).__module__.startswith("mpi4py"):
        return None
    MPI = sys.modules.get("mpi4py.MPI")
    for name in (*_MPI_OPS, *_MPI_OTHER) if MPI is not None else ():
        ref = getattr(MPI, name, None)
        if ref is not None and type(ref) is type(op) and op == ref:
            return _MPI_OPS.get(name), f"MPI.{name}"
    return None, f"mpi4py {type(op).__name__} {op!r}"


def _torch_op_name(op):
    """(our name or None, how to show op) for a torch.distributed ReduceOp (or RedOpType member)."""
    if not type(op).__module__.startswith("torch"):
        return None
    dist = sys.modules.get("torch.distributed")
    red = getattr(dist, "ReduceOp", None)
    if red is None:
        return None
    for name, member in red.RedOpType.__members__.items():
        try:
            same = op == member
        except Exception:  # noqa: BLE001 - an object of torch that does not compare with ReduceOps
            return None
        if same:
            return _TORCH_OPS.get(name), f"ReduceOp.{name}"
    return None


def reduce_op(op, allowed=None, context: str = "") -> int:
    """The scRedOp_t of a reduction op as a caller may spell it: "sum", "prod", "max",
    "min", "avg" in any case, "product" / "average" (torch's spellings), mpi4py's
    MPI.SUM/PROD/MAX/MIN, torch.distributed.ReduceOp.SUM/PRODUCT/MAX/MIN/AVG (also
    its RedOpType members). ``allowed``: the names the call supports (default all),
    ``context``: what the error adds after the op (" for the sparse allreduce ...").
    mpi4py and torch are never imported here: an object of theirs has them loaded."""
    names = list(OPS) if allowed is None else list(allowed)
    if isinstance(op, str):
        name, shown = _OP_ALIASES.get(op.lower(), op.lower()), repr(op)
        if name not in OPS:
            raise InvalidArgumentError(f"unknown reduction op {shown}; expected one of: {_accepted_ops(names)}")
    else:
        found = _mpi_op_name(op) or _torch_op_name(op)
        if found is None:
            raise InvalidArgumentError(f"unknown reduction op {op!r} of type {type(op).__name__}; expected one of: "
                                       f"{_accepted_ops(names)}")
        name, shown = found
    if name not in names:
        raise InvalidArgumentError(f"unsupported reduction op {shown}{context}; expected one of: "
                                   f"{_accepted_ops(names)}")
    return OPS[name]


# ---------------------------------------------------------------- dtypes
def dtype_name(dtype, what: str = "dtype", accepted=None) -> str:
    """The package's name ("float32", ...) of a dtype as a caller may give it: that
    name, a numpy dtype or scalar type (np.float32, np.dtype("float32")), a torch
    dtype (torch.float32, torch.bfloat16). ``accepted``: the names the call takes
    (default every DTYPES name). torch is never imported here."""
    names = list(DTYPES) if accepted is None else list(accepted)
    name = _dtype_to_name(dtype)
    if name not in names:
        shown = f"{dtype.__module__}.{dtype.__qualname__}" if isinstance(dtype, type) else repr(dtype)
        if name is not None and name != dtype:
            shown += f" ({name})"
        word = "unknown" if name is None or (isinstance(dtype, str) and name not in DTYPES) else "unsupported"
        raise InvalidArgumentError(f"{what}: {word} dtype {shown}; expected one of: {', '.join(names)} "
                                   "(as a name, a numpy dtype or scalar type, or a torch dtype)")
    return name


def dtype_code(dtype, what: str = "dtype", accepted=None) -> int:
    """The scDataType_t of a dtype given as :func:`dtype_name` takes it."""
    return DTYPES[dtype_name(dtype, what, accepted)]


def _dtype_to_name(dtype):
    if isinstance(dtype, str):
        return dtype
    t = sys.modules.get("torch")
    if t is not None and isinstance(dtype, t.dtype):
        return str(dtype).replace("torch.", "")
    np = sys.modules.get("numpy")
    if np is not None and (isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic))):
        return np.dtype(dtype).name
    return None
