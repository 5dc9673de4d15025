// Small helpers of the reliability suites.
#pragma once

#include <chrono>
#include <string>

#ifdef SPARCOLL_TEST_MPI
#include <mpi.h>
#endif

namespace reltest {

inline bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// MPI: every rank keeps its communicator until all are done, so messages and
// abort notices land on a live communicator (see dense/test_timeout.cpp).
inline void syncWorld() {
#ifdef SPARCOLL_TEST_MPI
  MPI_Barrier(MPI_COMM_WORLD);
#endif
}

inline double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace reltest
