#include "common/harness.h"

#include <cstdlib>
#include <mutex>
#include <thread>

#ifdef SPARCOLL_TEST_MPI
#include <mpi.h>
#endif
#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sctest {

Mode mode() {
#ifdef SPARCOLL_TEST_MPI
  return Mode::Mpi;
#else
  return Mode::Local;
#endif
}

const char* modeName() { return mode() == Mode::Mpi ? "mpi" : "local"; }

int mpiWorldSize() {
#ifdef SPARCOLL_TEST_MPI
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
#else
  return 0;
#endif
}

int mpiWorldRank() {
#ifdef SPARCOLL_TEST_MPI
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
#else
  return 0;
#endif
}

scConfig_t testConfig() {
  scConfig_t c = SC_CONFIG_INITIALIZER;
  c.timeoutSeconds = 60;
  return c;
}

bool run(int P, const std::function<void(scComm_t, int)>& body, const scConfig_t* cfg, const int* devices) {
  scConfig_t dflt = testConfig();
  if (!cfg) cfg = &dflt;
  if (mode() == Mode::Mpi) {
#ifdef SPARCOLL_TEST_MPI
    if (P != mpiWorldSize()) return false;
    scComm_t comm = nullptr;
    scResult_t r = scCommInitMpi(&comm, nullptr, cfg);
    EXPECT_EQ(r, scSuccess) << scGetLastError(nullptr);
    if (r != scSuccess) return true;
    {
      SCOPED_TRACE(testing::Message() << "mpi rank " << mpiWorldRank() << " of " << P);
      body(comm, mpiWorldRank());
    }
    scCommDestroy(comm);
#endif
    return true;
  }
  std::vector<scComm_t> comms(P);
  scResult_t r = scCommInitLocal(comms.data(), P, devices, cfg);
  EXPECT_EQ(r, scSuccess) << scGetLastError(nullptr);
  if (r != scSuccess) return true;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < P; ++rank)
    threads.emplace_back([&, rank] {
      SCOPED_TRACE(testing::Message() << "local rank " << rank << " of " << P);
      body(comms[rank], rank);
    });
  for (auto& t : threads) t.join();
  for (auto c : comms) scCommDestroy(c);
  return true;
}

int gpuCount() {
#ifdef SPARCOLL_HAVE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
#else
  return 0;
#endif
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  const char* old = std::getenv(name);
  had_ = old != nullptr;
  if (had_) old_ = old;
  if (value) setenv(name, value, 1);
  else unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
  if (had_) setenv(name_.c_str(), old_.c_str(), 1);
  else unsetenv(name_.c_str());
}

}  // namespace sctest
