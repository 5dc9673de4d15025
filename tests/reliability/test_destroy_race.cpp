// scCommDestroy and scTopologyDestroy raced against every public call that
// takes the communicator or topology (collectives, queries, estimates,
// neighbour calls, stats, the last error, shrink, abort), and what a thread
// refused because another is inside a call sees. Each racing call must
// return success or a clean error code: a call that reads the freed object
// crashes, or ThreadSanitizer reports it (scripts/test runs this binary in
// its TSan build, halt_on_error=1).
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/harness.h"
#include "sparcoll/dsop.h"
#include "sparcoll/neighbor.h"
#include "sparcoll/sparse.h"

namespace {

using Clock = std::chrono::steady_clock;

bool has(const char* msg, const char* what) { return std::strstr(msg, what) != nullptr; }

// The clean outcomes of a call that races a destroy: done, or refused
// (scInvalidUsage: destroyed, held by the destroy, aborted; scInvalidArgument:
// a destroyed topology handle).
bool clean(scResult_t r) { return r == scSuccess || r == scInvalidUsage || r == scInvalidArgument; }

// A one-rank communicator and a topology on it with a self-loop: every call
// completes without a peer.
struct Objects {
  scComm_t comm = nullptr;
  scTopology_t topo = nullptr;
};

// Every public call that takes a communicator or a topology, on o (buffers
// of its own: calls run on the racing thread).
struct Call {
  const char* name;
  std::function<scResult_t(const Objects&)> run;
};

std::vector<Call> everyCall() {
  static float buf[64];
  static uint32_t idx[1] = {0};
  static float val[1] = {1}, dense[4];
  static float g[16];
  return {
      {"scAllReduce",
       [](const Objects& o) { return scAllReduce(buf, buf, 4, scFloat32, scSum, scAlgoAuto, o.comm, nullptr); }},
      {"scReduceScatter",
       [](const Objects& o) { return scReduceScatter(buf, buf, 4, scFloat32, scSum, scAlgoAuto, o.comm, nullptr); }},
      {"scAllGather",
       [](const Objects& o) { return scAllGather(buf, buf, 4, scFloat32, scAlgoAuto, o.comm, nullptr); }},
      {"scBroadcast", [](const Objects& o) { return scBroadcast(buf, 4, scFloat32, 0, scAlgoAuto, o.comm, nullptr); }},
      {"scBarrier", [](const Objects& o) { return scBarrier(o.comm, nullptr); }},
      {"scSparseAllReduce",
       [](const Objects& o) {
         return scSparseAllReduce(idx, val, 1, 4, scIndexU32, scFloat32, scSum, scSparseAuto, dense, o.comm, nullptr);
       }},
      {"scSparseAllReduceToSparse",
       [](const Objects& o) {
         scSparseResult_t res = nullptr;
         scResult_t r = scSparseResultCreate(o.comm, &res);
         if (r != scSuccess) return r;
         r = scSparseAllReduceToSparse(idx, val, 1, 4, scIndexU32, scFloat32, scSum, scSparseAuto, nullptr, res, o.comm,
                                       nullptr);
         scSparseResultDestroy(res);
         return r;
       }},
      {"scDsop",
       [](const Objects& o) { return scDsop(buf, 4, buf + 4, 4, g, scFloat32, scDsopAuto, o.comm, nullptr); }},
      {"scCommRank",
       [](const Objects& o) {
         int v;
         return scCommRank(o.comm, &v);
       }},
      {"scCommSize",
       [](const Objects& o) {
         int v;
         return scCommSize(o.comm, &v);
       }},
      {"scCommIsDevice",
       [](const Objects& o) {
         int v;
         return scCommIsDevice(o.comm, &v);
       }},
      {"scCommDevice",
       [](const Objects& o) {
         int v;
         return scCommDevice(o.comm, &v);
       }},
      {"scCommGetStats",
       [](const Objects& o) {
         scStats_t s;
         return scCommGetStats(o.comm, &s);
       }},
      {"scCommResetStats", [](const Objects& o) { return scCommResetStats(o.comm); }},
      {"scGetLastError",
       [](const Objects& o) {
         // Read the whole text: a pointer into a freed communicator shows here.
         volatile size_t n = std::strlen(scGetLastError(o.comm));
         (void)n;
         return scSuccess;
       }},
      {"scGetLastError(failed query)",
       [](const Objects& o) {
         const scResult_t r = scCommRank(o.comm, nullptr);  // scInvalidArgument, or refused
         volatile size_t n = std::strlen(scGetLastError(o.comm));
         (void)n;
         return r == scInvalidArgument ? scSuccess : r;
       }},
      {"scAllReduceAlgoFor",
       [](const Objects& o) {
         scAlgo_t a;
         return scAllReduceAlgoFor(o.comm, 1 << 20, &a);
       }},
      {"scEstimateTime",
       [](const Objects& o) {
         double s;
         return scEstimateTime(o.comm, scCollAllReduce, scAlgoAuto, 1000, scFloat32, 1, &s, nullptr);
       }},
      {"scSparseAlgoFor",
       [](const Objects& o) {
         size_t nnz = 1;
         scSparseAlgo_t a;
         return scSparseAlgoFor(o.comm, &nnz, 4, scIndexU32, scFloat32, nullptr, 1, &a);
       }},
      {"scDsopAlgoFor",
       [](const Objects& o) {
         scDsopAlgo_t a;
         return scDsopAlgoFor(o.comm, 4, 4, scFloat32, &a);
       }},
      {"scSparseResultCreate",
       [](const Objects& o) {
         scSparseResult_t res = nullptr;
         const scResult_t r = scSparseResultCreate(o.comm, &res);
         scSparseResultDestroy(res);
         return r;
       }},
      {"scCommAbort", [](const Objects& o) { return scCommAbort(o.comm); }},
      {"scCommShrink",
       [](const Objects& o) {
         scComm_t next = nullptr;
         const scResult_t r = scCommShrink(o.comm, nullptr, 0, &next);
         if (next) EXPECT_EQ(scCommDestroy(next), scSuccess) << scGetLastError(nullptr);
         return r;
       }},
      {"scTopologyCreate",
       [](const Objects& o) {
         const int self = 0;
         scTopology_t t = nullptr;
         const scResult_t r = scTopologyCreate(&t, o.comm, 1, &self, 1, &self);
         if (t) scTopologyDestroy(t);
         return r;
       }},
      {"scNeighborAllGather",
       [](const Objects& o) { return scNeighborAllGather(buf, 4, buf + 4, scFloat32, scNbrAuto, o.topo, nullptr); }},
      {"scNeighborAllGatherV",
       [](const Objects& o) {
         const size_t counts[1] = {4}, displs[1] = {0};
         return scNeighborAllGatherV(buf, 4, buf + 4, counts, displs, scFloat32, scNbrAuto, o.topo, nullptr);
       }},
      {"scTopologyDegrees",
       [](const Objects& o) {
         int i, j;
         return scTopologyDegrees(o.topo, &i, &j);
       }},
      {"scTopologyFriendGroup",
       [](const Objects& o) {
         int k, th, n;
         return scTopologyFriendGroup(o.topo, &k, &th, &n, nullptr);
       }},
      {"scTopologyCostTerms",
       [](const Objects& o) {
         scNbrCostTerms_t t;
         return scTopologyCostTerms(o.topo, scNbrNaive, &t);
       }},
      {"scNeighborAlgoFor",
       [](const Objects& o) {
         scNbrAlgo_t a;
         return scNeighborAlgoFor(o.topo, 1024, &a);
       }},
      {"scTopologyEstimateTime",
       [](const Objects& o) {
         double s;
         return scTopologyEstimateTime(o.topo, 1024, scNbrAuto, &s, nullptr);
       }},
  };
}

Objects make() {
  scConfig_t cfg = sctest::testConfig();
  Objects o;
  EXPECT_EQ(scCommInitLocal(&o.comm, 1, nullptr, &cfg), scSuccess) << scGetLastError(nullptr);
  const int self = 0;
  EXPECT_EQ(scTopologyCreate(&o.topo, o.comm, 1, &self, 1, &self), scSuccess) << scGetLastError(o.comm);
  return o;
}

// One thread runs `call` in a loop while this one destroys (destroy()
// returns true once done; it may be refused while the call is inside).
// Returns the number of calls that succeeded.
long race(const Call& call, const Objects& o, const std::function<bool()>& destroy) {
  std::atomic<bool> started{false}, gone{false};
  std::atomic<long> ok{0};
  std::thread caller([&] {
    for (int after = 0; after < 3;) {  // a few calls after the destroy too
      if (gone.load()) ++after;
      const scResult_t r = call.run(o);
      EXPECT_TRUE(clean(r)) << call.name << ": " << scGetErrorString(r) << ": " << scGetLastError(nullptr);
      if (r == scSuccess) ++ok;
      started = true;
    }
  });
  while (!started.load()) std::this_thread::yield();
  bool done = false;
  for (int i = 0; i < 1000000 && !done; ++i) {
    done = destroy();
    if (!done) std::this_thread::yield();
  }
  gone = true;
  caller.join();
  EXPECT_TRUE(done) << call.name << ": the destroy was refused every time: " << scGetLastError(nullptr);
  return ok.load();
}

// A destroy refused because a call is inside names it; anything else fails the test.
bool destroyed(scResult_t r, const char* what) {
  if (r == scSuccess) return true;
  EXPECT_EQ(r, scInvalidUsage) << what;
  EXPECT_TRUE(has(scGetLastError(nullptr), "another thread")) << what << ": " << scGetLastError(nullptr);
  return false;
}

// Each call for about its share of the time budget, a fresh communicator
// per round (round returns the calls that succeeded: some must, or the race
// proved nothing).
template <class F>
void forEachCall(F&& round) {
  const auto perCall = std::chrono::milliseconds(60);
  for (const Call& c : everyCall()) {
    SCOPED_TRACE(c.name);
    const auto t0 = Clock::now();
    long ok = 0;
    for (int i = 0; i < 200 && (i < 3 || Clock::now() - t0 < perCall); ++i) ok += round(c);
    EXPECT_GT(ok, 0) << c.name << " never succeeded before the destroy";
  }
}

TEST(DestroyRace, CommDestroyAgainstEveryCall) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport only";
  forEachCall([](const Call& c) {
    Objects o = make();
    const long ok = race(c, o, [&] { return destroyed(scCommDestroy(o.comm), "scCommDestroy"); });
    // The topology outlived its communicator: refused, then destroyed cleanly.
    int in = -1, out = -1;
    EXPECT_NE(scTopologyDegrees(o.topo, &in, &out), scSuccess);
    EXPECT_EQ(scTopologyDestroy(o.topo), scSuccess) << scGetLastError(nullptr);
    return ok;
  });
}

