#include "dense_util.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "dense_data.h"

#ifdef SPARCOLL_TEST_MPI
#include <mpi.h>
#endif

namespace dtest {

bool runsHere(int P) { return sctest::mode() == sctest::Mode::Local || sctest::mpiWorldSize() == P; }

int anyP(int local) { return sctest::mode() == sctest::Mode::Mpi ? sctest::mpiWorldSize() : local; }

scConfig_t config(double timeoutSeconds, size_t pipelineBytes) {
  scConfig_t c = sctest::testConfig();
  c.timeoutSeconds = timeoutSeconds;
  c.pipelineBytes = pipelineBytes;
  return c;
}

bool contains(const std::string& text, const std::string& needle) {
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    return s;
  };
  return lower(text).find(lower(needle)) != std::string::npos;
}

testing::AssertionResult failedWith(scResult_t r, scResult_t want, scComm_t comm, const std::string& needle) {
  const std::string msg = scGetLastError(comm);
  if (r != want)
    return testing::AssertionFailure() << "returned " << int(r) << " (" << scGetErrorString(r) << "), expected "
                                       << int(want) << " (" << scGetErrorString(want) << "); last error: '" << msg
                                       << "'";
  if (msg.empty()) return testing::AssertionFailure() << "scGetLastError is empty";
  if (!contains(msg, needle))
    return testing::AssertionFailure() << "last error '" << msg << "' does not mention '" << needle << "'";
  // file:line, e.g. "(csrc/algo/api_dense.cpp:27)"
  const auto colon = msg.rfind(':');
  if (msg.find("csrc/") == std::string::npos || colon == std::string::npos ||
      !std::isdigit((unsigned char)msg[colon + 1]))
    return testing::AssertionFailure() << "last error '" << msg << "' carries no csrc/<file>:<line>";
  return testing::AssertionSuccess();
}

void CrossRank::add(int rank, const std::string& label, const void* buf, size_t bytes) {
  digests_[size_t(rank)].push_back(digest(buf, bytes));
  if (rank == 0 || sctest::mode() == sctest::Mode::Mpi) labels_.push_back(label);
}

void CrossRank::finish(int rank) {
#ifdef SPARCOLL_TEST_MPI
  const int P = int(digests_.size());
  const std::vector<uint64_t>& mine = digests_[size_t(rank)];
  int n = int(mine.size());
  std::vector<int> counts(static_cast<size_t>(P));
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int q = 0; q < P; ++q)
    if (counts[size_t(q)] != n) {
      ADD_FAILURE() << "rank " << q << " recorded " << counts[size_t(q)] << " results, this rank " << n;
      return;
    }
  std::vector<uint64_t> all(size_t(n) * size_t(P));
  MPI_Allgather(mine.data(), n, MPI_UINT64_T, all.data(), n, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int q = 0; q < P; ++q)
    for (int k = 0; k < n; ++k)
      if (all[size_t(q) * size_t(n) + size_t(k)] != mine[size_t(k)]) {
        ADD_FAILURE() << "result '" << labels_[size_t(k)] << "' differs between rank " << rank << " and rank " << q;
        break;
      }
#else
  (void)rank;
#endif
}

void CrossRank::verify() {
  if (sctest::mode() == sctest::Mode::Mpi) return;
  const auto& ref = digests_[0];
  for (size_t q = 1; q < digests_.size(); ++q) {
    ASSERT_EQ(digests_[q].size(), ref.size()) << "rank " << q << " recorded a different number of results";
    for (size_t k = 0; k < ref.size(); ++k)
      EXPECT_EQ(digests_[q][k], ref[k]) << "result '" << labels_[k] << "' differs between rank 0 and rank " << q;
  }
}

}  // namespace dtest
