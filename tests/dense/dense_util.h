// Helpers shared by the dense suites: which P runs in this binary, configs,
// error-message checks, and the cross-rank identity check of results.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/harness.h"

namespace dtest {

// True when a P-rank test runs in this binary: always on the local transport,
// only for P == world size under mpirun.
bool runsHere(int P);
#define DT_SKIP_UNLESS_RUNS(P)                                                                  \
  do {                                                                                          \
    if (!::dtest::runsHere(P)) GTEST_SKIP() << "P=" << (P) << " runs under mpirun -np " << (P); \
  } while (0)

// A P for rank-count-agnostic tests: the world size under mpirun, else `local`.
int anyP(int local);

// sctest::testConfig() with the given deadline and ring slice size (0 = default).
scConfig_t config(double timeoutSeconds = 30, size_t pipelineBytes = 0);

// Lower-case substring test (error messages).
bool contains(const std::string& text, const std::string& needle);

// gtest assertion: `r` is `want` and the communicator's (or, for NULL, this
// thread's) last error is non-empty, names `needle` and carries file:line.
testing::AssertionResult failedWith(scResult_t r, scResult_t want, scComm_t comm, const std::string& needle);

// Checks that every rank produced bit-identical results. Each rank records a
// digest per result, in the same order; in MPI mode finish() (called by every
// rank at the end of the body) compares them over MPI_COMM_WORLD, in local
// mode verify() (after sctest::run returned) compares the threads' lists.
class CrossRank {
 public:
  explicit CrossRank(int P) : digests_(size_t(P)) {}
  void add(int rank, const std::string& label, const void* buf, size_t bytes);
  void finish(int rank);
  void verify();

 private:
  std::vector<std::vector<uint64_t>> digests_;  // [rank][result]
  std::vector<std::string> labels_;             // recorded by rank 0 (local) / this rank (MPI)
};

using sctest::ScopedEnv;  // common/harness.h

}  // namespace dtest

namespace dtest {
// The rank counts of the grid and a gtest name for (P, algo) parameters.
inline const std::vector<int>& gridP() {
  static const std::vector<int> p = {1, 2, 3, 4, 5, 7, 8};
  return p;
}
struct PAlgoName {
  template <typename Info>
  std::string operator()(const Info& info) const {
    static const char* n[] = {"auto", "ring", "rabenseifner", "recdbl", "native"};
    return "P" + std::to_string(std::get<0>(info.param)) + "_" + n[std::get<1>(info.param)];
  }
};
}  // namespace dtest
