// scCommShrink on MPI. Only an MPI with the fault-tolerance extension (ULFM:
// MPIX_Comm_revoke, MPIX_Comm_shrink) can build a communicator without ranks
// that may be dead: MPI's own constructors (MPI_Comm_split, MPI_Comm_create)
// need every rank of the parent, and MPI_Comm_create_group, though collective
// over the group only, is not required to work once a member has failed.
#include "transport/mpi/shrink.h"

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>  // defines OMPI_HAVE_MPI_EXT_FTMPI in Open MPI builds with ULFM
#endif

#include <string>

#include "transport/mpi/util.h"

namespace sc {

#if (defined(OMPI_HAVE_MPI_EXT_FTMPI) && OMPI_HAVE_MPI_EXT_FTMPI) || defined(MPICH_NAME)
// MPIX_Comm_shrink drops the ranks that failed, whatever the caller asked: the
// result must be exactly the ranks not excluded, or the ranks would disagree
// on who is who.
MPI_Comm mpiShrink(MPI_Comm comm, const std::vector<int>& exclude) {
  MPIX_Comm_revoke(comm);  // ends the waits of any rank still inside a call on it
  MPI_Comm shrunk = MPI_COMM_NULL;
  mpiCheck(MPIX_Comm_shrink(comm, &shrunk), "MPIX_Comm_shrink");
  const std::vector<int> out = ranksIn(shrunk, comm);
  const int n = int(out.size());
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<int> keep;
  for (int q = 0, e = 0; q < size; ++q) {
    if (e < int(exclude.size()) && exclude[size_t(e)] == q) {
      ++e;
      continue;
    }
    keep.push_back(q);
  }
  if (out != keep) {
    MPI_Comm_free(&shrunk);
    SC_THROW(scInvalidUsage, "scCommShrink: MPIX_Comm_shrink kept ", n, " of ", size,
             " ranks, which are not the ranks left after excluding the given ones: MPI can exclude only the ranks "
             "that failed");
  }
  return shrunk;
}
#else
MPI_Comm mpiShrink(MPI_Comm, const std::vector<int>&) {
  SC_THROW(scInvalidUsage,
           "scCommShrink on the mpi transport needs an MPI with the fault-tolerance extension "
           "(ULFM: MPIX_Comm_shrink), which this MPI does not offer; use the local or nccl transport, or make a new "
           "communicator from an MPI communicator of the surviving ranks");
}
#endif

}  // namespace sc
