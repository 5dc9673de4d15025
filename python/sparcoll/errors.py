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

import builtins

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
]

# scResult_t values (sparcoll.h).
SUCCESS, INVALID_ARGUMENT, INVALID_USAGE, SYSTEM_ERROR, CUDA_ERROR = 0, 1, 2, 3, 4
NCCL_ERROR, MPI_ERROR, TIMEOUT, REMOTE_ERROR, INTERNAL_ERROR = 5, 6, 7, 8, 9

_CODE_NAMES = {
    SUCCESS: "scSuccess",
    INVALID_ARGUMENT: "scInvalidArgument",
    INVALID_USAGE: "scInvalidUsage",
    SYSTEM_ERROR: "scSystemError",
    CUDA_ERROR: "scCudaError",
    NCCL_ERROR: "scNcclError",
    MPI_ERROR: "scMpiError",
    TIMEOUT: "scTimeout",
    REMOTE_ERROR: "scRemoteError",
    INTERNAL_ERROR: "scInternalError",
}


class SparcollError(Exception):
    """Base class of every sparcoll failure.

    Attributes:
        code: the ``scResult_t`` value (int).
        code_name: its C name, e.g. ``"scInvalidArgument"``.
        message: the library's detailed message.
    """

    default_code = INTERNAL_ERROR

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        self.message = message
        self.code = self.default_code if code is None else int(code)
        self.code_name = _CODE_NAMES.get(self.code, f"scResult_t({self.code})")

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # picklable (errors cross process boundaries in tests and pools)
        return (type(self), (self.message, self.code))


class InvalidArgumentError(SparcollError, ValueError):
    """scInvalidArgument: bad pointer, count, dtype, op, algorithm, shape, device, ..."""

    default_code = INVALID_ARGUMENT


class InvalidUsageError(SparcollError):
    """scInvalidUsage: not valid in this state (closed or aborted communicator, missing feature)."""

    default_code = INVALID_USAGE


class SystemFailureError(SparcollError, OSError):
    """scSystemError: an operating-system or allocation failure."""

    default_code = SYSTEM_ERROR

    def __init__(self, message: str, code: int | None = None):
        # OSError's constructor reads two arguments as (errno, strerror): give it one.
        OSError.__init__(self, message)
        self.message = message
        self.code = self.default_code if code is None else int(code)
        self.code_name = _CODE_NAMES.get(self.code, f"scResult_t({self.code})")


class CudaError(SparcollError):
    """scCudaError: a CUDA runtime failure."""

    default_code = CUDA_ERROR


class NcclError(SparcollError):
    """scNcclError: an NCCL failure; the communicator is aborted."""

    default_code = NCCL_ERROR


class MpiError(SparcollError):
    """scMpiError: an MPI failure; the communicator is aborted."""

    default_code = MPI_ERROR


class CollectiveTimeoutError(SparcollError, builtins.TimeoutError):
    """scTimeout: a deadline expired; the communicator is now aborted."""

    default_code = TIMEOUT

    def __init__(self, message: str, code: int | None = None):
        builtins.TimeoutError.__init__(self, message)
        self.message = message
        self.code = self.default_code if code is None else int(code)
        self.code_name = _CODE_NAMES.get(self.code, f"scResult_t({self.code})")


class RemoteError(SparcollError):
    """scRemoteError: a peer reported a failure or a mismatch (e.g. sizes differ)."""

    default_code = REMOTE_ERROR


class InternalError(SparcollError):
    """scInternalError: a bug in sparcoll."""

    default_code = INTERNAL_ERROR


_BY_CODE = {
    INVALID_ARGUMENT: InvalidArgumentError,
    INVALID_USAGE: InvalidUsageError,
    SYSTEM_ERROR: SystemFailureError,
    CUDA_ERROR: CudaError,
    NCCL_ERROR: NcclError,
    MPI_ERROR: MpiError,
    TIMEOUT: CollectiveTimeoutError,
    REMOTE_ERROR: RemoteError,
    INTERNAL_ERROR: InternalError,
}


def error_class(code: int) -> type[SparcollError]:
    """The exception class raised for an ``scResult_t`` code."""
    return _BY_CODE.get(int(code), SparcollError)


def _from_code(code: int, message: str) -> SparcollError:
    """Called by the extension to build the exception of a failed C call."""
    return error_class(code)(message, code)
