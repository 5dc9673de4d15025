// Every auto obeys the tuning file's rules: a rule names an algorithm the
// model would not pick (found first on a communicator without the file), and
// with the file loaded the *AlgoFor query, scEstimateTime's pick and the
// algorithm that actually runs (same traffic as an explicit call of it;
// scSparseResultAlgo for the sparse allreduce) are the rule's. The order of
// precedence: the call's algorithm > scConfig_t.algo / SPARCOLL_ALGO >
// rules > model.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/harness.h"
#include "model_util.h"

namespace mtest {
namespace {

constexpr int P = 4;

struct Traffic {
  uint64_t bytesSent = 0, msgsSent = 0, bytesRecv = 0, msgsRecv = 0;
  bool operator==(const Traffic& o) const {
    return bytesSent == o.bytesSent && msgsSent == o.msgsSent && bytesRecv == o.bytesRecv && msgsRecv == o.msgsRecv;
  }
  bool operator!=(const Traffic& o) const { return !(*this == o); }
};

Traffic traffic(scComm_t comm, const std::function<scResult_t()>& call) {
  EXPECT_EQ(scCommResetStats(comm), scSuccess);
  EXPECT_EQ(call(), scSuccess) << scGetLastError(comm);
  scStats_t s{};
  EXPECT_EQ(scCommGetStats(comm, &s), scSuccess);
  return {s.bytesSent, s.msgsSent, s.bytesRecv, s.msgsRecv};
}

// The first of `options` that is not `x`.
int other(int x, std::initializer_list<int> options) {
  for (int o : options)
    if (o != x) return o;
  return -1;
}

// Runs body on a P-rank communicator made with cfg; true when it ran here.
bool onComm(const scConfig_t& cfg, const std::function<void(scComm_t, int)>& body) {
  return sctest::run(P, body, &cfg);
}

const char* const kDenseNames[] = {"auto", "ring", "rabenseifner", "recdbl", "native"};

TEST(Rules, DenseAutosRunTheRule) {
  ScopedEnv noAlgo("SPARCOLL_ALGO", nullptr), noFile("SPARCOLL_TUNING_FILE", nullptr);
  const size_t kSmall = 2, kBig = 1 << 18;  // floats: 8 B and 1 MiB allreduces
  int small = -1, big = -1, rs = -1, ag = -1;
  const scConfig_t plain = configWith(nullptr);
  if (!onComm(plain, [&](scComm_t comm, int) {
        scAlgo_t a;
        ASSERT_EQ(scAllReduceAlgoFor(comm, kSmall * 4, &a), scSuccess);
        small = a;
        ASSERT_EQ(scAllReduceAlgoFor(comm, kBig * 4, &a), scSuccess);
        big = a;
        double s;
        ASSERT_EQ(scEstimateTime(comm, scCollReduceScatter, 0, kSmall, scFloat32, 0, &s, &rs), scSuccess);
        ASSERT_EQ(scEstimateTime(comm, scCollAllGather, 0, kSmall, scFloat32, 0, &s, &ag), scSuccess);
      }))
    GTEST_SKIP() << "needs " << P << " ranks";
  const int ySmall = other(small, {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl});
  const int yBig = other(big, {scAlgoRecDbl, scAlgoRing, scAlgoRabenseifner});
  const int yRs = other(rs, {scAlgoRing, scAlgoRabenseifner}), yAg = other(ag, {scAlgoRing, scAlgoRecDbl});
  auto rule = [](const char* coll, const std::string& extra, int algo) {
    return std::string(R"({"collective": ")") + coll + R"(", )" + extra + R"("algorithm": ")" + kDenseNames[algo] +
           R"("})";
  };
  // Rules for other ranks counts and another transport come first and must not match.
  const std::string file = writeTuning(
      tuningJson("[]", "[" + rule("allreduce", R"("ranks": [5, 100], )", scAlgoNative) + ", " +
                           rule("allreduce", R"("transport": "nccl", )", scAlgoNative) + ", " +
                           rule("allreduce", R"("bytes": [0, 8], )", ySmall) + ", " +
                           rule("allreduce", R"("bytes": [1048576, 1048576], )", yBig) + ", " +
                           rule("reduce_scatter", R"("bytes": [32, 32], )", yRs) + ", " +
                           rule("allgather", R"("bytes": [0, 16], )", scAlgoAuto) + ", " +  // auto: the model decides
                           rule("allgather", R"("bytes": [32, 32], )", yAg) + "]"));
  const scConfig_t cfg = configWith(file.c_str());
  onComm(cfg, [&](scComm_t comm, int rank) {
    std::vector<float> in(kBig * P, 1.0f), out(kBig * P);  // this rank's (threads in local mode)
    scAlgo_t a;
    ASSERT_EQ(scAllReduceAlgoFor(comm, kSmall * 4, &a), scSuccess);
    EXPECT_EQ(a, ySmall);
    ASSERT_EQ(scAllReduceAlgoFor(comm, kBig * 4, &a), scSuccess);
    EXPECT_EQ(a, yBig);
    ASSERT_EQ(scAllReduceAlgoFor(comm, 4 * 1000, &a), scSuccess);  // no rule for 4000 B: the model
    EXPECT_NE(a, scAlgoNative);
    double s;
    int pick = -1;
    ASSERT_EQ(scEstimateTime(comm, scCollReduceScatter, 0, kSmall, scFloat32, 0, &s, &pick), scSuccess);
    EXPECT_EQ(pick, yRs);
    ASSERT_EQ(scEstimateTime(comm, scCollAllGather, 0, kSmall, scFloat32, 0, &s, &pick), scSuccess);
    EXPECT_EQ(pick, yAg);
    ASSERT_EQ(scEstimateTime(comm, scCollAllGather, 0, 1, scFloat32, 0, &s, &pick), scSuccess);
    EXPECT_EQ(pick, ag) << "a rule naming auto hands the choice to the model";
    // What runs: auto's traffic is the rule's algorithm's, not the model's pick's.
    auto allreduce = [&](size_t n, int algo) {
      return traffic(comm, [&] {
        return scAllReduce(in.data(), out.data(), n, scFloat32, scSum, scAlgo_t(algo), comm, nullptr);
      });
    };
    auto reduceScatter = [&](int algo) {
      return traffic(comm, [&] {
        return scReduceScatter(in.data(), out.data(), kSmall, scFloat32, scSum, scAlgo_t(algo), comm, nullptr);
      });
    };
    auto allGather = [&](int algo) {
      return traffic(comm, [&] {
        return scAllGather(in.data(), out.data(), kSmall, scFloat32, scAlgo_t(algo), comm, nullptr);
      });
    };
    ASSERT_NE(allreduce(kSmall, ySmall), allreduce(kSmall, small)) << "the sizes must tell the algorithms apart";
    EXPECT_EQ(allreduce(kSmall, scAlgoAuto), allreduce(kSmall, ySmall));
    ASSERT_NE(allreduce(kBig, yBig), allreduce(kBig, big));
    EXPECT_EQ(allreduce(kBig, scAlgoAuto), allreduce(kBig, yBig));
    EXPECT_EQ(out[kBig - 1], float(P)) << "rank " << rank;
    ASSERT_NE(reduceScatter(yRs), reduceScatter(rs));
    EXPECT_EQ(reduceScatter(scAlgoAuto), reduceScatter(yRs));
    ASSERT_NE(allGather(yAg), allGather(ag));
    EXPECT_EQ(allGather(scAlgoAuto), allGather(yAg));
  });
  // scConfig_t.algo and SPARCOLL_ALGO beat the rules.
  const int forced = other(ySmall, {scAlgoRabenseifner, scAlgoRing});
  scConfig_t withAlgo = cfg;
  withAlgo.algo = scAlgo_t(forced);
  onComm(withAlgo, [&](scComm_t comm, int) {
    scAlgo_t a;
    ASSERT_EQ(scAllReduceAlgoFor(comm, kSmall * 4, &a), scSuccess);
    EXPECT_EQ(a, forced);
  });
  ScopedEnv env("SPARCOLL_ALGO", kDenseNames[forced]);
  onComm(cfg, [&](scComm_t comm, int) {
    scAlgo_t a;
    ASSERT_EQ(scAllReduceAlgoFor(comm, kSmall * 4, &a), scSuccess);
    EXPECT_EQ(a, forced);
  });
}

