"""Every bad input raises a clear exception of the sparcoll.errors hierarchy
(carrying the C library's message where the library detected it); failures
that abort a communicator are reported by every later call."""

import time

import numpy as np
import pytest

import sparcoll as sc
from helpers import run_ranks


@pytest.fixture
def comm():
    c = sc.local_group(1)[0]
    yield c
    c.close()


def test_hierarchy():
    assert issubclass(sc.InvalidArgumentError, ValueError)
    assert issubclass(sc.CollectiveTimeoutError, TimeoutError)
    assert issubclass(sc.SystemFailureError, OSError)
    for cls in (sc.InvalidArgumentError, sc.InvalidUsageError, sc.SystemFailureError, sc.CudaError, sc.NcclError,
                sc.MpiError, sc.CollectiveTimeoutError, sc.RemoteError, sc.InternalError):
        assert issubclass(cls, sc.SparcollError)
        e = cls("message")
        assert str(e) == "message" and e.code == cls.default_code and e.code_name.startswith("sc")
    assert sc.errors.error_class(7) is sc.CollectiveTimeoutError


def test_bad_dtype(comm):
    with pytest.raises(sc.InvalidArgumentError, match="complex64 is not supported"):
        comm.allreduce(np.zeros(3, np.complex64))
    with pytest.raises(sc.InvalidArgumentError, match="bool is not supported"):
        comm.allgather(np.zeros(3, bool))


def test_non_contiguous(comm):
    with pytest.raises(sc.InvalidArgumentError, match="not C-contiguous"):
        comm.allreduce(np.zeros((4, 4), np.float32)[:, 1])


def test_non_native_byte_order(comm):
    with pytest.raises(sc.InvalidArgumentError, match="byte order"):
        comm.allreduce(np.zeros(4, ">f4"))


def test_bad_op_and_algo(comm):
    x = np.zeros(4, np.float32)
    with pytest.raises(sc.InvalidArgumentError, match="unknown reduction op 'mean'"):
        comm.allreduce(x, op="mean")
    with pytest.raises(sc.InvalidArgumentError, match="unknown algorithm 'tree'"):
        comm.allreduce(x, algo="tree")
    with pytest.raises(sc.InvalidArgumentError, match="unknown algorithm"):
        comm.allgather(x, algo=3)


def test_bad_out(comm):
    x = np.zeros(4, np.float32)
    with pytest.raises(sc.InvalidArgumentError, match="has 5 elements, expected 4"):
        comm.allreduce(x, out=np.zeros(5, np.float32))
    with pytest.raises(sc.InvalidArgumentError, match="dtype float64, expected float32"):
        comm.allreduce(x, out=np.zeros(4, np.float64))
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(sc.InvalidArgumentError, match="read-only"):
        comm.allreduce(x, out=ro)
    buf = np.zeros(8, np.float32)
    with pytest.raises(sc.InvalidArgumentError, match="overlaps"):
        comm.allreduce(buf[:4], out=buf[2:6])


def test_reduce_scatter_0d():
    """A first dimension of any length splits (tests/test_conventions.py); a 0-d x has none."""
    def body(c):
        with pytest.raises(sc.InvalidArgumentError, match=r"x is 0-d \(shape \(\)\); it needs a first dimension"):
            c.reduce_scatter(np.zeros((), np.float32))
        # Uneven blocks: rank 0 gets 3 of the 5 rows, rank 1 gets 2 (every rank raises: no one waits).
        with pytest.raises(sc.InvalidArgumentError, match=f"has 4 elements, expected {3 - c.rank}"):
            c.reduce_scatter(np.zeros(5, np.float32), out=np.zeros(4, np.float32))
        return True

    assert all(run_ranks(2, body))


def test_allgather_wrong_out():
    def body(c):
        with pytest.raises(sc.InvalidArgumentError, match="expected 6"):
            c.allgather(np.zeros(3, np.int32), out=np.zeros(5, np.int32))
        return True

    assert all(run_ranks(2, body))


