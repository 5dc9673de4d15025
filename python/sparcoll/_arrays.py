"""Zero-copy views of the caller's arrays.

sparcoll never copies an input: it reads the address, shape, dtype and device
of the caller's array and hands the address to the C library. Supported:

* numpy arrays (host) and anything numpy can view without copying (buffer
  protocol, ``__array_interface__``);
* torch tensors, CPU and CUDA (device work on ``torch.cuda.current_stream()``);
* cupy arrays and any object with ``__cuda_array_interface__`` (cupy arrays on
  ``cupy.cuda.get_current_stream()``);
* any object with ``__dlpack__`` / ``__dlpack_device__`` (host or CUDA).

Results are allocated with the caller's library (numpy in, numpy out; torch
in, torch out; cupy in, cupy out; other array-API libraries through
``__array_namespace__``).
"""

from __future__ import annotations

import contextlib
import math
import sys
from typing import Any, Optional

import numpy as np

from . import _sparcoll
from ._capi import DL_CODE_NAMES, DL_DEVICES, DTYPE_NAMES, DTYPES, ITEMSIZE
from ._views import DeviceView, HostView
from .errors import InvalidArgumentError

# numpy's typestr of each dtype code, for views of library-owned memory. numpy
# has no bfloat16: its bits are viewed as uint16 (the caller's kind converts).
TYPESTR = {code: np.dtype("uint16" if name == "bfloat16" else name).str for code, name in DTYPE_NAMES.items()}
_DL_HOST = (DL_DEVICES["cpu"], DL_DEVICES["cuda_host"])
_DL_CUDA = (DL_DEVICES["cuda"], DL_DEVICES["cuda_managed"])


class ArrayRef:
    """What the C library needs to know about one array (and what keeps it alive).

    ``device`` is None for host memory, else the CUDA device ordinal (-1 when
    the producer did not say which).
    """

    __slots__ = ("obj", "kind", "ptr", "shape", "dtype", "device", "readonly", "keep")

    def __init__(self, obj, kind, ptr, shape, dtype, device, readonly=False, keep=None):
        self.obj, self.kind, self.ptr, self.shape = obj, kind, int(ptr), tuple(int(s) for s in shape)
        self.dtype, self.device, self.readonly, self.keep = dtype, device, readonly, keep

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return ITEMSIZE[self.dtype]

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def dtype_name(self) -> str:
        return DTYPE_NAMES[self.dtype]

    def where(self) -> str:
        if self.device is None:
            return "host"
        return "cuda" if self.device < 0 else f"cuda:{self.device}"

    def overlaps(self, other: "ArrayRef") -> bool:
        if self.nbytes == 0 or other.nbytes == 0 or (self.device is None) != (other.device is None):
            return False
        return self.ptr < other.ptr + other.nbytes and other.ptr < self.ptr + self.nbytes


def _dtype_code(name: str, what: str, accepted=None) -> int:
    """The code of a dtype the array has; ``accepted`` (names) narrows the set a call takes
    (e.g. index arrays), and an unsupported dtype's error lists that set."""
    code = DTYPES.get(name)
    if code is None or (accepted is not None and name not in accepted):
        raise InvalidArgumentError(
            f"{what}: dtype {name} is not supported (supported: {', '.join(accepted or DTYPES)})")
    return code


