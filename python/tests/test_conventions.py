"""What people coming from mpi4py or torch expect of the Python API: reduction
ops and dtypes in their spellings, reduce_scatter of any first dimension,
topk's order, index-dtype errors, one spelling per algorithm, __all__ of every
public module, and a clear error when the source tree is imported instead of
the installed package. (async_op requests: test_async.py.)"""

import importlib
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import sparcoll as sc
from helpers import rank_data, reference, run_ranks
from sparcoll import _capi

OPS = ["sum", "prod", "max", "min", "avg"]
TAIL = ("expected one of: sum, prod, max, min, avg (any case; also 'product', 'average'), mpi4py's "
        "MPI.SUM/PROD/MAX/MIN, torch.distributed.ReduceOp.SUM/PRODUCT/MAX/MIN/AVG")


def _data(rank, n, op, dtype="float32"):
    return rank_data(rank, n, dtype, "prod" if op == "prod" else "mixed")


def _allreduce_with(P, op, name):
    """allreduce with op spelled `op` on P ranks, checked against the reference of `name`."""
    outs = run_ranks(P, lambda c: c.allreduce(_data(c.rank, 11, name), op=op))
    want = reference([_data(r, 11, name) for r in range(P)], name)
    for out in outs:
        np.testing.assert_array_equal(out, want)


# ---------------------------------------------------------------- 1. reduction ops
@pytest.mark.parametrize("op,name", [("SUM", "sum"), ("Sum", "sum"), ("PROD", "prod"), ("product", "prod"),
                                     ("Product", "prod"), ("MAX", "max"), ("Min", "min"), ("AVG", "avg"),
                                     ("average", "avg")])
def test_op_names_any_case_and_torch_spellings(op, name):
    _allreduce_with(3, op, name)


def test_op_mpi4py():
    MPI = pytest.importorskip("mpi4py.MPI")
    for op, name in ((MPI.SUM, "sum"), (MPI.PROD, "prod"), (MPI.MAX, "max"), (MPI.MIN, "min")):
        _allreduce_with(2, op, name)
    c = sc.local_group(1)[0]
    for bad in ("LAND", "BAND", "LOR", "BXOR", "MAXLOC", "REPLACE"):
        with pytest.raises(sc.InvalidArgumentError, match=f"^unsupported reduction op MPI.{bad}; "):
            c.allreduce(np.zeros(2, np.float32), op=getattr(MPI, bad))
    with pytest.raises(sc.InvalidArgumentError) as ei:
        c.allreduce(np.zeros(2, np.float32), op=MPI.LAND)
    assert str(ei.value) == "unsupported reduction op MPI.LAND; " + TAIL
    c.close()


def test_op_torch_reduce_op():
    dist = pytest.importorskip("torch.distributed")
    R = dist.ReduceOp
    for op, name in ((R.SUM, "sum"), (R.PRODUCT, "prod"), (R.MAX, "max"), (R.MIN, "min"), (R.AVG, "avg"),
                     (R.RedOpType.MAX, "max"), (R(R.MIN), "min")):
        _allreduce_with(2, op, name)
    c = sc.local_group(1)[0]
    for bad in ("BAND", "BOR", "BXOR", "PREMUL_SUM"):
        with pytest.raises(sc.InvalidArgumentError) as ei:
            c.reduce_scatter(np.zeros(2, np.float32), op=getattr(R, bad))
        assert str(ei.value) == f"unsupported reduction op ReduceOp.{bad}; " + TAIL
    c.close()


def test_op_errors_name_the_op_and_the_accepted_set():
    c = sc.local_group(1)[0]
    x = np.zeros(2, np.float32)
    with pytest.raises(sc.InvalidArgumentError) as ei:
        c.allreduce(x, op="mean")
    assert str(ei.value) == "unknown reduction op 'mean'; " + TAIL
    with pytest.raises(sc.InvalidArgumentError, match=r"^unknown reduction op 3 of type int; expected one of"):
        c.reduce_scatter(x, op=3)
    with pytest.raises(sc.InvalidArgumentError) as ei:  # the sparse allreduce: sum and avg only
        c.sparse_allreduce(np.zeros(1, np.uint32), np.ones(1, np.float32), 4, op="MAX")
    assert str(ei.value) == ("unsupported reduction op 'MAX' for the sparse allreduce (sum and avg only: a missing "
                             "entry counts as 0); expected one of: sum, avg (any case; also 'average'), mpi4py's "
                             "MPI.SUM, torch.distributed.ReduceOp.SUM/AVG")
    c.close()


