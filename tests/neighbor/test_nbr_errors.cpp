// Bad input to the neighbourhood collectives: each is rejected with its
// documented scResult_t and a last-error message that names the rank and
// argument (or the offending edge) and carries csrc/<file>:<line>. Bad
// creation arguments on one rank fail the call on every rank (none hangs);
// call-time checks happen before any message. After each error the
// communicator and the topology still work.
#include <climits>
#include <cstdint>
#include <functional>

#include "dense/dense_util.h"
#include "nbr_check.h"

namespace ntest {
namespace {

using dtest::failedWith;

// Every rank declares (src[rank], dst[rank]) and must fail with `needle` in
// its message; then a valid topology still works.
void expectCreateFails(int P, const std::vector<std::vector<int>>& src, const std::vector<std::vector<int>>& dst,
                       const std::string& needle, int nullTopoRank = -1, int nullArrayRank = -1) {
  const scConfig_t cfg = dtest::config(30);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        const auto& s = src[size_t(rank)];
        const auto& d = dst[size_t(rank)];
        scTopology_t topo = reinterpret_cast<scTopology_t>(uintptr_t(1));
        const bool nullArrays = rank == nullArrayRank;
        const scResult_t r =
            scTopologyCreate(rank == nullTopoRank ? nullptr : &topo, comm, int(s.size()),
                             nullArrays ? nullptr : s.data(), int(d.size()), nullArrays ? nullptr : d.data());
        EXPECT_TRUE(failedWith(r, scInvalidArgument, comm, needle)) << "rank " << rank;
        if (rank != nullTopoRank) EXPECT_EQ(topo, nullptr) << "a failed creation left a handle";
        const Graph g = star(P);
        scTopology_t ok = makeTopology(comm, g, rank);
        if (ok) EXPECT_TRUE(checkCall(comm, ok, g, rank, {scNbrAuto, scInt32, 3, false, 1}));
        if (ok) EXPECT_EQ(scTopologyDestroy(ok), scSuccess);
      },
      &cfg);
}

std::vector<std::vector<int>> none(int P) { return std::vector<std::vector<int>>(size_t(P)); }

TEST(NeighborErrors, AsymmetricDeclarationNamesAnEdge) {
  const int P = dtest::anyP(3);
  {  // an out-edge nobody receives
    auto src = none(P), dst = none(P);
    dst[0] = {P > 1 ? 1 : 0};
    expectCreateFails(P, src, dst, P > 1 ? "asymmetric edge 0 -> 1" : "asymmetric edge 0 -> 0");
  }
  if (P < 2) return;
  {  // declared twice by the sender, once by the receiver
    auto src = none(P), dst = none(P);
    dst[0] = {1, 1};
    src[1] = {0};
    expectCreateFails(P, src, dst, "rank 0 lists 1 2 time(s) in destinations, but rank 1 lists 0 1 time(s)");
  }
  {  // the receiver names a different sender: the smallest bad pair is named
    auto src = none(P), dst = none(P);
    dst[0] = {1};
    src[1] = {P - 1};
    expectCreateFails(P, src, dst, "asymmetric edge 0 -> 1");
  }
}

TEST(NeighborErrors, RankOutOfRange) {
  const int P = dtest::anyP(3);
  auto src = none(P), dst = none(P);
  src[size_t(P - 1)] = {P};
  expectCreateFails(P, src, dst, "rank " + std::to_string(P - 1) + ": sources[0] = " + std::to_string(P));
  src = none(P);
  dst[0] = {-1};
  expectCreateFails(P, src, dst, "rank 0: destinations[0] = -1");
}

TEST(NeighborErrors, NegativeDegreeNullArraysNullHandle) {
  const int P = dtest::anyP(3);
  const scConfig_t cfg = dtest::config(30);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        scTopology_t t = nullptr;
        const int one = 0;
        // Rank 0 alone passes a negative degree: everyone fails, naming rank 0.
        EXPECT_TRUE(failedWith(scTopologyCreate(&t, comm, rank == 0 ? -1 : 0, &one, 0, nullptr), scInvalidArgument,
                               comm, "rank 0: indegree is -1"));
        EXPECT_TRUE(failedWith(scTopologyCreate(&t, comm, 0, nullptr, rank == P - 1 ? -5 : 0, nullptr),
                               scInvalidArgument, comm, "outdegree is -5"));
      },
      &cfg);
  auto src = none(P), dst = none(P);
  for (int r = 0; r < P; ++r) {  // a ring, so that every rank has degree 1
    dst[size_t(r)] = {(r + 1) % P};
    src[size_t(r)] = {(r + P - 1) % P};
  }
  expectCreateFails(P, src, dst, "rank " + std::to_string(P - 1) + ": sources is NULL with indegree 1", -1, P - 1);
  expectCreateFails(P, src, dst, "rank 0: topo (the output handle) is NULL", 0);
}

