// Communicators with a topology file, continued (test_topology_comm.cpp has
// the per-link traffic of the rings and the creation errors): the cost model
// pricing the tree's links, DSOP's ring, uneven blocks for every P and root,
// and scCommShrink keeping the ranks' machines.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/harness.h"
#include "sparcoll/dsop.h"
#include "topo_util.h"

using namespace topotest;
using sctest::ScopedEnv;

namespace {

// The cost model prices the tree's links (model/model.h): on a blocked
// placement (a0 a0 a1 a1 b0 b0 b1 b1) Rabenseifner's first halving step puts
// every rank's half vector on the 1 Gbit/s uplink, the ring in tree order one
// block per step each way.
TEST(TopologyModel, EstimatesPriceTheMostLoadedLink) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport";
  const std::string file = writeFile("m.json", kTree);
  const size_t count = size_t(16) << 20;  // 64 MiB of float
  const double bytes = double(count) * 4;
  double ring = 0, rab = 0, ring0 = 0, rab0 = 0;
  int pick = -1;
  for (const bool topo : {false, true}) {
    ScopedEnv h("SPARCOLL_HOSTNAME", "a0,a0,a1,a1,b0,b0,b1,b1");
    scConfig_t cfg = sctest::testConfig();
    if (topo) cfg.topologyFile = file.c_str();
    sctest::run(
        8,
        [&](scComm_t comm, int r) {
          if (r != 0) return;
          int a;
          double t;
          SC_OK(comm,
                scEstimateTime(comm, scCollAllReduce, scAlgoRing, count, scFloat32, 0, topo ? &ring : &ring0, &a));
          SC_OK(comm, scEstimateTime(comm, scCollAllReduce, scAlgoRabenseifner, count, scFloat32, 0,
                                     topo ? &rab : &rab0, &a));
          SC_OK(comm, scEstimateTime(comm, scCollAllReduce, scAlgoAuto, count, scFloat32, 0, &t, &a));
          if (topo) pick = a;
        },
        &cfg);
  }
  // The ring: 14 steps of 1/8 of the bytes over the 1 Gbit/s uplink each way.
  EXPECT_GE(ring, 14 * bytes / 8 * 8 / 1e9 * 0.999);
  // Rabenseifner: 2 x (half the vector from 4 ranks, 2 bytes per byte on the
  // uplink, + a quarter from 2 ranks on each 10 Gbit/s host link).
  EXPECT_GE(rab, 2 * (2 * bytes * 8 / 1e9 + 0.5 * bytes * 8 / 1e10) * 0.999);
  EXPECT_LT(ring, rab);
  EXPECT_EQ(pick, scAlgoRing);
  EXPECT_GE(ring, ring0);  // never cheaper than without the tree
  EXPECT_GE(rab, rab0);
  std::remove(file.c_str());
}

// Each step of the tree costs at least its bytes at the model's beta_s (a
// medium every message crosses: the shared cores of a virtual cluster), per
// step beside its links. 4 ranks interleaved (a0 b0 a1 b1), alpha = beta =
// gamma = 0, beta_s = 3 ns per byte, per byte of the vector:
//   ring (order 0 2 1 3): each of 6 steps moves 1/4 from every rank, 1 vector
//     in all (3 ns); its uplink 1/4 each way (2 ns): 18;
//   rabenseifner: d = 2 inside the switches, 2 vectors in all (6 ns; host
//     links 0.4 ns), d = 1 across, 1 vector (3 ns) but the uplink 1/2 each
//     way (4 ns): 2 x (6 + 4) = 20;
//   recdbl: d = 1 across, 4 vectors (12 ns), uplink 2 each way (16 ns); d = 2
//     4 vectors (12 ns): 28.
// Over the whole call ring and rabenseifner both send 6 vectors (18 ns at
// beta_s), and their link sums are 12 and 8.8 ns: taken apart, the two terms
// would tie them at 18.
TEST(TopologyModel, SharedMediumPerStep) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport";
  const std::string file = writeFile("shared.json", kTree);
  const std::string hn = names(4);
  ScopedEnv h("SPARCOLL_HOSTNAME", hn.c_str()), a("SPARCOLL_ALPHA", "0"), b("SPARCOLL_BETA", "0"),
      g("SPARCOLL_GAMMA", "0"), bs("SPARCOLL_BETA_SHARED", "3e-9");
  scConfig_t cfg = sctest::testConfig();
  cfg.topologyFile = file.c_str();
  sctest::run(
      4,
      [&](scComm_t comm, int r) {
        if (r != 0) return;
        const size_t count = size_t(1) << 20;
        const double bytes = double(count) * 4;
        const struct {
          int algo;
          double ns;
        } wants[] = {{scAlgoRing, 18}, {scAlgoRabenseifner, 20}, {scAlgoRecDbl, 28}};
        int pick = -1;
        for (const auto& w : wants) {
          double t = -1;
          SC_OK(comm, scEstimateTime(comm, scCollAllReduce, w.algo, count, scFloat32, 0, &t, &pick));
          EXPECT_NEAR(t, w.ns * 1e-9 * bytes, 1e-9 * t) << scAlgoName(scAlgo_t(w.algo));
        }
        EXPECT_EQ(pick, scAlgoRing);
      },
      &cfg);
  std::remove(file.c_str());
}

}  // namespace