def test_sparse_ops_spellings():
    def body(c):
        idx, val = np.array([c.rank, 3], np.uint32), np.array([2, 4], np.float32)
        return (c.sparse_allreduce(idx, val, 4, op="SUM"), c.sparse_allreduce(idx, val, 4, op="Average"),
                c.sparse_allreduce_sparse(idx, val, 4, op="Avg"))

    for s, a, sv in run_ranks(2, body):
        np.testing.assert_array_equal(s, [2, 2, 0, 8])
        np.testing.assert_array_equal(a, [1, 1, 0, 4])
        dense = sv.values if sv.is_dense else np.bincount(sv.indices, sv.values, minlength=4)
        np.testing.assert_array_equal(dense, [1, 1, 0, 4])


def test_op_lookup_imports_neither_mpi4py_nor_torch(tmp_path):
    code = ("import sys, numpy as np, sparcoll as sc\n"
            "c = sc.local_group(1)[0]\n"
            "c.allreduce(np.ones(3, np.float32), op='MAX')\n"
            "try:\n    c.allreduce(np.ones(3, np.float32), op=object())\nexcept sc.InvalidArgumentError: pass\n"
            "print(sorted(m for m in ('mpi4py', 'torch') if m in sys.modules))\n")
    env = dict(os.environ, SPARCOLL_PRELOAD_TORCH="0")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


# ---------------------------------------------------------------- 2. dtypes
def test_dtypes_numpy_and_torch_forms():
    assert [_capi.dtype_name(d) for d in (np.float32, np.dtype("float64"), "int8", np.uint64)] == \
        ["float32", "float64", "int8", "uint64"]
    cm = sc.model.CostModel(None, transport="mpi", nranks=8)
    ref = cm.estimate("allreduce", 1 << 16, "float64")
    assert cm.estimate("allreduce", 1 << 16, np.float64) == ref
    assert cm.estimate("allreduce", 1 << 16, dtype=np.dtype("float64")) == ref
    assert sc.model.estimate(transport="mpi", nranks=8, collective="allreduce", count=1 << 16, dtype=np.float64) == ref
    fb = sc.TopkFeedback(8, np.float64)
    assert fb.dtype == "float64" and fb.residual().dtype == np.float64
    c = sc.local_group(1)[0]
    assert c.estimate("dsop", 64, np.float32) == c.estimate("dsop", 64, "float32")
    assert c.dsop_algo_for(8, 8, np.float64) == c.dsop_algo_for(8, 8, "float64")
    assert c.sparse_algo_for([10], 100, np.int64, np.float32) == c.sparse_algo_for([10], 100, "int64", "float32")
    c.close()
    idx, _ = sc.topk(np.arange(10, dtype=np.float32), 3, method="exact", index_dtype=np.int64)
    assert idx.dtype == np.int64


def test_dtypes_torch():
    torch = pytest.importorskip("torch")
    assert [_capi.dtype_name(d) for d in (torch.float32, torch.float, torch.bfloat16, torch.half, torch.int64)] == \
        ["float32", "float32", "bfloat16", "float16", "int64"]
    cm = sc.model.CostModel(None, transport="mpi", nranks=4)
    assert cm.estimate("allreduce", 1000, torch.float16) == cm.estimate("allreduce", 1000, "float16")
    fb = sc.TopkFeedback(4, torch.bfloat16)
    assert fb.dtype == "bfloat16" and fb.residual(like=torch.empty(0)).dtype == torch.bfloat16
    idx, _ = sc.topk(torch.arange(10, dtype=torch.float32), 3, method="exact", index_dtype=torch.int32)
    assert idx.dtype == torch.int32
    with pytest.raises(sc.InvalidArgumentError) as ei:
        sc.TopkFeedback(4, torch.int32)
    assert str(ei.value) == ("TopkFeedback dtype: unsupported dtype torch.int32 (int32); expected one of: float16, "
                             "bfloat16, float32, float64 (as a name, a numpy dtype or scalar type, or a torch dtype)")


def test_dtype_errors_name_what_was_given_and_the_accepted_set():
    with pytest.raises(sc.InvalidArgumentError) as ei:
        sc.TopkFeedback(4, np.int16)
    assert str(ei.value) == ("TopkFeedback dtype: unsupported dtype numpy.int16 (int16); expected one of: float16, "
                             "bfloat16, float32, float64 (as a name, a numpy dtype or scalar type, or a torch dtype)")
    with pytest.raises(sc.InvalidArgumentError, match=r"^dtype: unknown dtype 'float'; expected one of: int8, uint8, "
                                                      r"int32, uint32, int64, uint64, float16, float32, float64, "
                                                      r"bfloat16 \(as a name"):
        sc.model.estimate(nranks=2, collective="allreduce", count=10, dtype="float")
    with pytest.raises(sc.InvalidArgumentError, match=r"^dtype: unknown dtype builtins.float; expected one of"):
        sc.model.estimate(nranks=2, collective="allreduce", count=10, dtype=float)


