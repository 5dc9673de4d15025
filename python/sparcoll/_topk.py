"""Top-k selection with error feedback (sparcoll/topk.h): ``sparcoll.topk`` and
``sparcoll.TopkFeedback``.

The selection is written as a sparse stream (strictly increasing indices, the
selected values): exactly the input of ``Communicator.sparse_allreduce``.
"""

from __future__ import annotations

import operator
import sys
from typing import Optional, Tuple

import numpy as np

from . import _sparcoll
from ._arrays import TYPESTR, ArrayRef, as_ref, empty_like_kind, on_stream, resolve_stream, stream_handle, torch_module
from ._capi import DTYPES, INDEX_TYPES, TOPK_METHODS, TOPK_OUTPUTS, dtype_name, lookup
from ._views import DeviceView, HostView
from .errors import InvalidArgumentError

_U32, _U64 = INDEX_TYPES["uint32"], INDEX_TYPES["uint64"]
_FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
_FLOATS = tuple(DTYPES[n] for n in _FLOAT_NAMES)
_INDEX_NAMES = ("uint32", "int32", "uint64", "int64")


def _index_type(ref: ArrayRef, n: int, index_dtype) -> Tuple[int, int]:
    """(scTopkIndex_t, dtype code of the index array). torch gets int64 (its index type;
    the bits of non-negative int64 and uint64 are the same)."""
    if index_dtype is None:
        name = "int64" if ref.kind == "torch" else ("uint32" if n <= 2**32 else "uint64")
    else:
        name = dtype_name(index_dtype, "index_dtype", _INDEX_NAMES)
    if name in ("uint32", "int32"):
        limit = 2**32 if name == "uint32" else 2**31
        if n > limit:
            raise InvalidArgumentError(f"index_dtype {name} cannot index {n} elements")
        return _U32, DTYPES[name]
    return _U64, DTYPES[name]


def _int(v, what: str, lo: int = 0) -> int:
    try:
        if isinstance(v, bool):
            raise TypeError
        v = operator.index(v)
    except TypeError:
        raise InvalidArgumentError(f"{what} must be an int, got {v!r}") from None
    if v < lo:
        raise InvalidArgumentError(f"{what} must be >= {lo}, got {v}")
    return v


def _float_input(x, what: str, stream) -> ArrayRef:
    ref = as_ref(x, what, stream if isinstance(stream, int) else None)
    if ref.dtype not in _FLOATS:
        raise InvalidArgumentError(
            f"{what}: top-k needs a float16/bfloat16/float32/float64 array, got {ref.dtype_name}")
    return ref


def _by_magnitude(idx, val, X: ArrayRef, stream: int):
    """(idx, val) reordered by descending |val|, ties in index order (a stable sort), with
    the arrays' own library (numpy, torch, cupy, or their array-API namespace)."""
    t = torch_module(val)
    if t is not None:
        with on_stream(X, stream):
            order = t.sort(val.abs(), descending=True, stable=True).indices
            return idx[order], val[order]
    if isinstance(val, np.ndarray):
        order = np.argsort(-np.abs(val.astype(np.float32) if val.dtype.itemsize == 2 else val), kind="stable")
        return idx[order], val[order]
    cp = sys.modules.get("cupy")
    if cp is not None and isinstance(val, cp.ndarray):
        with on_stream(X, stream):
            order = cp.argsort(-cp.abs(val.astype(cp.float32) if val.dtype.itemsize == 2 else val))  # stable
            return idx[order], val[order]
    xp = val.__array_namespace__()
    order = xp.argsort(xp.abs(val), descending=True, stable=True)
    return xp.take(idx, order), xp.take(val, order)


def _finish(idx, val, nnz: int, cap: int, X: ArrayRef, stream: int, sort: bool):
    idx, val = _trim(idx, nnz, cap), _trim(val, nnz, cap)
    return _by_magnitude(idx, val, X, stream) if sort and nnz > 1 else (idx, val)


def _trim(arr, nnz: int, capacity: int):
    """The first nnz entries; a compact copy when the buffer is mostly unused (frees it)."""
    view = arr[:nnz]
    if nnz * 4 >= capacity:
        return view
    if torch_module(view) is not None:
        return view.clone()
    return view.copy() if hasattr(view, "copy") else view


