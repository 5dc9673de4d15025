// scBroadcast: every P (1..8), every root, every algorithm (binomial,
// scatter_allgather, native, auto), every data type, counts around P (0, 1,
// P-1, P, 2P+1) and larger ones. Each rank's buffer must end bit-identical to
// root's input, root's unchanged, and each rank's traffic must equal
// expectedBroadcastTraffic (traffic_model.h: derived from the schedules'
// definitions) and the closed forms:
//   binomial           the root sends ceil(log2 P) * S, every other rank receives S once;
//   scatter_allgather  (P | count) the root sends (P-1)/P * S in the scatter and
//                      (P-1)/P * S in the ring allgather, and receives (P-1)/P * S;
//   native             not counted.
// Then the argument errors with their messages, the cost model's formulas and
// picks, tuning-file rules for "broadcast", and the C++ API.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "dense_check.h"
#include "sparcoll/sparcoll.hpp"
#include "traffic_model.h"

namespace dtest {
namespace {

const scAlgo_t kBcastAlgos[] = {scAlgoBinomial, scAlgoScatterAllGather, scAlgoNative, scAlgoAuto};

// Rank `rank`'s input bytes: differ between ranks at every position.
void fill(std::vector<unsigned char>& b, int rank) {
  for (size_t i = 0; i < b.size(); ++i) {
    uint64_t x = (uint64_t(rank) + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t(i) * 0xbf58476d1ce4e5b9ull);
    x ^= x >> 29;
    b[i] = static_cast<unsigned char>(x * 0x94d049bb133111ebull >> 56);
  }
}

Traffic statsOf(scComm_t comm) {
  scStats_t s{};
  EXPECT_EQ(scCommGetStats(comm, &s), scSuccess) << scGetLastError(comm);
  return fromStats(s);
}

int ceilLog2(int P) {
  int l = 0;
  while ((1 << l) < P) ++l;
  return l;
}

class BroadcastTest : public testing::TestWithParam<int> {};

TEST_P(BroadcastTest, EveryRootAlgoTypeAndCount) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  const scConfig_t cfg = config(30, 256);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        int wrong = 0;
        for (int root = 0; root < P; ++root)
          for (scAlgo_t algo : kBcastAlgos)
            for (scDataType_t dt : kAllTypes)
              for (size_t count :
                   {size_t(0), size_t(1), size_t(P - 1), size_t(P), size_t(2 * P + 1), size_t(1000), size_t(4099)}) {
                if (wrong > 5) return;
                const size_t esz = elemSize(dt);
                std::vector<unsigned char> buf(count * esz), want(count * esz);
                fill(buf, rank);
                fill(want, root);
                SC_OK(comm, scCommResetStats(comm));
                const std::string what = std::string(algoStr(algo)) + " dtype " + std::to_string(int(dt)) + " count " +
                                         std::to_string(count) + " root " + std::to_string(root) + " rank " +
                                         std::to_string(rank) + " of " + std::to_string(P);
                const scResult_t r = scBroadcast(count ? buf.data() : nullptr, count, dt, root, algo, comm, nullptr);
                if (r != scSuccess) {
                  ADD_FAILURE() << what << ": " << scGetErrorString(r) << ": " << scGetLastError(comm);
                  ++wrong;
                  continue;
                }
                if (buf != want) {
                  ADD_FAILURE() << what << ": the buffer differs from root's input";
                  ++wrong;
                }
                // What ran: auto's pick, which scEstimateTime tells.
                scAlgo_t ran = algo;
                if (algo == scAlgoAuto) {
                  double s = 0;
                  int pick = -1;
                  SC_OK(comm, scEstimateTime(comm, scCollBroadcast, scAlgoAuto, count, dt, 0, &s, &pick));
                  ran = scAlgo_t(pick);
                  EXPECT_TRUE(ran == scAlgoBinomial || ran == scAlgoScatterAllGather)
                      << what << ": auto picked " << pick;
                }
                const Traffic want_t =
                    ran == scAlgoNative ? Traffic{} : expectedBroadcastTraffic(ran, P, rank, root, count, esz);
                const Traffic got = statsOf(comm);
                if (!(got == want_t)) {
                  ADD_FAILURE() << what << ": traffic " << got.str() << ", model " << want_t.str();
                  ++wrong;
                }
              }
      },
      &cfg);
}