TEST(NeighborErrors, MalformedKnobs) {
  const int P = dtest::anyP(2);
  for (auto [name, value] : {std::pair{"SPARCOLL_NBR_K", "abc"}, std::pair{"SPARCOLL_RANKS_PER_NODE", "0"},
                             std::pair{"SPARCOLL_NBR_THETA", "-2"}}) {
    dtest::ScopedEnv env(name, value);
    const scConfig_t cfg = dtest::config(30);
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          const Graph g = star(P);
          scTopology_t t = nullptr;
          const auto& s = g.src[size_t(rank)];
          const auto& d = g.dst[size_t(rank)];
          EXPECT_TRUE(failedWith(scTopologyCreate(&t, comm, int(s.size()), s.data(), int(d.size()), d.data()),
                                 scInvalidArgument, comm, name));
        },
        &cfg);
  }
}

TEST(NeighborErrors, NullCommunicator) {
  scTopology_t t = nullptr;
  EXPECT_TRUE(
      failedWith(scTopologyCreate(&t, nullptr, 0, nullptr, 0, nullptr), scInvalidArgument, nullptr, "communicator"));
}

TEST(NeighborErrors, UseAfterDestroy) {
  const int P = dtest::anyP(2);
  const Graph g = moore(P, 1, 1, true);
  sctest::run(P, [&](scComm_t comm, int rank) {
    scTopology_t t = makeTopology(comm, g, rank);
    if (!t) return;
    int x[64] = {}, y[64] = {};
    // A call first: the thread then remembers the handle as live, and the
    // destroy below must still be seen.
    ASSERT_EQ(scNeighborAllGather(x, 1, y, scInt32, scNbrNaive, t, nullptr), scSuccess) << scGetLastError(comm);
    ASSERT_EQ(scTopologyDestroy(t), scSuccess);
    size_t counts[8] = {}, displs[8] = {};
    scNbrAlgo_t a;
    EXPECT_TRUE(failedWith(scNeighborAllGather(x, 1, y, scInt32, scNbrNaive, t, nullptr), scInvalidArgument, nullptr,
                           "destroyed"));
    EXPECT_TRUE(failedWith(scNeighborAllGatherV(x, 1, y, counts, displs, scInt32, scNbrAuto, t, nullptr),
                           scInvalidArgument, nullptr, "destroyed"));
    EXPECT_TRUE(failedWith(scTopologyDestroy(t), scInvalidArgument, nullptr, "destroyed"));
    EXPECT_TRUE(failedWith(scNeighborAlgoFor(t, 8, &a), scInvalidArgument, nullptr, "destroyed"));
    EXPECT_TRUE(failedWith(scTopologyDegrees(t, nullptr, nullptr), scInvalidArgument, nullptr, "destroyed"));
    EXPECT_TRUE(failedWith(scNeighborAllGather(x, 1, y, scInt32, scNbrNaive, nullptr, nullptr), scInvalidArgument,
                           nullptr, "NULL"));
    EXPECT_TRUE(failedWith(scTopologyDestroy(nullptr), scInvalidArgument, nullptr, "NULL"));
  });
}

// body on every rank of a multigraph with self-loops g: (comm, rank, g, its
// topology, this rank's indegree); the topology is destroyed afterwards.
using OnGraph = std::function<void(scComm_t, int, const Graph&, scTopology_t, size_t)>;
void onMultiEdges(const OnGraph& body) {
  const int P = dtest::anyP(3);
  const Graph g = multiEdges(P, 2);
  const scConfig_t cfg = dtest::config(30);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        scTopology_t t = makeTopology(comm, g, rank);
        if (!t) return;
        body(comm, rank, g, t, g.src[size_t(rank)].size());
        EXPECT_EQ(scTopologyDestroy(t), scSuccess);
      },
      &cfg);
}

