// The MPI transport's shared-memory queues (csrc/transport/mpi/shm.h), under
// mpirun (the ranks of one machine use them): rounds with more messages to
// one peer than a queue has slots, blocks on both sides of the queues' limit,
// and ranks that disagree on using them. The same bodies run on the local
// transport, which has no queues, as a reference.
#include <cstdlib>
#include <string>
#include <vector>

#include "common/harness.h"
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

// 9 messages to each peer in one round, against queues of 4 slots: senders
// wait for room while their receivers take messages, in order. Blocks of 1
// float, 1023 and 1024 floats (4 KiB: the queues' largest) and 1025 (MPI).
TEST(ShmQueues, MoreMessagesToOnePeerThanSlots) {
  const int P = worldOr(3);
  sctest::run(P, [&](scComm_t comm, int rank) { parallelEdges(comm, rank, P, 9, {1, 1023, 1024, 1025}); });
}

// Rank 1 turns the queues off (SPARCOLL_MPI_SHM=0): every rank must then use
// MPI alone, or rank 1's peers would wait for messages it never queues.
TEST(ShmQueues, OneRankOffTurnsThemOffForAll) {
  if (sctest::mode() != sctest::Mode::Mpi) GTEST_SKIP() << "the queues are the MPI transport's";
  const int P = sctest::mpiWorldSize();
  sctest::ScopedEnv off("SPARCOLL_MPI_SHM", sctest::mpiWorldRank() == 1 ? "0" : "1");
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = 10;  // a disagreement would time out here instead of passing
  sctest::run(P, [&](scComm_t comm, int rank) {
    parallelEdges(comm, rank, P, 2, {1, 1024});
    float x = float(rank + 1), sum = 0;
    SC_OK(comm, scAllReduce(&x, &sum, 1, scFloat32, scSum, scAlgoRecDbl, comm, nullptr));
    EXPECT_EQ(sum, float(P * (P + 1) / 2));
  }, &cfg);
}

// A value that is neither on nor off is refused, naming the variable.
TEST(ShmQueues, BadSettingIsRefused) {
  if (sctest::mode() != sctest::Mode::Mpi) GTEST_SKIP() << "the queues are the MPI transport's";
  sctest::ScopedEnv bad("SPARCOLL_MPI_SHM", "maybe");
  scConfig_t cfg = sctest::testConfig();
  scComm_t comm = nullptr;
  EXPECT_EQ(scCommInitMpi(&comm, nullptr, &cfg), scInvalidArgument);
  const std::string msg = scGetLastError(nullptr);
  EXPECT_NE(msg.find("SPARCOLL_MPI_SHM='maybe'"), std::string::npos) << msg;
  EXPECT_EQ(comm, nullptr);
}

}  // namespace
