// The MPI side of scCommShrink (transport/mpi/shrink.cpp).
#pragma once

#include <mpi.h>

#include <vector>

#include "core/error.h"

namespace sc {

// A new MPI communicator of comm's ranks less `exclude` (sorted), in rank
// order, which the caller frees. Needs ULFM; without it, scInvalidUsage.
MPI_Comm mpiShrink(MPI_Comm comm, const std::vector<int>& exclude);

}  // namespace sc
