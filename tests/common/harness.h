// Test harness shared by every suite. The same test body runs on the local
// transport (P threads of this process) and, in the *_mpi binaries launched by
// CTest through mpirun, on MPI ranks (then only P == world size runs; other P
// values are skipped). Device tests ask for a GPU with requireGpu().
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "sparcoll/sparcoll.h"

namespace sctest {

enum class Mode { Local, Mpi };
Mode mode();
const char* modeName();
// World size in MPI mode, 0 in local mode.
int mpiWorldSize();
int mpiWorldRank();

// Runs body(comm, rank) for every rank of a P-rank communicator: threads in
// local mode, this process's rank in MPI mode (returns false — nothing ran —
// when P differs from the world size). Failures inside body are reported with
// the rank. cfg may tune timeout etc.; devices (local mode) selects GPUs.
bool run(int P, const std::function<void(scComm_t, int)>& body, const scConfig_t* cfg = nullptr,
         const int* devices = nullptr);

// Test configuration: a 60 s deadline so a broken schedule fails instead of hanging.
scConfig_t testConfig();

// Number of CUDA devices (0 without a CUDA build or a driver).
int gpuCount();
// Skips the current test with a clear message when no GPU is present.
#define SC_REQUIRE_GPU()                                                                       \
  do {                                                                                         \
    if (::sctest::gpuCount() == 0) GTEST_SKIP() << "no CUDA device present: GPU test skipped"; \
  } while (0)

// Environment variable set for the lifetime of the object (then restored).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, old_;
  bool had_;
};

// ASSERT-style check of an scResult_t with the communicator's last error.
#define SC_OK(comm, expr)                                                                              \
  do {                                                                                                 \
    scResult_t r_ = (expr);                                                                            \
    ASSERT_EQ(r_, scSuccess) << #expr << ": " << scGetErrorString(r_) << ": " << scGetLastError(comm); \
  } while (0)

}  // namespace sctest
