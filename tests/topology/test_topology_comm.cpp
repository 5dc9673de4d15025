// Communicators with a topology file: on the local transport with per-rank
// machine names (SPARCOLL_HOSTNAME="a0,b0,..."), the exact per-link traffic of
// every ring (allreduce, reduce-scatter, allgather, broadcast's
// scatter_allgather) in topology order against rank order on an interleaved
// placement, the results, and the creation errors; on MPI the names exchange
// and ranks that read different files. The tree and the placement:
// topo_util.h.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "common/harness.h"
#include "sparcoll/dsop.h"
#include "topo_util.h"

#ifdef SPARCOLL_TEST_MPI
#include <mpi.h>
#endif

namespace {

using namespace topotest;
using sctest::ScopedEnv;

// The ring order: hosts depth-first (a0 a1 b0 b1), each host's ranks in rank order.
std::vector<int> treeOrder(int P) {
  std::vector<int> o;
  for (int h = 0; h < 4; ++h)
    for (int r = 0; r < P; ++r)
      if (hostOfRank(r) == h) o.push_back(r);
  return o;
}
std::vector<int> rankOrder(int P) {
  std::vector<int> o;
  for (int r = 0; r < P; ++r) o.push_back(r);
  return o;
}

// Every rank's link counters after one call, and the sum over ranks.
struct Traffic {
  std::vector<std::vector<uint64_t>> perRank;
  std::vector<uint64_t> sum = std::vector<uint64_t>(kLinks, 0);
};

enum class Op { AllReduce, ReduceScatter, AllGather, Broadcast };

// Runs `op` on P local ranks with the tree (ring order `order` expected),
// n elements per block, checks the results and returns the traffic.
Traffic runOp(int P, Op op, size_t n, const std::vector<int>& order) {
  const std::string file = writeFile("tree.json", kTree);
  const std::string hn = names(P);
  ScopedEnv t("SPARCOLL_TOPOLOGY_FILE", file.c_str()), h("SPARCOLL_HOSTNAME", hn.c_str());
  scConfig_t cfg = sctest::testConfig();
  cfg.pipelineBytes = 96;  // several slices per block: the bytes stay the same
  Traffic tr;
  tr.perRank.assign(size_t(P), std::vector<uint64_t>(kLinks, 0));
  std::mutex mu;
  sctest::run(
      P,
      [&](scComm_t comm, int r) {
        std::vector<int> got(static_cast<size_t>(P));
        SC_OK(comm, scCommGetRingOrder(comm, got.data()));
        EXPECT_EQ(got, order) << "rank " << r;
        const size_t N = n * size_t(P);
        std::vector<int32_t> in(N), out(N, -1);
        for (size_t i = 0; i < N; ++i) in[i] = int32_t(r * 1000 + int(i % 97));
        auto expectSum = [&](size_t i) {
          int64_t s = 0;
          for (int q = 0; q < P; ++q) s += q * 1000 + int(i % 97);
          return int32_t(s);
        };
        SC_OK(comm, scCommResetStats(comm));
        switch (op) {
          case Op::AllReduce:
            SC_OK(comm, scAllReduce(in.data(), out.data(), N, scInt32, scSum, scAlgoRing, comm, nullptr));
            for (size_t i = 0; i < N; ++i) ASSERT_EQ(out[i], expectSum(i)) << "rank " << r << " element " << i;
            break;
          case Op::ReduceScatter:
            SC_OK(comm, scReduceScatter(in.data(), out.data(), n, scInt32, scSum, scAlgoRing, comm, nullptr));
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], expectSum(size_t(r) * n + i)) << "rank " << r;
            break;
          case Op::AllGather:
            SC_OK(comm, scAllGather(in.data(), out.data(), n, scInt32, scAlgoRing, comm, nullptr));
            for (int q = 0; q < P; ++q)
              for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[size_t(q) * n + i], q * 1000 + int(i % 97)) << "rank " << r;
            break;
          case Op::Broadcast: {
            std::vector<int32_t> buf = r == 0 ? in : std::vector<int32_t>(N, -7);
            SC_OK(comm, scBroadcast(buf.data(), N, scInt32, 0, scAlgoScatterAllGather, comm, nullptr));
            for (size_t i = 0; i < N; ++i) ASSERT_EQ(buf[i], int32_t(i % 97)) << "rank " << r;
            break;
          }
        }
        int nl = kLinks;
        std::vector<uint64_t> links(kLinks);
        SC_OK(comm, scCommGetLinkTraffic(comm, links.data(), &nl));
        ASSERT_EQ(nl, kLinks);
        scStats_t st;
        SC_OK(comm, scCommGetStats(comm, &st));
        uint64_t mx = 0;
        for (uint64_t b : links) mx = std::max(mx, b);
        EXPECT_EQ(st.maxLinkBytes, mx) << "rank " << r;
        std::lock_guard<std::mutex> lk(mu);
        tr.perRank[size_t(r)] = links;
      },
      &cfg);
  for (const auto& l : tr.perRank)
    for (int i = 0; i < kLinks; ++i) tr.sum[size_t(i)] += l[size_t(i)];
  std::remove(file.c_str());
  return tr;
}

