"""Communicator.sparse_allreduce (dense result), sparse_allreduce_sparse
(sparse result), sparse_allreduce_static (fixed capacity, no size round),
sparse_static_advised and sparse_algo_for over sparcoll/sparse.h: the methods of
SparseMixin, a base class of Communicator (sparcoll/comm.py)."""

from __future__ import annotations

import sys
from typing import NamedTuple, Sequence

import numpy as np

from . import _sparcoll
from ._arrays import TYPESTR, ArrayRef, on_stream, resolve_stream
from ._capi import DTYPE_NAMES, DTYPES, INDEX_TYPES, SPARSE_ALGOS, dtype_code, lookup, name_of, nonneg_int, reduce_op
from ._views import DeviceView, HostView
from .errors import InvalidArgumentError

# Index arrays: 32-bit (uint32, or int32 >= 0) and 64-bit (uint64, or int64 >= 0) read as unsigned.
INDEX_DTYPES = ("uint32", "int32", "uint64", "int64")
_ITYPE = {DTYPES[n]: INDEX_TYPES["uint32" if n.endswith("32") else "uint64"] for n in INDEX_DTYPES}
#: The sparse allreduce's ops: the neutral element of a missing entry is 0.
_OPS = ("sum", "avg")
_OP_CONTEXT = " for the sparse allreduce (sum and avg only: a missing entry counts as 0)"


class SparseReduction(NamedTuple):
    """Result of :meth:`Communicator.sparse_allreduce_sparse`.

    Sparse (``is_dense`` False): ``indices`` sorted and unique, ``values`` the
    reduced values there, every other position is zero. Dense (the reduction
    went dense): ``indices`` is None and ``values`` holds all ``dim`` values.
    """

    indices: object
    values: object
    is_dense: bool
    algo: str


def _algo(name) -> int:
    return lookup(SPARSE_ALGOS, name, "sparse algorithm")


def _inputs(self, indices, values, stream):
    I = self._input(indices, "indices", stream, INDEX_DTYPES)
    V = self._input(values, "values", stream)
    if I.size != V.size:
        raise InvalidArgumentError(f"{I.size} indices for {V.size} values")
    return I, V


def _options(sort_input, switch_density, early_group_size):
    sd = float(switch_density)
    if not 0.0 <= sd <= 1.0:
        raise InvalidArgumentError(f"switch_density must be in [0, 1], got {sd}")
    return (_sparcoll.SPARSE_SORT_INPUT if sort_input else 0), sd, int(early_group_size)