namespace {

// DSOP's allreduce_ring runs in the ring order too: exact results, and
// its traffic crosses the uplink once each way per step.
TEST(TopologyRing, DsopAllReduceRing) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport";
  const int P = 8;
  const size_t n = 16, m = 12;  // n*m = 192 = 24 elements per block
  const std::string file = writeFile("dsop.json", kTree);
  const std::string hn = names(P);
  ScopedEnv h("SPARCOLL_HOSTNAME", hn.c_str());
  scConfig_t cfg = sctest::testConfig();
  cfg.topologyFile = file.c_str();
  std::vector<uint64_t> up(static_cast<size_t>(P)), down(static_cast<size_t>(P));
  sctest::run(
      P,
      [&](scComm_t comm, int r) {
        std::vector<double> a(n), b(m), G(n * m, -1);  // small integers: exact in double
        for (size_t i = 0; i < n; ++i) a[i] = double(r + 1 + int(i));
        for (size_t j = 0; j < m; ++j) b[j] = double(2 * r - int(j));
        SC_OK(comm, scCommResetStats(comm));
        SC_OK(comm, scDsop(a.data(), n, b.data(), m, G.data(), scFloat64, scDsopAllReduceRing, comm, nullptr));
        for (size_t i = 0; i < n; ++i)
          for (size_t j = 0; j < m; ++j) {
            int64_t s = 0;
            for (int q = 0; q < P; ++q) s += int64_t(q + 1 + int(i)) * (2 * q - int(j));
            ASSERT_EQ(G[i * m + j], double(s)) << "rank " << r << " (" << i << ", " << j << ")";
          }
        std::vector<uint64_t> links(kLinks);
        int nl = kLinks;
        SC_OK(comm, scCommGetLinkTraffic(comm, links.data(), &nl));
        up[size_t(r)] = links[kUp];
        down[size_t(r)] = links[kDown];
      },
      &cfg);
  uint64_t su = 0, sd = 0;
  for (int r = 0; r < P; ++r) su += up[size_t(r)], sd += down[size_t(r)];
  // 2(P-1) steps of one 24-element block, once each way per step (rank
  // order on this placement: P/2 = 4 times).
  EXPECT_EQ(su, uint64_t(2 * (P - 1)) * 24 * 8);
  EXPECT_EQ(sd, uint64_t(2 * (P - 1)) * 24 * 8);
  std::remove(file.c_str());
}

}  // namespace

