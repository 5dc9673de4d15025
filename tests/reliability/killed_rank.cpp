// A rank SIGKILLed under mpirun (Open MPI: mpirun --enable-recovery, so the
// others run on, and --mca btl tcp,self, since over shared memory Open MPI's
// own later calls hang once a peer died): the survivors' call fails within
// the deadline plus a second, the communicator is destroyed cleanly, and the
// survivors go on with a sparcoll communicator over an MPI communicator of
// their own (made before the failure: without ULFM, MPI cannot make one after).
//
//   killed_rank before : the last rank dies between two calls
//   killed_rank during : the last rank dies inside a large allreduce
//
// Prints "killed_rank: PASS ..." on rank 0 when every survivor passed (the
// CTest entry matches it: mpirun itself reports the killed rank and fails).
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mpi_program.h"
#include "sparcoll/sparcoll.h"

namespace {

constexpr double kDeadline = 2.0;

}  // namespace

int main(int argc, char** argv) {
  const reltest::MpiProgram prog("killed_rank", &argc, &argv);
  const int rank = prog.rank, P = prog.size;
  const bool during = argc > 1 && std::strcmp(argv[1], "during") == 0;
  const int victim = P - 1;
  // The survivors' own MPI communicator, made while everyone is alive.
  MPI_Comm survivors = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank == victim ? MPI_UNDEFINED : 0, rank, &survivors);

  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.timeoutSeconds = kDeadline;
  scComm_t comm = nullptr;
  if (scCommInitMpi(&comm, nullptr, &cfg) != scSuccess) return prog.fail(scGetLastError(nullptr));
  const size_t n = during ? (size_t(8) << 20) : 4096;  // 32 MiB of floats: long enough to die inside
  std::vector<float> x(n, 1.0f);
  if (scAllReduce(x.data(), x.data(), n, scFloat32, scSum, scAlgoRing, comm, nullptr) != scSuccess)
    return prog.fail(std::string("warm-up: ") + scGetLastError(comm));
  MPI_Barrier(MPI_COMM_WORLD);

  if (rank == victim) {
    if (during) {
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        raise(SIGKILL);
      }).detach();
      for (;;) scAllReduce(x.data(), x.data(), n, scFloat32, scSum, scAlgoRing, comm, nullptr);
    }
    raise(SIGKILL);
  }

  // The survivors: a call fails in time, naming a rank (while the victim
  // lives, "during" calls succeed: they go on until one fails).
  scResult_t r = scSuccess;
  double took = 0;
  for (int i = 0; r == scSuccess && i < 10000; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    r = scAllReduce(x.data(), x.data(), n, scFloat32, scSum, scAlgoRing, comm, nullptr);
    took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const std::string msg = scGetLastError(comm);
  std::printf("killed_rank: rank %d: %s after %.2f s: %s\n", rank, scGetErrorString(r), took, msg.c_str());
  std::fflush(stdout);
  int bad = 0;
  if (r != scTimeout && r != scRemoteError) bad = prog.fail("expected a timeout or remote error");
  if (took > kDeadline + 1.0) bad = prog.fail("took longer than the deadline + 1 s");
  if (msg.find("rank ") == std::string::npos) bad = prog.fail("the message names no rank");
  // Shrink needs ULFM; this MPI may lack it, and then says so.
  scComm_t shrunk = nullptr;
  const int ex[] = {victim};
  const scResult_t s = scCommShrink(comm, ex, 1, &shrunk);
  if (s == scSuccess) scCommDestroy(shrunk);
  else if (s != scInvalidUsage || std::string(scGetLastError(comm)).find("ULFM") == std::string::npos)
    bad = prog.fail(std::string("scCommShrink: ") + scGetLastError(comm));
  if (scCommDestroy(comm) != scSuccess) bad = prog.fail(std::string("destroy: ") + scGetLastError(nullptr));

  // The job goes on over the survivors' MPI communicator.
  scComm_t next = nullptr;
  if (scCommInitMpi(&next, &survivors, &cfg) != scSuccess) return prog.fail(scGetLastError(nullptr));
  std::vector<int32_t> y(1000, rank + 1);
  if (scAllReduce(y.data(), y.data(), y.size(), scInt32, scSum, scAlgoRing, next, nullptr) != scSuccess)
    bad = prog.fail(std::string("allreduce after: ") + scGetLastError(next));
  else if (y[0] != (P - 1) * P / 2) bad = prog.fail("wrong result after: " + std::to_string(y[0]));
  scCommDestroy(next);
  int anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, survivors);
  double worst = 0;
  MPI_Allreduce(&took, &worst, 1, MPI_DOUBLE, MPI_MAX, survivors);
  if (rank == 0 && !anyBad)
    std::printf(
        "killed_rank: PASS (%s): %d survivors failed within %.2f s (deadline %.1f s), destroyed their "
        "communicator and went on\n",
        during ? "during a call" : "between calls", P - 1, worst, kDeadline);
  std::fflush(stdout);
  MPI_Comm_free(&survivors);
  // MPI_Finalize would wait for the dead rank; the result is in.
  _exit(anyBad);
}