class SparseMixin:
    """The sparse allreduce methods of Communicator (they use its _h, _input and _output)."""

    def sparse_allreduce(self, indices, values, dim: int, op="sum", algo: str = "auto", out=None, *,
                         sort_input: bool = False, switch_density: float = 0.0, early_group_size: int = 0,
                         stream=None, async_op: bool = False):
        """Sums (op "sum") or averages (op "avg") the sparse vectors of all ranks; returns the dense result.

        Each rank passes its non-zeros as ``indices`` (sorted, unique, < dim;
        uint32/int32 or uint64/int64) and ``values`` (any dtype). The result has
        shape (dim,) and values' dtype and kind (or is written to ``out``, e.g.
        a dense vector ``out=w`` of dim elements, which must not overlap indices).
        op: "sum" or "avg" in any case ("average"), mpi4py's MPI.SUM,
        torch.distributed.ReduceOp.SUM / AVG.
        algo: "auto" (cost model), "ssar_recdbl" (formerly "ssar_rec_dbl"),
        "ssar_split_allgather", "dsar_split_allgather", "dsar_early_switch",
        "dense" (Renggli ch. 3).
        sort_input: sort the pairs and sum duplicates instead of rejecting them.
        switch_density: switch a stream to dense above this density (0: only when
        dense is smaller). early_group_size: dsar_early_switch's sparse group size
        (0: model). Every rank must pass the same dim, dtypes, op, algo and options.
        async_op=True returns a :class:`sparcoll.Request` (see Communicator.allreduce).
        """
        I, V = _inputs(self, indices, values, stream)
        n = nonneg_int(dim, "dim")
        opc, algc = reduce_op(op, _OPS, _OP_CONTEXT), _algo(algo)
        flags, sd, eg = _options(sort_input, switch_density, early_group_size)
        out, O = self._output(V, out, (n,))
        if O.overlaps(I):
            raise InvalidArgumentError("out overlaps indices")
        h, st, it = self._h, resolve_stream(V, stream), _ITYPE[I.dtype]
        return self._run("sparse_allreduce", lambda: _sparcoll.sparse_allreduce(
            h, I.ptr, V.ptr, V.size, n, it, V.dtype, opc, algc, flags, sd, eg, O.ptr, st), out, async_op)

    def sparse_allreduce_sparse(self, indices, values, dim: int, op="sum", algo: str = "auto", *,
                                sort_input: bool = False, switch_density: float = 0.0, early_group_size: int = 0,
                                stream=None, async_op: bool = False):
        """:meth:`sparse_allreduce` with a sparse result: a :class:`SparseReduction`
        (indices, values, is_dense, algo) of the caller's array kind. Only the
        union of the ranks' indices is materialized, so a rank can apply a sparse
        update (w[indices] -= lr * values) without touching all dim entries.
        async_op=True returns a :class:`sparcoll.Request` of the SparseReduction."""
        I, V = _inputs(self, indices, values, stream)
        n = nonneg_int(dim, "dim")
        opc, algc = reduce_op(op, _OPS, _OP_CONTEXT), _algo(algo)
        flags, sd, eg = _options(sort_input, switch_density, early_group_size)
        res = getattr(self, "_sparse_result", None)
        if res is None:
            res = self._sparse_result = _sparcoll.SparseResultHandle(self._h)
        h, st, it = self._h, resolve_stream(V, stream), _ITYPE[I.dtype]

        def call():
            dense, nnz, _dim_out, ip, vp, algo_code = _sparcoll.sparse_allreduce_to_sparse(
                h, I.ptr, V.ptr, V.size, n, it, V.dtype, opc, algc, flags, sd, eg, res, st)
            # The library owns (and reuses) the result buffers: copy into arrays of the caller's
            # kind, in the call's stream order (and before the next call on the worker reuses them).
            with on_stream(V, st):
                vals = _copy_out(V, vp, nnz, V.dtype)
                idx = None if dense else _copy_out(I, ip, nnz, I.dtype)
            return SparseReduction(idx, vals, bool(dense), name_of(SPARSE_ALGOS, algo_code))

        return self._run("sparse_allreduce_sparse", call, async_op=async_op)

    def sparse_allreduce_static(self, indices, values, dim: int, nnz=None, op="sum", out=None, *, status=None,
                                stream=None, async_op: bool = False):
        """Static-size sparse allreduce (scSparseAllReduceStatic, sparse.h): one allgather of every
        rank's capacity slots and a local sum, with no size round and no host read of any count.

        ``indices`` and ``values`` are the rank's capacity slots (equal lengths, the same capacity
        on every rank: e.g. a fixed-output top-k's buffers); the first ``nnz`` are used. Indices may
        be unsorted and repeat (repeats are summed); each index's contributions are summed in rank
        order, then list order, so every rank gets the same bits. Returns the dense (dim,) result
        (or writes ``out``). nnz: an int (default: every slot), or a one-element uint64 (or int64)
        array or tensor in the values' memory (a device count, read in stream order). status: None,
        or a one-element uint64 (or int64) array or tensor in that memory that the caller zeroes: a
        data error (count > capacity, index >= dim) writes its status word there while it is still
        0 (decode: rank = s >> 42, position = (s >> 2) & (2**40 - 1), kind = s & 3). Host arrays
        also raise InvalidArgumentError on every rank; device arrays with a status word never wait.
        """
        I, V = _inputs(self, indices, values, stream)
        if I.size == 0:
            raise InvalidArgumentError("the capacity (length of indices and values) must be at least 1")
        n = nonneg_int(dim, "dim")
        opc = reduce_op(op, _OPS, _OP_CONTEXT)
        count, count_ptr = I.size, 0
        if isinstance(nnz, (int, np.integer)):
            count = nonneg_int(nnz, "nnz")
        elif nnz is not None:
            C = self._input(nnz, "nnz", stream, ("uint64", "int64"))
            if C.size != 1:
                raise InvalidArgumentError(f"nnz as an array must have 1 element, got {C.size}")
            count, count_ptr = 0, C.ptr
        status_ptr = 0
        if status is not None:
            S = self._input(status, "status", stream, ("uint64", "int64"))
            if S.size != 1:
                raise InvalidArgumentError(f"status must have 1 element, got {S.size}")
            status_ptr = S.ptr
        out, O = self._output(V, out, (n,))
        if O.overlaps(I) or O.overlaps(V):
            raise InvalidArgumentError("out overlaps indices or values")
        h, st, it = self._h, resolve_stream(V, stream), _ITYPE[I.dtype]
        return self._run("sparse_allreduce_static", lambda: _sparcoll.sparse_allreduce_static(
            h, I.ptr, V.ptr, count, count_ptr, I.size, n, it, V.dtype, opc, O.ptr, status_ptr, st), out, async_op)

    def sparse_static_advised(self, capacity: int, dim: int, index_dtype="uint32", dtype="float32") -> bool:
        """Whether the cost model predicts :meth:`sparse_allreduce_static` with this capacity
        faster than the dense allreduce of dim values (no communication)."""
        it = _ITYPE[dtype_code(index_dtype, "index_dtype", INDEX_DTYPES)]
        return _sparcoll.sparse_static_advised(self._h, nonneg_int(capacity, "capacity"), nonneg_int(dim, "dim"), it,
                                               dtype_code(dtype, "dtype"))

    def sparse_algo_for(self, nnz_per_rank: Sequence[int], dim: int, index_dtype="uint32",
                        dtype="float32", dense_output: bool = True, *, switch_density: float = 0.0,
                        early_group_size: int = 0) -> str:
        """The algorithm "auto" would pick for these per-rank non-zero counts (no communication).
        index_dtype, dtype: names ("uint32"), numpy dtypes or scalar types, or torch dtypes."""
        counts = [int(c) for c in nnz_per_rank]
        if len(counts) != self.size:
            raise InvalidArgumentError(f"nnz_per_rank needs {self.size} entries (one per rank), got {len(counts)}")
        it = _ITYPE[dtype_code(index_dtype, "index_dtype", INDEX_DTYPES)]
        flags, sd, eg = _options(False, switch_density, early_group_size)
        code = _sparcoll.sparse_algo_for(self._h, counts, nonneg_int(dim, "dim"), it, dtype_code(dtype, "dtype"),
                                         flags, sd, eg, bool(dense_output))
        return name_of(SPARSE_ALGOS, code)


