"""The Python names of the C enums come from the extension, match the
package's documented spellings, and the extension's type stubs match the
compiled module."""

import ast
import os

import pytest

import sparcoll as sc
from sparcoll import _capi, _sparcoll

# The spellings the package documents (README, docstrings): what users pass.
PUBLIC_NAMES = {
    "DTYPES": ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64", "bfloat16"],
    "INDEX_TYPES": ["uint32", "uint64"],
    "OPS": ["sum", "prod", "max", "min", "avg"],
    "ALGOS": ["auto", "ring", "rabenseifner", "recdbl", "native", "binomial", "scatter_allgather"],
    "TRANSPORTS": ["mpi", "nccl", "local"],
    "SPARSE_ALGOS": ["auto", "ssar_recdbl", "ssar_split_allgather", "dsar_split_allgather", "dsar_early_switch",
                     "dense"],
    "DSOP_ALGOS": ["auto", "allgather", "allreduce", "allreduce_ring", "g_rabenseifner", "all_scatter"],
    "NBR_ALGOS": ["auto", "naive", "combining", "hierarchical", "native"],
    "TOPK_METHODS": ["approx", "approx_at_most", "exact", "threshold", "bracket"],
    "TOPK_OUTPUTS": ["variable", "fixed"],
}
ENUMS = {"DTYPES": "DataType", "INDEX_TYPES": "IndexType", "OPS": "RedOp", "ALGOS": "Algo",
         "TRANSPORTS": "Transport", "SPARSE_ALGOS": "SparseAlgo", "DSOP_ALGOS": "DsopAlgo", "NBR_ALGOS": "NbrAlgo",
         "TOPK_METHODS": "TopkMethod", "TOPK_OUTPUTS": "TopkOutput"}


@pytest.mark.parametrize("table", sorted(PUBLIC_NAMES))
def test_table_is_the_c_enum(table):
    values = getattr(_capi, table)
    enum = getattr(_sparcoll, ENUMS[table])
    assert values == {name: int(v) for name, v in enum.__members__.items()}
    assert list(values) == PUBLIC_NAMES[table]
    assert list(values.values()) == list(range(len(values)))  # sparcoll numbers every enum from 0


def test_result_codes():
    codes = {name: int(v) for name, v in _sparcoll.Result.__members__.items()}
    assert codes["scSuccess"] == 0 and list(codes.values()) == list(range(len(codes)))
    for name, code in codes.items():
        if name != "scSuccess":
            cls = sc.errors.error_class(code)
            assert cls is not sc.SparcollError and cls.default_code == code and cls("m").code_name == name


def test_itemsize():
    import numpy as np

    for name, code in _capi.DTYPES.items():
        assert _capi.ITEMSIZE[code] == (2 if name == "bfloat16" else np.dtype(name).itemsize)


def test_features():
    assert set(_sparcoll.features) == {"cuda", "mpi", "nccl"}
    assert {k: sc.features[k] for k in _sparcoll.features} == _sparcoll.features
    for area in ("sparse", "topk", "dsop", "dsop_sparse"):  # every build binds every area
        assert sc.features[area] is True


def _stub():
    """{name: None for a module-level value or function, {member: None} for a class} of _sparcoll.pyi."""
    path = os.path.join(os.path.dirname(sc.__file__), "_sparcoll.pyi")
    out = {}
    for node in ast.parse(open(path).read(), path).body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = {(n.name if isinstance(n, ast.FunctionDef) else n.target.id): None
                              for n in node.body if isinstance(n, (ast.FunctionDef, ast.AnnAssign))}
        elif isinstance(node, ast.FunctionDef):
            out[node.name] = None
        elif isinstance(node, ast.AnnAssign):
            out[node.target.id] = None
    return out


def test_stub_matches_extension():
    stub = _stub()
    public = {n for n in dir(_sparcoll) if not n.startswith("_")}
    assert public == {n for n in stub if not n.startswith("_")}
    for name, members in stub.items():
        if members is None or name.startswith("_"):
            continue
        cls = getattr(_sparcoll, name)
        runtime = [n for n in vars(cls) if not n.startswith("_")]
        declared = [n for n in members if not n.startswith("_")]
        if hasattr(cls, "__members__"):  # an enum: its values in order, then anything else it defines
            assert declared[:len(cls.__members__)] == list(cls.__members__), name
            runtime = [n for n in runtime if n not in ("name", "value")]  # declared once, on _Enum
        assert sorted(runtime) == sorted(declared), name
