"""Import order of sparcoll and torch, of sparcoll's own submodules, and
sparcoll.build_info.

A CUDA build's libsparcoll.so links libcudart/libnccl (and opens libcublas on
first use) under the same SONAMEs as torch's own (newer) copies; whichever is loaded first wins, and torch
fails to import after the toolkit's older libnccl.so.2 ("undefined symbol:
ncclCommResume"). sparcoll/__init__.py therefore imports torch first in CUDA
builds. Each order runs in a fresh interpreter: in this process torch is
already imported (tests/helpers.py), which would hide the problem.

Within the package, no module imports another that (directly or not) imports it
back, not even from inside a function: such a cycle works only in some import
orders, and breaks when a lazy import becomes a module-level one."""

import ast
import importlib.util
import json
import os
import pkgutil
import subprocess
import sys

import pytest

import sparcoll as sc

HAVE_TORCH = importlib.util.find_spec("torch") is not None
requires_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")
PACKAGE_DIR = os.path.dirname(sc.__file__)
# Every module of the installed package: its .py files, the extension, _build_info
# (not libsparcoll.so, the C library beside the extension, which pkgutil lists too).
SUBMODULES = sorted(m.name for m in pkgutil.iter_modules([PACKAGE_DIR]) if m.name != "libsparcoll")


def _python(code, tmp_path, **env):
    """Runs code in a fresh interpreter (cwd outside python/, so the installed package is the one imported)."""
    e = dict(os.environ)
    e.pop("SPARCOLL_PRELOAD_TORCH", None)
    e.update(env)
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=e, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    assert proc.returncode == 0, f"python -c {code!r} failed (rc {proc.returncode}):\n{proc.stdout[-6000:]}"
    return proc.stdout


@pytest.mark.torch
@requires_torch
@pytest.mark.parametrize("imports", [
    "import sparcoll, torch",
    "import torch, sparcoll",
    "import sparcoll.torch, torch",  # the DDP hook module
    "import sparcoll; import torch.distributed, torch",
])
def test_import_order(imports, tmp_path):
    out = _python(imports + "; print('sum', torch.ones(3).sum().item(), sparcoll.__version__)", tmp_path)
    assert "sum 3.0" in out, out


def test_every_submodule_is_found():
    assert {"_sparcoll", "_capi", "comm", "errors", "torch"} <= set(SUBMODULES), SUBMODULES


@pytest.mark.parametrize("module", SUBMODULES)
def test_submodule_imported_first(module, tmp_path):
    """Any submodule can be the first import of a fresh interpreter, and leaves the package complete."""
    if module == "torch" and not HAVE_TORCH:
        pytest.skip("PyTorch is not installed")
    out = _python(f"import sparcoll.{module}, sparcoll; "
                  "missing = [n for n in sparcoll.__all__ if not hasattr(sparcoll, n)]; "
                  "print('missing', missing)", tmp_path)
    assert out.strip().splitlines()[-1] == "missing []", out


def _package_imports(path):
    """The package modules a source file imports, at module level or inside functions."""
    deps = set()
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.ImportFrom) and node.level == 1:  # from . import x / from .x import y
            deps.update([node.module.split(".")[0]] if node.module else [a.name for a in node.names])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("sparcoll."):
            deps.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            deps.update(a.name.split(".")[1] for a in node.names if a.name.startswith("sparcoll."))
    return deps


def test_no_import_cycles():
    graph = {}
    for name in os.listdir(PACKAGE_DIR):
        if name.endswith(".py") and name != "__init__.py":  # __init__ imports everything; nothing imports it
            graph[name[:-3]] = _package_imports(os.path.join(PACKAGE_DIR, name)) - {"__init__"}
    assert {"comm", "torch", "_topk", "_capi"} <= set(graph), graph

    def cycle_from(node, path):
        for dep in sorted(graph.get(node, ())):
            if dep in path:
                return path[path.index(dep):] + [dep]
            found = cycle_from(dep, path + [dep])
            if found:
                return found
        return None

    for module in sorted(graph):
        cycle = cycle_from(module, [module])
        assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_torch_imported_only_by_cuda_builds(tmp_path):
    """sparcoll imports torch itself only in a CUDA build with torch installed;
    a CPU build never does (numpy users pay no torch import)."""
    out = _python("import sys, json, sparcoll; print(json.dumps(['torch' in sys.modules, sparcoll.build_info]))",
                  tmp_path)
    loaded, info = json.loads(out.strip().splitlines()[-1])
    assert loaded == ((info["cuda"] or info["nccl"]) and HAVE_TORCH), (loaded, info)


def test_preload_can_be_turned_off(tmp_path):
    out = _python("import sys, sparcoll; print('torch' in sys.modules)", tmp_path, SPARCOLL_PRELOAD_TORCH="0")
    assert out.strip().splitlines()[-1] == "False"


def test_build_info():
    info = sc.build_info
    assert set(info) == {"cuda", "nccl", "mpi", "cuda_version", "nccl_version"}
    for key in ("cuda", "nccl", "mpi"):  # the configuration agrees with what the library reports
        assert info[key] is sc.features[key], (key, info, sc.features)
    if info["cuda"]:
        assert isinstance(info["cuda_version"], str) and info["cuda_version"].count(".") >= 1
    else:
        assert info["cuda_version"] is None and not info["nccl"]
    if info["nccl"]:
        major, minor, patch = map(int, info["nccl_version"].split("."))
        assert major >= 2
    else:
        assert info["nccl_version"] is None
    assert "build_info" in sc.__all__