def _c_contiguous(shape, strides_elems) -> bool:
    expected = 1
    for dim, stride in zip(reversed(shape), reversed(strides_elems)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True


def torch_module(x):
    """The torch module when x is a torch tensor (torch is never imported here)."""
    t = sys.modules.get("torch")
    if t is not None and isinstance(x, t.Tensor):
        return t
    return None


def _cupy_module(x):
    cp = sys.modules.get("cupy")
    if cp is not None and isinstance(x, cp.ndarray):
        return cp
    return None


def _from_numpy(x: np.ndarray, what: str, obj=None, accepted=None) -> ArrayRef:
    if not x.flags.c_contiguous:
        raise InvalidArgumentError(f"{what}: array is not C-contiguous (strides {x.strides}); "
                                   "pass a contiguous array (numpy.ascontiguousarray)")
    if not x.dtype.isnative:
        raise InvalidArgumentError(f"{what}: dtype {x.dtype.str} is not in native byte order")
    code = _dtype_code(x.dtype.name, what, accepted)
    return ArrayRef(x if obj is None else obj, "numpy" if obj is None else "buffer", x.ctypes.data,
                    x.shape, code, None, readonly=not x.flags.writeable, keep=x)


def _from_torch(x, t, what: str, accepted=None) -> ArrayRef:
    if x.layout != t.strided:
        raise InvalidArgumentError(f"{what}: torch tensor layout {x.layout} is not supported (dense tensors only)")
    if not x.is_contiguous():
        raise InvalidArgumentError(f"{what}: torch tensor is not contiguous (strides {tuple(x.stride())}); "
                                   "pass tensor.contiguous()")
    code = _dtype_code(str(x.dtype).replace("torch.", ""), what, accepted)
    if x.device.type == "cpu":
        device = None
    elif x.device.type == "cuda":
        device = x.device.index if x.device.index is not None else t.cuda.current_device()
    else:
        raise InvalidArgumentError(f"{what}: torch tensors on device '{x.device}' are not supported (cpu or cuda)")
    return ArrayRef(x, "torch", x.data_ptr(), tuple(x.shape), code, device)


def _from_cai(x, what: str, accepted=None) -> ArrayRef:
    cai = x.__cuda_array_interface__
    shape = tuple(cai["shape"])
    dt = np.dtype(cai["typestr"])
    if not dt.isnative:
        raise InvalidArgumentError(f"{what}: dtype {cai['typestr']} is not in native byte order")
    code = _dtype_code(dt.name, what, accepted)
    strides = cai.get("strides")
    if strides is not None and not _c_contiguous(shape, [s // dt.itemsize for s in strides]):
        raise InvalidArgumentError(f"{what}: device array is not C-contiguous (strides {tuple(strides)})")
    ptr, readonly = cai["data"]
    cp = _cupy_module(x)
    device = x.device.id if cp is not None else -1
    return ArrayRef(x, "cupy" if cp is not None else "cai", ptr or 0, shape, code, device, readonly=readonly)


def _from_dlpack(x, what: str, stream: Optional[int], accepted=None) -> ArrayRef:
    dev_type, dev_id = x.__dlpack_device__()
    if dev_type in _DL_HOST:
        cap = x.__dlpack__()
        device = None
    elif dev_type in _DL_CUDA:
        # DLPack's stream argument: the consumer's stream (1 = legacy default).
        cap = x.__dlpack__(stream=stream if stream else 1)
        device = int(dev_id)
    else:
        raise InvalidArgumentError(f"{what}: DLPack device type {dev_type} is not supported (CPU or CUDA)")
    d = _sparcoll.dlpack_describe(cap)
    if d["lanes"] != 1:
        raise InvalidArgumentError(f"{what}: vector DLPack dtypes (lanes={d['lanes']}) are not supported")
    if d["code"] not in DL_CODE_NAMES:
        raise InvalidArgumentError(f"{what}: DLPack dtype code {d['code']} is not supported")
    code = _dtype_code(f"{DL_CODE_NAMES[d['code']]}{d['bits']}", what, accepted)
    shape = tuple(d["shape"])
    if d["strides"] is not None and not _c_contiguous(shape, d["strides"]):
        raise InvalidArgumentError(f"{what}: DLPack tensor is not C-contiguous (strides {tuple(d['strides'])})")
    return ArrayRef(x, "dlpack", d["data"], shape, code, device, keep=cap)


def as_ref(x: Any, what: str = "array", stream: Optional[int] = None, accepted=None) -> ArrayRef:
    """A zero-copy view of x; raises InvalidArgumentError / TypeError for what cannot be viewed.
    ``accepted``: the dtype names the call takes (default: every dtype sparcoll has)."""
    if isinstance(x, np.ndarray):
        return _from_numpy(x, what, accepted=accepted)
    t = torch_module(x)
    if t is not None:
        return _from_torch(x, t, what, accepted)
    if hasattr(x, "__cuda_array_interface__"):
        return _from_cai(x, what, accepted)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        return _from_dlpack(x, what, stream, accepted)
    if hasattr(x, "__array_interface__") or hasattr(x, "__array_struct__") or _has_buffer(x):
        try:
            view = np.asarray(x)
        except Exception as e:  # report what numpy said
            raise TypeError(f"{what}: cannot view {type(x).__name__} as an array: {e}") from e
        return _from_numpy(view, what, obj=x, accepted=accepted)
    raise TypeError(f"{what}: expected an array (numpy, torch, cupy, DLPack or __cuda_array_interface__), "
                    f"got {type(x).__name__}")


def _has_buffer(x) -> bool:
    try:
        memoryview(x)
    except TypeError:
        return False
    return True


def empty_like_kind(ref: ArrayRef, shape, dtype_code: Optional[int] = None):
    """A new array of the caller's kind, on the same device: numpy in, numpy out; torch in, torch out."""
    code = ref.dtype if dtype_code is None else dtype_code
    name = DTYPE_NAMES[code]
    shape = tuple(int(s) for s in shape)
    if ref.kind == "torch":
        t = sys.modules["torch"]
        return t.empty(shape, dtype=getattr(t, name), device=ref.obj.device)
    if ref.kind == "cupy":
        cp = sys.modules["cupy"]
        with cp.cuda.Device(ref.device):
            return cp.empty(shape, dtype=name)
    if ref.kind in ("dlpack", "cai") and hasattr(ref.obj, "__array_namespace__"):
        xp = ref.obj.__array_namespace__()
        dt = getattr(xp, name, None)
        if dt is not None:
            kwargs = {"device": ref.obj.device} if hasattr(ref.obj, "device") else {}
            return xp.empty(shape, dtype=dt, **kwargs)
    if ref.device is None:
        if name == "bfloat16" and ref.kind == "numpy":
            return np.empty(shape, dtype=ref.obj.dtype)  # ml_dtypes' bfloat16
        return np.empty(shape, dtype=name)
    raise InvalidArgumentError(
        f"cannot allocate a result of the same kind as {type(ref.obj).__name__} on {ref.where()}: pass out=")


def zeros_like_kind(ref: ArrayRef, shape, dtype_code: Optional[int] = None):
    out = empty_like_kind(ref, shape, dtype_code)
    if isinstance(out, np.ndarray) or torch_module(out) is not None or _cupy_module(out) is not None:
        out[...] = 0
    else:
        xp = out.__array_namespace__()
        out = xp.zeros(tuple(shape), dtype=out.dtype, device=getattr(out, "device", None))
    return out


def resolve_stream(ref: ArrayRef, stream) -> int:
    """The cudaStream_t (as int) to run on: the given one, else the array library's current stream."""
    if ref.device is None:
        if stream not in (None, 0):
            raise InvalidArgumentError("stream= is only meaningful for device arrays (got host arrays)")
        return 0
    if stream is not None:
        return stream_handle(stream)
    if ref.kind == "torch":
        t = sys.modules["torch"]
        return int(t.cuda.current_stream(ref.device).cuda_stream)
    if ref.kind == "cupy":
        return int(sys.modules["cupy"].cuda.get_current_stream().ptr)
    return 0  # legacy default stream


def stream_handle(stream) -> int:
    """cudaStream_t of a torch.cuda.Stream, a cupy Stream, or an int handle (None: 0, the default stream)."""
    if stream is None:
        return 0
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    raise TypeError(f"stream must be a torch/cupy stream or an int handle, got {type(stream).__name__}")


def on_stream(ref: ArrayRef, stream: int):
    """A context in which the array library of ref (torch, cupy) enqueues its device work on
    ``stream`` (a cudaStream_t), the stream of the collective: copies that feed or follow it
    stay in stream order, in any thread. A no-op for host arrays."""
    if ref.device is None:
        return contextlib.nullcontext()
    t = sys.modules.get("torch")
    if ref.kind != "cupy" and t is not None:
        dev = t.device("cuda", ref.device) if ref.device >= 0 else t.device("cuda")
        if int(t.cuda.current_stream(dev).cuda_stream) == stream:
            return contextlib.nullcontext()
        return t.cuda.stream(t.cuda.ExternalStream(stream, device=dev))
    cp = sys.modules.get("cupy")
    if cp is None:
        return contextlib.nullcontext()
    ctx = contextlib.ExitStack()
    if ref.device >= 0:
        ctx.enter_context(cp.cuda.Device(ref.device))
    ctx.enter_context(cp.cuda.ExternalStream(stream))
    return ctx


def raw_view(ref: ArrayRef):
    """A 1-D zero-copy view of ref's memory to copy with (the element bits, as an integer type):
    numpy for host memory, torch (or cupy for cupy arrays, or without torch) for CUDA memory."""
    ts = TYPESTR[ref.dtype]
    if ref.device is None:
        if ref.size == 0:
            return np.empty(0, ts)
        return np.asarray(HostView(ref, ref.ptr, ref.size, ts))
    t = sys.modules.get("torch")
    if ref.kind != "cupy" and t is not None:
        ts = {1: "|u1", 2: "<i2", 4: "<i4", 8: "<i8"}[ref.itemsize]  # bits as the types torch copies everywhere
        view = DeviceView(ref, ref.ptr, ref.size, ts)
        dev = f"cuda:{ref.device}" if ref.device >= 0 else "cuda"
        if ref.size == 0:
            return t.empty(0, dtype=getattr(t, np.dtype(ts).name), device=dev)
        return t.as_tensor(view, device=dev)
    cp = sys.modules.get("cupy")
    if cp is None:
        raise InvalidArgumentError(f"copying a CUDA {type(ref.obj).__name__} needs torch or cupy")
    view = DeviceView(ref, ref.ptr, ref.size, ts)
    with cp.cuda.Device(max(ref.device, 0)):
        return cp.empty(0, ts) if ref.size == 0 else cp.asarray(view)
