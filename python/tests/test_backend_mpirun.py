"""Launches tests/mpi/test_mpi_backend.py (the "sparcoll" torch.distributed
backend) under mpirun with 2 and 4 ranks, as tests/test_mpirun.py launches the
rest of tests/mpi, and runs the backend's examples at small sizes."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"


def _env():
    env = dict(os.environ)
    env.update(OMPI_MCA_mpi_yield_when_idle="1", OMPI_MCA_btl_vader_single_copy_mechanism="none",
               OMPI_MCA_rmaps_base_oversubscribe="1", SPARCOLL_TIMEOUT=env.get("SPARCOLL_TIMEOUT", "120"),
               OMP_NUM_THREADS="1")
    return env


def _mpirun(np_, args, timeout):
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not found")
    pytest.importorskip("mpi4py")
    pytest.importorskip("torch")
    cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(np_), sys.executable, *args]
    # cwd tests/ (not python/): python/ would shadow the installed package with the source tree.
    proc = subprocess.run(cmd, cwd=HERE, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"mpirun -np {np_} failed (rc {proc.returncode}):\n{proc.stdout[-12000:]}"
    return proc.stdout


@pytest.mark.mpi
@pytest.mark.torch
@pytest.mark.parametrize("np_", [2, 4])
def test_mpi_backend(np_):
    out = _mpirun(np_, ["-m", "pytest", "-p", "no:cacheprovider", "-q", "-x", "--no-header", "-rfE",
                        "mpi/test_mpi_backend.py"], timeout=600)
    assert " passed" in out and " failed" not in out, out[-4000:]


@pytest.mark.mpi
@pytest.mark.torch
@pytest.mark.slow
def test_example_ddp_backend(tmp_path):
    out = _mpirun(2, [str(EXAMPLES / "ddp_backend.py"), "--steps", "30", "--topk", "0.05", "--out", str(tmp_path)],
                  timeout=300)
    res = json.loads((tmp_path / "ddp_backend_p2.json").read_text())
    assert res["max_param_diff_vs_gloo"] < 1e-4, out[-4000:]
    assert res["losses"]["sparcoll"][-1] < res["losses"]["sparcoll"][0]
    assert 0 < res["topk"]["sent_fraction"] < 0.2


@pytest.mark.mpi
@pytest.mark.torch
@pytest.mark.slow
def test_example_ddp_backend_bench(tmp_path):
    _mpirun(2, [str(EXAMPLES / "ddp_backend_bench.py"), "--hidden", "256", "--layers", "2", "--steps", "3",
                "--warmup", "1", "--start-iter", "0", "--out", str(tmp_path)], timeout=300)
    res = json.loads((tmp_path / "ddp_backend_bench_p2.json").read_text())
    assert {r["config"] for r in res["results"]} == {"gloo dense", "sparcoll dense", "gloo top-k",
                                                      "sparcoll top-k"}
    assert all(r["step_ms"] > 0 for r in res["results"])
    assert all(0 < r["sent_fraction"] < 0.05 for r in res["results"] if r["config"].endswith("top-k"))


@pytest.mark.mpi
@pytest.mark.torch
@pytest.mark.slow
def test_example_ddp_backend_bench_digits(tmp_path):
    """--data digits: every epoch's test accuracy, the verdict against gloo dense,
    and momentum correction in the top-k configurations."""
    pytest.importorskip("sklearn")
    out = _mpirun(2, [str(EXAMPLES / "ddp_backend_bench.py"), "--data", "digits", "--hidden", "64", "--layers", "2",
                      "--epochs", "3", "--warmup", "2", "--start-iter", "3", "--lr", "0.05", "--momentum", "0.9",
                      "--momentum-correction", "--configs", "gloo dense,sparcoll top-k", "--tolerance", "100",
                      "--out", str(tmp_path)], timeout=300)
    res = json.loads((tmp_path / "ddp_backend_bench_digits_p2.json").read_text())
    dense, topk = res["results"]
    assert (dense["config"], topk["config"]) == ("gloo dense", "sparcoll top-k")
    assert dense["steps"] == topk["steps"] == 3 * (1437 // 2 // 32)
    for r in (dense, topk):
        assert len(r["test_accuracy_per_epoch"]) == 3 and r["test_accuracy"] == r["test_accuracy_per_epoch"][-1]
        assert 0.3 < r["test_accuracy"] <= 1.0, out[-4000:]  # 10 classes: trained, not chance
    assert topk["accuracy_points_vs_gloo_dense"] == pytest.approx(100 * (topk["test_accuracy"] - dense["test_accuracy"]))
    assert "within the 100.0-point tolerance" in out
    assert 0 < topk["sent_fraction"] < 0.05


@pytest.mark.mpi
@pytest.mark.torch
def test_example_ddp_backend_bench_bad_config():
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not found")
    pytest.importorskip("mpi4py")
    pytest.importorskip("torch")
    proc = subprocess.run(["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "1", sys.executable,
                           str(EXAMPLES / "ddp_backend_bench.py"), "--configs", "gloo dense,nccl dense"], cwd=HERE,
                          env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert proc.returncode != 0
    assert "unknown config 'nccl dense'" in proc.stdout
