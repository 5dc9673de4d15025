"""Zero-copy array kinds: numpy, torch CPU tensors, DLPack producers, the buffer
protocol; results come back as the caller's kind; device arrays are refused by
host communicators."""

import array

import numpy as np
import pytest

import sparcoll as sc
from helpers import rank_data, requires_torch, run_ranks


class DLPackOnly:
    """An array known only through the DLPack protocol (like a foreign library's)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class FakeCudaArray:
    """Claims to be a CUDA array (never dereferenced: host communicators must refuse it)."""

    def __init__(self, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (0x7F0000000000, False),
                                         "version": 3, "strides": None}


def test_inputs_are_not_copied():
    """The library writes into the caller's own memory (out=x in place)."""
    def body(c):
        x = np.full(10, c.rank + 1, np.float32)
        addr = x.ctypes.data
        c.allreduce(x, out=x)
        return x, x.ctypes.data == addr

    for x, same in run_ranks(2, body):
        assert same
        np.testing.assert_array_equal(x, np.full(10, 3, np.float32))


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8"])
def test_torch_cpu_tensors(dtype):
    import torch

    tdt = getattr(torch, dtype)

    def body(c):
        x = torch.arange(12, dtype=torch.float32).to(tdt) + c.rank
        y = c.allreduce(x)
        rs = c.reduce_scatter(x.reshape(6, 2))
        ag = c.allgather(x[:3])
        xi = x.clone()
        c.allreduce(xi, out=xi, op="max")
        return y, rs, ag, xi

    outs = run_ranks(2, body)
    base = torch.arange(12, dtype=torch.float32).to(tdt)
    want = base + base + 1
    for r, (y, rs, ag, xi) in enumerate(outs):
        assert isinstance(y, torch.Tensor) and y.dtype == tdt
        assert torch.equal(y, want)
        assert rs.shape == (3, 2) and torch.equal(rs, want.reshape(6, 2)[3 * r:3 * r + 3])
        assert torch.equal(ag, torch.cat([base[:3], base[:3] + 1]))
        assert torch.equal(xi, base + 1)


@requires_torch
def test_torch_noncontiguous_rejected():
    import torch

    c = sc.local_group(1)[0]
    with pytest.raises(sc.InvalidArgumentError, match="not contiguous"):
        c.allreduce(torch.zeros(4, 4).t())
    c.close()


def test_dlpack_producer():
    def body(c):
        src = rank_data(c.rank, 9, "float64")
        y = c.allreduce(DLPackOnly(src))
        return y

    outs = run_ranks(3, body)
    want = sum(rank_data(r, 9, "float64") for r in range(3))
    for y in outs:
        assert isinstance(y, np.ndarray)  # a host DLPack array comes back as numpy
        np.testing.assert_array_equal(y, want)


def test_dlpack_out_written_in_place():
    def body(c):
        out = np.zeros(4, np.int32)
        c.allreduce(np.full(4, c.rank + 1, np.int32), out=DLPackOnly(out))
        return out

    for out in run_ranks(2, body):
        np.testing.assert_array_equal(out, [3, 3, 3, 3])


def test_buffer_protocol_objects():
    def body(c):
        a = array.array("f", [c.rank + 1.0] * 5)
        y = c.allreduce(a)
        c.allreduce(memoryview(a), out=memoryview(a))  # in place through a memoryview
        return y, list(a)

    for y, a in run_ranks(2, body):
        assert isinstance(y, np.ndarray)
        np.testing.assert_array_equal(y, [3.0] * 5)
        assert a == [3.0] * 5


def test_device_array_on_host_comm_rejected():
    c = sc.local_group(1)[0]
    with pytest.raises(sc.InvalidArgumentError, match="host arrays"):
        c.allreduce(FakeCudaArray(4))
    with pytest.raises(sc.InvalidArgumentError, match="host arrays"):
        c.allreduce(np.zeros(4, np.float32), out=FakeCudaArray(4))
    c.close()


def test_unsupported_objects():
    c = sc.local_group(1)[0]
    with pytest.raises(TypeError, match="expected an array"):
        c.allreduce([1.0, 2.0])
    with pytest.raises(TypeError):
        c.allreduce(None)
    c.close()
