"""pytest configuration: tests/mpi is collected only under mpirun."""

from helpers import under_mpirun


def pytest_ignore_collect(collection_path, config):
    """tests/mpi runs only inside mpirun (tests/test_mpirun.py launches it)."""
    if collection_path.name == "mpi" and collection_path.is_dir() and not under_mpirun():
        return True
    return None
