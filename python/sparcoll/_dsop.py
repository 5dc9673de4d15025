"""Communicator.dsop / dsop_sparse / dsop_algo_for: distributed sum of outer
products (sparcoll/dsop.h), the methods of DsopMixin, a base class of
Communicator (sparcoll/comm.py)."""

from __future__ import annotations

from . import _sparcoll
from ._arrays import resolve_stream
from ._capi import DSOP_ALGOS, dtype_code, lookup, name_of, nonneg_int
from .errors import InvalidArgumentError

#: dsop_sparse's index arrays (64-bit, read as unsigned).
_INDEX_DTYPES = ("int64", "uint64")


class DsopMixin:
    """The DSOP methods of Communicator (they use its _h, _input and _output)."""

    def dsop(self, a, b, algo: str = "auto", *, out=None, stream=None, async_op: bool = False):
        """G = sum over ranks of outer(a_i, b_i), shape (len(a), len(b)), on every rank.

        a and b are 1-D (any contiguous array is read flat) with the same dtype:
        float32 / float64 give G of that dtype, float16 / bfloat16 give float32 G.
        algo: "auto", "allgather", "allreduce", "allreduce_ring", "g_rabenseifner",
        "all_scatter" (costs in the README). G (``out``, e.g. a preallocated
        (len(a), len(b)) array reused every step) must not overlap a or b.
        async_op=True returns a :class:`sparcoll.Request` (see Communicator.allreduce).
        """
        algc = lookup(DSOP_ALGOS, algo, "DSOP algorithm")
        A, B = self._input(a, "a", stream), self._input(b, "b", stream)
        if A.dtype != B.dtype:
            raise InvalidArgumentError(f"dsop: a is {A.dtype_name} but b is {B.dtype_name}")
        n, m = A.size, B.size
        out_dt = _sparcoll.dsop_output_type(A.dtype)
        out, G = self._output(A, out, (n, m), dtype=out_dt)
        if G.overlaps(B):
            raise InvalidArgumentError("out overlaps b")
        h, st = self._h, resolve_stream(A, stream)
        return self._run("dsop", lambda: _sparcoll.dsop(h, A.ptr, n, B.ptr, m, G.ptr, A.dtype, algc, st), out,
                         async_op)

    def dsop_sparse(self, a_indices, a_values, n: int, b_indices, b_values, m: int, algo: str = "auto", *,
                    out=None, stream=None, async_op: bool = False):
        """dsop with sparse inputs: a_i given by (a_indices, a_values) pairs of a length-n vector
        (indices strictly increasing, int64 or uint64), likewise b_i of length m. Returns the dense
        (n, m) G (or writes ``out``, which must not overlap the inputs). algo: "auto", "allgather"
        or "g_rabenseifner". async_op=True returns a :class:`sparcoll.Request`."""
        algc = lookup(DSOP_ALGOS, algo, "DSOP algorithm")
        ai = self._input(a_indices, "dsop_sparse: a_indices", stream, _INDEX_DTYPES)
        av = self._input(a_values, "a_values", stream)
        bi = self._input(b_indices, "dsop_sparse: b_indices", stream, _INDEX_DTYPES)
        bv = self._input(b_values, "b_values", stream)
        if ai.size != av.size or bi.size != bv.size:
            raise InvalidArgumentError(f"dsop_sparse: {ai.size} a_indices for {av.size} a_values, "
                                       f"{bi.size} b_indices for {bv.size} b_values")
        if av.dtype != bv.dtype:
            raise InvalidArgumentError(f"dsop_sparse: a_values is {av.dtype_name} but b_values is {bv.dtype_name}")
        n, m = nonneg_int(n, "n"), nonneg_int(m, "m")
        out_dt = _sparcoll.dsop_output_type(av.dtype)
        out, G = self._output(av, out, (n, m), dtype=out_dt)
        for what, r in (("a_indices", ai), ("b_indices", bi), ("b_values", bv)):
            if G.overlaps(r):
                raise InvalidArgumentError(f"out overlaps {what}")
        h, st = self._h, resolve_stream(av, stream)
        return self._run("dsop_sparse", lambda: _sparcoll.dsop_sparse(
            h, ai.ptr, av.ptr, av.size, n, bi.ptr, bv.ptr, bv.size, m, G.ptr, av.dtype, algc, st), out, async_op)

    def dsop_algo_for(self, n: int, m: int, dtype="float32") -> str:
        """The DSOP algorithm "auto" picks for these sizes on this communicator (dtype: a
        name, a numpy dtype or scalar type, or a torch dtype)."""
        code = _sparcoll.dsop_algo_for(self._h, nonneg_int(n, "n"), nonneg_int(m, "m"), dtype_code(dtype, "dtype"))
        return name_of(DSOP_ALGOS, code)
