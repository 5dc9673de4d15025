// Timeouts name their culprit: the peer a rank was still waiting for, how
// much, and where in which call ("ring reduce-scatter step 1/2 of
// scAllReduce(count=3000, float, sum, ring) (call #1)").
#include <string>

#include "common/harness.h"
#include "reliability/reliability_util.h"

namespace {

using reltest::has;
using reltest::since;
using reltest::syncWorld;

// Rank 2 of 3 never joins a ring allreduce. Rank 0 receives from its left
// neighbour, rank 2, in the first reduce-scatter step.
TEST(Culprit, TimeoutNamesThePeerAndTheStep) {
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = 0.5;
  sctest::run(
      3,
      [&](scComm_t comm, int rank) {
        if (rank == 2) {
          syncWorld();
          return;
        }
        std::vector<float> x(3000, 1.0f);
        const scResult_t r = scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRing, comm, nullptr);
        const std::string msg = scGetLastError(comm);
        // The first rank to time out names its culprit; the other may learn of
        // that abort first and then relays its message.
        EXPECT_TRUE(r == scTimeout || (r == scRemoteError && has(msg, "aborted the communicator: timeout"))) << msg;
        EXPECT_TRUE(has(msg, "scAllReduce(count=3000, float, sum, ring) (call #1)")) << msg;
        EXPECT_TRUE(has(msg, "ring reduce-scatter step ") || has(msg, "ring allgather step ")) << msg;
        if (rank == 0 && r == scTimeout) {
          EXPECT_TRUE(has(msg, "ring reduce-scatter step 1/2")) << msg;
          EXPECT_TRUE(has(msg, "waiting for 3.9 KiB from rank 2")) << msg;
        }
        syncWorld();
      },
      &cfg);
}

// Recursive doubling on 3 ranks: the fold names itself.
TEST(Culprit, FoldNamesItself) {
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = 0.5;
  sctest::run(
      3,
      [&](scComm_t comm, int rank) {
        if (rank == 2) {
          syncWorld();
          return;
        }
        std::vector<float> x(16, 1.0f);
        const scResult_t r = scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRecDbl, comm, nullptr);
        const std::string msg = scGetLastError(comm);
        EXPECT_TRUE(r == scTimeout || (r == scRemoteError && has(msg, "aborted the communicator: timeout"))) << msg;
        EXPECT_TRUE(has(msg, "recdbl) (call #1)")) << msg;
        EXPECT_TRUE(has(msg, "rank 2") || has(msg, "rank 0") || has(msg, "rank 1")) << msg;
        syncWorld();
      },
      &cfg);
}

}  // namespace
