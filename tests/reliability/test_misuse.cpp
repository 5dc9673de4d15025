// Misuse of handles: a destroyed communicator, a double destroy, two threads
// in one communicator, and a communicator's cost in memory. Each must give
// scInvalidUsage (or stay bounded), never a crash.
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/harness.h"

#ifdef SPARCOLL_TEST_MPI
#include <mpi.h>
#endif

namespace {

bool mentions(const char* msg, const char* what) { return std::string(msg).find(what) != std::string::npos; }

// Resident set size of this process, in KiB (Linux).
long rssKiB() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

TEST(Misuse, UseAfterDestroyAndDoubleDestroy) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport only";
  scConfig_t cfg = sctest::testConfig();
  std::vector<scComm_t> comms(2);
  ASSERT_EQ(scCommInitLocal(comms.data(), 2, nullptr, &cfg), scSuccess);
  scComm_t dead = comms[0];
  ASSERT_EQ(scCommDestroy(dead), scSuccess);
  float x = 1;
  // Every kind of entry point refuses the dead handle without reading it.
  EXPECT_EQ(scAllReduce(&x, &x, 1, scFloat32, scSum, scAlgoRing, dead, nullptr), scInvalidUsage);
  EXPECT_TRUE(mentions(scGetLastError(nullptr), "destroyed")) << scGetLastError(nullptr);
  EXPECT_TRUE(mentions(scGetLastError(dead), "destroyed")) << "a dead handle's error is the thread's";
  int rank = -1;
  EXPECT_EQ(scCommRank(dead, &rank), scInvalidUsage);
  EXPECT_EQ(scBarrier(dead, nullptr), scInvalidUsage);
  EXPECT_EQ(scCommDestroy(dead), scInvalidUsage);
  EXPECT_TRUE(mentions(scGetLastError(nullptr), "destroyed")) << scGetLastError(nullptr);
  // A pointer that was never a communicator.
  int junk = 0;
  EXPECT_EQ(scCommDestroy(reinterpret_cast<scComm_t>(&junk)), scInvalidUsage);
  EXPECT_EQ(scCommDestroy(comms[1]), scSuccess);

  // A handle this thread has just used successfully (a call, a query) is
  // refused once destroyed, as is one that never made a call.
  scComm_t one = nullptr;
  ASSERT_EQ(scCommInitLocal(&one, 1, nullptr, &cfg), scSuccess);
  ASSERT_EQ(scAllReduce(&x, &x, 1, scFloat32, scSum, scAlgoRing, one, nullptr), scSuccess) << scGetLastError(one);
  ASSERT_EQ(scCommRank(one, &rank), scSuccess);
  ASSERT_EQ(scCommDestroy(one), scSuccess);
  EXPECT_EQ(scAllReduce(&x, &x, 1, scFloat32, scSum, scAlgoRing, one, nullptr), scInvalidUsage);
  EXPECT_TRUE(mentions(scGetLastError(nullptr), "destroyed")) << scGetLastError(nullptr);
  EXPECT_EQ(scCommRank(one, &rank), scInvalidUsage);
  EXPECT_EQ(scCommDestroy(one), scInvalidUsage);
}

// One thread calls in a loop while another destroys the communicator: each
// call succeeds or is refused (never a read of the freed communicator, which
// the sanitizer build would report), the destroy succeeds once no call is
// inside, and a communicator made afterwards (maybe at the same address) is
// entered normally by the thread that knew the dead one.
TEST(Misuse, DestroyWhileAnotherThreadCallsInALoop) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport only";
  scConfig_t cfg = sctest::testConfig();
  for (int trial = 0; trial < 20; ++trial) {
    scComm_t comm = nullptr;
    ASSERT_EQ(scCommInitLocal(&comm, 1, nullptr, &cfg), scSuccess);
    std::atomic<bool> started{false};
    std::atomic<long> ok{0}, refused{0}, other{0};
    std::thread caller([&] {
      float x = 1;
      for (;;) {
        const scResult_t r = scAllReduce(&x, &x, 1, scFloat32, scSum, scAlgoRing, comm, nullptr);
        started = true;
        if (r == scSuccess) ++ok;
        else if (r == scInvalidUsage && mentions(scGetLastError(nullptr), "destroyed")) return void(++refused);
        else if (r == scInvalidUsage) ++other;  // the destroy holds it at this moment
        else return void(++other);
      }
    });
    while (!started) std::this_thread::yield();
    scResult_t d = scInvalidUsage;
    for (int i = 0; i < 100000 && d != scSuccess; ++i) {
      d = scCommDestroy(comm);
      if (d != scSuccess) {
        EXPECT_TRUE(mentions(scGetLastError(nullptr), "another thread is inside")) << scGetLastError(nullptr);
        std::this_thread::yield();
      }
    }
    caller.join();
    ASSERT_EQ(d, scSuccess) << scGetLastError(nullptr);
    EXPECT_GT(ok.load(), 0);
    EXPECT_EQ(refused.load(), 1);
    scComm_t next = nullptr;
    ASSERT_EQ(scCommInitLocal(&next, 1, nullptr, &cfg), scSuccess);
    float y = 2;
    std::thread again([&] {
      EXPECT_EQ(scAllReduce(&y, &y, 1, scFloat32, scSum, scAlgoRing, next, nullptr), scSuccess) << scGetLastError(next);
    });
    again.join();
    EXPECT_EQ(scAllReduce(&y, &y, 1, scFloat32, scSum, scAlgoRing, next, nullptr), scSuccess) << scGetLastError(next);
    EXPECT_EQ(scCommDestroy(next), scSuccess);
  }
}