// What the schedule's messages put on the links, from the ring order: each of
// `steps` ring steps moves one block (`block` bytes) from every position to
// the next; broadcast adds the binomial scatter from root 0 (rank rel gets
// the blocks [rel, rel + lowbit(rel)) from rel - lowbit(rel)).
std::vector<std::vector<uint64_t>> expected(int P, const std::vector<int>& order, int steps, uint64_t block,
                                            bool scatter) {
  std::vector<std::vector<uint64_t>> e(size_t(P), std::vector<uint64_t>(kLinks, 0));
  for (int i = 0; i < P; ++i) {
    const int from = order[size_t(i)], to = order[size_t((i + 1) % P)];
    crossLinks(e[size_t(from)], hostOfRank(from), hostOfRank(to), uint64_t(steps) * block);
  }
  if (scatter)
    for (int rel = 1; rel < P; ++rel) {
      const int low = rel & -rel, parent = rel - low, blocks = std::min(rel + low, P) - rel;
      crossLinks(e[size_t(parent)], hostOfRank(parent), hostOfRank(rel), uint64_t(blocks) * block);
    }
  return e;
}

void checkTraffic(const char* what, int P, Op op, int steps, bool scatter) {
  SCOPED_TRACE(what);
  const size_t n = 40;  // elements per block
  const uint64_t block = n * 4;
  for (const bool tree : {true, false}) {
    SCOPED_TRACE(tree ? "topology order" : "rank order (SPARCOLL_RING_ORDER=rank)");
    ScopedEnv ro("SPARCOLL_RING_ORDER", tree ? "topology" : "rank");
    const std::vector<int> order = tree ? treeOrder(P) : rankOrder(P);
    const Traffic got = runOp(P, op, n, order);
    if (sctest::mode() != sctest::Mode::Local) continue;
    const auto want = expected(P, order, steps, block, scatter);
    for (int r = 0; r < P; ++r) EXPECT_EQ(got.perRank[size_t(r)], want[size_t(r)]) << "rank " << r;
    // The uplink, summed over the ranks: in topology order the ring crosses
    // it once each way per step; in rank order on the interleaved placement
    // every hop crosses it, P/2 times each way per step.
    const uint64_t ring = uint64_t(steps) * block * (tree ? 1 : uint64_t(P / 2));
    uint64_t scatterDown = 0, scatterUp = 0;
    if (scatter)
      for (int rel = 1; rel < P; ++rel) {
        const int low = rel & -rel, parent = rel - low;
        const uint64_t b = uint64_t(std::min(rel + low, P) - rel) * block;
        if (hostOfRank(parent) < 2 && hostOfRank(rel) >= 2) scatterDown += b;
        if (hostOfRank(parent) >= 2 && hostOfRank(rel) < 2) scatterUp += b;
      }
    EXPECT_EQ(got.sum[kUp], ring + scatterUp);
    EXPECT_EQ(got.sum[kDown], ring + scatterDown);
  }
}

