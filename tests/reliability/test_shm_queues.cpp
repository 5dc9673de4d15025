// The MPI transport's shared-memory queues (csrc/transport/mpi/shm.h), under
// mpirun (the ranks of one machine use them): rounds with more messages to
// one peer than a queue has slots, blocks on both sides of the queues' limit,
// and ranks that disagree on using them. The same bodies run on the local
// transport, which has no queues, as a reference.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/harness.h"
#include "reliability/reliability_util.h"
#include "sparcoll/neighbor.h"

namespace {

float value(int rank, int call, size_t i) { return float(rank * 100000 + call * 1000 + int(i % 991)); }

// Every rank sends its block along `copies` parallel edges to every other
// rank: naive posts `copies` messages to each peer in one round.
void parallelEdges(scComm_t comm, int rank, int P, int copies, const std::vector<size_t>& counts) {
  std::vector<int> peers;
  for (int q = 0; q < P; ++q)
    for (int c = 0; q != rank && c < copies; ++c) peers.push_back(q);
  scTopology_t topo = nullptr;
  SC_OK(comm, scTopologyCreate(&topo, comm, int(peers.size()), peers.data(), int(peers.size()), peers.data()));
  for (size_t n : counts)
    for (int call = 0; call < 12; ++call) {
      std::vector<float> send(n), recv(peers.size() * n, -1.0f);
      for (size_t i = 0; i < n; ++i) send[i] = value(rank, call, i);
      SC_OK(comm, scNeighborAllGather(send.data(), n, recv.data(), scFloat32, scNbrNaive, topo, nullptr));
      for (size_t e = 0; e < peers.size(); ++e)
        for (size_t i = 0; i < n; ++i)
          ASSERT_EQ(recv[e * n + i], value(peers[e], call, i))
              << "rank " << rank << ", " << n << " floats, call " << call << ", edge " << e << ", element " << i;
    }
  SC_OK(comm, scTopologyDestroy(topo));
}

int worldOr(int P) { return sctest::mode() == sctest::Mode::Mpi ? sctest::mpiWorldSize() : P; }

// 9 messages to each peer in one round, against queues of 4 slots and a
// spill whose ring holds 2 fragments of 4 KiB: senders spill, then wait for
// room while their receivers take messages, in order. Blocks of 1 float, 8
// and 9 (32 bytes: all in the line; 36: the rest in a page or the spill
// ring), 1023 and 1024 floats (4 KiB: one fragment, and the queues' largest
// with a core per rank), 1025 (two fragments, or MPI), 8192 (32 KiB: the
// largest where ranks outnumber cores) and 8193 (MPI).
TEST(ShmQueues, MoreMessagesToOnePeerThanSlots) {
  const int P = worldOr(3);
  sctest::run(P, [&](scComm_t comm, int rank) {
    parallelEdges(comm, rank, P, 9, {1, 8, 9, 1023, 1024, 1025, 8192, 8193});
  });
}

// More small messages to one peer in a round than a queue has slots and
// spill lines (4 + 128 at most), and blocks whose bytes past the line fill
// the spill ring before its lines: 9 floats (36 bytes: 64 of the ring
// each), 17 (128 each) and 1000 (4000 bytes: 4032, aligned to 4 KiB, two
// to a ring).
TEST(ShmQueues, MoreSmallMessagesThanSlotsAndSpill) {
  const int P = worldOr(3);
  sctest::run(P, [&](scComm_t comm, int rank) { parallelEdges(comm, rank, P, 300, {1, 9, 17, 1000}); });
}

// Senders run ahead of their receivers into a queue's spill with blocks of
// another size every call (each rank's block differs from its peers', so
// reservations of every size from a line to 4 KiB follow each other and
// skip bytes to align), 6 messages to each peer per call, up to 2
// fragments each.
TEST(ShmQueues, RingReservationsOfChangingSizes) {
  const int P = worldOr(3);
  sctest::run(P, [&](scComm_t comm, int rank) {
    std::vector<int> peers;
    for (int q = 0; q < P; ++q)
      for (int c = 0; q != rank && c < 6; ++c) peers.push_back(q);
    scTopology_t topo = nullptr;
    SC_OK(comm, scTopologyCreate(&topo, comm, int(peers.size()), peers.data(), int(peers.size()), peers.data()));
    auto countOf = [](int r, int call) { return size_t((r * 389 + call * 157) % 1500 + 1); };
    for (int call = 0; call < 60; ++call) {
      std::vector<float> send(countOf(rank, call));
      for (size_t i = 0; i < send.size(); ++i) send[i] = value(rank, call, i);
      std::vector<size_t> counts, displs;
      size_t total = 0;
      for (int q : peers) {
        counts.push_back(countOf(q, call));
        displs.push_back(total);
        total += counts.back();
      }
      std::vector<float> recv(total, -1.0f);
      SC_OK(comm, scNeighborAllGatherV(send.data(), send.size(), recv.data(), counts.data(), displs.data(), scFloat32,
                                       scNbrNaive, topo, nullptr));
      for (size_t e = 0; e < peers.size(); ++e)
        for (size_t i = 0; i < counts[e]; ++i)
          ASSERT_EQ(recv[displs[e] + i], value(peers[e], call, i))
              << "rank " << rank << ", call " << call << ", edge " << e << ", element " << i;
    }
    SC_OK(comm, scTopologyDestroy(topo));
  });
}

// Messages above the queues' limit go by single copy (the receiver reads
// them from the sender's memory) where the kernel allows it, and through MPI
// with SPARCOLL_MPI_CMA=0: the same blocks arrive either way, 3 to each peer
// in a round (descriptors queue like fragments), up to 4 MiB.
TEST(ShmQueues, SingleCopyCarriesLargeMessages) {
  const int P = worldOr(3);
  for (const char* cma : {"1", "0"}) {
    sctest::ScopedEnv env("SPARCOLL_MPI_CMA", cma);
    sctest::run(P, [&](scComm_t comm, int rank) { parallelEdges(comm, rank, P, 3, {4097, 16385, 262144, 1048577}); });
  }
}

// A sender whose call ends before its receiver came (its deadline) withdraws
// its single-copy message: the late receiver then fails naming it, and never
// takes the freed, overwritten buffer for the message.
TEST(ShmQueues, SenderThatGivesUpWithdrawsItsMessage) {
  if (sctest::mode() != sctest::Mode::Mpi) GTEST_SKIP() << "the queues are the MPI transport's";
  const int P = sctest::mpiWorldSize();
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = 0.5;
  cfg.check = scCheckOff;
  constexpr size_t kCount = 262144;  // 1 MiB: single copy where the kernel allows it, else MPI
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        const int to1 = 1, from0 = 0;
        scTopology_t topo = nullptr;
        SC_OK(comm, scTopologyCreate(&topo, comm, rank == 1, &from0, rank == 0, &to1));
        reltest::syncWorld();
        if (rank == 0) {
          auto send = std::make_unique<std::vector<float>>(kCount, 7.0f);
          const scResult_t r = scNeighborAllGather(send->data(), kCount, nullptr, scFloat32, scNbrNaive, topo, nullptr);
          EXPECT_EQ(r, scTimeout) << scGetLastError(comm);
          std::fill(send->begin(), send->end(), -1.0f);  // what a late reader must never deliver
          send.reset();
        } else if (rank == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1500));
          std::vector<float> send(kCount), recv(kCount, 0.0f);
          const scResult_t r =
              scNeighborAllGather(send.data(), kCount, recv.data(), scFloat32, scNbrNaive, topo, nullptr);
          const std::string msg = r == scSuccess ? std::string() : scGetLastError(comm);
          std::printf("withdrawn message | rank 1 returned %s: %s\n", scGetErrorString(r), msg.c_str());
          EXPECT_NE(r, scSuccess) << "the late receiver took a message its sender had withdrawn";
          EXPECT_TRUE(reltest::has(msg, "rank 0")) << msg;
        }
        reltest::syncWorld();
        scTopologyDestroy(topo);
      },
      &cfg);
}