# ---------------------------------------------------------------- 3. reduce_scatter of any first dimension
@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n", [1, 3, 5, 10, 13])
def test_reduce_scatter_uneven(P, op, n):
    dtype = "float64" if op == "avg" else "float32"

    def x_of(r):
        return _data(r, n * 3, op, dtype).reshape(n, 3)

    def body(c):
        x = x_of(c.rank)
        keep = x.copy()
        y = c.reduce_scatter(x, op=op)
        np.testing.assert_array_equal(x, keep)  # x is not modified
        return y

    full = reference([x_of(r) for r in range(P)], op)
    for r, out in enumerate(run_ranks(P, body)):
        want = np.array_split(full, P)[r]
        assert out.shape == want.shape and out.dtype == want.dtype
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("algo", ["ring", "rabenseifner", "native"])
@pytest.mark.parametrize("P,n", [(3, 7), (4, 2), (4, 6)])
def test_reduce_scatter_uneven_algos_and_in_place(algo, P, n):
    def body(c):
        x = rank_data(c.rank, n, "int32")
        base, extra = divmod(n, P)
        off, rows = c.rank * base + min(c.rank, extra), base + (c.rank < extra)
        blk = x[off:off + rows]
        res = c.reduce_scatter(x, out=blk, algo=algo)
        one_d = c.reduce_scatter(rank_data(c.rank, n, "int32"), algo=algo)
        return res is blk, blk.copy(), one_d

    full = reference([rank_data(r, n, "int32") for r in range(P)], "sum")
    for r, (same, blk, one_d) in enumerate(run_ranks(P, body)):
        assert same
        np.testing.assert_array_equal(blk, np.array_split(full, P)[r])
        np.testing.assert_array_equal(one_d, np.array_split(full, P)[r])


def test_reduce_scatter_uneven_torch():
    torch = pytest.importorskip("torch")

    def body(c):
        return c.reduce_scatter(torch.from_numpy(rank_data(c.rank, 7 * 2, "float32").reshape(7, 2)), op="max")

    full = reference([rank_data(r, 14, "float32").reshape(7, 2) for r in range(3)], "max")
    for r, out in enumerate(run_ranks(3, body)):
        assert isinstance(out, torch.Tensor) and tuple(out.shape) == (3 if r == 0 else 2, 2)
        np.testing.assert_array_equal(out.numpy(), np.array_split(full, 3)[r])


# ---------------------------------------------------------------- 5. topk's order
def test_topk_sorted_exact_is_numpy_argsort():
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    idx, val = sc.topk(x, 20, method="exact", sorted=True)
    want = np.argsort(-np.abs(x), kind="stable")[:20]
    np.testing.assert_array_equal(idx, want)
    np.testing.assert_array_equal(val, x[want])
    plain = sc.topk(x, 20, method="exact")
    assert plain[0].size == 20 and np.all(np.diff(plain[0].astype(np.int64)) > 0)  # default: index order


def test_topk_sorted_exact_is_torch_topk():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)  # distinct magnitudes (torch.topk's order of ties is unspecified)
    x = torch.from_numpy((rng.permutation(4000) + 0.5).astype(np.float32) * rng.choice([-1, 1], 4000))
    for k in (1, 7, 100):
        idx, val = sc.topk(x, k, method="exact", sorted=True)
        ref = torch.topk(x.abs(), k)
        assert torch.equal(idx, ref.indices) and torch.equal(val, x[ref.indices])


@pytest.mark.parametrize("method", ["bracket", "approx", "approx_at_most", "threshold", "exact"])
def test_topk_sorted_any_method_keeps_the_selection(method):
    x = np.round(np.random.default_rng(2).standard_normal(5000) * 4).astype(np.float32)  # many ties
    i0, v0 = sc.topk(x, 100, method=method, seed=3)
    i1, v1 = sc.topk(x, 100, method=method, seed=3, sorted=True)
    order = np.argsort(-np.abs(v0), kind="stable")  # ties keep index order
    np.testing.assert_array_equal(i1, i0[order])
    np.testing.assert_array_equal(v1, v0[order])
    fb = sc.TopkFeedback(x.size)
    i2, v2 = fb.select(x, 100, method, seed=3, sorted=True)
    assert np.all(np.diff(np.abs(v2)) <= 0)


