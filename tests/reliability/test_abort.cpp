// Failure propagation: a rank that aborts its communicator (scCommAbort, or a
// failed call) tells its peers, which then fail with scRemoteError naming it
// within about a second, long before their own deadline.
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

constexpr double kDeadline = 30;

TEST(Abort, ScCommAbortWakesThePeers) {
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = kDeadline;
  sctest::run(
      3,
      [&](scComm_t comm, int rank) {
        std::vector<float> x(3000, 1.0f);
        if (rank == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          EXPECT_EQ(scCommAbort(comm), scSuccess) << scGetLastError(comm);
          EXPECT_EQ(scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRing, comm, nullptr),
                    scInvalidUsage);
          EXPECT_TRUE(has(scGetLastError(comm), "scCommAbort")) << scGetLastError(comm);
          EXPECT_EQ(scCommAbort(comm), scInvalidUsage) << "a second abort";
        } else {
          const auto t0 = std::chrono::steady_clock::now();
          const scResult_t r = scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRing, comm, nullptr);
          const std::string msg = scGetLastError(comm);
          EXPECT_EQ(r, scRemoteError) << msg;
          EXPECT_TRUE(has(msg, "rank 1 aborted the communicator")) << msg;
          EXPECT_TRUE(has(msg, "scCommAbort was called on rank 1")) << msg;
          EXPECT_LT(since(t0), 3.0) << "the peers waited for their deadline instead of learning of the abort";
        }
        syncWorld();
      },
      &cfg);
}

// Every rank aborts its communicator, destroys it and makes another, 20
// times; the last one still works. Under mpirun, each rank's abort notices to
// the others used to be left unmatched when the communicator was freed, and
// Open MPI's next MPI_Comm_dup then spun in its context-id agreement in about
// one run in four at P = 3 (the MPI transport's destructor now takes them off
// the wire first).
TEST(Abort, EveryRankAbortsThenANewCommunicatorWorks) {
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = kDeadline;
  const int P = sctest::mode() == sctest::Mode::Mpi ? sctest::mpiWorldSize() : 3;
  for (int i = 0; i < 20; ++i)
    sctest::run(
        P,
        [&](scComm_t comm, int) {
          // A peer that left the barrier first may have aborted already: its
          // notice then ends this rank's barrier (scRemoteError) and aborts the
          // communicator here too (a second abort is scInvalidUsage).
          const scResult_t b = scBarrier(comm, nullptr);
          EXPECT_TRUE(b == scSuccess || b == scRemoteError) << scGetLastError(comm);
          const scResult_t a = scCommAbort(comm);
          EXPECT_TRUE(a == scSuccess || (a == scInvalidUsage && b == scRemoteError)) << scGetLastError(comm);
        },
        &cfg);
  sctest::run(
      P,
      [&](scComm_t comm, int) {
        float x = 1;
        ASSERT_EQ(scAllReduce(&x, &x, 1, scFloat32, scSum, scAlgoRing, comm, nullptr), scSuccess)
            << scGetLastError(comm);
        EXPECT_EQ(x, float(P));
      },
      &cfg);
}

// A mismatch found by one rank ends the call on all of them within about a
// second, whatever their deadline.
TEST(Abort, AFailedCallEndsThePeersCalls) {
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = kDeadline;
  for (int P : {2, 3, 4})
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          const size_t n = rank == 0 ? 3000 : 2000;
          std::vector<float> x(n, 1.0f);
          const auto t0 = std::chrono::steady_clock::now();
          const scResult_t r = scAllReduce(x.data(), x.data(), n, scFloat32, scSum, scAlgoRing, comm, nullptr);
          EXPECT_NE(r, scSuccess);
          EXPECT_LT(since(t0), 3.0) << scGetLastError(comm);
          EXPECT_TRUE(has(scGetLastError(comm), "rank")) << scGetLastError(comm);
          syncWorld();
        },
        &cfg);
}

}  // namespace
