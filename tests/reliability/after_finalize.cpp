// A call on a communicator over MPI after MPI_Finalize fails with
// scInvalidUsage naming the cause, instead of calling into a finalized MPI
// (or waiting on shared-memory queues for peers that are gone), and the
// communicator can still be destroyed.
//
// Prints "after_finalize: PASS" on each rank that passed (the CTest entry
// matches it).
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sparcoll/sparcoll.h"

namespace {

int fail(int rank, const std::string& what) {
  std::fprintf(stderr, "after_finalize: rank %d: FAIL: %s\n", rank, what.c_str());
  std::fflush(stderr);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, P = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.timeoutSeconds = 5;
  scComm_t comm = nullptr;
  if (scCommInitMpi(&comm, nullptr, &cfg) != scSuccess) return fail(rank, scGetLastError(nullptr));
  std::vector<float> x(16, 1.0f);
  if (scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRecDbl, comm, nullptr) != scSuccess)
    return fail(rank, std::string("before MPI_Finalize: ") + scGetLastError(comm));
  if (x[0] != float(P)) return fail(rank, "before MPI_Finalize: wrong sum");
  MPI_Finalize();

  const scResult_t r = scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRecDbl, comm, nullptr);
  const std::string msg = scGetLastError(comm);
  if (r != scInvalidUsage) return fail(rank, std::string("after MPI_Finalize: ") + scGetErrorString(r) + ": " + msg);
  if (msg.find("MPI was finalized") == std::string::npos) return fail(rank, "after MPI_Finalize: " + msg);
  if (scCommDestroy(comm) != scSuccess) return fail(rank, std::string("scCommDestroy: ") + scGetLastError(nullptr));
  std::printf("after_finalize: PASS (rank %d: %s)\n", rank, msg.c_str());
  return 0;
}
