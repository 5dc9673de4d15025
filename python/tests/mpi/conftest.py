"""Fixtures of the MPI suite (run under mpirun: every rank runs every test in
the same order)."""

import pytest

import sparcoll as sc


@pytest.fixture(scope="session")
def world():
    from mpi4py import MPI

    return MPI.COMM_WORLD


@pytest.fixture(scope="session")
def comm(world):
    c = sc.Communicator.from_mpi(world, timeout=60)
    yield c
    c.close()


@pytest.fixture(scope="session")
def gloo(world):
    """torch.distributed initialized with gloo over loopback, rank = MPI rank."""
    import torch.distributed as dist

    if not dist.is_initialized():
        from sparcoll.torch import init_process_group_mpi

        init_process_group_mpi("gloo", world)
    yield dist
