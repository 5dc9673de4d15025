// The second oracle, under mpirun: MPI_Neighbor_allgather(v) on a dist-graph
// communicator with the same edges (MPI_Dist_graph_create_adjacent over
// MPI_COMM_WORLD, unweighted, no reordering). Every algorithm's recv must be
// byte-identical to MPI's, on every graph of the catalogue. In the local
// binary the test skips.
#include "dense/dense_util.h"
#include "nbr_check.h"

#ifdef SPARCOLL_TEST_MPI
#include <mpi.h>
#endif

namespace ntest {
namespace {

#ifdef SPARCOLL_TEST_MPI
// MPI's answer for rank's recv layout in `x` (allgatherv through MPI_BYTE).
dtest::Bytes mpiAnswer(const Graph& g, int rank, const Case& c, const Expected& x) {
  const auto& s = g.src[size_t(rank)];
  const auto& d = g.dst[size_t(rank)];
  const int dummy = 0;
  MPI_Comm dg;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, int(s.size()), s.empty() ? &dummy : s.data(), MPI_UNWEIGHTED,
                                 int(d.size()), d.empty() ? &dummy : d.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg);
  const size_t esz = dtest::elemSize(c.dt);
  std::vector<int> counts, displs;
  for (size_t e = 0; e < s.size(); ++e) {
    counts.push_back(int(x.counts[e] * esz));
    displs.push_back(int(x.displs[e] * esz));
  }
  dtest::Bytes recv(x.recv.size(), kPoison);
  uint8_t none = 0;  // MPI rejects NULL buffers even for zero bytes
  MPI_Neighbor_allgatherv(x.send.empty() ? &none : x.send.data(), int(x.send.size()), MPI_BYTE,
                          recv.empty() ? &none : recv.data(), counts.empty() ? &dummy : counts.data(),
                          displs.empty() ? &dummy : displs.data(), MPI_BYTE, dg);
  MPI_Comm_free(&dg);
  return recv;
}
#endif

TEST(NeighborMpiOracle, EveryGraphEveryAlgorithm) {
#ifndef SPARCOLL_TEST_MPI
  GTEST_SKIP() << "MPI_Neighbor_allgather is the oracle under mpirun only";
#else
  const int P = sctest::mpiWorldSize();
  const scConfig_t cfg = dtest::config(60);
  for (const char* rpn : {"1", "3"}) {
    dtest::ScopedEnv env("SPARCOLL_RANKS_PER_NODE", rpn);
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          for (const Graph& g : catalogue(P)) {
            scTopology_t topo = makeTopology(comm, g, rank);
            if (!topo) return;
            for (scNbrAlgo_t a : kAllAlgos)
              for (bool v : {false, true}) {
                const Case c{a, scFloat16, 9, v, 77};
                const Expected x = reference(g, rank, c);
                const dtest::Bytes want = mpiAnswer(g, rank, c, x);
                EXPECT_TRUE(want == x.recv)
                    << g.name << ": MPI_Neighbor_allgatherv disagrees with the sequential reference";
                dtest::Bytes got(x.recv.size(), kPoison);
                const size_t n = x.send.size() / dtest::elemSize(c.dt);
                const scResult_t r = v ? scNeighborAllGatherV(x.send.data(), n, got.data(), x.counts.data(),
                                                              x.displs.data(), c.dt, a, topo, nullptr)
                                       : scNeighborAllGather(x.send.data(), n, got.data(), c.dt, a, topo, nullptr);
                ASSERT_EQ(r, scSuccess) << scGetLastError(comm);
                EXPECT_TRUE(got == want) << g.name << ", " << c.label() << ", rank " << rank << ": differs from MPI's";
              }
            EXPECT_EQ(scTopologyDestroy(topo), scSuccess);
          }
        },
        &cfg);
  }
#endif
}

}  // namespace
}  // namespace ntest
