// The nccl transport bootstrapped over MPI (scCommInitMpi with transport nccl);
// compiled only when both NCCL and MPI are found (the nccl_mpi/ directory rule
// in CMakeLists.txt). It picks the device, moves rank 0's ncclUniqueId to every
// rank, and hands over to ncclCommFromId, which scCommInitRank uses too.
//
// The node-local rank (MPI_Comm_split_type shared) picks the GPU unless the
// config names one; every rank reports whether it is ready (one allreduce, so a
// local failure fails everyone at once instead of leaving them waiting), then
// rank 0's id is broadcast. Both exchanges are nonblocking and polled with the
// deadline.
#include <mpi.h>

#include <memory>

#include "model/mpi/machines.h"
#include "transport/factory.h"
#include "transport/mpi/util.h"
#include "transport/nccl/init.h"
#include "transport/nccl/util.h"

namespace sc {
namespace {

// Rank of this process among the ranks of its node (collective over comm).
int nodeLocalRank(MPI_Comm comm, int rank) {
  MPI_Comm node;
  mpiCheck(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  return local;
}

// Completes an MPI nonblocking request, polling with the deadline (a blocking
// MPI call would wait forever for a rank that never comes). On scTimeout the
// request stays pending (MPI cannot cancel a collective): the caller must leave
// its buffers and communicator alive.
void mpiWaitDeadline(MPI_Request* req, const Deadline& dl, const char* what) {
  for (int i = 0;; ++i) {
    int flag = 0;
    mpiCheck(MPI_Test(req, &flag, MPI_STATUS_IGNORE), what);
    if (flag) return;
    if (dl.expired()) SC_THROW(scTimeout, "deadline of ", dl.seconds, " s expired in ", what, " (a rank never joined)");
    pollBackoff(i);
  }
}

// What rank 0 broadcasts. Heap-held: on a timeout MPI may still write into it.
struct Boot {
  int ok = 1;
  ncclUniqueId id{};
};

std::unique_ptr<scComm> commOverMpi(const void* mpiComm, const Config& cfg) {
  const Deadline dl = Deadline::in(cfg.timeout);
  MPI_Comm comm;
  mpiCheck(MPI_Comm_dup(mpiCommFrom(mpiComm), &comm), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int localRank = nodeLocalRank(comm, rank);

  // 1. Local preparation; any failure is shared with every rank before anyone waits on NCCL.
  int device = -1;
  auto boot = std::make_unique<Boot>();
  std::unique_ptr<Error> localError;
  try {
    device = ncclPrepareDevice(cfg.device, localRank);
    if (rank == 0) SC_NCCL_CHECK(nullptr, ncclGetUniqueId(&boot->id));
  } catch (const Error& e) {
    localError = std::make_unique<Error>(e);
    boot->ok = 0;
  }
  MPI_Request req;
  auto okAll = std::make_unique<int>(0);
  mpiCheck(MPI_Iallreduce(&boot->ok, okAll.get(), 1, MPI_INT, MPI_MIN, comm, &req), "MPI_Iallreduce");
  try {
    mpiWaitDeadline(&req, dl, "the NCCL bootstrap (readiness of all ranks)");
  } catch (...) {
    boot.release();  // MPI may still read/write these
    okAll.release();
    throw;
  }
  if (localError || !*okAll) {
    MPI_Comm_free(&comm);
    if (localError) throw *localError;
    SC_THROW(scRemoteError, "another rank failed to prepare the NCCL communicator (see its error)");
  }

  // 2. Rank 0's unique id to everyone.
  mpiCheck(MPI_Ibcast(&boot->id, sizeof(ncclUniqueId), MPI_BYTE, 0, comm, &req), "MPI_Ibcast");
  try {
    mpiWaitDeadline(&req, dl, "the NCCL bootstrap (broadcast of the unique id)");
  } catch (...) {
    boot.release();
    throw;
  }
  // The machines, for the cost model's level (SPARCOLL_MACHINES overrides them).
  Config c = cfg;
  if (c.machinesEnv == 0) c.machines = mpiMachines(comm, dl);
  MPI_Comm_free(&comm);

  // 3. The same init as scCommInitRank, under the same deadline.
  return ncclCommFromId(boot->id, size, rank, device, c, dl);
}

}  // namespace

SC_PROVIDE(makeNcclComm, commOverMpi);

}  // namespace sc
