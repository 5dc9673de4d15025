// DSOP: every algorithm against the sequential reference (exact: integer-valued
// inputs), bit-identical results across ranks, per-rank traffic against the
// paper's cost model, the dense-allreduce configurations, and auto.
#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "common/harness.h"
#include "dsop_util.h"

using namespace dsoptest;

namespace {

// Ranks to run: 1..9 on the local transport; the world size under mpirun.
std::vector<int> ranksToRun() {
  if (sctest::mode() == sctest::Mode::Mpi) return {sctest::mpiWorldSize()};
  return {1, 2, 3, 4, 5, 6, 7, 8, 9};
}

// The grid {1, P-1, P+1, 97, 1000}, N != M: every pair of the small
// sizes, and 1000 against each small size (both orders) to keep it fast.
std::vector<std::pair<size_t, size_t>> sizeGrid(int P) {
  std::set<size_t> small = {1, 97, size_t(P + 1)};
  if (P > 1) small.insert(size_t(P - 1));
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t n : small)
    for (size_t m : small)
      if (n != m) out.push_back({n, m});
  for (size_t s : small) {
    out.push_back({1000, s});
    out.push_back({s, 1000});
  }
  return out;
}

// Runs scDsop on this rank with the standard inputs and checks G exactly.
void runAndCheck(scComm_t comm, int rank, int P, size_t n, size_t m, scDataType_t dt, scDsopAlgo_t algo) {
  SCOPED_TRACE(testing::Message() << scDsopAlgoName(algo) << " P=" << P << " n=" << n << " m=" << m
                                  << " dtype=" << int(dt));
  const auto a = encode(vecA(rank, n), dt), b = encode(vecB(rank, m), dt);
  std::vector<char> G(n * m * outSize(dt), char(0x7f));
  SC_OK(comm, scDsop(a.data(), n, b.data(), m, G.data(), dt, algo, comm, nullptr));
  const std::string diff = compare(decodeOut(G.data(), n * m, dt), reference(P, n, m), m);
  EXPECT_EQ(diff, "");
}

scConfig_t withAlgo(scAlgo_t a) {
  scConfig_t c = sctest::testConfig();
  c.algo = a;
  return c;
}

}  // namespace

TEST(Dsop, AllAlgorithmsMatchReferenceFloat32) {
  for (int P : ranksToRun()) {
    const auto grid = sizeGrid(P);
    sctest::run(P, [&](scComm_t comm, int rank) {
      for (auto [n, m] : grid)
        for (scDsopAlgo_t algo : kAlgos) runAndCheck(comm, rank, P, n, m, scFloat32, algo);
    });
  }
}

TEST(Dsop, OtherTypesMatchReference) {
  for (int P : ranksToRun()) {
    sctest::run(P, [&](scComm_t comm, int rank) {
      for (scDataType_t dt : {scFloat64, scFloat16, scBfloat16})
        for (auto [n, m] : {std::pair<size_t, size_t>{size_t(P + 1), 97}, {97, 1}, {1, 33}})
          for (scDsopAlgo_t algo : kAlgos) runAndCheck(comm, rank, P, n, m, dt, algo);
    });
  }
}

// The dense parts under every allgather / allreduce choice of the
// communicator: ring, recursive doubling / Rabenseifner, native.
TEST(Dsop, DenseConfigurations) {
  for (int P : ranksToRun()) {
    for (scAlgo_t cfgAlgo : {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoNative}) {
      const scConfig_t cfg = withAlgo(cfgAlgo);
      sctest::run(
          P,
          [&](scComm_t comm, int rank) {
            SCOPED_TRACE(testing::Message() << "scConfig_t.algo = " << int(cfgAlgo));
            for (auto [n, m] : {std::pair<size_t, size_t>{size_t(P + 1), 97}, {1000, 3}})
              for (scDsopAlgo_t algo : kAlgos) runAndCheck(comm, rank, P, n, m, scFloat32, algo);
          },
          &cfg);
    }
  }
}

// Non-integer data: every algorithm gives every rank the same bits (each block
// of G is computed once and then copied), checked by allgathering a hash.
TEST(Dsop, BitIdenticalAcrossRanks) {
  for (int P : ranksToRun()) {
    if (P == 1) continue;
    sctest::run(P, [&](scComm_t comm, int rank) {
      std::mt19937 rng(1234 + rank);
      std::uniform_real_distribution<float> U(-1.f, 1.f);
      for (auto [n, m] : {std::pair<size_t, size_t>{257, 129}, {size_t(P - 1), 301}}) {
        std::vector<float> a(n), b(m), G(n * m);
        for (auto& x : a) x = U(rng);
        for (auto& x : b) x = U(rng);
        for (scDsopAlgo_t algo : kAlgos) {
          SC_OK(comm, scDsop(a.data(), n, b.data(), m, G.data(), scFloat32, algo, comm, nullptr));
          uint64_t h = hashBytes(G.data(), G.size() * 4);
          std::vector<uint64_t> all(P);
          SC_OK(comm, scAllGather(&h, all.data(), 1, scUint64, scAlgoRing, comm, nullptr));
          for (int q = 0; q < P; ++q)
            EXPECT_EQ(all[q], h) << scDsopAlgoName(algo) << ": rank " << q << " holds different bits";
        }
      }
    });
  }
}