TEST(Rules, SparseAutoRunsTheRule) {
  ScopedEnv noFile("SPARCOLL_TUNING_FILE", nullptr);
  const size_t N = 1 << 16;
  const double densities[] = {0.001, 0.3};
  const int all[] = {scSsarRecDbl, scSsarSplitAllGather, scDsarSplitAllGather, scDsarEarlySwitch, scSparseDense};
  int model[2] = {-1, -1};
  auto nnzOf = [&](double d) { return size_t(std::llround(d * double(N))); };
  if (!onComm(configWith(nullptr), [&](scComm_t comm, int) {
        for (int i = 0; i < 2; ++i) {
          std::vector<size_t> nnz(P, nnzOf(densities[i]));
          scSparseAlgo_t a;
          ASSERT_EQ(scSparseAlgoFor(comm, nnz.data(), N, scIndexU32, scFloat32, nullptr, 0, &a), scSuccess);
          model[i] = a;
        }
      }))
    GTEST_SKIP() << "needs " << P << " ranks";
  int want[2];
  std::string rules;
  for (int i = 0; i < 2; ++i) {
    for (int a : all)
      if (a != model[i]) want[i] = a;
    rules += std::string(i ? ", " : "") + R"({"collective": "sparse_allreduce", "bytes": [)" + std::to_string(N * 4) +
             ", " + std::to_string(N * 4) + R"(], "density": [)" + (i ? "0.2, 1" : "0, 0.002") +
             R"(], "algorithm": ")" + scSparseAlgoName(scSparseAlgo_t(want[i])) + R"("})";
  }
  const std::string file = writeTuning(tuningJson("[]", "[" + rules + "]"));
  onComm(configWith(file.c_str()), [&](scComm_t comm, int rank) {
    scSparseResult_t res = nullptr;
    ASSERT_EQ(scSparseResultCreate(comm, &res), scSuccess);
    for (int i = 0; i < 2; ++i) {
      SCOPED_TRACE(testing::Message() << "density " << densities[i]);
      const size_t k = nnzOf(densities[i]);
      std::vector<size_t> nnz(P, k);
      scSparseAlgo_t a;
      ASSERT_EQ(scSparseAlgoFor(comm, nnz.data(), N, scIndexU32, scFloat32, nullptr, 0, &a), scSuccess);
      EXPECT_EQ(a, want[i]);
      std::vector<uint32_t> idx(k);
      std::vector<float> val(k, 1.0f);
      for (size_t j = 0; j < k; ++j) idx[j] = uint32_t(j * (N / k) + size_t(rank));
      ASSERT_EQ(scSparseAllReduceToSparse(idx.data(), val.data(), k, N, scIndexU32, scFloat32, scSum, scSparseAuto,
                                          nullptr, res, comm, nullptr),
                scSuccess)
          << scGetLastError(comm);
      ASSERT_EQ(scSparseResultAlgo(res, &a), scSuccess);
      EXPECT_EQ(a, want[i]) << "auto ran " << scSparseAlgoName(a);
    }
    scSparseResultDestroy(res);
  });
}

