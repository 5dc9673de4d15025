// Traffic per rank (messages and bytes sent and received, inter-node bytes
// and messages sent) of every scheduled algorithm, exactly equal to the
// formulas of nbr_traffic.h, on every graph of the catalogue with nodes of
// 1, 2 and 3 ranks (SPARCOLL_RANKS_PER_NODE) and one node of all; native is
// not counted; auto's traffic is that of the algorithm scNeighborAlgoFor
// names. The friend groups the library formed are checked against the
// definition (consistent on every member, at most k ranks, more than theta
// common out-neighbours). Every rank records what it measured; the records
// are checked after the run (local) or after an MPI_Allgather (mpirun).
#include "dense/dense_util.h"
#include "nbr_check.h"
#include "nbr_traffic.h"

#ifdef SPARCOLL_TEST_MPI
#include <mpi.h>
#endif

namespace ntest {
namespace {

constexpr int kMaxK = 8;  // the library's largest group
const scNbrAlgo_t kCounted[] = {scNbrNaive, scNbrCombining, scNbrHierarchical, scNbrNative, scNbrAuto};
constexpr size_t kCases = 2 * 5;  // allgather and allgatherv for each of kCounted

// One rank's record: its group, then per case the six counters and the
// algorithm auto chose.
struct Record {
  std::vector<uint64_t> w;
  static size_t words() { return 3 + kMaxK + kCases * 7; }
};

class Records {
 public:
  explicit Records(int P) : all_(size_t(P)) {}
  Record& of(int r) { return all_[size_t(r)]; }
  // MPI: every rank's record to every rank (local ranks share memory).
  void share(int rank) {
#ifdef SPARCOLL_TEST_MPI
    const size_t n = Record::words();
    std::vector<uint64_t> flat(n * all_.size());
    MPI_Allgather(all_[size_t(rank)].w.data(), int(n), MPI_UINT64_T, flat.data(), int(n), MPI_UINT64_T, MPI_COMM_WORLD);
    for (size_t r = 0; r < all_.size(); ++r)
      all_[r].w.assign(flat.begin() + long(r * n), flat.begin() + long((r + 1) * n));
#else
    (void)rank;
#endif
  }