# ---------------------------------------------------------------- 6. index arrays get the index dtypes
def test_index_dtype_errors():
    c = sc.local_group(1)[0]
    idx16, v = np.zeros(1, np.int16), np.ones(1, np.float32)
    msg = r"^indices: dtype int16 is not supported \(supported: uint32, int32, uint64, int64\)$"
    with pytest.raises(sc.InvalidArgumentError, match=msg):
        c.sparse_allreduce(idx16, v, 4)
    with pytest.raises(sc.InvalidArgumentError, match=msg):
        c.sparse_allreduce_sparse(idx16, v, 4)
    with pytest.raises(sc.InvalidArgumentError, match=msg.replace("int16", "float32")):
        c.sparse_allreduce(np.zeros(1, np.float32), v, 4)
    i64 = np.zeros(1, np.int64)
    with pytest.raises(sc.InvalidArgumentError,
                       match=r"^dsop_sparse: a_indices: dtype int32 is not supported \(supported: int64, uint64\)$"):
        c.dsop_sparse(i64.astype(np.int32), v, 2, i64, v, 2)
    with pytest.raises(sc.InvalidArgumentError,
                       match=r"^dsop_sparse: b_indices: dtype int16 is not supported \(supported: int64, uint64\)$"):
        c.dsop_sparse(i64, v, 2, i64.astype(np.int16), v, 2)
    with pytest.raises(sc.InvalidArgumentError, match=r"^index_dtype: unsupported dtype numpy.float32 \(float32\); "
                                                      r"expected one of: uint32, int32, uint64, int64 \(as a name"):
        c.sparse_algo_for([1], 10, np.float32)
    with pytest.raises(sc.InvalidArgumentError, match=r"^index_dtype: unsupported dtype 'int8'; expected one of: "
                                                      r"uint32, int32, uint64, int64 \(as a name"):
        sc.topk(np.ones(4, np.float32), 1, index_dtype="int8")
    c.close()


# ---------------------------------------------------------------- 7. one spelling per algorithm
def test_ssar_recdbl_is_the_name():
    assert "ssar_recdbl" in _capi.SPARSE_ALGOS and "ssar_rec_dbl" not in _capi.SPARSE_ALGOS
    from sparcoll import sim

    assert "ssar_recdbl" in sim.algorithms("sparse_allreduce") and "ssar_recdbl" in sim.SHORT

    def body(c):
        res = c.sparse_allreduce_sparse(np.array([c.rank], np.uint32), np.ones(1, np.float32), 64,
                                        algo="ssar_recdbl")
        with pytest.warns(DeprecationWarning) as rec:
            old = c.sparse_allreduce_sparse(np.array([c.rank], np.uint32), np.ones(1, np.float32), 64,
                                            algo="ssar_rec_dbl")
        return res.algo, old.algo, [(w.filename, str(w.message)) for w in rec]

    for algo, old, warned in run_ranks(2, body):
        assert algo == old == "ssar_recdbl"
        assert warned == [(__file__, "sparse algorithm 'ssar_rec_dbl' is deprecated: it is spelled 'ssar_recdbl' "
                                     "now (as in the C library, the benchmarks and tuning files)")]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        sc.model.estimate(nranks=4, collective="sparse_allreduce", count=1000, density=0.1, algo="ssar_rec_dbl")
    assert [w.category for w in rec] == [DeprecationWarning] and rec[0].filename == __file__


# ---------------------------------------------------------------- 8. __all__
PUBLIC_MODULES = ["sparcoll", "sparcoll.comm", "sparcoll.errors", "sparcoll.model", "sparcoll.sim", "sparcoll.torch"]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_lists_exactly_the_public_names(name):
    if name == "sparcoll.torch":
        pytest.importorskip("torch")
    mod = importlib.import_module(name)
    assert len(mod.__all__) == len(set(mod.__all__)), name
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing, f"{name}.__all__ names what it lacks: {missing}"
    leaked = []
    for attr in dir(mod):
        value = getattr(mod, attr)
        if attr.startswith("_") or attr in mod.__all__:
            continue
        if type(value).__name__ == "module" and value.__name__ == f"sparcoll.{attr}" and name == "sparcoll":
            continue  # the package's submodules
        if type(value).__module__ == "__future__":  # `from __future__ import annotations` binds this name
            continue
        leaked.append(attr)
    assert not leaked, f"{name} has public names outside __all__: {leaked}"


def test_torch_module_does_not_leak_its_imports():
    pytest.importorskip("torch")
    import sparcoll.torch as st

    assert not {"Dict", "Optional", "math", "torch", "dist"} & set(dir(st))


# ---------------------------------------------------------------- 9. the source tree
def test_importing_the_source_tree_says_so():
    python_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = os.path.join(python_dir, "sparcoll")
    if not os.path.isfile(os.path.join(src, "__init__.py")) or \
            any(f.startswith("_sparcoll") and not f.endswith(".pyi") for f in os.listdir(src)):
        pytest.skip("no source tree without the extension here (an in-place build)")
    out = subprocess.run([sys.executable, "-c", "import sparcoll"], cwd=python_dir, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: this is sparcoll's source tree"), out.stderr
    assert "without the compiled extension sparcoll._sparcoll" in last and "`pip install ./python` from the " \
        "repository root" in last and "run Python from another directory" in last
    assert "circular import" not in out.stderr