// Two threads call into one communicator at once: one of them gets
// scInvalidUsage naming the misuse; the other's call is unharmed.
TEST(Misuse, TwoThreadsOnOneCommunicator) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport only";
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = 10;
  std::vector<scComm_t> comms(2);
  ASSERT_EQ(scCommInitLocal(comms.data(), 2, nullptr, &cfg), scSuccess);
  // Rank 0's first thread enters a barrier that waits for rank 1; meanwhile
  // a second thread calls into rank 0's communicator.
  std::atomic<int> first{-1};
  std::thread t([&] { first = scBarrier(comms[0], nullptr); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // t is inside its barrier by now
  float x = 1;
  const scResult_t second = scAllReduce(&x, &x, 1, scFloat32, scSum, scAlgoRing, comms[0], nullptr);
  const std::string msg = scGetLastError(nullptr);
  EXPECT_EQ(second, scInvalidUsage) << msg;
  EXPECT_TRUE(mentions(msg.c_str(), "another thread")) << msg;
  EXPECT_EQ(scCommDestroy(comms[0]), scInvalidUsage) << "destroyed while a call is inside";
  EXPECT_EQ(scBarrier(comms[1], nullptr), scSuccess) << scGetLastError(comms[1]);
  t.join();
  EXPECT_EQ(first.load(), scSuccess) << scGetLastError(comms[0]);
  for (auto c : comms) EXPECT_EQ(scCommDestroy(c), scSuccess);
}

// SPARCOLL_MEMBARRIER takes 0/off or 1/on; anything else is refused at
// creation, naming the variable (core/entry.h).
TEST(Misuse, BadMembarrierSettingIsRefused) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport only";
  scComm_t comms[2];
  {
    sctest::ScopedEnv bad("SPARCOLL_MEMBARRIER", "maybe");
    EXPECT_EQ(scCommInitLocal(comms, 2, nullptr, nullptr), scInvalidArgument);
    EXPECT_TRUE(mentions(scGetLastError(nullptr), "SPARCOLL_MEMBARRIER='maybe'")) << scGetLastError(nullptr);
  }
  for (const char* good : {"0", "off", "1", "on"}) {
    sctest::ScopedEnv env("SPARCOLL_MEMBARRIER", good);
    ASSERT_EQ(scCommInitLocal(comms, 2, nullptr, nullptr), scSuccess) << good << ": " << scGetLastError(nullptr);
    for (scComm_t c : comms) EXPECT_EQ(scCommDestroy(c), scSuccess);
  }
}

// The local transport's memory grows with the pairs that talk, not with P².
TEST(Misuse, LocalCommunicatorMemoryIsNotQuadratic) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport only";
  const int P = 4096;
  const long before = rssKiB();
  std::vector<scComm_t> comms(P);
  ASSERT_EQ(scCommInitLocal(comms.data(), P, nullptr, nullptr), scSuccess) << scGetLastError(nullptr);
  const long grew = rssKiB() - before;
  for (auto c : comms) scCommDestroy(c);
  // About 5 KiB per rank; a P x P table of queues alone took 11 GB.
  EXPECT_LT(grew, 64L * 1024) << "P = " << P << " local communicators took " << grew << " KiB";
}

#ifdef SPARCOLL_TEST_MPI
TEST(Misuse, MpiCommNull) {
  MPI_Comm null = MPI_COMM_NULL;
  scComm_t comm = nullptr;
  EXPECT_EQ(scCommInitMpi(&comm, &null, nullptr), scInvalidArgument);
  EXPECT_TRUE(mentions(scGetLastError(nullptr), "MPI_COMM_NULL")) << scGetLastError(nullptr);
  EXPECT_EQ(comm, nullptr);
}

// A communicator that timed out frees its MPI communicator when destroyed:
// memory stays flat over many.
TEST(Misuse, TimedOutCommunicatorsDoNotLeak) {
  const int rounds = 300;
  sctest::ScopedEnv machines("SPARCOLL_MACHINES", "1");  // no machine count under the short deadline
  long start = 0;
  for (int i = 0; i < rounds; ++i) {
    if (i == 50) start = rssKiB();
    scConfig_t cfg = sctest::testConfig();
    cfg.timeoutSeconds = 0.002;
    scComm_t comm = nullptr;
    ASSERT_EQ(scCommInitMpi(&comm, nullptr, &cfg), scSuccess) << scGetLastError(nullptr);
    int rank = 0;
    scCommRank(comm, &rank);
    float x[4] = {};
    // Rank 0 waits for rank 1's message, which never comes.
    if (rank == 0) EXPECT_EQ(scAllReduce(x, x, 4, scFloat32, scSum, scAlgoRing, comm, nullptr), scTimeout);
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_EQ(scCommDestroy(comm), scSuccess);
  }
  const long grew = rssKiB() - start;
  // About 10 KiB each when the duplicate was never freed: 2.5 MiB here.
  EXPECT_LT(grew, 1024) << (rounds - 50) << " timed-out communicators grew the process by " << grew << " KiB";
}
#endif

}  // namespace