def _cfg(method, k, bucket, output, seed, samples):
    bk = 0 if bucket is None else _int(bucket, "bucket (None derives it from k/n)", 1)
    return (lookup(TOPK_METHODS, method, "top-k method"), _int(k, "k"), bk,
            lookup(TOPK_OUTPUTS, output, "top-k output"), _int(seed, "seed"), _int(samples, "samples"))


def topk(x, k: int, method: str = "bracket", bucket: Optional[int] = None, seed: int = 0, residual=None, *,
         step: int = 0, output: str = "variable", index_dtype=None, samples: int = 0, sorted: bool = False,
         stream=None):
    """Selects entries of x by magnitude; returns (indices, values).

    The default method="bracket" returns the k largest |x| among the nonzero
    entries (ties to the smaller index), found in one pass over x: at most k
    entries, fewer only when x has fewer nonzeros (or, with probability about
    3e-7 per call, when the sample that brackets the k-th magnitude cut above
    it: then every entry returned is still among the k largest). For
    torch.topk's result (exactly k entries, zeros included when needed:
    torch.topk(x.abs(), k)) use method="exact", sorted=True; it costs the same
    pass.

    indices are positions in x read flat (uint32 for numpy / cupy up to 2^32
    elements, int64 for torch; ``index_dtype``: "uint32", "int32", "uint64",
    "int64", as a name, a numpy or a torch dtype), values the selected entries
    in x's dtype, both of x's kind and device. By default the pairs come in
    index order (indices strictly increasing: the input of
    Communicator.sparse_allreduce), not sorted by value; sorted=True orders
    them by descending |value|, ties in index order (a stable sort of the
    result with x's own library, after the selection; any method).

    method: "bracket" (the default: above), "exact" (exactly min(k, x.size)
    entries, the largest |x|, ties to the smaller index), "threshold"
    (sampled threshold, DGC-style; at most k, often a few percent fewer),
    "approx" (bucketed, k in expectation: bucket b of ``bucket`` elements gets
    its share k_b and keeps element i with probability k_b|v_i|/||v||_1, or
    the epsilon-shifted form when that would exceed 1 — Renggli §2.4.1; it
    sends a small share of what the largest entries hold, about 16 % of exact
    top-k's sum of squares on normal data at k = n/1000), "approx_at_most"
    (p = min(1, k_b|v_i|/||v||_1)). ``bucket`` (bucketed methods; None = about
    32 n/k, so that every full bucket owns at least 32 of the k slots). output
    "fixed" (bucketed methods) returns exactly k entries. Randomness is
    Philox keyed by (seed, step): the same call selects the same entries, on
    the CPU and on a GPU.

    residual (same shape, dtype and device as x) is error feedback, updated in
    place: the selection is made on acc = x + residual, the selected entries of
    acc are returned, and residual becomes acc with them set to 0 (so
    values + residual == acc exactly). x is never modified.
    """
    mc, kk, bk, oc, sd, smp = _cfg(method, k, bucket, output, seed, samples)
    st = _int(step, "step")
    X = _float_input(x, "x", stream)
    n = X.size
    src = X
    acc = None
    if residual is not None:
        R = as_ref(residual, "residual")
        if (R.dtype, R.size, R.device is None) != (X.dtype, X.size, X.device is None):
            raise InvalidArgumentError(f"residual must match x: x is {X.dtype_name}[{X.size}] on {X.where()}, "
                                       f"residual is {R.dtype_name}[{R.size}] on {R.where()}")
        if R.readonly:
            raise InvalidArgumentError("residual is read-only")
        if R.overlaps(X):
            raise InvalidArgumentError("residual overlaps x")
        acc = _add(x, residual, X, R)
        src = as_ref(acc, "x + residual")
    it, idt = _index_type(X, n, index_dtype)
    cap = _sparcoll.topk_max_output(n, mc, kk, bk, oc, it, sd, st, smp)
    idx = empty_like_kind(X, (cap,), idt)
    val = empty_like_kind(X, (cap,))
    I, V = as_ref(idx, "indices"), as_ref(val, "values")
    s = resolve_stream(X, stream)
    nnz, _selected = _sparcoll.topk_select(src.ptr, n, X.dtype, mc, kk, bk, oc, it, sd, st, smp, I.ptr, V.ptr, cap, s)
    if acc is not None:
        _store_residual(residual, acc, idx[:nnz], R)
    return _finish(idx, val, nnz, cap, X, s, sorted)