// The checks of a call that repeats the last good call's buffers are skipped
// (api_neighbor.cpp): any changed argument is checked again, and a
// communicator aborted since refuses the very same call.
TEST(NeighborErrors, BadCallAfterAGoodOneWithTheSameBuffers) {
  onMultiEdges([](scComm_t comm, int, const Graph&, scTopology_t t, size_t in) {
    std::vector<int> x(8), y(8 * in + 8);
    ASSERT_EQ(scNeighborAllGather(x.data(), 2, y.data(), scInt32, scNbrNaive, t, nullptr), scSuccess)
        << scGetLastError(comm);
    int notAStream = 0;
    EXPECT_TRUE(failedWith(scNeighborAllGather(x.data(), 2, y.data(), scInt32, scNbrNaive, t, &notAStream),
                           scInvalidArgument, comm, "stream"));
    EXPECT_TRUE(failedWith(scNeighborAllGather(x.data(), 2, y.data(), scDataType_t(-1), scNbrNaive, t, nullptr),
                           scInvalidArgument, comm, "data type"));
    EXPECT_TRUE(failedWith(scNeighborAllGather(x.data(), 2, y.data(), scInt32, scNbrAlgo_t(scNumNbrAlgos), t, nullptr),
                           scInvalidArgument, comm, "unknown neighbourhood algorithm"));
    EXPECT_TRUE(failedWith(scNeighborAllGather(x.data(), SIZE_MAX / 2, y.data(), scInt32, scNbrNaive, t, nullptr),
                           scInvalidArgument, comm, "sendcount"));
    if (in)
      EXPECT_TRUE(failedWith(scNeighborAllGather(x.data(), 2, nullptr, scInt32, scNbrNaive, t, nullptr),
                             scInvalidArgument, comm, "recv is NULL"));
    ASSERT_EQ(scNeighborAllGather(x.data(), 2, y.data(), scInt32, scNbrNaive, t, nullptr), scSuccess)
        << scGetLastError(comm);
    // Every rank aborts (a peer's notice may abort it first: then the
    // barrier or the abort fails), and the same call is refused.
    scBarrier(comm, nullptr);
    scCommAbort(comm);
    EXPECT_TRUE(failedWith(scNeighborAllGather(x.data(), 2, y.data(), scInt32, scNbrNaive, t, nullptr), scInvalidUsage,
                           comm, "aborted"));
  });
}

// Checks before any message: every rank makes the same bad call.

TEST(NeighborErrors, BadCallArguments) {
  onMultiEdges([](scComm_t comm, int rank, const Graph& g, scTopology_t t, size_t in) {
    std::vector<int> x(8), y(8 * in + 8);
    std::vector<size_t> counts(in + 1, 2), displs(in + 1);
    for (size_t e = 0; e < in; ++e) displs[e] = 2 * e;
    for (scNbrAlgo_t a : kAllAlgos) {
      SCOPED_TRACE(algoStr(a));
      EXPECT_TRUE(failedWith(scNeighborAllGather(x.data(), 2, y.data(), scDataType_t(scNumTypes), a, t, nullptr),
                             scInvalidArgument, comm, "data type"));
      EXPECT_TRUE(failedWith(scNeighborAllGather(nullptr, 2, y.data(), scInt32, a, t, nullptr), scInvalidArgument, comm,
                             "send is NULL"));
      if (in)
        EXPECT_TRUE(failedWith(scNeighborAllGather(x.data(), 2, nullptr, scInt32, a, t, nullptr), scInvalidArgument,
                               comm, "recv is NULL"));
      int notAStream = 0;
      EXPECT_TRUE(failedWith(scNeighborAllGather(x.data(), 2, y.data(), scInt32, a, t, &notAStream), scInvalidArgument,
                             comm, "stream"));
      EXPECT_TRUE(failedWith(scNeighborAllGather(x.data(), SIZE_MAX / 2, y.data(), scInt32, a, t, nullptr),
                             scInvalidArgument, comm, "sendcount"));
      if (in) {
        EXPECT_TRUE(
            failedWith(scNeighborAllGatherV(x.data(), 2, y.data(), nullptr, displs.data(), scInt32, a, t, nullptr),
                       scInvalidArgument, comm, "recvcounts"));
        std::vector<size_t> over = displs;
        over[0] = 1;  // block 0 overlaps block 1 (or the end of a single block moves: no overlap)
        if (in > 1)
          EXPECT_TRUE(failedWith(scNeighborAllGatherV(x.data(), 2, y.data(), counts.data(), over.data(), scInt32, a, t,
                                                      nullptr),
                                 scInvalidArgument, comm, "overlap"));
        over[0] = SIZE_MAX;
        EXPECT_TRUE(
            failedWith(scNeighborAllGatherV(x.data(), 2, y.data(), counts.data(), over.data(), scInt32, a, t, nullptr),
                       scInvalidArgument, comm, "overflows"));
      }
    }
    for (int bad : {-1, int(scNumNbrAlgos)})
      EXPECT_TRUE(failedWith(scNeighborAllGather(x.data(), 2, y.data(), scInt32, scNbrAlgo_t(bad), t, nullptr),
                             scInvalidArgument, comm, "algorithm"));
    EXPECT_TRUE(failedWith(scNeighborAlgoFor(t, 8, nullptr), scInvalidArgument, comm, "algo"));
    // Zero counts need no buffers.
    EXPECT_EQ(scNeighborAllGather(nullptr, 0, nullptr, scInt32, scNbrAuto, t, nullptr), scSuccess)
        << scGetLastError(comm);
    EXPECT_TRUE(checkCall(comm, t, g, rank, {scNbrCombining, scInt8, 4, true, 3})) << "the topology stopped working";
  });
}

}  // namespace
}  // namespace ntest
