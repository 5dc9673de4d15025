"""Fixtures of the MPI suite (run under mpirun: every rank runs every test in
the same order)."""

import socket

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
        port = None
        if world.Get_rank() == 0:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
        port = world.bcast(port, root=0)
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=world.Get_rank(),
                                world_size=world.Get_size())
    yield dist