def test_closed_communicator(comm):
    comm.close()
    assert comm.closed
    with pytest.raises(sc.InvalidUsageError, match="closed"):
        comm.allreduce(np.zeros(2, np.float32))
    with pytest.raises(sc.InvalidUsageError, match="closed"):
        _ = comm.rank
    comm.close()  # idempotent


def test_local_group_bad_arguments():
    with pytest.raises(sc.InvalidArgumentError, match="n must be >= 1"):
        sc.local_group(0)
    with pytest.raises(TypeError):
        sc.local_group(2.0)
    with pytest.raises(sc.InvalidArgumentError, match="timeout"):
        sc.local_group(2, timeout=-1)
    if not sc.features["cuda"]:
        with pytest.raises(sc.InvalidUsageError, match="CUDA build"):
            sc.local_group(2, devices=[0, 0])


def test_host_stream_rejected(comm):
    with pytest.raises(sc.InvalidArgumentError, match="stream"):
        comm.allreduce(np.zeros(2, np.float32), stream=123)


def test_c_library_message_reaches_python():
    """A config the library refuses (an algorithm value out of range, which the
    Python layer would have caught by name) is reported with the library's message."""
    import sparcoll._sparcoll as ext

    with pytest.raises(sc.InvalidArgumentError) as ei:
        ext.init_local(2, None, 0.0, 99, 0)
    assert "unknown algorithm" in str(ei.value) and ei.value.code_name == "scInvalidArgument"
    assert ".cpp:" in str(ei.value)  # the library's file:line of the failure


def test_mismatched_sizes_time_out_and_abort():
    """Ranks that disagree on the size cannot complete: the deadline expires
    (CollectiveTimeoutError), the communicator is aborted, later calls fail fast."""
    def body(c):
        n = 1000 if c.rank == 0 else 2000
        t0 = time.monotonic()
        with pytest.raises((sc.CollectiveTimeoutError, sc.RemoteError)) as ei:
            c.allreduce(np.zeros(n, np.float32), algo="ring")
        elapsed = time.monotonic() - t0
        with pytest.raises(sc.InvalidUsageError, match="aborted"):
            c.allreduce(np.zeros(4, np.float32))
        return type(ei.value), elapsed

    outs = run_ranks(2, body, timeout=2.0)
    assert all(e < 30 for _, e in outs)


def test_abort_reaches_the_peers_quickly():
    """Rank 1 gives up (Communicator.abort): rank 0, waiting on it with a 30 s
    deadline, gets a RemoteError naming rank 1 within a few seconds."""
    def body(c):
        if c.rank == 1:
            time.sleep(0.2)
            c.abort()
            with pytest.raises(sc.InvalidUsageError, match="scCommAbort"):
                c.allreduce(np.zeros(4, np.float32))
            return None
        t0 = time.monotonic()
        with pytest.raises(sc.RemoteError, match="rank 1 aborted the communicator") as ei:
            c.allreduce(np.zeros(64, np.float32), algo="ring")
        return ei.value.code_name, time.monotonic() - t0

    code, elapsed = run_ranks(2, body, timeout=30.0)[0]
    assert code == "scRemoteError" and elapsed < 5


def test_missing_peer_times_out():
    """Rank 1 never joins: rank 0's deadline expires with CollectiveTimeoutError."""
    def body(c):
        if c.rank == 1:
            return None
        t0 = time.monotonic()
        with pytest.raises(sc.CollectiveTimeoutError) as ei:
            c.allreduce(np.zeros(64, np.float32))
        return ei.value.code_name, time.monotonic() - t0

    code, elapsed = run_ranks(2, body, timeout=1.0)[0]
    assert code == "scTimeout" and 0.5 < elapsed < 20


def test_from_mpi_bad_arguments():
    pytest.importorskip("mpi4py")
    with pytest.raises(TypeError, match="mpi4py communicator"):
        sc.Communicator.from_mpi(object())
    with pytest.raises(sc.InvalidArgumentError, match="transport"):
        sc.Communicator.from_mpi(None, transport="local")
    if not sc.features["nccl"]:
        with pytest.raises(sc.InvalidUsageError, match="no nccl transport"):
            sc.Communicator.from_mpi(None, transport="nccl")
