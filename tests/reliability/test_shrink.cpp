// scCommShrink and ranks that stop: the survivors of a rank that never comes
// back fail within their deadline (plus the second an abort notice takes),
// naming it, and go on with a communicator of the others. On MPI (no ULFM in
// the MPIs these suites run on) shrink is refused with a clear message.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/harness.h"
#include "reliability/reliability_util.h"

namespace {

using reltest::has;
using reltest::since;
using reltest::syncWorld;

bool local() { return sctest::mode() == sctest::Mode::Local; }

// Allreduces on `comm` (P ranks) whose results are exact: rank r gives r+1.
void checkAllReduce(scComm_t comm, int P) {
  int r = -1, n = -1;
  SC_OK(comm, scCommRank(comm, &r));
  SC_OK(comm, scCommSize(comm, &n));
  ASSERT_EQ(n, P);
  std::vector<int32_t> x(1000, r + 1);
  for (scAlgo_t a : {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoNative}) {
    std::vector<int32_t> y(x.size(), -1);
    SC_OK(comm, scAllReduce(x.data(), y.data(), x.size(), scInt32, scSum, a, comm, nullptr));
    for (int32_t v : y) ASSERT_EQ(v, P * (P + 1) / 2) << "algorithm " << int(a);
  }
}

TEST(Shrink, ExcludedRanksTakeNoPart) {
  if (!local()) GTEST_SKIP() << "shrink needs ULFM on MPI (see Shrink.MpiWithoutUlfmRefuses)";
  sctest::run(5, [&](scComm_t comm, int rank) {
    if (rank == 1 || rank == 3) return;  // excluded: never calls
    const int ex[] = {3, 1};             // any order
    scComm_t small = nullptr;
    SC_OK(comm, scCommShrink(comm, ex, 2, &small));
    int r = -1;
    SC_OK(small, scCommRank(small, &r));
    EXPECT_EQ(r, rank / 2) << "ranks 0, 2, 4 become 0, 1, 2";
    checkAllReduce(small, 3);
    // A shrink of a shrunk communicator, and one that excludes nobody (a copy).
    scComm_t same = nullptr;
    SC_OK(small, scCommShrink(small, nullptr, 0, &same));
    checkAllReduce(same, 3);
    if (r != 2) {
      const int last[] = {2};
      scComm_t smaller = nullptr;
      SC_OK(small, scCommShrink(small, last, 1, &smaller));
      checkAllReduce(smaller, 2);
      EXPECT_EQ(scCommDestroy(smaller), scSuccess);
    }
    EXPECT_EQ(scCommDestroy(same), scSuccess);
    EXPECT_EQ(scCommDestroy(small), scSuccess);
  });
}

// A thread rank that stops mid-job: the others' next call fails within the
// deadline + 1 s, at least one message names the stopped rank, and the
// survivors shrink the aborted communicator and carry on.
TEST(Shrink, SurvivorsOfAStoppedRankGoOn) {
  if (!local()) GTEST_SKIP() << "a stopped rank under mpirun: tests/reliability/killed_rank.cpp";
  constexpr double kDeadline = 1.0;
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = kDeadline;
  for (scAlgo_t algo : {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl}) {
    std::vector<std::string> msgs(4);
    sctest::run(
        4,
        [&](scComm_t comm, int rank) {
          std::vector<float> x(1 << 16, 1.0f);
          SC_OK(comm, scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, algo, comm, nullptr));
          if (rank == 2) return;  // stops: no more calls
          const auto t0 = std::chrono::steady_clock::now();
          const scResult_t r = scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, algo, comm, nullptr);
          const double took = since(t0);
          msgs[size_t(rank)] = scGetLastError(comm);
          EXPECT_TRUE(r == scTimeout || r == scRemoteError) << scGetErrorString(r) << ": " << msgs[size_t(rank)];
          EXPECT_LT(took, kDeadline + 1.0) << msgs[size_t(rank)];
          // The aborted communicator refuses calls, and shrinks.
          EXPECT_EQ(scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, algo, comm, nullptr), scInvalidUsage);
          const int ex[] = {2};
          scComm_t next = nullptr;
          SC_OK(comm, scCommShrink(comm, ex, 1, &next));
          checkAllReduce(next, 3);
          EXPECT_EQ(scCommDestroy(next), scSuccess);
        },
        &cfg);
    // Whoever timed out first (its own wait, or the one its abort notice
    // relays) followed the chain of waits to the rank that stopped.
    for (int q : {0, 1, 3})
      EXPECT_TRUE(has(msgs[size_t(q)], "rank 2 has not reached call #2")) << "rank " << q << ": " << msgs[size_t(q)];
  }
}