TEST_P(BroadcastTest, ClosedForms) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  const size_t count = size_t(P) * 96;  // P divides the count
  const uint64_t S = count * 4;
  sctest::run(P, [&](scComm_t comm, int rank) {
    for (int root = 0; root < P; ++root) {
      std::vector<unsigned char> buf(S), want(S);
      auto run = [&](scAlgo_t a) {
        fill(buf, rank);
        fill(want, root);
        EXPECT_EQ(scCommResetStats(comm), scSuccess);
        EXPECT_EQ(scBroadcast(buf.data(), count, scFloat32, root, a, comm, nullptr), scSuccess) << scGetLastError(comm);
        EXPECT_TRUE(buf == want) << algoStr(a) << " root " << root << " rank " << rank;
        return statsOf(comm);
      };
      const Traffic bin = run(scAlgoBinomial), sag = run(scAlgoScatterAllGather);
      if (rank == root) {
        EXPECT_EQ(bin.bytesSent, uint64_t(ceilLog2(P)) * S) << "binomial root " << root;
        EXPECT_EQ(bin.bytesRecv, 0u);
        EXPECT_EQ(sag.bytesSent, 2 * (P - 1) * S / P) << "scatter_allgather root " << root;
        EXPECT_EQ(sag.bytesRecv, (P - 1) * S / P) << "scatter_allgather root " << root;
      } else {
        EXPECT_EQ(bin.bytesRecv, S) << "binomial rank " << rank << " root " << root;
        EXPECT_EQ(bin.msgsRecv, 1u);
      }
      EXPECT_EQ(run(scAlgoNative), Traffic{}) << "native calls are not counted";
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Dense, BroadcastTest, testing::Values(1, 2, 3, 4, 5, 6, 7, 8),
                         [](const testing::TestParamInfo<int>& i) { return "P" + std::to_string(i.param); });

// The message of the last error, less its " (csrc/...:line)" suffix.
std::string lastError(scComm_t comm) { return scGetLastError(comm); }

testing::AssertionResult saysExactly(scResult_t r, scComm_t comm, const std::string& text) {
  if (r != scInvalidArgument)
    return testing::AssertionFailure() << "returned " << scGetErrorString(r) << ": " << lastError(comm);
  const std::string msg = lastError(comm);
  if (msg.find(text) == std::string::npos)
    return testing::AssertionFailure() << "last error '" << msg << "' lacks '" << text << "'";
  return failedWith(r, scInvalidArgument, comm, text);
}

TEST(BroadcastErrors, BadArguments) {
  const int P = anyP(3);
  const scConfig_t cfg = config(10);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        std::vector<int32_t> buf(8, rank), other(8 * size_t(P), 0);
        const std::string ps = std::to_string(P);
        for (int root : {-1, P, P + 1000}) {
          EXPECT_TRUE(saysExactly(scBroadcast(buf.data(), 8, scInt32, root, scAlgoAuto, comm, nullptr), comm,
                                  "root " + std::to_string(root) + " is out of range on rank " + std::to_string(rank) +
                                      ": the communicator has " + ps + " ranks, root must be in [0, " + ps + ")"));
        }
        EXPECT_TRUE(saysExactly(scBroadcast(nullptr, 8, scInt32, 0, scAlgoBinomial, comm, nullptr), comm,
                                "buf is NULL with a non-zero count"));
        for (scAlgo_t a : {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl}) {
          const std::string name = a == scAlgoRing ? "ring" : a == scAlgoRecDbl ? "recdbl" : "rabenseifner";
          EXPECT_TRUE(saysExactly(scBroadcast(buf.data(), 8, scInt32, 0, a, comm, nullptr), comm,
                                  "algorithm '" + name +
                                      "' is not available for broadcast (broadcast: binomial, "
                                      "scatter_allgather, native, auto)"));
        }
        for (scAlgo_t a : {scAlgoBinomial, scAlgoScatterAllGather}) {
          const std::string name = a == scAlgoBinomial ? "binomial" : "scatter_allgather";
          EXPECT_TRUE(saysExactly(scAllReduce(buf.data(), buf.data(), 8, scInt32, scSum, a, comm, nullptr), comm,
                                  "algorithm '" + name +
                                      "' is not available for allreduce (allreduce: ring, "
                                      "rabenseifner, recdbl, native, auto)"));
          EXPECT_TRUE(saysExactly(scReduceScatter(other.data(), other.data(), 8, scInt32, scSum, a, comm, nullptr),
                                  comm,
                                  "algorithm '" + name +
                                      "' is not available for reduce-scatter (reduce-scatter: ring, "
                                      "rabenseifner, native, auto)"));
          EXPECT_TRUE(saysExactly(scAllGather(buf.data(), other.data(), 8, scInt32, a, comm, nullptr), comm,
                                  "algorithm '" + name +
                                      "' is not available for allgather (allgather: ring, recdbl, "
                                      "native, auto)"));
        }
        EXPECT_TRUE(saysExactly(scBroadcast(buf.data(), 8, scInt32, 0, scAlgo_t(scNumAlgos), comm, nullptr), comm,
                                "unknown algorithm " + std::to_string(int(scNumAlgos))));
        int stream = 0;
        EXPECT_TRUE(saysExactly(scBroadcast(buf.data(), 8, scInt32, 0, scAlgoAuto, comm, &stream), comm,
                                "stream must be NULL on a host communicator"));
        EXPECT_TRUE(failedWith(scBroadcast(buf.data(), 8, scDataType_t(scNumTypes), 0, scAlgoAuto, comm, nullptr),
                               scInvalidArgument, comm, "data type"));
        EXPECT_TRUE(failedWith(scBroadcast(buf.data(), SIZE_MAX / 2, scInt32, 0, scAlgoAuto, comm, nullptr),
                               scInvalidArgument, comm, "overflows size_t"));
        // Nothing was sent and the communicator still works; NULL with count 0 is fine.
        EXPECT_EQ(scBroadcast(nullptr, 0, scInt32, P - 1, scAlgoBinomial, comm, nullptr), scSuccess) << lastError(comm);
        EXPECT_EQ(scBroadcast(buf.data(), 8, scInt32, P - 1, scAlgoScatterAllGather, comm, nullptr), scSuccess)
            << lastError(comm);
        EXPECT_EQ(buf, std::vector<int32_t>(8, P - 1));
      },
      &cfg);
  EXPECT_TRUE(failedWith(scBroadcast(nullptr, 0, scInt32, 0, scAlgoAuto, nullptr, nullptr), scInvalidArgument, nullptr,
                         "communicator"));
}

