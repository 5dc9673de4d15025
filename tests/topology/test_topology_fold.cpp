// The butterflies on a P that is not a power of two (csrc/algo/fold.h): on the
// two-switch tree with 6 ranks interleaved (topo_util.h: ranks 0..5 on a0 b0
// a1 b1 a0 b0, so rank r is on switch r % 2), the exact bytes every rank puts
// on every link for Rabenseifner's allreduce, recursive doubling's, the
// halving reduce-scatter and the doubling allgather; and the cost model's
// link term for each, which prices the same messages step by step.
//
// The schedules at P = 6, by hand from fold.h: p2 = 4, r = 2 pairs fold (0 ->
// 1, 2 -> 3); new ranks 0 1 2 3 are old ranks 1 3 4 5; new rank 0 stands for
// old ranks 0 and 1 (2 blocks), 1 for 2 and 3, 2 for 4, 3 for 5. Partners at
// d = 2: old 1 <-> 4 (across the uplink), 3 <-> 5 (both on sw1); at d = 1:
// old 1 <-> 3 (sw1), 4 <-> 5 (across).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "common/harness.h"
#include "topo_util.h"

using namespace topotest;
using sctest::ScopedEnv;

namespace {

constexpr int kP = 6;

struct Message {
  int from, to;
  uint64_t bytes;
};

enum class Fold { AllReduceRabenseifner, AllReduceRecDbl, ReduceScatterHalving, AllGatherDoubling };

// Rabenseifner's allreduce of 240 int32 (960 B): the fold, the halving in 4
// pieces of 60 elements (d = 2: 2 pieces, 480 B; d = 1: 240 B), the
// doubling (the same messages in reverse order), the unfold.
const std::vector<Message> kRabenseifner = {{0, 1, 960}, {2, 3, 960},                            // fold
                                            {1, 4, 480}, {4, 1, 480}, {3, 5, 480}, {5, 3, 480},  // halving d = 2
                                            {1, 3, 240}, {3, 1, 240}, {4, 5, 240}, {5, 4, 240},  // halving d = 1
                                            {1, 3, 240}, {3, 1, 240}, {4, 5, 240}, {5, 4, 240},  // doubling d = 1
                                            {1, 4, 480}, {4, 1, 480}, {3, 5, 480}, {5, 3, 480},  // doubling d = 2
                                            {1, 0, 960}, {3, 2, 960}};                           // unfold
// Recursive doubling of 240 int32: the whole 960 B at every step.
const std::vector<Message> kRecDbl = {{0, 1, 960}, {2, 3, 960},                            // fold
                                      {1, 3, 960}, {3, 1, 960}, {4, 5, 960}, {5, 4, 960},  // d = 1
                                      {1, 4, 960}, {4, 1, 960}, {3, 5, 960}, {5, 3, 960},  // d = 2
                                      {1, 0, 960}, {3, 2, 960}};                           // unfold
// Halving reduce-scatter of 40 int32 per rank (blocks of 160 B, 960 B in
// all): the fold sends the whole vector; at d = 2 the lower new rank (old 1,
// 3) gives new ranks 2..3's blocks (old 4, 5: 2 blocks), the upper (old 4, 5)
// new ranks 0..1's (old 0..3: 4 blocks); at d = 1 new rank 0 and 1 give each
// other 2 blocks, 2 and 3 one; the unfold sends the even rank its block.
const std::vector<Message> kHalving = {{0, 1, 960}, {2, 3, 960},                            // fold
                                       {1, 4, 320}, {4, 1, 640}, {3, 5, 320}, {5, 3, 640},  // d = 2
                                       {1, 3, 320}, {3, 1, 320}, {4, 5, 160}, {5, 4, 160},  // d = 1
                                       {1, 0, 160}, {3, 2, 160}};                           // unfold
// Doubling allgather of 40 int32 per rank: the fold sends the even rank's
// block; at d = 1 every new rank sends its own piece (old 1, 3: 2 blocks; 4,
// 5: 1), at d = 2 its half (old 1, 3: blocks 0..3; 4, 5: blocks 4..5); the
// unfold sends the whole 960 B result.
const std::vector<Message> kDoubling = {{0, 1, 160}, {2, 3, 160},                            // fold
                                        {1, 3, 320}, {3, 1, 320}, {4, 5, 160}, {5, 4, 160},  // d = 1
                                        {1, 4, 640}, {3, 5, 640}, {4, 1, 320}, {5, 3, 320},  // d = 2
                                        {1, 0, 960}, {3, 2, 960}};                           // unfold

// Each rank's links from the messages it sends (topo_util.h: crossLinks).
std::vector<std::vector<uint64_t>> linksOf(const std::vector<Message>& msgs) {
  std::vector<std::vector<uint64_t>> e(size_t(kP), std::vector<uint64_t>(kLinks, 0));
  for (const Message& m : msgs) crossLinks(e[size_t(m.from)], hostOfRank(m.from), hostOfRank(m.to), m.bytes);
  return e;
}

// Runs one folding collective on 6 local ranks and returns every rank's link
// counters, checking the result (int32 sums: exact).
std::vector<std::vector<uint64_t>> runFold(Fold op) {
  const std::string file = writeFile("fold.json", kTree);
  const std::string hn = names(kP);
  ScopedEnv h("SPARCOLL_HOSTNAME", hn.c_str());
  scConfig_t cfg = sctest::testConfig();
  cfg.topologyFile = file.c_str();
  cfg.pipelineBytes = 96;  // several slices per message: the bytes stay the same
  std::vector<std::vector<uint64_t>> got(static_cast<size_t>(kP));
  std::mutex mu;
  sctest::run(
      kP,
      [&](scComm_t comm, int r) {
        const size_t block = 40, N = block * kP;  // 240 elements
        std::vector<int32_t> in(N), out(N, -1);
        for (size_t i = 0; i < N; ++i) in[i] = int32_t(r * 1000 + int(i % 89));
        auto sum = [&](size_t i) {
          int64_t s = 0;
          for (int q = 0; q < kP; ++q) s += q * 1000 + int(i % 89);
          return int32_t(s);
        };
        SC_OK(comm, scCommResetStats(comm));
        switch (op) {
          case Fold::AllReduceRabenseifner:
          case Fold::AllReduceRecDbl:
            SC_OK(comm, scAllReduce(in.data(), out.data(), N, scInt32, scSum,
                                    op == Fold::AllReduceRecDbl ? scAlgoRecDbl : scAlgoRabenseifner, comm, nullptr));
            for (size_t i = 0; i < N; ++i) ASSERT_EQ(out[i], sum(i)) << "rank " << r << " element " << i;
            break;
          case Fold::ReduceScatterHalving:
            SC_OK(comm,
                  scReduceScatter(in.data(), out.data(), block, scInt32, scSum, scAlgoRabenseifner, comm, nullptr));
            for (size_t i = 0; i < block; ++i) ASSERT_EQ(out[i], sum(size_t(r) * block + i)) << "rank " << r;
            break;
          case Fold::AllGatherDoubling:
            SC_OK(comm, scAllGather(in.data(), out.data(), block, scInt32, scAlgoRecDbl, comm, nullptr));
            for (int q = 0; q < kP; ++q)
              for (size_t i = 0; i < block; ++i)
                ASSERT_EQ(out[size_t(q) * block + i], q * 1000 + int(i % 89)) << "rank " << r << " block " << q;
            break;
        }
        std::vector<uint64_t> links(kLinks);
        int nl = kLinks;
        SC_OK(comm, scCommGetLinkTraffic(comm, links.data(), &nl));
        EXPECT_EQ(nl, kLinks);
        std::lock_guard<std::mutex> lk(mu);
        got[size_t(r)] = links;
      },
      &cfg);
  std::remove(file.c_str());
  return got;
}

void checkFold(Fold op, const std::vector<Message>& msgs, uint64_t up, uint64_t down) {
  const auto got = runFold(op);
  const auto want = linksOf(msgs);
  for (int r = 0; r < kP; ++r) EXPECT_EQ(got[size_t(r)], want[size_t(r)]) << "rank " << r;
  uint64_t su = 0, sd = 0;
  for (const auto& l : got) su += l[kUp], sd += l[kDown];
  EXPECT_EQ(su, up) << "uplink sw1 -> sw0, summed over ranks";
  EXPECT_EQ(sd, down) << "uplink sw0 -> sw1, summed over ranks";
}

bool localOnly() { return sctest::mode() == sctest::Mode::Local; }

// The uplink totals, by hand from the lists: the messages from an even rank
// (sw0) to an odd one go down, from odd to even up.
TEST(TopologyFold, RabenseifnerAllReduceTrafficPerLinkP6) {
  if (!localOnly()) GTEST_SKIP() << "local transport";
  // down: fold 2 x 960, 4 -> 1 2 x 480, 4 -> 5 2 x 240; up: the mirror.
  checkFold(Fold::AllReduceRabenseifner, kRabenseifner, 3360, 3360);
}

TEST(TopologyFold, RecDblAllReduceTrafficPerLinkP6) {
  if (!localOnly()) GTEST_SKIP() << "local transport";
  checkFold(Fold::AllReduceRecDbl, kRecDbl, 3840, 3840);  // 4 vectors of 960 B each way
}

TEST(TopologyFold, HalvingReduceScatterTrafficPerLinkP6) {
  if (!localOnly()) GTEST_SKIP() << "local transport";
  // down: fold 2 x 960, 4 -> 1 640, 4 -> 5 160; up: 1 -> 4 320, 5 -> 4 160, unfold 2 x 160.
  checkFold(Fold::ReduceScatterHalving, kHalving, 800, 2720);
}

TEST(TopologyFold, DoublingAllGatherTrafficPerLinkP6) {
  if (!localOnly()) GTEST_SKIP() << "local transport";
  // down: fold 2 x 160, 4 -> 5 160, 4 -> 1 320; up: 5 -> 4 160, 1 -> 4 640, unfold 2 x 960.
  checkFold(Fold::AllGatherDoubling, kDoubling, 2720, 800);
}

// The model's link term at P = 6, with alpha = beta = gamma = 0 so that the
// prediction is the link term alone: per byte of the call (the full vector),
// each step's most loaded link at its rate, summed. Every step below is set
// by the 1 Gbit/s uplink (8 ns per byte; the most a 10 Gbit/s host link
// carries in a step, 2 vectors from b0's two ranks, takes 1.6 ns per byte):
//   rabenseifner allreduce: fold 2 vectors down 16, halving d = 2 1/2 each way
//     4, d = 1 1/4 each way 2, doubling 4 + 2, unfold 2 vectors up 16: 44 ns;
//   recdbl allreduce: fold 16, d = 1 and d = 2 one vector each way 8 + 8,
//     unfold 16: 48 ns;
//   halving reduce-scatter: fold 16, d = 2 2/3 down (4 blocks of 6) 16/3,
//     d = 1 1/6 each way 4/3, unfold 2 blocks up 8/3: 76/3 ns;
//   doubling allgather: fold 2 blocks down 8/3, d = 1 4/3, d = 2 4/6 up 16/3,
//     unfold 2 vectors up 16: 76/3 ns;
//   ring (order 0 4 2 1 5 3: 2 -> 1 and 3 -> 0 cross, 1/6 each): 10 steps of
//     8/6: 40/3 ns.
// With the built-in parameters, auto then takes the ring at 64 MiB: without
// the fold's link term Rabenseifner was priced at its alpha-beta terms only,
// far below the ring's uplink time.
TEST(TopologyFold, EstimatesPriceTheFoldP6) {
  if (!localOnly()) GTEST_SKIP() << "local transport";
  const std::string file = writeFile("fold-model.json", kTree);
  const std::string hn = names(kP);
  ScopedEnv h("SPARCOLL_HOSTNAME", hn.c_str());
  struct Want {
    scCollective_t coll;
    int algo;
    double nsPerByte;
    const char* what;
  };
  const Want wants[] = {{scCollAllReduce, scAlgoRabenseifner, 44, "rabenseifner allreduce"},
                        {scCollAllReduce, scAlgoRecDbl, 48, "recdbl allreduce"},
                        {scCollReduceScatter, scAlgoRabenseifner, 76.0 / 3, "halving reduce-scatter"},
                        {scCollAllGather, scAlgoRecDbl, 76.0 / 3, "doubling allgather"},
                        {scCollAllReduce, scAlgoRing, 40.0 / 3, "ring allreduce"}};
  const size_t count = size_t(6) << 20;  // allreduce: 24 MiB; reduce-scatter, allgather: 6 Mi per rank
  {
    ScopedEnv a("SPARCOLL_ALPHA", "0"), b("SPARCOLL_BETA", "0"), g("SPARCOLL_GAMMA", "0");
    scConfig_t cfg = sctest::testConfig();
    cfg.topologyFile = file.c_str();
    sctest::run(
        kP,
        [&](scComm_t comm, int r) {
          if (r != 0) return;
          for (const Want& w : wants) {
            double t = -1;
            int pick = -1;
            SC_OK(comm, scEstimateTime(comm, w.coll, w.algo, count, scFloat32, 0, &t, &pick));
            const double bytes = double(count) * 4 * (w.coll == scCollAllReduce ? 1 : kP);
            EXPECT_NEAR(t, w.nsPerByte * 1e-9 * bytes, 1e-9 * t) << w.what;
          }
        },
        &cfg);
  }
  scConfig_t cfg = sctest::testConfig();
  cfg.topologyFile = file.c_str();
  sctest::run(
      kP,
      [&](scComm_t comm, int r) {
        if (r != 0) return;
        const size_t n = size_t(16) << 20;  // 64 MiB of float
        const double bytes = double(n) * 4;
        double ring = 0, rab = 0, recdbl = 0;
        int pick = -1, a;
        SC_OK(comm, scEstimateTime(comm, scCollAllReduce, scAlgoRing, n, scFloat32, 0, &ring, &a));
        SC_OK(comm, scEstimateTime(comm, scCollAllReduce, scAlgoRabenseifner, n, scFloat32, 0, &rab, &a));
        SC_OK(comm, scEstimateTime(comm, scCollAllReduce, scAlgoRecDbl, n, scFloat32, 0, &recdbl, &pick));
        EXPECT_EQ(pick, scAlgoRing);
        // At least the link term (plus alpha and gamma terms, a few per cent here).
        EXPECT_GE(ring, 40.0 / 3 * 1e-9 * bytes);
        EXPECT_LT(ring, 1.05 * 40.0 / 3 * 1e-9 * bytes);
        EXPECT_GE(rab, 44e-9 * bytes);
        EXPECT_GE(recdbl, 48e-9 * bytes);
      },
      &cfg);
  std::remove(file.c_str());
}

}  // namespace