TEST(DestroyRace, TopologyDestroyAgainstEveryCall) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport only";
  forEachCall([](const Call& c) {
    Objects o = make();
    const long ok = race(c, o, [&] { return destroyed(scTopologyDestroy(o.topo), "scTopologyDestroy"); });
    EXPECT_EQ(scTopologyDestroy(o.topo), scInvalidArgument) << "destroyed twice";
    EXPECT_EQ(scCommDestroy(o.comm), scSuccess) << scGetLastError(nullptr);
    return ok;
  });
}

// Two-rank set-up: rank 0's first thread is inside a call that waits for
// rank 1 while a second thread uses rank 0's communicator.
struct Blocked {
  scComm_t comms[2] = {nullptr, nullptr};
  scTopology_t topos[2] = {nullptr, nullptr};
  Blocked() {
    scConfig_t cfg = sctest::testConfig();
    cfg.timeoutSeconds = 20;
    EXPECT_EQ(scCommInitLocal(comms, 2, nullptr, &cfg), scSuccess) << scGetLastError(nullptr);
    std::thread other([&] {
      const int peer = 0;
      EXPECT_EQ(scTopologyCreate(&topos[1], comms[1], 1, &peer, 1, &peer), scSuccess) << scGetLastError(comms[1]);
    });
    const int peer = 1;
    EXPECT_EQ(scTopologyCreate(&topos[0], comms[0], 1, &peer, 1, &peer), scSuccess) << scGetLastError(comms[0]);
    other.join();
  }
  ~Blocked() {
    for (auto t : topos) EXPECT_EQ(scTopologyDestroy(t), scSuccess) << scGetLastError(nullptr);
    for (auto c : comms) EXPECT_EQ(scCommDestroy(c), scSuccess) << scGetLastError(nullptr);
  }
};