 private:
  std::vector<Record> all_;
};

void measure(scComm_t comm, scTopology_t topo, const Graph& g, int rank, Record& rec) {
  rec.w.assign(Record::words(), 0);
  int k = 0, theta = 0, size = 0, members[kMaxK];
  EXPECT_EQ(scTopologyFriendGroup(topo, &k, &theta, &size, members), scSuccess);
  rec.w[0] = uint64_t(k);
  rec.w[1] = uint64_t(theta);
  rec.w[2] = uint64_t(size);
  for (int i = 0; i < size && i < kMaxK; ++i) rec.w[3 + size_t(i)] = uint64_t(members[i]);
  size_t at = 3 + kMaxK;
  for (bool v : {false, true})
    for (scNbrAlgo_t a : kCounted) {
      scStats_t st{};
      EXPECT_EQ(scCommResetStats(comm), scSuccess);
      const Case c{a, scInt32, 5, v, 21};
      if (!checkCall(comm, topo, g, rank, c)) return;
      EXPECT_EQ(scCommGetStats(comm, &st), scSuccess);
      scNbrAlgo_t chose = a;
      if (a == scNbrAuto) EXPECT_EQ(scNeighborAlgoFor(topo, 5 * 4, &chose), scSuccess);
      for (uint64_t x : {st.bytesSent, st.bytesRecv, st.msgsSent, st.msgsRecv, st.interNodeBytesSent,
                         st.interNodeMsgsSent, uint64_t(chose)})
        rec.w[at++] = x;
    }
}

void verify(const Graph& g, Records& recs, int rpn, int rank) {
  const int P = g.P;
  std::vector<std::vector<int>> group(static_cast<size_t>(P));
  for (int r = 0; r < P; ++r) {
    const std::vector<uint64_t>& w = recs.of(r).w;
    group[size_t(r)].assign(w.begin() + 3, w.begin() + 3 + long(w[2]));
  }
  // The groups the library formed are groups of the definition.
  const std::vector<uint64_t>& me = recs.of(rank).w;
  const std::vector<int>& G = group[size_t(rank)];
  ASSERT_LE(G.size(), std::max<size_t>(1, me[0])) << g.name << ": group larger than k on rank " << rank;
  for (int m : G)
    EXPECT_EQ(group[size_t(m)], G) << g.name << ": rank " << m << " disagrees on rank " << rank << "'s group";
  if (G.size() > 1)
    EXPECT_GT(commonNeighbours(g, G).size(), me[1])
        << g.name << ": the group of rank " << rank << " shares no more than theta out-neighbours";
  World w{g, std::vector<int>(size_t(P)), group, {}, 4, false};
  for (int r = 0; r < P; ++r) w.node[size_t(r)] = r - r % rpn;
  size_t at = 3 + kMaxK;
  for (bool v : {false, true}) {
    w.v = v;
    w.elems.clear();
    for (int r = 0; r < P; ++r) w.elems.push_back(v ? vcount(g, r, 5) : 5);
    for (scNbrAlgo_t a : kCounted) {
      const Traffic got{me[at], me[at + 1], me[at + 2], me[at + 3], me[at + 4], me[at + 5]};
      const scNbrAlgo_t chose = scNbrAlgo_t(me[at + 6]);
      at += 7;
      if (a == scNbrAuto && v) continue;  // auto's allgatherv adds its agreement on the size
      Traffic want;
      switch (chose) {
        case scNbrNaive: want = naiveTraffic(w, rank); break;
        case scNbrCombining: want = combiningTraffic(w, rank); break;
        case scNbrHierarchical: want = hierarchicalTraffic(w, rank); break;
        default: break;  // native: nothing counted
      }
      EXPECT_EQ(got, want) << g.name << ", " << algoStr(a)
                           << (a == scNbrAuto ? std::string(" -> ") + algoStr(chose) : "")
                           << (v ? " allgatherv" : " allgather") << ", " << rpn << " ranks per node, rank " << rank
                           << ": measured " << got.str() << ", formula " << want.str();
    }
  }
}

class NbrTraffic : public testing::TestWithParam<int> {};

TEST_P(NbrTraffic, MatchesFormulas) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  const scConfig_t cfg = dtest::config(60);
  for (int rpn : {1, 2, 3, P}) {
    dtest::ScopedEnv env("SPARCOLL_RANKS_PER_NODE", std::to_string(rpn).c_str());
    for (const Graph& g : catalogue(P)) {
      Records recs(P);
      sctest::run(
          P,
          [&](scComm_t comm, int rank) {
            scTopology_t topo = makeTopology(comm, g, rank);
            if (!topo) return;
            measure(comm, topo, g, rank, recs.of(rank));
            EXPECT_EQ(scTopologyDestroy(topo), scSuccess);
            recs.share(rank);
            if (sctest::mode() == sctest::Mode::Mpi) verify(g, recs, rpn, rank);
          },
          &cfg);
      if (sctest::mode() == sctest::Mode::Local)
        for (int r = 0; r < P; ++r) verify(g, recs, rpn, r);
      if (HasFailure()) return;
    }
  }
}

// The headline claims on one machine, per rank, on a Moore neighbourhood
// without repeated edges (so naive's messages are distinct edges): with
// virtual nodes of 4, hierarchical sends at most half naive's inter-node
// bytes; with these dense common neighbourhoods combining sends at least
// 1.5x fewer messages than naive.
TEST_P(NbrTraffic, HeadlineRatios) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  if (P < 8) GTEST_SKIP() << "the ratios are claimed for P >= 8";
  const scConfig_t cfg = dtest::config(60);
  dtest::ScopedEnv env("SPARCOLL_RANKS_PER_NODE", "4");
  const Graph g = moore(P, 2, 2, false);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        scTopology_t topo = makeTopology(comm, g, rank);
        if (!topo) return;
        auto traffic = [&](scNbrAlgo_t a, size_t n) {
          scStats_t st{};
          EXPECT_EQ(scCommResetStats(comm), scSuccess);
          EXPECT_TRUE(checkCall(comm, topo, g, rank, {a, scUint8, n, false, 3}));
          EXPECT_EQ(scCommGetStats(comm, &st), scSuccess);
          return st;
        };
        const scStats_t naive = traffic(scNbrNaive, 65536), hier = traffic(scNbrHierarchical, 65536);
        EXPECT_GE(double(naive.interNodeBytesSent), 2.0 * double(hier.interNodeBytesSent))
            << g.name << ": hierarchical does not halve the inter-node bytes of rank " << rank;
        const scStats_t naiveSmall = traffic(scNbrNaive, 8), comb = traffic(scNbrCombining, 8);
        EXPECT_GE(double(naiveSmall.msgsSent), 1.5 * double(comb.msgsSent))
            << g.name << ": combining does not send 1.5x fewer messages than naive on rank " << rank;
        EXPECT_EQ(scTopologyDestroy(topo), scSuccess);
      },
      &cfg);
}

INSTANTIATE_TEST_SUITE_P(Neighbor, NbrTraffic, testing::Range(1, 10),
                         [](const testing::TestParamInfo<int>& i) { return "P" + std::to_string(i.param); });

}  // namespace
}  // namespace ntest
