"""Import order of sparcoll and torch, and sparcoll.build_info.

A CUDA build's libsparcoll.so links libcudart/libcublas/libnccl under the same
SONAMEs as torch's own (newer) copies; whichever is loaded first wins, and torch
fails to import after the toolkit's older libnccl.so.2 ("undefined symbol:
ncclCommResume"). sparcoll/__init__.py therefore imports torch first in CUDA
builds. Each order runs in a fresh interpreter: in this process torch is
already imported (tests/helpers.py), which would hide the problem."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

import sparcoll as sc

HAVE_TORCH = importlib.util.find_spec("torch") is not None
requires_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")


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