// The model's broadcast formulas on the built-in mpi parameters (alpha 5 us,
// beta 1 / 4 GB/s), and auto's picks at both ends.
TEST(BroadcastModel, FormulasAndPicks) {
  const double a = 5e-6, b = 1 / 4e9;
  for (int P : {2, 3, 8, 13, 64}) {
    sparcoll::CostModel m(P);
    const double L = ceilLog2(P), q = (P - 1.0) / P;
    for (size_t count : {size_t(1), size_t(1000), size_t(1) << 24}) {
      const double n = double(count) * 4;
      const auto bin = m.estimateTime(scCollBroadcast, count, scFloat32, scAlgoBinomial);
      const auto sag = m.estimateTime(scCollBroadcast, count, scFloat32, scAlgoScatterAllGather);
      const auto nat = m.estimateTime(scCollBroadcast, count, scFloat32, scAlgoNative);
      EXPECT_NEAR(bin.seconds, L * (a + n * b), 1e-12 * bin.seconds) << "P " << P << " count " << count;
      EXPECT_NEAR(sag.seconds, L * a + q * n * b + (P - 1) * a + q * n * b, 1e-12 * sag.seconds);
      EXPECT_DOUBLE_EQ(nat.seconds, sag.seconds) << "native is priced as scatter_allgather";
      EXPECT_EQ(bin.autoAlgo, bin.seconds <= sag.seconds ? scAlgoBinomial : scAlgoScatterAllGather);
    }
    EXPECT_EQ(m.estimateTime(scCollBroadcast, 1, scFloat32).autoAlgo, scAlgoBinomial);
    if (P > 2) EXPECT_EQ(m.estimateTime(scCollBroadcast, size_t(1) << 24, scFloat32).autoAlgo, scAlgoScatterAllGather);
  }
  sparcoll::CostModel m(4);
  EXPECT_THROW(m.estimateTime(scCollBroadcast, 100, scFloat32, scAlgoRing), sparcoll::Error);
  EXPECT_THROW(m.estimateTime(scCollAllReduce, 100, scFloat32, scAlgoBinomial), sparcoll::Error);
}

