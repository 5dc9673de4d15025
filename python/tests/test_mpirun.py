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
@pytest.mark.torch
@pytest.mark.parametrize("np_", [2, 3])
def test_mpi_torch(np_):
    pytest.importorskip("torch")
    _mpirun(np_, "mpi/test_mpi_torch.py")
