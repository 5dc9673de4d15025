// A machine is what MPI_COMM_TYPE_SHARED calls a shared-memory domain: the
// ranks the MPI library can reach through shared memory, i.e. one node. Each
// group's lowest rank counts 1, and one small allreduce sums them, so every
// rank holds the same count (and predicts and picks the same algorithms).
#include "model/mpi/machines.h"

#include <sched.h>

#include <chrono>
#include <memory>
#include <thread>

#include "transport/mpi/util.h"

namespace sc {

int mpiMachines(MPI_Comm comm, const Deadline& dl) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm node;
  mpiCheck(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  // Heap-held: on a timeout MPI may still write the result (a collective
  // cannot be cancelled), so it must outlive this function then.
  auto buf = std::make_unique<int[]>(2);
  buf[0] = local == 0 ? 1 : 0;
  MPI_Request req;
  mpiCheck(MPI_Iallreduce(&buf[0], &buf[1], 1, MPI_INT, MPI_SUM, comm, &req), "MPI_Iallreduce");
  for (unsigned i = 0;; ++i) {
    int done = 0;
    mpiCheck(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) break;
    if (dl.expired()) {
      buf.release();
      SC_THROW(scTimeout, "deadline of ", dl.seconds, " s expired counting the machines (a rank never joined)");
    }
    if (i < 1000) sched_yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return buf[1];
}

}  // namespace sc