// Per process: MPI ranks and concurrent CTest entries write their own files.
std::string writeFile(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(BroadcastModel, TuningRules) {
  const std::string head = R"({"format": "sparcoll-tuning", "version": 1, "rules": [)";
  const std::string good = writeFile("bcast_good.json", head + R"({"collective": "broadcast", "bytes": [0, 4096],
      "algorithm": "scatter_allgather"}, {"collective": "broadcast", "algorithm": "native"}]})");
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.tuningFile = good.c_str();
  scCostModel_t m = nullptr;
  ASSERT_EQ(scCostModelCreate(&m, &cfg, 4, 1, 0), scSuccess) << scGetLastError(nullptr);
  double s = 0;
  int pick = -1;
  ASSERT_EQ(scCostModelEstimateTime(m, scCollBroadcast, 0, 16, scFloat32, 0, &s, &pick), scSuccess);
  EXPECT_EQ(pick, scAlgoScatterAllGather);
  ASSERT_EQ(scCostModelEstimateTime(m, scCollBroadcast, 0, 1 << 20, scFloat32, 0, &s, &pick), scSuccess);
  EXPECT_EQ(pick, scAlgoNative);
  ASSERT_EQ(scCostModelEstimateTime(m, scCollAllReduce, 0, 16, scFloat32, 0, &s, &pick), scSuccess);
  EXPECT_NE(pick, scAlgoScatterAllGather) << "a broadcast rule applied to allreduce";
  scCostModelDestroy(m);
  for (const char* bad : {R"({"collective": "broadcast", "algorithm": "ring"}]})",
                          R"({"collective": "allreduce", "algorithm": "binomial"}]})"}) {
    const std::string path = writeFile("bcast_bad.json", head + bad);
    cfg.tuningFile = path.c_str();
    m = nullptr;
    EXPECT_EQ(scCostModelCreate(&m, &cfg, 4, 1, 0), scInvalidArgument) << bad;
    EXPECT_NE(std::string(scGetLastError(nullptr)).find("rules[0].algorithm"), std::string::npos)
        << scGetLastError(nullptr);
    scCostModelDestroy(m);
    std::remove(path.c_str());
  }
  std::remove(good.c_str());
}

// sparcoll::Comm::broadcast, typed and untyped, on local ranks.
TEST(BroadcastCpp, CommMethod) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "local ranks only";
  const int P = 3;
  std::vector<sparcoll::Comm> comms = sparcoll::Comm::local(P);
  std::vector<std::vector<double>> bufs(P);
  std::vector<std::thread> ts;
  for (int r = 0; r < P; ++r)
    ts.emplace_back([&, r] {
      bufs[size_t(r)].assign(100, double(r));
      comms[size_t(r)].broadcast(bufs[size_t(r)].data(), 100, 2, scAlgoScatterAllGather);
      comms[size_t(r)].broadcast(static_cast<void*>(bufs[size_t(r)].data()), 50, scFloat64, 1);
    });
  for (auto& t : ts) t.join();
  for (int r = 0; r < P; ++r) {
    EXPECT_EQ(std::vector<double>(bufs[size_t(r)].begin(), bufs[size_t(r)].begin() + 50), std::vector<double>(50, 2.0));
    EXPECT_EQ(std::vector<double>(bufs[size_t(r)].begin() + 50, bufs[size_t(r)].end()), std::vector<double>(50, 2.0));
  }
  EXPECT_THROW(comms[0].broadcast(bufs[0].data(), 100, P, scAlgoAuto), sparcoll::Error);
}

}  // namespace
}  // namespace dtest
