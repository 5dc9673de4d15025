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

#include "mpi_program.h"
#include "sparcoll/sparcoll.h"

int main(int argc, char** argv) {
  const reltest::MpiProgram prog("after_finalize", &argc, &argv);
  const int rank = prog.rank, P = prog.size;
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.timeoutSeconds = 5;
  scComm_t comm = nullptr;
  if (scCommInitMpi(&comm, nullptr, &cfg) != scSuccess) return prog.fail(scGetLastError(nullptr));
  std::vector<float> x(16, 1.0f);
  if (scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRecDbl, comm, nullptr) != scSuccess)
    return prog.fail(std::string("before MPI_Finalize: ") + scGetLastError(comm));
  if (x[0] != float(P)) return prog.fail("before MPI_Finalize: wrong sum");
  MPI_Finalize();

  const scResult_t r = scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRecDbl, comm, nullptr);
  const std::string msg = scGetLastError(comm);
  if (r != scInvalidUsage) return prog.fail(std::string("after MPI_Finalize: ") + scGetErrorString(r) + ": " + msg);
  if (msg.find("MPI was finalized") == std::string::npos) return prog.fail("after MPI_Finalize: " + msg);
  if (scCommDestroy(comm) != scSuccess) return prog.fail(std::string("scCommDestroy: ") + scGetLastError(nullptr));
  std::printf("after_finalize: PASS (rank %d: %s)\n", rank, msg.c_str());
  return 0;
}