def _copy_out(like: ArrayRef, ptr: int, n: int, code: int):
    """A copy of n library-owned elements at ptr, as an array of like's kind and device."""
    name = DTYPE_NAMES[code]
    if like.device is None:
        if n == 0:
            host = np.empty(0, dtype=TYPESTR[code])
        else:
            host = np.array(np.asarray(HostView(None, ptr, n, TYPESTR[code])))
        if like.kind == "torch":
            t = sys.modules["torch"]
            tt = t.from_numpy(host)
            return tt.view(t.bfloat16) if name == "bfloat16" else tt
        if name == "bfloat16" and like.kind == "numpy":
            return host.view(like.obj.dtype)
        return host
    if like.kind == "cupy":
        cp = sys.modules["cupy"]
        with cp.cuda.Device(like.device):
            return cp.asarray(DeviceView(None, ptr, n, TYPESTR[code])).copy() if n else cp.empty(0, TYPESTR[code])
    import torch

    dev = f"cuda:{like.device}" if like.device >= 0 else "cuda"
    if n == 0:
        return torch.empty(0, dtype=getattr(torch, name), device=dev)
    tt = torch.as_tensor(DeviceView(None, ptr, n, TYPESTR[code]), device=dev).clone()
    return tt.view(torch.bfloat16) if name == "bfloat16" else tt