// A timeout while waiting for 300 alike messages from one peer names the
// wait once, with its count, not 300 times.
TEST(ShmQueues, TimeoutCountsAlikeWaits) {
  if (sctest::mode() != sctest::Mode::Mpi) GTEST_SKIP() << "the count is the MPI transport's description";
  const int P = sctest::mpiWorldSize();
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = 0.5;
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        const std::vector<int> from0(rank == 1 ? 300 : 0, 0), to1(rank == 0 ? 300 : 0, 1);
        scTopology_t topo = nullptr;
        SC_OK(comm, scTopologyCreate(&topo, comm, int(from0.size()), from0.data(), int(to1.size()), to1.data()));
        reltest::syncWorld();
        if (rank == 1) {
          float one = 1.0f;
          std::vector<float> recv(300);
          const scResult_t r = scNeighborAllGather(&one, 1, recv.data(), scFloat32, scNbrNaive, topo, nullptr);
          const std::string msg = scGetLastError(comm);
          EXPECT_EQ(r, scTimeout) << msg;
          EXPECT_TRUE(reltest::has(msg, "was waiting for 4 B from rank 0 (300 messages)")) << msg;
          EXPECT_FALSE(reltest::has(msg, "rank 0; waiting for 4 B")) << msg;
        }
        reltest::syncWorld();
        scTopologyDestroy(topo);
      },
      &cfg);
}

