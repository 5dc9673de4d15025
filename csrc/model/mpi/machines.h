// How many machines the ranks of an MPI communicator span, for the cost
// model's level (model/model.h). Needs MPI: included only from MPI-gated
// directories (transport/mpi/, transport/nccl_mpi/).
#pragma once

#include <mpi.h>

#include "core/deadline.h"

namespace sc {

// Collective over comm: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups the
// ranks by machine; the count of groups is agreed by a sum, bounded by dl.
int mpiMachines(MPI_Comm comm, const Deadline& dl);

}  // namespace sc
