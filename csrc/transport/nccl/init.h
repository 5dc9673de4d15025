// Creation of the nccl transport's communicators, shared by its two
// bootstraps: from a unique id (scGetUniqueId / scCommInitRank,
// transport/nccl/transport.cpp, no MPI) and over MPI (scCommInitMpi,
// transport/nccl_mpi/bootstrap.cpp, which only moves the id and picks the
// device, then calls ncclCommFromId like the other).
#pragma once

#include <nccl.h>

#include <memory>

#include "core/comm.h"

namespace sc {

// The CUDA device of a rank: `wanted` when >= 0 (must be visible); else
// `localRank` when >= 0 (the MPI bootstrap's node-local rank, which must have a
// GPU of its own); else the calling thread's current device (NCCL's rule).
// Creates the device's context, so a broken or missing GPU fails here with
// scCudaError instead of inside NCCL.
int ncclPrepareDevice(int wanted, int localRank);

// Rank `rank` of `nranks` from `id` on `device` (from ncclPrepareDevice):
// ncclCommInitRankConfig on a nonblocking NCCL communicator, completed before
// `dl` (aborted on timeout or error), then the sparcoll communicator.
std::unique_ptr<scComm> ncclCommFromId(const ncclUniqueId& id, int nranks, int rank, int device, const Config& cfg,
                                       const Deadline& dl);

}  // namespace sc