namespace {

// Every P from 1 to 7, uneven blocks (count not a multiple of P), a
// placement whose tree order is neither rank order nor its reverse, every
// ring collective and broadcast root: exact int32 results.
TEST(TopologyRing, UnevenBlocksEveryP) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport";
  const std::string file = writeFile("uneven.json", kTree);
  for (int P = 1; P <= 7; ++P) {
    SCOPED_TRACE("P=" + std::to_string(P));
    std::string hn;
    static const char* const kPick[] = {"b1", "a1", "b0", "a0", "a1", "b1", "a0"};
    for (int r = 0; r < P; ++r) hn += std::string(r ? "," : "") + kPick[r];
    ScopedEnv h("SPARCOLL_HOSTNAME", hn.c_str());
    scConfig_t cfg = sctest::testConfig();
    cfg.topologyFile = file.c_str();
    cfg.pipelineBytes = 40;
    const size_t n = 37, N = n * size_t(P) + 5;  // allreduce/broadcast: N; reduce-scatter/allgather: n per rank
    sctest::run(
        P,
        [&](scComm_t comm, int r) {
          std::vector<int32_t> in(N), out(N, -1);
          for (size_t i = 0; i < N; ++i) in[i] = int32_t((r + 1) * 7919 + int(i) * 31);
          auto sum = [&](size_t i) {
            int64_t s = 0;
            for (int q = 0; q < P; ++q) s += (q + 1) * 7919 + int(i) * 31;
            return int32_t(s);
          };
          SC_OK(comm, scAllReduce(in.data(), out.data(), N, scInt32, scSum, scAlgoRing, comm, nullptr));
          for (size_t i = 0; i < N; ++i) ASSERT_EQ(out[i], sum(i)) << "allreduce rank " << r << " element " << i;
          SC_OK(comm, scReduceScatter(in.data(), out.data(), n, scInt32, scSum, scAlgoRing, comm, nullptr));
          for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], sum(size_t(r) * n + i)) << "reduce-scatter rank " << r;
          SC_OK(comm, scAllGather(in.data(), out.data(), n, scInt32, scAlgoRing, comm, nullptr));
          for (int q = 0; q < P; ++q)
            for (size_t i = 0; i < n; ++i)
              ASSERT_EQ(out[size_t(q) * n + i], (q + 1) * 7919 + int(i) * 31) << "allgather rank " << r;
          for (int root = 0; root < P; ++root) {
            std::vector<int32_t> buf = r == root ? in : std::vector<int32_t>(N, -3);
            SC_OK(comm, scBroadcast(buf.data(), N, scInt32, root, scAlgoScatterAllGather, comm, nullptr));
            for (size_t i = 0; i < N; ++i)
              ASSERT_EQ(buf[i], (root + 1) * 7919 + int(i) * 31) << "broadcast root " << root << " rank " << r;
          }
        },
        &cfg);
  }
  std::remove(file.c_str());
}

}  // namespace

namespace {

// scCommShrink keeps the machines of the ranks left: without rank 0 (a0),
// ranks 1 2 3 (b0 a1 b1) become 0 1 2, and the tree order is 1 0 2.
TEST(TopologyRing, ShrinkKeepsTheMachines) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "local transport";
  const std::string file = writeFile("shrink.json", kTree);
  ScopedEnv h("SPARCOLL_HOSTNAME", "a0,b0,a1,b1");
  scConfig_t cfg = sctest::testConfig();
  cfg.topologyFile = file.c_str();
  sctest::run(
      4,
      [&](scComm_t comm, int r) {
        if (r == 0) return;  // the excluded rank takes no part
        const int ex = 0;
        scComm_t small = nullptr;
        SC_OK(comm, scCommShrink(comm, &ex, 1, &small));
        int order[3];
        SC_OK(small, scCommGetRingOrder(small, order));
        EXPECT_EQ(order[0], 1);
        EXPECT_EQ(order[1], 0);
        EXPECT_EQ(order[2], 2);
        std::vector<int32_t> in(30, r), out(30);
        SC_OK(small, scAllReduce(in.data(), out.data(), 30, scInt32, scSum, scAlgoRing, small, nullptr));
        for (int32_t v : out) ASSERT_EQ(v, 1 + 2 + 3);
        int nl = 0;
        SC_OK(small, scCommGetLinkTraffic(small, nullptr, &nl));
        EXPECT_EQ(nl, kLinks);
        SC_OK(small, scCommDestroy(small));
      },
      &cfg);
  std::remove(file.c_str());
}

}  // namespace
