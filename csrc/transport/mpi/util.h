// MPI helpers shared by the MPI and NCCL transports: error checking and the
// mapping of sparcoll types/ops onto MPI's (float16/bfloat16 get user ops that
// compute in float32, as the CPU backend does).
#pragma once

#include <mpi.h>

#include <climits>

#include "core/dtype.h"

namespace sc {

void mpiCheck(int rc, const char* what);
MPI_Comm mpiCommFrom(const void* mpiComm);

struct MpiType {
  MpiType(scDataType_t dt, scRedOp_t op);
  MPI_Datatype type;
  MPI_Op op;
  size_t size;
  size_t maxCount() const { return size_t(INT_MAX); }
};

}  // namespace sc
