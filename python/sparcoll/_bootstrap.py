"""How the ranks of a communicator find each other: NCCL unique ids, and the
torch.distributed process groups behind Communicator.from_torch.

Separate from sparcoll.torch (the DDP hook, which imports torch and the
communicator) so that comm.py can use these without importing either; torch is
imported only inside the functions that need it.
"""

from __future__ import annotations

from . import _sparcoll
from ._capi import require_nccl
from .errors import InvalidUsageError, RemoteError, SparcollError


def get_unique_id() -> bytes:
    """A new id (128 opaque bytes) for :meth:`Communicator.from_unique_id`, like
    ncclGetUniqueId. Needs no GPU. The calling process hosts NCCL's bootstrap:
    it must take part (usually as rank 0) until every rank's init has returned."""
    require_nccl("get_unique_id")
    return _sparcoll.get_unique_id()


def _dist():
    """torch.distributed, initialized."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        raise InvalidUsageError("Communicator.from_torch needs torch.distributed initialized "
                                "(torch.distributed.init_process_group)")
    return dist


def unique_id_of_group(process_group=None):
    """(size, rank, id): the group's rank 0 makes a unique id and broadcasts it
    to the members (torch.distributed.broadcast_object_list). Collective over
    the process group. A failure on rank 0 travels with the broadcast, so every
    member raises instead of waiting for an id that never comes."""
    dist = _dist()
    pg = process_group if process_group is not None else dist.group.WORLD
    rank, size = dist.get_rank(pg), dist.get_world_size(pg)
    if rank < 0:
        raise InvalidUsageError("Communicator.from_torch: this process is not a member of the process group")
    payload = [None, None]  # [id, rank 0's error message]
    error = None
    if rank == 0:
        try:
            payload[0] = get_unique_id()
        except SparcollError as e:
            error, payload[1] = e, f"{type(e).__name__}: {e}"
    src = 0 if pg is dist.group.WORLD else dist.get_global_rank(pg, 0)
    dist.broadcast_object_list(payload, src=src, group=pg)
    if error is not None:
        raise error
    if payload[1] is not None:
        raise RemoteError(f"the process group's rank 0 could not make the NCCL unique id: {payload[1]}")
    return size, rank, payload[0]


def mpi_comm_of_group(process_group=None):
    """The MPI communicator whose ranks are the process group's members in its rank order.

    Collective over the process group. Needs the job to run under mpirun
    (mpi4py's COMM_WORLD spans the group's processes)."""
    dist = _dist()
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise InvalidUsageError("Communicator.from_torch(transport='mpi') bootstraps over MPI: install mpi4py and "
                                "launch with mpirun") from e
    pg = process_group if process_group is not None else dist.group.WORLD
    size = dist.get_world_size(pg)
    world = MPI.COMM_WORLD
    ranks = [None] * size
    dist.all_gather_object(ranks, world.Get_rank(), group=pg)
    if len(set(ranks)) != size or world.Get_size() < size:
        raise InvalidUsageError(
            f"Communicator.from_torch: the {size} members of the process group are not distinct MPI ranks "
            f"(MPI world size {world.Get_size()}, MPI ranks {ranks}); launch the job with mpirun")
    group = world.Get_group().Incl(ranks)
    try:
        return world.Create_group(group)  # collective over the group's members only
    finally:
        group.Free()
