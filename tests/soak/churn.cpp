// Churn (issue 15): creating and destroying 10,000 communicators, and 10,000
// neighbour topologies on one communicator, with a few calls on some of them,
// must leave the process as it was: no descriptor more, no steady growth of
// memory. Readings are taken after a warm-up (allocator arenas, thread stacks
// and the transport's first-use state exist by then) and at the end.
//
// Bounds. Descriptors: exactly equal. Heap bytes in use (glibc mallinfo2,
// the precise measure): at most 64 KiB more over the 9,800 measured
// iterations, i.e. under 7 bytes per communicator or topology -- any real leak
// of a handle (hundreds of bytes or more) is far above it, while allocator
// caches of a few freed chunks stay below. RSS, which also moves with page
// reuse and fragmentation, at most 2 MiB more (a leak of ~200 bytes per
// iteration would exceed it). Under AddressSanitizer freed memory sits in its
// quarantine, so RSS is not checked there (LeakSanitizer checks at exit).
// SPARCOLL_CHURN_N overrides the 10,000.
#include <cstdlib>
#include <thread>
#include <vector>

#include "common/harness.h"
#include "proc_stats.h"

#ifdef SPARCOLL_TEST_MPI
#include <mpi.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define CHURN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHURN_ASAN 1
#endif
#endif

namespace {

constexpr int kWarm = 200;

int iterations() {
  const char* e = std::getenv("SPARCOLL_CHURN_N");
  return e ? std::max(kWarm + 1, std::atoi(e)) : 10000;
}

struct Reading {
  long rss;
  int fds;
  long long heap;
};

Reading reading() { return {soak::rssKiB(), soak::openFds(), soak::heapInUse()}; }

void expectNoGrowth(const char* what, int n, const Reading& a, const Reading& b) {
  std::printf("churn: %s n=%d rss_kib %ld -> %ld fds %d -> %d heap_bytes %lld -> %lld\n", what, n, a.rss, b.rss, a.fds,
              b.fds, a.heap, b.heap);
  std::fflush(stdout);
  EXPECT_EQ(b.fds, a.fds) << what << ": descriptors leaked";
#ifndef CHURN_ASAN
  EXPECT_LE(b.rss - a.rss, 2048) << what << ": resident memory grew by " << b.rss - a.rss << " KiB";
#endif
  if (a.heap > 0 && b.heap > 0) {
    EXPECT_LE(b.heap - a.heap, 64 << 10) << what << ": heap in use grew by " << b.heap - a.heap << " bytes";
  }
}

// A small checked allreduce on every rank of a communicator.
void smallAllReduce(scComm_t comm, int P) {
  int32_t v[3] = {1, 2, 3};
  EXPECT_EQ(scAllReduce(v, v, 3, scInt32, scSum, scAlgoAuto, comm, nullptr), scSuccess) << scGetLastError(comm);
  EXPECT_EQ(v[2], 3 * P);
}

// The ring with both directions and a self-loop, shifted by i so that
// successive topologies differ.
void ringEdges(int P, int rank, int i, std::vector<int>* src, std::vector<int>* dst) {
  const int s = 1 + i % (P > 1 ? P - 1 : 1);
  *dst = {(rank + s) % P, (rank + P - s) % P, rank};
  *src = {(rank + P - s) % P, (rank + s) % P, rank};
}

// Every rank: kN topologies on `comm`, a neighbour allgather on every 100th.
// Rank 0 takes the readings between two barriers, so no rank is mid-creation.
void topologyChurn(scComm_t comm, int rank, int P, int n, Reading* warm, Reading* end) {
  for (int i = 0; i < n; ++i) {
    if (i == kWarm || i == n - 1) {
      EXPECT_EQ(scBarrier(comm, nullptr), scSuccess);
      if (rank == 0 || sctest::mode() == sctest::Mode::Mpi) *(i == kWarm ? warm : end) = reading();
      EXPECT_EQ(scBarrier(comm, nullptr), scSuccess);
    }
    std::vector<int> src, dst;
    ringEdges(P, rank, i, &src, &dst);
    scTopology_t t = nullptr;
    const scResult_t r = scTopologyCreate(&t, comm, int(src.size()), src.data(), int(dst.size()), dst.data());
    ASSERT_EQ(r, scSuccess) << "topology " << i << ": " << scGetLastError(comm);
    if (i % 100 == 7) {
      const double mine = rank;
      double got[3] = {-1, -1, -1};
      EXPECT_EQ(scNeighborAllGather(&mine, 1, got, scFloat64, scNbrAlgo_t(i / 100 % scNumNbrAlgos), t, nullptr),
                scSuccess)
          << scGetLastError(comm);
      for (int e = 0; e < 3; ++e) EXPECT_EQ(got[e], double(src[size_t(e)]));
    }
    ASSERT_EQ(scTopologyDestroy(t), scSuccess);
  }
}

}  // namespace

TEST(Churn, Communicators) {
  const int n = iterations();
  scConfig_t cfg = sctest::testConfig();
  Reading warm{}, end{};
  for (int i = 0; i < n; ++i) {
    if (i == kWarm) warm = reading();
    const bool call = i % 100 == 3;  // a few calls on some of them
    if (sctest::mode() == sctest::Mode::Mpi) {
      scComm_t c = nullptr;
      ASSERT_EQ(scCommInitMpi(&c, nullptr, &cfg), scSuccess) << "communicator " << i << ": " << scGetLastError(nullptr);
      if (call) smallAllReduce(c, sctest::mpiWorldSize());
      ASSERT_EQ(scCommDestroy(c), scSuccess);
      continue;
    }
    const int P = 1 + i % 4;
    std::vector<scComm_t> comms(size_t(P), nullptr);
    ASSERT_EQ(scCommInitLocal(comms.data(), P, nullptr, &cfg), scSuccess)
        << "communicator " << i << ": " << scGetLastError(nullptr);
    if (call) {
      std::vector<std::thread> th;
      for (int r = 0; r < P; ++r)
        th.emplace_back([&, r] {
          smallAllReduce(comms[size_t(r)], P);
          EXPECT_EQ(scBarrier(comms[size_t(r)], nullptr), scSuccess);
        });
      for (auto& t : th) t.join();
    }
    for (auto c : comms) ASSERT_EQ(scCommDestroy(c), scSuccess);
  }
  end = reading();
  expectNoGrowth(sctest::mode() == sctest::Mode::Mpi ? "mpi communicators" : "local communicators (P 1..4)", n - kWarm,
                 warm, end);
}

TEST(Churn, Topologies) {
  const int n = iterations();
  const int P = sctest::mode() == sctest::Mode::Mpi ? sctest::mpiWorldSize() : 4;
  Reading warm{}, end{};
  sctest::run(P, [&](scComm_t comm, int rank) { topologyChurn(comm, rank, P, n, &warm, &end); });
  expectNoGrowth("topologies", n - kWarm, warm, end);
}
