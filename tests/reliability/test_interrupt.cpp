// scCommInterrupt and the interrupt check (sparcoll.h): a blocked call ends
// with scInterrupted within about 100 ms plus a poll, the communicator is
// aborted, and the peers waiting on the interrupted rank fail with
// scRemoteError naming it within about a second, long before their deadline.
#include <atomic>
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

constexpr double kDeadline = 60;

thread_local bool tlsWatched = false;  // the interrupt check below answers for rank 0's thread only

// Rank 0 waits in an allreduce that rank 1 joins only after rank 0 was
// interrupted (by `interrupt`, from another thread), then rank 1's call
// learns of it.
template <typename Interrupt>
void interruptRankZero(Interrupt interrupt, const char* expectRank0) {
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = kDeadline;
  sctest::run(
      2,
      [&](scComm_t comm, int rank) {
        tlsWatched = rank == 0;
        std::vector<float> x(3000, 1.0f);
        const auto t0 = std::chrono::steady_clock::now();
        if (rank == 0) {
          std::thread other([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            interrupt(comm);
          });
          const scResult_t r = scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRing, comm, nullptr);
          other.join();
          const std::string msg = scGetLastError(comm);
          EXPECT_EQ(r, scInterrupted) << msg;
          EXPECT_TRUE(has(msg, expectRank0)) << msg;
          EXPECT_LT(since(t0), 1.3) << "the interrupt took longer than its period to end the wait";
          // Aborted: a later call fails at once and names the interrupt.
          EXPECT_EQ(scBarrier(comm, nullptr), scInvalidUsage);
          EXPECT_TRUE(has(scGetLastError(comm), "interrupted")) << scGetLastError(comm);
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // after rank 0's interrupt
          const scResult_t r = scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRing, comm, nullptr);
          const std::string msg = scGetLastError(comm);
          EXPECT_EQ(r, scRemoteError) << msg;
          EXPECT_TRUE(has(msg, "rank 0")) << msg;
          EXPECT_TRUE(has(msg, "interrupted")) << msg;
          EXPECT_LT(since(t0), 1500e-3 + 3.0)
              << "the peer waited for its deadline instead of learning of the interrupt";
        }
        tlsWatched = false;
        syncWorld();
      },
      &cfg);
}

TEST(Interrupt, FromAnotherThreadEndsABlockedCall) {
  interruptRankZero([](scComm_t c) { EXPECT_EQ(scCommInterrupt(c), scSuccess); },
                    "rank 0 was interrupted (scCommInterrupt");
}

std::atomic<int> gChecks{0};
std::atomic<bool> gStop{false};
int stopWhenAsked(void*) {
  if (!tlsWatched) return 0;
  gChecks.fetch_add(1);
  return gStop.load() ? 1 : 0;
}
// Whether rank 0 ran in this process (every rank under mpirun runs the test).
bool hasRankZero() { return sctest::mode() == sctest::Mode::Local || sctest::mpiWorldRank() == 0; }

TEST(Interrupt, TheInterruptCheckEndsABlockedCall) {
  gChecks = 0;
  gStop = false;
  ASSERT_EQ(scSetInterruptCheck(&stopWhenAsked, nullptr), scSuccess);
  interruptRankZero([](scComm_t) { gStop = true; }, "in call #1");
  // Rank 0's thread asks for the stop; the check runs about every 100 ms.
  if (hasRankZero()) EXPECT_GE(gChecks.load(), 1);
  ASSERT_EQ(scSetInterruptCheck(nullptr, nullptr), scSuccess);
}

TEST(Interrupt, ACheckThatSaysGoOnLetsTheCallFinish) {
  gChecks = 0;
  gStop = false;
  ASSERT_EQ(scSetInterruptCheck(&stopWhenAsked, nullptr), scSuccess);
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = kDeadline;
  sctest::run(
      2,
      [&](scComm_t comm, int rank) {
        tlsWatched = rank == 0;
        std::vector<float> x(3000, 1.0f);
        if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(600));
        ASSERT_EQ(scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRing, comm, nullptr), scSuccess)
            << scGetLastError(comm);
        EXPECT_EQ(x[0], 2.0f);
        tlsWatched = false;
        syncWorld();
      },
      &cfg);
  if (hasRankZero()) {
    EXPECT_GE(gChecks.load(), 2) << "the check did not run while rank 0 waited 600 ms";
    EXPECT_LE(gChecks.load(), 8) << "the check ran more often than every 100 ms";
  }
  ASSERT_EQ(scSetInterruptCheck(nullptr, nullptr), scSuccess);
}

// An interrupt between calls: the next call fails at once (no wait for a
// deadline), and so does every later one.
TEST(Interrupt, BeforeACallFailsItAtOnce) {
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = kDeadline;
  sctest::run(
      2,
      [&](scComm_t comm, int rank) {
        float x = 1;
        ASSERT_EQ(scAllReduce(&x, &x, 1, scFloat32, scSum, scAlgoRing, comm, nullptr), scSuccess);
        if (rank == 0) {
          ASSERT_EQ(scCommInterrupt(comm), scSuccess);
          const auto t0 = std::chrono::steady_clock::now();
          EXPECT_EQ(scAllReduce(&x, &x, 1, scFloat32, scSum, scAlgoRing, comm, nullptr), scInterrupted);
          EXPECT_TRUE(has(scGetLastError(comm), "before this call")) << scGetLastError(comm);
          EXPECT_LT(since(t0), 0.5);
          EXPECT_EQ(scAllReduce(&x, &x, 1, scFloat32, scSum, scAlgoRing, comm, nullptr), scInvalidUsage);
        } else {
          EXPECT_EQ(scAllReduce(&x, &x, 1, scFloat32, scSum, scAlgoRing, comm, nullptr), scRemoteError)
              << scGetLastError(comm);
        }
        syncWorld();
      },
      &cfg);
  EXPECT_EQ(scCommInterrupt(nullptr), scInvalidArgument);
}

}  // namespace