bool localOnly() { return sctest::mode() == sctest::Mode::Local; }

TEST(TopologyRing, AllReduceTrafficPerLink) {
  if (!localOnly()) GTEST_SKIP() << "the names of the local ranks: local transport";
  for (int P : {4, 8}) checkTraffic(P == 4 ? "P=4" : "P=8, two ranks per host", P, Op::AllReduce, 2 * (P - 1), false);
}

TEST(TopologyRing, ReduceScatterTrafficPerLink) {
  if (!localOnly()) GTEST_SKIP() << "local transport";
  for (int P : {4, 8}) checkTraffic("reduce-scatter", P, Op::ReduceScatter, P - 1, false);
}

TEST(TopologyRing, AllGatherTrafficPerLink) {
  if (!localOnly()) GTEST_SKIP() << "local transport";
  for (int P : {4, 8}) checkTraffic("allgather", P, Op::AllGather, P - 1, false);
}

TEST(TopologyRing, BroadcastScatterAllGatherTrafficPerLink) {
  if (!localOnly()) GTEST_SKIP() << "local transport";
  for (int P : {4, 8}) checkTraffic("broadcast", P, Op::Broadcast, P - 1, true);
}

// Floats: the summation order follows the ring, so the result may differ in
// the last bits from rank order's, but every rank holds the same bits.
TEST(TopologyRing, FloatAllReduceBitIdenticalAcrossRanks) {
  if (!localOnly()) GTEST_SKIP() << "local transport";
  const int P = 8;
  const size_t N = 1000;
  auto runOnce = [&](bool topo) {
    const std::string file = writeFile("f.json", kTree);
    const std::string hn = names(P);
    ScopedEnv h("SPARCOLL_HOSTNAME", hn.c_str());
    scConfig_t cfg = sctest::testConfig();
    if (topo) cfg.topologyFile = file.c_str();
    std::vector<std::vector<float>> res(static_cast<size_t>(P));
    sctest::run(
        P,
        [&](scComm_t comm, int r) {
          std::vector<float> in(N), out(N);
          for (size_t i = 0; i < N; ++i) in[i] = std::sin(float(i * 7 + size_t(r) * 13)) * float(1 + r) / 3.0f;
          SC_OK(comm, scAllReduce(in.data(), out.data(), N, scFloat32, scSum, scAlgoRing, comm, nullptr));
          res[size_t(r)] = out;
        },
        &cfg);
    std::remove(file.c_str());
    return res;
  };
  const auto tree = runOnce(true), plain = runOnce(false);
  // Bit for bit: the floats' object representations are the point.
  for (int r = 1; r < P; ++r)
    // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
    EXPECT_EQ(std::memcmp(tree[size_t(r)].data(), tree[0].data(), N * 4), 0) << "rank " << r;
  for (size_t i = 0; i < N; ++i) EXPECT_NEAR(tree[0][i], plain[0][i], 1e-5 * (1 + std::fabs(plain[0][i])));
}

// Without a file nothing changes: rank order, no links.
TEST(TopologyRing, NoFileRankOrderNoLinks) {
  ScopedEnv t("SPARCOLL_TOPOLOGY_FILE", "");
  sctest::run(3, [&](scComm_t comm, int) {
    int order[3];
    SC_OK(comm, scCommGetRingOrder(comm, order));
    EXPECT_EQ(order[0], 0);
    EXPECT_EQ(order[2], 2);
    int nl = 0;
    SC_OK(comm, scCommGetLinkTraffic(comm, nullptr, &nl));
    EXPECT_EQ(nl, 0);
  });
}

