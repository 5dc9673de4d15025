// Point-to-point messages whose sizes disagree, with nothing in the call's
// signature to tell (a neighbour allgatherv: counts are per rank). Rank 0
// sends a block of one size; its receivers expect another. The sizes lie on
// both sides of the MPI transport's limits: its shared-memory queues' (16 KiB,
// or 32 KiB without single copy where ranks outnumber cores, in fragments of
// 4 KiB) and its staging limit (4 KiB: smaller messages are received into
// posted staging slots, larger ones through matched probes), so each pairing
// is covered: both in the queues (in one fragment or several), both staged,
// one of each (the two kinds travel under different tags, or one in a queue
// and one through MPI), and both probe-matched. Every receiver of rank 0's block
// must fail naming rank 0, within the deadline; no rank may return scSuccess
// with wrong data, now or in the matched call that follows.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdio>
#include <string>
#include <vector>

#include "common/harness.h"
#include "reliability/reliability_util.h"
#include "sparcoll/neighbor.h"

namespace {

constexpr double kDeadline = 0.5;

float input(int r, size_t i) { return float((r + 1) * 1000 + int(i % 997)); }

// Every rank sends its block to every other rank and gets theirs in rank
// order. Rank 0 sends `mine0` floats, the others `want`; all expect `want`.
scResult_t allgatherv(scTopology_t topo, int P, int rank, size_t mine0, size_t want, std::vector<float>& out) {
  const size_t mine = rank == 0 ? mine0 : want;
  std::vector<float> in(mine);
  for (size_t i = 0; i < mine; ++i) in[i] = input(rank, i);
  std::vector<size_t> counts, displs;
  for (int q = 0; q < P; ++q)
    if (q != rank) {
      displs.push_back(counts.size() * want);
      counts.push_back(want);
    }
  out.assign(counts.size() * want, -1.0f);
  return scNeighborAllGatherV(in.data(), mine, out.data(), counts.data(), displs.data(), scFloat32, scNbrNaive, topo,
                              nullptr);
}

std::vector<float> expected(int P, int rank, size_t want) {
  std::vector<float> out;
  for (int q = 0; q < P; ++q)
    if (q != rank)
      for (size_t i = 0; i < want; ++i) out.push_back(input(q, i));
  return out;
}

// Holds every rank until all have arrived (threads in local mode, MPI ranks
// otherwise).
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  int arrived = 0;
  void pass(int P) {
    if (sctest::mode() == sctest::Mode::Mpi) return reltest::syncWorld();
    std::unique_lock<std::mutex> lk(m);
    if (++arrived == P) cv.notify_all();
    cv.wait(lk, [&] { return arrived >= P; });
  }
};

TEST(MismatchBlocks, NeighborBlockSizesDiffer) {
  // Floats: 8 B against 16 B (one fragment or staged, both), 1 KiB against
  // 16 KiB (one of each, or fragments of both), 8 KiB against 16 KiB, 16 KiB
  // against 64 KiB (queue against MPI where ranks outnumber cores), 64 KiB
  // against 128 KiB (probe-matched both); rank 0 sends more, then less.
  const std::pair<size_t, size_t> kCases[] = {{4, 2},         {2, 4},        {4096, 256},   {256, 4096},
                                              {4096, 2048},   {2048, 4096},  {16384, 4096}, {4096, 16384},
                                              {32768, 16384}, {16384, 32768}};
  for (int P : {2, 3, 4})
    for (const auto& [mine0, want] : kCases) {
      scConfig_t cfg = sctest::testConfig();
      cfg.timeoutSeconds = kDeadline;
      cfg.check = scCheckOff;
      Gate created;
      sctest::run(
          P,
          [&](scComm_t comm, int rank) {
            SCOPED_TRACE("P=" + std::to_string(P) + ": rank 0 sends " + std::to_string(mine0) + " floats, the others " +
                         std::to_string(want) + "; rank " + std::to_string(rank));
            std::vector<int> others;
            for (int q = 0; q < P; ++q)
              if (q != rank) others.push_back(q);
            scTopology_t topo = nullptr;
            ASSERT_EQ(scTopologyCreate(&topo, comm, int(others.size()), others.data(), int(others.size()),
                                       others.data()),
                      scSuccess)
                << scGetLastError(comm);
            // A receiver fails fast and aborts the communicator: no rank may still be creating the topology then.
            created.pass(P);
            std::vector<float> out;
            auto t0 = std::chrono::steady_clock::now();
            scResult_t r = allgatherv(topo, P, rank, mine0, want, out);
            EXPECT_LT(reltest::since(t0), kDeadline + 3) << "the mismatched call took far past its deadline";
            const std::string msg = r == scSuccess ? std::string() : scGetLastError(comm);
            std::printf("mismatch-blocks P=%d rank0 %zu floats, others %zu | transport %s | rank %d returned %s: %s\n",
                        P, mine0, want, sctest::modeName(), rank, scGetErrorString(r), msg.c_str());
            if (rank != 0) {
              EXPECT_TRUE(r == scRemoteError || r == scTimeout) << scGetErrorString(r) << ": " << msg;
              EXPECT_TRUE(reltest::has(msg, "rank 0")) << "the error does not name rank 0: " << msg;
            } else if (r == scSuccess) {
              EXPECT_EQ(out, expected(P, rank, want)) << "scSuccess with wrong data in the mismatched call";
            }
            // The matched call that follows: failing fast (the communicator was
            // aborted) or correct, never wrong data.
            t0 = std::chrono::steady_clock::now();
            r = allgatherv(topo, P, rank, want, want, out);
            EXPECT_LT(reltest::since(t0), kDeadline + 3) << "the next call took far past its deadline";
            if (r == scSuccess) EXPECT_EQ(out, expected(P, rank, want)) << "scSuccess with wrong data in the next call";
            EXPECT_EQ(scTopologyDestroy(topo), scSuccess);
            reltest::syncWorld();
          },
          &cfg);
    }
}

}  // namespace
