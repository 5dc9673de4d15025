// MPI helpers shared by the MPI and NCCL transports: error checking and the
// mapping of sparcoll types/ops onto MPI's. Where a predefined MPI op would
// compute something else than the library's own algorithms (float16/bfloat16,
// float max/min with NaNs, 8-bit sums that Open MPI may saturate), MpiType
// holds a user op running core/reduce_op.h's operators (util.cpp).
#pragma once

#include <mpi.h>

#include <climits>
#include <vector>

#include "core/dtype.h"

namespace sc {

// Throws scMpiError naming `what` and MPI's message. Inline: every MPI call
// of a round passes here.
[[noreturn]] void mpiFail(int rc, const char* what);
inline void mpiCheck(int rc, const char* what) {
  if (rc != MPI_SUCCESS) mpiFail(rc, what);
}
MPI_Comm mpiCommFrom(const void* mpiComm);
// Each rank of sub (a communicator of some of parent's ranks), in parent's numbering.
std::vector<int> ranksIn(MPI_Comm sub, MPI_Comm parent);

struct MpiType {
  MpiType(scDataType_t dt, scRedOp_t op);
  MPI_Datatype type;
  MPI_Op op;
  size_t size;
  size_t maxCount() const { return size_t(INT_MAX); }
};

}  // namespace sc