def _add(x, r, X: ArrayRef, R: ArrayRef):
    """x + r in the caller's array library, shaped like x."""
    if X.kind == "torch":
        return x.add(r.reshape(x.shape))
    if X.kind in ("numpy", "buffer"):
        xa, ra = np.asarray(X.keep if X.kind == "buffer" else x), np.asarray(R.keep if R.kind == "buffer" else r)
        return np.add(xa, ra.reshape(xa.shape))
    try:
        return x + r.reshape(x.shape)
    except Exception as e:
        raise InvalidArgumentError(f"residual= needs arrays that support + (numpy, torch, cupy): {e}") from e


def _store_residual(r, acc, sel, R: ArrayRef) -> None:
    """r := acc with the selected positions set to 0."""
    if R.kind == "torch":
        flat = r.view(-1)
        flat.copy_(acc.reshape(-1))
        flat[sel] = 0
        return
    if R.kind in ("numpy", "buffer"):
        flat = (R.keep if R.kind == "buffer" else r).reshape(-1)
        flat[...] = np.asarray(acc).reshape(-1)
        flat[np.asarray(sel)] = 0
        return
    flat = r.reshape(-1)
    flat[...] = acc.reshape(-1)
    flat[sel] = 0


class TopkFeedback:
    """Error-feedback state of one tensor (the library's fused path, thesis Algorithm 2).

    Owns the residual r (n elements of dtype, initially 0; host memory, or CUDA
    ``device``) and the step counter of its random stream. Each :meth:`select`
    computes acc = grad + r, selects on acc, returns the selected entries of
    acc, and sets r = acc with those entries zeroed (bit-exact conservation),
    in one pass inside the library.
    """

    def __init__(self, n: int, dtype="float32", device: Optional[int] = None):
        """n elements of dtype ("float32", ..., a numpy dtype or scalar type, or a torch
        dtype; float16, bfloat16, float32 or float64) in host memory (device None) or on
        CUDA device ``device``. ``self.dtype`` is the dtype's name."""
        dtype = dtype_name(dtype, "TopkFeedback dtype", _FLOAT_NAMES)
        code = DTYPES[dtype]
        self.n, self.dtype, self.device = _int(n, "n"), dtype, device
        self._h = _sparcoll.TopkStateHandle(self.n, code, -1 if device is None else int(device))
        self._code = code

    @property
    def step(self) -> int:
        """The step of the next select (restore it from a checkpoint by assignment)."""
        return self._h.step

    @step.setter
    def step(self, value: int) -> None:
        self._h.step = _int(value, "step")

    def residual(self, like=None):
        """The residual as an array (zero copy, valid while this object lives):
        numpy for a host state (``like`` = a torch tensor gives a torch tensor),
        a torch / cupy array for a device state (per ``like``'s kind, torch by default)."""
        ptr = self._h.residual_ptr()
        ts = TYPESTR[self._code]
        if self.device is None:
            arr = np.asarray(HostView(self, ptr, self.n, ts))
            if torch_module(like) is not None:
                t = sys.modules["torch"]
                tt = t.from_numpy(arr)
                return tt.view(t.bfloat16) if self.dtype == "bfloat16" else tt
            return arr
        view = DeviceView(self, ptr, self.n, ts)
        cp = sys.modules.get("cupy")
        if like is not None and torch_module(like) is None and cp is not None:
            return cp.asarray(view)
        import torch

        tt = torch.as_tensor(view, device=f"cuda:{self.device}")
        return tt.view(torch.bfloat16) if self.dtype == "bfloat16" else tt

    def reset(self, stream=None) -> None:
        """residual := 0 and step := 0."""
        self._h.reset(stream_handle(stream) if self.device is not None else 0)

    def _grad(self, grad, stream) -> ArrayRef:
        """grad checked against the state: n elements of its dtype, in its memory."""
        G = _float_input(grad, "grad", stream)
        if G.size != self.n or G.dtype != self._code:
            raise InvalidArgumentError(f"grad is {G.dtype_name}[{G.size}], the state holds {self.dtype}[{self.n}]")
        if (G.device is None) != (self.device is None):
            raise InvalidArgumentError(f"grad is on {G.where()} but the state's residual is "
                                       f"{'in host memory' if self.device is None else f'on cuda:{self.device}'}")
        return G

    def select(self, grad, k: int, method: str = "bracket", bucket: Optional[int] = None, seed: int = 0, *,
               output: str = "variable", index_dtype=None, samples: int = 0, sorted: bool = False, stream=None):
        """(indices, values) selected from grad + residual (see :func:`topk`: method "bracket"
        returns the k largest nonzero entries, in index order; sorted=True orders them by
        descending magnitude); updates the residual and advances the step. grad: n elements
        of the state's dtype, in its memory."""
        mc, kk, bk, oc, sd, smp = _cfg(method, k, bucket, output, seed, samples)
        G = self._grad(grad, stream)
        it, idt = _index_type(G, self.n, index_dtype)
        cap = _sparcoll.topk_max_output(self.n, mc, kk, bk, oc, it, sd, 0, smp)
        idx = empty_like_kind(G, (cap,), idt)
        val = empty_like_kind(G, (cap,))
        I, V = as_ref(idx, "indices"), as_ref(val, "values")
        s = resolve_stream(G, stream)
        nnz, _selected = self._h.select_feedback(G.ptr, mc, kk, bk, oc, it, sd, smp, I.ptr, V.ptr, cap, s)
        return _finish(idx, val, nnz, cap, G, s, sorted)

    def select_into(self, grad, k: int, indices, values, counts, method: str = "bracket",
                    bucket: Optional[int] = None, seed: int = 0, *, output: str = "variable", samples: int = 0,
                    stream=None) -> None:
        """The stream-ordered :meth:`select`: the selection goes into the caller's ``indices`` and
        ``values`` (their length is the capacity, at least k; with a bucketed method's variable
        output, entries selected beyond it stay in the residual) and its counts into ``counts``,
        three uint64 or int64 (entries written, selected, deferred), all in grad's memory; nothing
        is returned and nothing waits for the device, so a step of select_into then
        Communicator.sparse_allreduce_static(indices, values, n, nnz=counts[:1], status=...) can
        be captured into a CUDA graph. The first ``counts[0]`` slots are the selection, in index
        order; the others keep what they held."""
        mc, kk, bk, oc, sd, smp = _cfg(method, k, bucket, output, seed, samples)
        G = self._grad(grad, stream)
        I, V, C = as_ref(indices, "indices"), as_ref(values, "values"), as_ref(counts, "counts")
        for ref, what in ((I, "indices"), (V, "values"), (C, "counts")):
            if ref.device != G.device:
                raise InvalidArgumentError(f"{what} is on {ref.where()}, grad on {G.where()}")
            if ref.readonly:
                raise InvalidArgumentError(f"{what} is read-only")
        if V.dtype != G.dtype:
            raise InvalidArgumentError(f"values is {V.dtype_name}, grad {G.dtype_name}")
        if I.size != V.size:
            raise InvalidArgumentError(f"indices has {I.size} slots, values {V.size}")
        if C.dtype_name not in ("uint64", "int64") or C.size != 3:
            raise InvalidArgumentError(f"counts must be 3 uint64 (or int64), got {C.dtype_name}[{C.size}]")
        it, _ = _index_type(G, self.n, I.dtype_name)
        self._h.select_feedback_async(G.ptr, mc, kk, bk, oc, it, sd, smp, I.ptr, V.ptr, I.size, C.ptr,
                                      resolve_stream(G, stream))

    def close(self) -> None:
        """Frees the residual and the scratch memory; the object is unusable afterwards."""
        self._h.close()