// Bytes each rank sends (scCommGetStats) against the schedules' layouts, and
// for divisible sizes against the paper's formulas in elements:
//   allgather (P-1)(N+M), allreduce 2(P-1)/P NM, g_rabenseifner
//   (P-1)(N+M) + (P-1)/P NM, all_scatter strictly less than g_rabenseifner.
TEST(Dsop, TrafficPerRankMatchesCostModel) {
  for (int P : ranksToRun()) {
    if (P == 1) continue;
    const scConfig_t cfg = withAlgo(scAlgoRing);
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          const size_t k = size_t(P);
          for (auto [n, m] : {std::pair<size_t, size_t>{5 * k, 3 * k},
                              {4 * k, 7 * k},
                              {97, 13},
                              {1, 7},
                              {size_t(P - 1), 100},
                              {1000, 1}}) {
            for (scDataType_t dt : {scFloat32, scFloat16}) {
              const auto a = encode(vecA(rank, n), dt), b = encode(vecB(rank, m), dt);
              std::vector<char> G(n * m * outSize(dt));
              uint64_t sent[scNumDsopAlgos] = {};
              for (scDsopAlgo_t algo : kAlgos) {
                if (algo == scDsopAuto) continue;
                SCOPED_TRACE(testing::Message()
                             << scDsopAlgoName(algo) << " n=" << n << " m=" << m << " dt=" << int(dt));
                SC_OK(comm, scCommResetStats(comm));
                SC_OK(comm, scDsop(a.data(), n, b.data(), m, G.data(), dt, algo, comm, nullptr));
                scStats_t st;
                SC_OK(comm, scCommGetStats(comm, &st));
                sent[algo] = st.bytesSent;
                EXPECT_EQ(st.bytesSent, expectedBytes(algo, P, rank, n, m, dt));
                EXPECT_EQ(compare(decodeOut(G.data(), n * m, dt), reference(P, n, m), m), "");
              }
              EXPECT_LE(sent[scDsopAllScatter], sent[scDsopGRabenseifner]);
              if (P > 2) EXPECT_LT(sent[scDsopAllScatter], sent[scDsopGRabenseifner]);
              if (n % k == 0 && m % k == 0 && dt == scFloat32) {  // the paper's figures, in elements
                const uint64_t N = n, M = m, Pm1 = uint64_t(P - 1);
                EXPECT_EQ(sent[scDsopAllGather] / 4, Pm1 * (N + M));
                EXPECT_EQ(sent[scDsopAllReduce] / 4, 2 * Pm1 * N * M / P);
                EXPECT_EQ(sent[scDsopAllReduceRing] / 4, 2 * Pm1 * N * M / P);
                EXPECT_EQ(sent[scDsopGRabenseifner] / 4, Pm1 * (N + M) + Pm1 * N * M / P);
                EXPECT_EQ(sent[scDsopAllScatter] / 4, Pm1 * N / P + Pm1 * M + Pm1 * N * M / P);
              }
            }
          }
        },
        &cfg);
  }
}

// The native allreduce baseline is not counted (the library cannot see inside
// MPI_Allreduce): the allreduce algorithm then reports no traffic at all.
TEST(Dsop, NativeAllReduceBaselineIsUncounted) {
  for (int P : ranksToRun()) {
    if (P == 1) continue;
    const scConfig_t cfg = withAlgo(scAlgoNative);
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          const size_t n = 40, m = 30;
          const auto a = encode(vecA(rank, n), scFloat32), b = encode(vecB(rank, m), scFloat32);
          std::vector<float> G(n * m);
          SC_OK(comm, scCommResetStats(comm));
          SC_OK(comm, scDsop(a.data(), n, b.data(), m, G.data(), scFloat32, scDsopAllReduce, comm, nullptr));
          scStats_t st;
          SC_OK(comm, scCommGetStats(comm, &st));
          EXPECT_EQ(st.bytesSent, 0u);
          EXPECT_EQ(compare(decodeOut(G.data(), n * m, scFloat32), reference(P, n, m), m), "");
        },
        &cfg);
  }
}

TEST(Dsop, AutoChoosesByModel) {
  for (int P : ranksToRun()) {
    sctest::run(P, [&](scComm_t comm, int) {
      scDsopAlgo_t a = scDsopAuto;
      SC_OK(comm, scDsopAlgoFor(comm, 4000, 4000, scFloat32, &a));
      if (P == 1) {
        EXPECT_EQ(a, scDsopAllReduce);  // no communication: the product straight into G
        return;
      }
      // Large G: a row-block algorithm (the bandwidth term dominates).
      EXPECT_TRUE(a == scDsopAllScatter || a == scDsopGRabenseifner) << scDsopAlgoName(a);
      // Tiny G: latency dominates, so no ring over P-1 steps: gather the vectors
      // or allreduce the tiny matrix, both in log2 P rounds (recursive doubling).
      SC_OK(comm, scDsopAlgoFor(comm, 2, 2, scFloat32, &a));
      EXPECT_TRUE(a == scDsopAllGather || a == scDsopAllReduce) << scDsopAlgoName(a);
      for (scDataType_t dt : {scFloat64, scFloat16, scBfloat16}) {
        SC_OK(comm, scDsopAlgoFor(comm, 300, 200, dt, &a));
        EXPECT_NE(a, scDsopAuto);
      }
    });
  }
}

TEST(Dsop, NamesAndOutputTypes) {
  EXPECT_STREQ(scDsopAlgoName(scDsopGRabenseifner), "g_rabenseifner");
  EXPECT_STREQ(scDsopAlgoName(scDsopAllScatter), "all_scatter");
  EXPECT_STREQ(scDsopAlgoName(scDsopAlgo_t(42)), "?");
  scDataType_t out = scInt8;
  EXPECT_EQ(scDsopOutputType(scBfloat16, &out), scSuccess);
  EXPECT_EQ(out, scFloat32);
  EXPECT_EQ(scDsopOutputType(scFloat64, &out), scSuccess);
  EXPECT_EQ(out, scFloat64);
  EXPECT_EQ(scDsopOutputType(scInt32, &out), scInvalidArgument);
}