// Creation errors on the local transport: one call makes every rank, so one
// error for all of them.
scResult_t initLocal(int P, const scConfig_t* cfg, std::string* msg) {
  std::vector<scComm_t> c(size_t(P), nullptr);
  const scResult_t r = scCommInitLocal(c.data(), P, nullptr, cfg);
  *msg = scGetLastError(nullptr);
  if (r == scSuccess)
    for (auto x : c) scCommDestroy(x);
  return r;
}

TEST(TopologyErrors, LocalCreation) {
  if (!localOnly()) GTEST_SKIP() << "local transport";
  std::string msg;
  scConfig_t cfg = sctest::testConfig();
  const std::string good = writeFile("good.json", kTree);
  std::string badText = kTree;
  badText.replace(badText.find("\"name\": \"sw0\""), 13, "\"name\": \"sw0\", \"speed\": 1");
  const std::string bad = writeFile("bad.json", badText);
  {
    ScopedEnv h("SPARCOLL_HOSTNAME", "a0,b0,a1,b1");
    cfg.topologyFile = bad.c_str();
    EXPECT_EQ(initLocal(4, &cfg, &msg), scInvalidArgument);
    EXPECT_NE(msg.find("topology file '" + bad + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("unknown key \"speed\""), std::string::npos) << msg;
    cfg.topologyFile = "/nonexistent/sparcoll-topology.json";
    EXPECT_EQ(initLocal(4, &cfg, &msg), scInvalidArgument);
    EXPECT_NE(msg.find("cannot read"), std::string::npos) << msg;
    // The environment variable is the fallback of the field, and the field beats it.
    cfg.topologyFile = nullptr;
    {
      ScopedEnv t("SPARCOLL_TOPOLOGY_FILE", bad.c_str());
      EXPECT_EQ(initLocal(4, &cfg, &msg), scInvalidArgument);
      cfg.topologyFile = good.c_str();
      EXPECT_EQ(initLocal(4, &cfg, &msg), scSuccess) << msg;
    }
    // A caller built before topologyFile passes the older size: the field is not read.
    scConfig_t old = sctest::testConfig();
    old.size = offsetof(scConfig_t, topologyFile);
    old.topologyFile = bad.c_str();
    EXPECT_EQ(initLocal(4, &old, &msg), scSuccess) << msg;
    cfg.topologyFile = good.c_str();
    EXPECT_EQ(initLocal(3, &cfg, &msg), scInvalidArgument);  // 4 names for 3 ranks
    EXPECT_NE(msg.find("SPARCOLL_HOSTNAME"), std::string::npos) << msg;
  }
  {
    ScopedEnv h("SPARCOLL_HOSTNAME", "a0,b0,zz9,b1");
    EXPECT_EQ(initLocal(4, &cfg, &msg), scInvalidArgument);
    EXPECT_NE(msg.find("no host for rank 2 on 'zz9'"), std::string::npos) << msg;
  }
  {
    ScopedEnv h("SPARCOLL_HOSTNAME", "10.77.0.3");  // one name for all: b0's address
    EXPECT_EQ(initLocal(2, &cfg, &msg), scSuccess) << msg;
    ScopedEnv o("SPARCOLL_RING_ORDER", "sideways");
    EXPECT_EQ(initLocal(2, &cfg, &msg), scInvalidArgument);
    EXPECT_NE(msg.find("SPARCOLL_RING_ORDER"), std::string::npos) << msg;
  }
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

#ifdef SPARCOLL_TEST_MPI
// MPI: the names are gathered over the communicator, and every rank gets the
// same verdict.
scResult_t initMpi(const scConfig_t* cfg, std::string* msg) {
  scComm_t c = nullptr;
  const scResult_t r = scCommInitMpi(&c, nullptr, cfg);
  *msg = scGetLastError(nullptr);
  if (r == scSuccess) scCommDestroy(c);
  return r;
}

// Every rank writes its own copy (a file per node), equal or not.
std::string rankFile(const std::string& tag, const std::string& text) {
  return writeFile(tag + "-rank" + std::to_string(sctest::mpiWorldRank()) + ".json", text);
}

TEST(TopologyMpi, ExchangeOrderAndResult) {
  const int P = sctest::mpiWorldSize();
  const std::string file = rankFile("x", kTree);
  const std::string hn = names(P);
  ScopedEnv h("SPARCOLL_HOSTNAME", hn.c_str());
  scConfig_t cfg = sctest::testConfig();
  cfg.topologyFile = file.c_str();
  sctest::run(
      P,
      [&](scComm_t comm, int r) {
        std::vector<int> got(static_cast<size_t>(P));
        SC_OK(comm, scCommGetRingOrder(comm, got.data()));
        EXPECT_EQ(got, treeOrder(P));
        const size_t N = 64 * size_t(P);
        std::vector<int32_t> in(N, r + 1), out(N);
        SC_OK(comm, scCommResetStats(comm));
        SC_OK(comm, scAllReduce(in.data(), out.data(), N, scInt32, scSum, scAlgoRing, comm, nullptr));
        for (auto v : out) ASSERT_EQ(v, P * (P + 1) / 2);
        std::vector<uint64_t> links(kLinks);
        int nl = kLinks;
        SC_OK(comm, scCommGetLinkTraffic(comm, links.data(), &nl));
        EXPECT_EQ(links, expected(P, treeOrder(P), 2 * (P - 1), uint64_t(64) * 4, false)[size_t(r)]);
      },
      &cfg);
  std::remove(file.c_str());
}

TEST(TopologyMpi, DifferentFilesFailEveryRank) {
  const int P = sctest::mpiWorldSize(), me = sctest::mpiWorldRank();
  if (P < 2) GTEST_SKIP();
  const std::string hn = names(P);
  ScopedEnv h("SPARCOLL_HOSTNAME", hn.c_str());
  std::string text = kTree;
  if (me == 1) text.replace(text.find("two-switch-2x2"), 14, "other-name-2x2");
  const std::string file = rankFile("d", text);
  scConfig_t cfg = sctest::testConfig();
  cfg.topologyFile = file.c_str();
  std::string msg;
  EXPECT_EQ(initMpi(&cfg, &msg), scInvalidUsage) << msg;
  EXPECT_NE(msg.find("topology file"), std::string::npos) << msg;
  // A bad file on one rank only: its contents differ too.
  std::string badText = kTree;
  if (me == P - 1) badText.replace(badText.find("\"version\": 1"), 12, "\"version\": 1, \"x\": 0");
  const std::string bad = rankFile("b", badText);
  cfg.topologyFile = bad.c_str();
  EXPECT_EQ(initMpi(&cfg, &msg), scInvalidUsage) << msg;
  // The same bad file everywhere: the parser's error on every rank.
  const std::string allBad = rankFile("ab", "{\"version\": 1, \"wires\": []}");
  cfg.topologyFile = allBad.c_str();
  EXPECT_EQ(initMpi(&cfg, &msg), scInvalidArgument) << msg;
  EXPECT_NE(msg.find("unknown key \"wires\""), std::string::npos) << msg;
  // One rank on a machine the file does not list.
  std::remove(file.c_str());
  const std::string same = rankFile("s", kTree);
  cfg.topologyFile = same.c_str();
  {
    ScopedEnv h1("SPARCOLL_HOSTNAME", me == 1 ? "nowhere" : "a0");
    EXPECT_EQ(initMpi(&cfg, &msg), scInvalidArgument) << msg;
    EXPECT_NE(msg.find("rank 1 on 'nowhere'"), std::string::npos) << msg;
  }
  // A file on some ranks only.
  cfg.topologyFile = me == 0 ? same.c_str() : nullptr;
  {
    ScopedEnv t("SPARCOLL_TOPOLOGY_FILE", "");
    EXPECT_EQ(initMpi(&cfg, &msg), scInvalidUsage) << msg;
  }
  for (const auto& f : {bad, allBad, same}) std::remove(f.c_str());
}
#endif

}  // namespace