TEST(Rules, DsopAutoRunsTheRule) {
  ScopedEnv noFile("SPARCOLL_TUNING_FILE", nullptr);
  const size_t n = 64;
  int model = -1;
  if (!onComm(configWith(nullptr), [&](scComm_t comm, int) {
        scDsopAlgo_t a;
        ASSERT_EQ(scDsopAlgoFor(comm, n, n, scFloat32, &a), scSuccess);
        model = a;
      }))
    GTEST_SKIP() << "needs " << P << " ranks";
  const int want = other(model, {scDsopAllGather, scDsopAllReduceRing, scDsopAllScatter});
  const std::string file =
      writeTuning(tuningJson("[]", R"([{"collective": "dsop", "bytes": [)" + std::to_string(n * n * 4) + ", " +
                                       std::to_string(n * n * 4) + R"(], "algorithm": ")" +
                                       scDsopAlgoName(scDsopAlgo_t(want)) + R"("}])"));
  onComm(configWith(file.c_str()), [&](scComm_t comm, int) {
    std::vector<float> a(n, 1.0f), b(n, 2.0f), G(n * n);
    scDsopAlgo_t x;
    ASSERT_EQ(scDsopAlgoFor(comm, n, n, scFloat32, &x), scSuccess);
    EXPECT_EQ(x, want);
    double s;
    int pick = -1;
    ASSERT_EQ(scEstimateTime(comm, scCollDsop, 0, n, scFloat32, 0, &s, &pick), scSuccess);
    EXPECT_EQ(pick, want);
    auto dsop = [&](int algo) {
      return traffic(comm, [&] {
        return scDsop(a.data(), n, b.data(), n, G.data(), scFloat32, scDsopAlgo_t(algo), comm, nullptr);
      });
    };
    ASSERT_NE(dsop(want), dsop(model));
    EXPECT_EQ(dsop(scDsopAuto), dsop(want));
    EXPECT_EQ(G[0], 2.0f * P);
  });
}

