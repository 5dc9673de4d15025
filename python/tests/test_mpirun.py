"""Launches the MPI test suite (tests/mpi) under mpirun with 2 and 4 ranks:
communicators from mpi4py (Communicator.from_mpi) and from torch.distributed
(Communicator.from_torch + the DDP hook on a gloo process group)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _mpirun(np_, *pytest_args, timeout=420):
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not found")
    pytest.importorskip("mpi4py")
    env = dict(os.environ)
    env.update(OMPI_MCA_mpi_yield_when_idle="1", OMPI_MCA_btl_vader_single_copy_mechanism="none",
               OMPI_MCA_rmaps_base_oversubscribe="1", SPARCOLL_TIMEOUT=env.get("SPARCOLL_TIMEOUT", "120"),
               OMP_NUM_THREADS="1")
    # Run from tests/ (not python/): `python -m pytest` puts the cwd on sys.path,
    # and python/ would shadow the installed package with the source tree.
    cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(np_), sys.executable, "-m", "pytest",
           "-p", "no:cacheprovider", "-q", "-x", "--no-header", "-rfE", *pytest_args]
    proc = subprocess.run(cmd, cwd=HERE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    out = proc.stdout
    assert proc.returncode == 0, f"mpirun -np {np_} failed (rc {proc.returncode}):\n{out[-12000:]}"
    assert " passed" in out and " failed" not in out, out[-4000:]
    return out


@pytest.mark.mpi
@pytest.mark.parametrize("np_", [2, 4])
def test_mpi_collectives(np_):
    _mpirun(np_, "mpi/test_mpi_collectives.py")


@pytest.mark.mpi
@pytest.mark.parametrize("np_", [3, 4])
def test_mpi_neighbor(np_):
    _mpirun(np_, "mpi/test_mpi_neighbor.py")


@pytest.mark.mpi
@pytest.mark.torch
@pytest.mark.parametrize("np_", [2, 3])
def test_mpi_torch(np_):
    pytest.importorskip("torch")
    _mpirun(np_, "mpi/test_mpi_torch.py")


EXAMPLES = HERE.parent / "examples"


def _run_example(np_, script, *args, timeout=300):
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not found")
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1", OMPI_MCA_btl_vader_single_copy_mechanism="none",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1", MPLBACKEND="Agg")
    cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(np_), sys.executable,
           str(EXAMPLES / script), *args]
    proc = subprocess.run(cmd, cwd=HERE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{script} failed (rc {proc.returncode}):\n{proc.stdout[-8000:]}"
    return proc.stdout


@pytest.mark.mpi
@pytest.mark.slow
def test_example_mpi_sgd(tmp_path):
    """MPI-SGD smoke run: sparse and dense aggregation give the same losses, outputs written."""
    import json

    pytest.importorskip("scipy")
    pytest.importorskip("matplotlib")
    _run_example(2, "mpi_sgd.py", "--dim", str(1 << 16), "--samples", "4096", "--batch", "64", "--epochs", "2",
                 "--out", str(tmp_path))
    summary = json.loads((tmp_path / "mpi_sgd_p2.json").read_text())
    assert (tmp_path / "mpi_sgd_p2.png").stat().st_size > 1000
    for model in ("logreg", "svm"):
        s = summary["models"][model]
        assert s["max_loss_gap"] < 1e-5  # the same update, only the aggregation differs
        assert s["loss_sparse"][-1] < s["loss_sparse"][0]


@pytest.mark.mpi
@pytest.mark.torch
@pytest.mark.slow
def test_example_ddp_topk(tmp_path):
    """DDP example smoke run (a few epochs; the full run's accuracy is reported in the README)."""
    import json

    pytest.importorskip("torch")
    pytest.importorskip("sklearn")
    out = _run_example(2, "ddp_topk_digits.py", "--epochs", "4", "--start-iter", "5", "--tolerance", "1.0",
                       "--out", str(tmp_path))
    assert "sparcoll top-k" in out
    res = json.loads((tmp_path / "ddp_topk_digits_p2.json").read_text())["results"]
    assert res["sparcoll dense"]["test_accuracy"] > 0.8
    assert 0 < res["sparcoll top-k"]["sent_fraction"] < 0.05


@pytest.mark.mpi
def test_example_spmv_halo():
    """The halo-exchange SpMV on 3 MPI ranks agrees with scipy (the example checks, rank 0 reports)."""
    pytest.importorskip("scipy")
    out = _run_example(3, "spmv_halo.py", "--n", "3000", "--far", "60", "--iters", "5")
    assert "  OK" in out and "WRONG" not in out, out[-4000:]
