// native: the transport's own neighbourhood collective where it has one (MPI:
// MPI_Neighbor_allgatherv on a dist-graph communicator, neighbor/mpi/), and
// grouped send/recv elsewhere. The MPI parts are ToolkitFn slots
// (core/toolkit.h): builds without MPI keep their defaults, which report
// "not MPI" and let the callers fall back.
#pragma once

#include <cstdint>
#include <memory>

#include "core/toolkit.h"
#include "neighbor/topology.h"

namespace sc::nbr {

// A key naming this rank's node (the lowest rank of its MPI shared-memory
// split; collective). False when the transport is not MPI.
extern ToolkitFn<bool(scComm& comm, uint64_t* key)> mpiNodeKey;
// A dist-graph communicator with the topology's edges (collective), or null
// when the transport is not MPI.
extern ToolkitFn<std::shared_ptr<void>(const Topology& t)> mpiNeighborhood;
// MPI_Ineighbor_allgatherv on it, completed under the call's deadline.
extern ToolkitFn<void(Call& k, const void* send, void* recv, const Layout& L)> mpiNeighborAllGather;

}  // namespace sc::nbr