TEST(Rules, NeighborAutoRunsTheRule) {
  ScopedEnv noFile("SPARCOLL_TUNING_FILE", nullptr), nodes("SPARCOLL_RANKS_PER_NODE", "2");
  const size_t count = 256;  // 1 KiB blocks
  auto withTopology = [&](const scConfig_t& cfg, const std::function<void(scComm_t, scTopology_t)>& body) {
    return onComm(cfg, [&](scComm_t comm, int rank) {
      std::vector<int> peers;  // every other rank, both ways
      for (int r = 0; r < P; ++r)
        if (r != rank) peers.push_back(r);
      scTopology_t t = nullptr;
      ASSERT_EQ(scTopologyCreate(&t, comm, int(peers.size()), peers.data(), int(peers.size()), peers.data()), scSuccess)
          << scGetLastError(comm);
      body(comm, t);
      scTopologyDestroy(t);
    });
  };
  auto gather = [&](scComm_t comm, scTopology_t t, int algo) {
    std::vector<float> send(count, 1.0f), recv(count * P);
    return traffic(comm, [&] {
      return scNeighborAllGather(send.data(), count, recv.data(), scFloat32, scNbrAlgo_t(algo), t, nullptr);
    });
  };
  int model = -1, want = -1;
  std::mutex keep;
  if (!withTopology(configWith(nullptr), [&](scComm_t comm, scTopology_t t) {
        scNbrAlgo_t a;
        ASSERT_EQ(scNeighborAlgoFor(t, count * 4, &a), scSuccess);
        // A scheduled algorithm whose traffic differs from the model's pick
        // here, found by each rank's thread on its own (every rank makes the
        // same calls), then kept (every rank finds the same).
        int found = -1;
        const Traffic m = gather(comm, t, a);
        for (int y : {scNbrHierarchical, scNbrNaive, scNbrCombining})
          if (found < 0 && y != a && gather(comm, t, y) != m) found = y;
        std::lock_guard<std::mutex> lk(keep);
        model = a;
        want = found;
      }))
    GTEST_SKIP() << "needs " << P << " ranks";
  ASSERT_GE(want, 0) << "no algorithm moves other traffic than the model's pick on this graph";
  const char* names[] = {"auto", "naive", "combining", "hierarchical", "native"};
  const std::string file = writeTuning(
      tuningJson("[]",
                 R"([{"collective": "neighbor_allgather", "ranks": [4, 4], "bytes": [1024, 1024], "algorithm": ")" +
                     std::string(names[want]) + R"("}])"));
  withTopology(configWith(file.c_str()), [&](scComm_t comm, scTopology_t t) {
    scNbrAlgo_t a;
    ASSERT_EQ(scNeighborAlgoFor(t, count * 4, &a), scSuccess);
    EXPECT_EQ(a, want);
    ASSERT_EQ(scNeighborAlgoFor(t, count * 4 + 1, &a), scSuccess);
    EXPECT_EQ(a, model) << "outside the rule's bytes: the model";
    double s = 0, sWant = 0;
    scNbrAlgo_t pick = scNbrAuto;
    ASSERT_EQ(scTopologyEstimateTime(t, count * 4, scNbrAuto, &s, &pick), scSuccess);
    ASSERT_EQ(scTopologyEstimateTime(t, count * 4, scNbrAlgo_t(want), &sWant, nullptr), scSuccess);
    EXPECT_EQ(pick, want);
    EXPECT_EQ(s, sWant);
    EXPECT_GT(s, 0);
    EXPECT_EQ(gather(comm, t, scNbrAuto), gather(comm, t, want));
  });
}

}  // namespace
}  // namespace mtest