TEST(Shrink, BadArgumentsAreRefusedLocally) {
  sctest::run(3, [&](scComm_t comm, int rank) {
    scComm_t out = reinterpret_cast<scComm_t>(&rank);
    const int self[] = {rank}, twice[] = {(rank + 1) % 3, (rank + 1) % 3}, far[] = {3}, neg[] = {-1};
    EXPECT_EQ(scCommShrink(comm, far, 1, nullptr), scInvalidArgument);
    EXPECT_EQ(scCommShrink(comm, self, 1, &out), scInvalidArgument);
    EXPECT_EQ(out, nullptr) << "the output is cleared on failure";
    EXPECT_TRUE(has(scGetLastError(comm), "is the calling rank")) << scGetLastError(comm);
    EXPECT_EQ(scCommShrink(comm, twice, 2, &out), scInvalidArgument);
    EXPECT_TRUE(has(scGetLastError(comm), "twice")) << scGetLastError(comm);
    EXPECT_EQ(scCommShrink(comm, far, 1, &out), scInvalidArgument);
    EXPECT_EQ(scCommShrink(comm, neg, 1, &out), scInvalidArgument);
    EXPECT_EQ(scCommShrink(comm, nullptr, 1, &out), scInvalidArgument);
    EXPECT_EQ(scCommShrink(comm, far, -1, &out), scInvalidArgument);
    EXPECT_EQ(scCommShrink(comm, far, 3, &out), scInvalidArgument) << "nobody would be left";
    EXPECT_EQ(scCommShrink(nullptr, far, 1, &out), scInvalidArgument);
    // Refused locally: the communicator still works.
    std::vector<int32_t> x(10, 1);
    SC_OK(comm, scAllReduce(x.data(), x.data(), x.size(), scInt32, scSum, scAlgoRing, comm, nullptr));
    EXPECT_EQ(x[0], 3);
    syncWorld();
  });
}

// Ranks that disagree on whom to exclude all fail, naming both lists. Rank 3
// (excluded by the others, yet alive) arrives first, so every rank sees it.
TEST(Shrink, DifferentListsAreNamed) {
  if (!local()) GTEST_SKIP() << "shrink needs ULFM on MPI";
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = 5;
  sctest::run(
      4,
      [&](scComm_t comm, int rank) {
        if (rank != 3) std::this_thread::sleep_for(std::chrono::milliseconds(300));
        const int mine[] = {rank == 3 ? 2 : 3};
        scComm_t out = nullptr;
        EXPECT_EQ(scCommShrink(comm, mine, 1, &out), scInvalidUsage) << scGetLastError(comm);
        EXPECT_TRUE(has(scGetLastError(comm), "different exclude lists")) << scGetLastError(comm);
        EXPECT_EQ(out, nullptr);
      },
      &cfg);
}

// A rank that never joins the shrink: the others time out naming it.
TEST(Shrink, AMissingRankIsNamed) {
  if (!local()) GTEST_SKIP() << "shrink needs ULFM on MPI";
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = 0.5;
  sctest::run(
      3,
      [&](scComm_t comm, int rank) {
        if (rank == 1) return;
        const int ex[] = {rank == 0 ? 2 : 0};  // each excludes the other: both wait for rank 1
        scComm_t out = nullptr;
        EXPECT_EQ(scCommShrink(comm, ex, 1, &out), scTimeout);
        EXPECT_TRUE(has(scGetLastError(comm), "waiting for rank 1 to call scCommShrink")) << scGetLastError(comm);
      },
      &cfg);
}

TEST(Shrink, MpiWithoutUlfmRefuses) {
  if (local()) GTEST_SKIP() << "MPI only";
  sctest::run(2, [&](scComm_t comm, int rank) {
    const int ex[] = {1 - rank};
    scComm_t out = nullptr;
    const scResult_t r = scCommShrink(comm, ex, 1, &out);
    if (r == scSuccess) {  // an MPI with ULFM: the other rank is alive, so MPIX_Comm_shrink keeps it
      scCommDestroy(out);
      GTEST_SKIP() << "this MPI has ULFM";
    }
    EXPECT_EQ(r, scInvalidUsage) << scGetLastError(comm);
    EXPECT_TRUE(has(scGetLastError(comm), "ULFM")) << scGetLastError(comm);
    syncWorld();
  });
}

}  // namespace
