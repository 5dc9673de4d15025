"""Exceptions raised by sparcoll.

Every failure of the C library becomes an instance of a subclass of
:class:`SparcollError` chosen by its ``scResult_t`` code. The exception text is
the library's detailed message (``scGetLastError``, with the source location
where the library raised it); ``code`` and ``code_name`` carry the status.

The subclasses also derive from the matching built-in exception where one
exists, so ``except ValueError`` catches a bad argument and ``except
TimeoutError`` an expired deadline.
"""

from __future__ import annotations

import builtins as _builtins

from . import _sparcoll

__all__ = [
    "SparcollError",
    "InvalidArgumentError",
    "InvalidUsageError",
    "SystemFailureError",
    "CudaError",
    "NcclError",
    "MpiError",
    "CollectiveTimeoutError",
    "RemoteError",
    "InternalError",
    "CollectiveInterruptedError",
    "error_class",
]

# scResult_t as the extension exports it (python/src/enums.cpp): C name -> value.
_RESULT = _sparcoll.Result
_CODE_NAMES = {int(v): name for name, v in _RESULT.__members__.items()}


def _init(exc: SparcollError, message: str, code: int | None) -> None:
    """The attributes every SparcollError carries (subclasses with a built-in base call it too)."""
    exc.message = message
    exc.code = exc.default_code if code is None else int(code)
    exc.code_name = _CODE_NAMES.get(exc.code, f"scResult_t({exc.code})")


class SparcollError(Exception):
    """Base class of every sparcoll failure.

    Attributes:
        code: the ``scResult_t`` value (int).
        code_name: its C name, e.g. ``"scInvalidArgument"``.
        message: the library's detailed message.
    """

    default_code = int(_RESULT.scInternalError)

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        _init(self, message, code)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # picklable (errors cross process boundaries in tests and pools)
        return (type(self), (self.message, self.code))


class InvalidArgumentError(SparcollError, ValueError):
    """scInvalidArgument: bad pointer, count, dtype, op, algorithm, shape, device, ..."""

    default_code = int(_RESULT.scInvalidArgument)


class InvalidUsageError(SparcollError):
    """scInvalidUsage: not valid in this state (closed or aborted communicator, missing feature)."""

    default_code = int(_RESULT.scInvalidUsage)


class SystemFailureError(SparcollError, OSError):
    """scSystemError: an operating-system or allocation failure."""

    default_code = int(_RESULT.scSystemError)

    def __init__(self, message: str, code: int | None = None):
        # OSError's constructor reads two arguments as (errno, strerror): give it one.
        OSError.__init__(self, message)
        _init(self, message, code)


class CudaError(SparcollError):
    """scCudaError: a CUDA runtime failure."""

    default_code = int(_RESULT.scCudaError)


class NcclError(SparcollError):
    """scNcclError: an NCCL failure; the communicator is aborted."""

    default_code = int(_RESULT.scNcclError)


class MpiError(SparcollError):
    """scMpiError: an MPI failure; the communicator is aborted."""

    default_code = int(_RESULT.scMpiError)


class CollectiveTimeoutError(SparcollError, _builtins.TimeoutError):
    """scTimeout: a deadline expired; the communicator is now aborted."""

    default_code = int(_RESULT.scTimeout)

    def __init__(self, message: str, code: int | None = None):
        _builtins.TimeoutError.__init__(self, message)
        _init(self, message, code)


class RemoteError(SparcollError):
    """scRemoteError: a peer reported a failure or a mismatch (e.g. sizes differ)."""

    default_code = int(_RESULT.scRemoteError)


class InternalError(SparcollError):
    """scInternalError: a bug in sparcoll."""

    default_code = int(_RESULT.scInternalError)


class CollectiveInterruptedError(SparcollError):
    """scInterrupted: :meth:`Communicator.interrupt` (scCommInterrupt) stopped the call; the communicator is
    aborted. A signal whose Python handler raises (Ctrl-C) raises the handler's exception instead."""

    default_code = int(_RESULT.scInterrupted)


_BY_CODE = {cls.default_code: cls for cls in (InvalidArgumentError, InvalidUsageError, SystemFailureError, CudaError,
                                             NcclError, MpiError, CollectiveTimeoutError, RemoteError, InternalError,
                                             CollectiveInterruptedError)}


def error_class(code: int) -> type[SparcollError]:
    """The exception class raised for an ``scResult_t`` code."""
    return _BY_CODE.get(int(code), SparcollError)


def _from_code(code: int, message: str) -> SparcollError:
    """Called by the extension to build the exception of a failed C call."""
    return error_class(code)(message, code)