// SPARCOLL_MPI_SHM_MAX_BYTES raises the limit on every node shape: messages
// of up to 256 KiB stream through the queues in 64 fragments, 16 times what
// a queue holds, with a short last fragment (65535 floats), 3 messages to
// each peer in a round.
TEST(ShmQueues, LargeMessagesStreamInFragments) {
  sctest::ScopedEnv max("SPARCOLL_MPI_SHM_MAX_BYTES", "256K");
  const int P = worldOr(3);
  sctest::run(P, [&](scComm_t comm, int rank) { parallelEdges(comm, rank, P, 3, {4097, 65535, 65536, 65537}); });
}

// Rank 1 turns the queues off (SPARCOLL_MPI_SHM=0): every rank must then use
// MPI alone, or rank 1's peers would wait for messages it never queues.
TEST(ShmQueues, OneRankOffTurnsThemOffForAll) {
  if (sctest::mode() != sctest::Mode::Mpi) GTEST_SKIP() << "the queues are the MPI transport's";
  const int P = sctest::mpiWorldSize();
  sctest::ScopedEnv off("SPARCOLL_MPI_SHM", sctest::mpiWorldRank() == 1 ? "0" : "1");
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = 10;  // a disagreement would time out here instead of passing
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        parallelEdges(comm, rank, P, 2, {1, 1024});
        float x = float(rank + 1), sum = 0;
        SC_OK(comm, scAllReduce(&x, &sum, 1, scFloat32, scSum, scAlgoRecDbl, comm, nullptr));
        EXPECT_EQ(sum, float(P * (P + 1) / 2));
      },
      &cfg);
}

// A switch (SPARCOLL_MPI_SHM, SPARCOLL_MPI_CMA) that is neither on nor off,
// or a limit that is not a size from 0 to 16M, is refused, naming the
// variable and the value.
TEST(ShmQueues, BadSettingIsRefused) {
  if (sctest::mode() != sctest::Mode::Mpi) GTEST_SKIP() << "the queues are the MPI transport's";
  const std::pair<const char*, const char*> kBad[] = {{"SPARCOLL_MPI_SHM", "maybe"},
                                                      {"SPARCOLL_MPI_SHM_MAX_BYTES", "12Q"},
                                                      {"SPARCOLL_MPI_SHM_MAX_BYTES", "-1"},
                                                      {"SPARCOLL_MPI_SHM_MAX_BYTES", "17M"},
                                                      {"SPARCOLL_MPI_CMA", "yes"}};
  for (const auto& [var, value] : kBad) {
    sctest::ScopedEnv bad(var, value);
    scConfig_t cfg = sctest::testConfig();
    scComm_t comm = nullptr;
    EXPECT_EQ(scCommInitMpi(&comm, nullptr, &cfg), scInvalidArgument) << var << "=" << value;
    const std::string msg = scGetLastError(nullptr);
    EXPECT_NE(msg.find(std::string(var) + "='" + value + "'"), std::string::npos) << msg;
    EXPECT_EQ(comm, nullptr);
  }
}

// An empty value counts as unset, as for every variable of the library (core/env.h).
TEST(ShmQueues, EmptySettingIsUnset) {
  if (sctest::mode() != sctest::Mode::Mpi) GTEST_SKIP() << "the queues are the MPI transport's";
  for (const char* var : {"SPARCOLL_MPI_SHM", "SPARCOLL_MPI_SHM_MAX_BYTES", "SPARCOLL_MPI_CMA"}) {
    sctest::ScopedEnv empty(var, "");
    scConfig_t cfg = sctest::testConfig();
    scComm_t comm = nullptr;
    ASSERT_EQ(scCommInitMpi(&comm, nullptr, &cfg), scSuccess) << var << ": " << scGetLastError(nullptr);
    EXPECT_EQ(scCommDestroy(comm), scSuccess);
  }
}

}  // namespace