// Queries run beside another thread's collective; destroys wait for them,
// and are refused (naming the call in flight) while a collective is inside.
TEST(DestroyRace, QueriesBesideACollectiveAndDestroyNamesIt) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport only";
  Blocked b;
  float send[2] = {1, 2}, recv[2] = {0, 0};
  std::atomic<int> first{-1};
  std::thread t([&] { first = scNeighborAllGather(send, 2, recv, scFloat32, scNbrNaive, b.topos[0], nullptr); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // t waits for rank 1 by now
  int rank = -1, size = -1, in = -1, out = -1;
  scAlgo_t algo;
  double s = 0;
  EXPECT_EQ(scCommRank(b.comms[0], &rank), scSuccess) << scGetLastError(b.comms[0]);
  EXPECT_EQ(scCommSize(b.comms[0], &size), scSuccess) << scGetLastError(b.comms[0]);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(size, 2);
  EXPECT_EQ(scAllReduceAlgoFor(b.comms[0], 1000, &algo), scSuccess) << scGetLastError(b.comms[0]);
  EXPECT_EQ(scEstimateTime(b.comms[0], scCollAllReduce, scAlgoAuto, 1000, scFloat32, 1, &s, nullptr), scSuccess)
      << scGetLastError(b.comms[0]);
  EXPECT_EQ(scTopologyDegrees(b.topos[0], &in, &out), scSuccess) << scGetLastError(nullptr);
  EXPECT_EQ(in, 1);
  EXPECT_EQ(scCommDestroy(b.comms[0]), scInvalidUsage);
  EXPECT_TRUE(has(scGetLastError(nullptr), "scNeighborAllGather")) << scGetLastError(nullptr);
  EXPECT_EQ(scTopologyDestroy(b.topos[0]), scInvalidUsage);
  EXPECT_TRUE(has(scGetLastError(nullptr), "scNeighborAllGather")) << scGetLastError(nullptr);
  EXPECT_EQ(scNeighborAllGather(send, 2, recv, scFloat32, scNbrNaive, b.topos[1], nullptr), scSuccess)
      << scGetLastError(b.comms[1]);
  t.join();
  EXPECT_EQ(first.load(), scSuccess) << scGetLastError(b.comms[0]);
}

// A collective refused because another thread is inside one: the refused
// thread's scGetLastError(comm) is the refusal, naming both calls, and the
// communicator's own last error (the other thread's) is not shown to it, nor
// the refusal to others.
TEST(DestroyRace, RefusedThreadSeesItsRefusal) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport only";
  Blocked b;
  float x = 1;
  // The communicator's last error: an earlier failed call of this thread.
  ASSERT_EQ(scAllReduce(&x, &x, 1, scFloat32, scSum, scAlgo_t(99), b.comms[0], nullptr), scInvalidArgument);
  const std::string before = scGetLastError(b.comms[0]);
  std::atomic<int> first{-1};
  std::thread t([&] { first = scBarrier(b.comms[0], nullptr); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::string refusal;
  std::thread second([&] {
    EXPECT_EQ(scAllReduce(&x, &x, 1, scFloat32, scSum, scAlgoRing, b.comms[0], nullptr), scInvalidUsage);
    refusal = scGetLastError(b.comms[0]);
    EXPECT_EQ(refusal, scGetLastError(nullptr));
  });
  second.join();
  EXPECT_TRUE(has(refusal.c_str(), "scAllReduce")) << refusal;
  EXPECT_TRUE(has(refusal.c_str(), "scBarrier")) << refusal << ": names the call inside";
  EXPECT_TRUE(has(refusal.c_str(), "another thread")) << refusal;
  EXPECT_TRUE(has(refusal.c_str(), ".cpp:")) << refusal << ": file:line";
  EXPECT_EQ(before, scGetLastError(b.comms[0])) << "the refusal is the refused thread's alone";
  EXPECT_EQ(scBarrier(b.comms[1], nullptr), scSuccess) << scGetLastError(b.comms[1]);
  t.join();
  EXPECT_EQ(first.load(), scSuccess) << scGetLastError(b.comms[0]);
}

}  // namespace
