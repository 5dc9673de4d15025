// scEstimateTime and scCostModel*: the predictions are the README's formulas
// (computed here by hand from the README, not from the library's code), on
// the parameters of the level the README's rule names, with the environment
// over the tuning file over the built-in defaults; a communicator's estimate
// is the comm-free model's for the same P; the picks are the *AlgoFor ones.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/harness.h"
#include "sparcoll/neighbor.h"
#include "model_util.h"

namespace mtest {
namespace {

struct Abg {
  double a, b, g;
};
constexpr Abg kIntra{2e-6, 1e-10, 5e-11}, kInter{3e-5, 8e-10, 5e-11};

// A file with both levels for the local transport and the mpi transport.
std::string twoLevelFile() {
  auto entry = [](const char* tr, const char* level, Abg p) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  R"({"transport": "%s", "level": "%s", "alpha": %.17g, "beta": %.17g, "gamma": %.17g})", tr, level,
                  p.a, p.b, p.g);
    return std::string(buf);
  };
  static const std::string path =
      writeTuning(tuningJson("[" + entry("local", "intra", kIntra) + ", " + entry("local", "inter", kInter) + ", " +
                             entry("mpi", "intra", kIntra) + ", " + entry("mpi", "inter", kInter) + "]"));
  return path;
}

// README "Cost model", n bytes on P ranks, P' = 2^floor(log2 P), f = 1 when P
// is not a power of two.
double readme(scCollective_t coll, scAlgo_t algo, int P, double n, Abg p) {
  if (P == 1) return 0;
  int p2 = 1;
  while (p2 * 2 <= P) p2 *= 2;
  const double f = P != p2, lg = std::log2(p2), q = (P - 1.0) / P, q2 = (p2 - 1.0) / p2;
  if (algo == scAlgoNative) algo = scAlgoRing;
  switch (coll) {
    case scCollAllReduce:
      if (algo == scAlgoRing) return 2 * (P - 1) * p.a + 2 * q * n * p.b + q * n * p.g;
      if (algo == scAlgoRabenseifner) return 2 * (lg + f) * p.a + (2 * q2 + 2 * f) * n * p.b + (q2 + f) * n * p.g;
      return (lg + 2 * f) * p.a + (lg + 2 * f) * n * p.b + (lg + f) * n * p.g;
    case scCollReduceScatter:
      if (algo == scAlgoRing) return (P - 1) * p.a + q * n * p.b + q * n * p.g;
      return (lg + f) * p.a + (q2 + 2 * f) * n * p.b + (q2 + f) * n * p.g;
    default:  // allgather
      if (algo == scAlgoRing) return (P - 1) * p.a + q * n * p.b;
      return (lg + f) * p.a + (q2 + 2 * f) * n * p.b;
  }
}

struct Est {
  double s = -1;
  int pick = -1;
};

Est costModel(const scConfig_t* cfg, int P, int machines, scCollective_t coll, int algo, size_t count,
              scDataType_t dt = scFloat32, double density = 0) {
  scCostModel_t m = nullptr;
  Est e;
  EXPECT_EQ(scCostModelCreate(&m, cfg, P, machines, 0), scSuccess) << scGetLastError(nullptr);
  EXPECT_EQ(scCostModelEstimateTime(m, coll, algo, count, dt, density, &e.s, &e.pick), scSuccess)
      << scGetLastError(nullptr);
  scCostModelDestroy(m);
  return e;
}

TEST(Estimate, DenseIsTheReadmeFormulas) {
  ScopedEnv a("SPARCOLL_ALPHA", nullptr), b("SPARCOLL_BETA", nullptr), g("SPARCOLL_GAMMA", nullptr),
      al("SPARCOLL_ALGO", nullptr);
  const std::string file = twoLevelFile();
  scConfig_t cfg = configWith(file.c_str());
  cfg.transport = scTransportLocal;
  const struct {
    scCollective_t coll;
    std::vector<scAlgo_t> algos;
  } colls[] = {{scCollAllReduce, {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoNative}},
               {scCollReduceScatter, {scAlgoRing, scAlgoRabenseifner, scAlgoNative}},
               {scCollAllGather, {scAlgoRing, scAlgoRecDbl, scAlgoNative}}};
  for (int P : {2, 3, 4, 8})
    for (int machines : {1, 2})
      for (const auto& c : colls)
        for (size_t count : {size_t(1), size_t(1000), size_t(1) << 22}) {
          // bytes: the full vector per rank (reduce-scatter recvcount x P, allgather sendcount x P).
          const double n = double(count) * 4 * (c.coll == scCollAllReduce ? 1 : P);
          const Abg p = machines > 1 ? kInter : kIntra;
          double best = INFINITY;
          for (scAlgo_t x : c.algos) {
            SCOPED_TRACE(testing::Message() << "P " << P << " machines " << machines << " coll " << c.coll << " algo "
                                            << x << " count " << count);
            const Est e = costModel(&cfg, P, machines, c.coll, x, count);
            const double want = readme(c.coll, x, P, n, p);
            EXPECT_NEAR(e.s, want, 1e-12 * want + 1e-18);
            if (x != scAlgoNative) best = std::min(best, want);
          }
          const Est e = costModel(&cfg, P, machines, c.coll, scAlgoAuto, count);
          EXPECT_NEAR(e.s, best, 1e-12 * best) << "auto's time is its pick's, the fastest";
          EXPECT_NEAR(readme(c.coll, scAlgo_t(e.pick), P, n, p), best, 1e-12 * best);
        }
  // One rank: nothing to send.
  EXPECT_EQ(costModel(&cfg, 1, 1, scCollAllReduce, scAlgoRing, 1000).s, 0.0);
}

// Two bands of the local transport (lower, upper: their "bytes" and
// "measured" keys) in one file, and each band's parameters alone in a file of
// its own: configs banded, small and large.
struct TwoBands {
  static constexpr Abg kSmall{1e-6, 5e-11, 2e-11}, kLarge{4e-5, 9e-10, 3e-10};
  std::string files[3];
  scConfig_t banded, small, large;
  TwoBands(const char* lower, const char* upper) {
    auto entry = [](const char* keys, Abg p) {
      char buf[256];
      std::snprintf(buf, sizeof buf, R"({"transport": "local", %s"alpha": %.17g, "beta": %.17g, "gamma": %.17g})", keys,
                    p.a, p.b, p.g);
      return std::string(buf);
    };
    // The upper band first: the file's order does not matter.
    files[0] = writeTuning(tuningJson("[" + entry(upper, kLarge) + ", " + entry(lower, kSmall) + "]"));
    files[1] = writeTuning(tuningJson("[" + entry("", kSmall) + "]"));
    files[2] = writeTuning(tuningJson("[" + entry("", kLarge) + "]"));
    banded = configWith(files[0].c_str());
    small = configWith(files[1].c_str());
    large = configWith(files[2].c_str());
    for (scConfig_t* c : {&banded, &small, &large}) c->transport = scTransportLocal;
  }
};

// A tuning file with bands: every collective prices a call with the band of
// its bytes (dense: the full vector; sparse: N values; DSOP: n x m outputs),
// exactly as a file holding only that band's parameters would.
TEST(Estimate, BandsFollowTheCallsBytes) {
  ScopedEnv a("SPARCOLL_ALPHA", nullptr), b("SPARCOLL_BETA", nullptr), g("SPARCOLL_GAMMA", nullptr),
      al("SPARCOLL_ALGO", nullptr);
  TwoBands f(R"("bytes": [0, 65535], )", R"("bytes": [65536, 18446744073709551615], )");
  scConfig_t &cb = f.banded, &cs = f.small, &cl = f.large;
  const int P = 4;
  const struct {
    scCollective_t coll;
    int algo;
    size_t count;
    double density;
    bool largeBand;  // by the call's bytes
  } calls[] = {
      {scCollAllReduce, scAlgoRing, 16383, 0, false},            // 65532 B
      {scCollAllReduce, scAlgoRing, 16384, 0, true},             // 65536 B
      {scCollReduceScatter, scAlgoRabenseifner, 4096, 0, true},  // 4096 x 4 ranks x 4 B = 64 KiB
      {scCollReduceScatter, scAlgoRabenseifner, 4095, 0, false},
      {scCollAllGather, scAlgoRecDbl, 100, 0, false},
      {scCollBroadcast, scAlgoBinomial, 1 << 20, 0, true},
      {scCollSparseAllReduce, scSsarRecDbl, 1000, 0.01, false},
      {scCollSparseAllReduce, scDsarSplitAllGather, 1 << 20, 0.01, true},
      {scCollDsop, scDsopAllGather, 100, 0, false},  // 100 x 100 x 4 B = 40000 B
      {scCollDsop, scDsopAllScatter, 200, 0, true},  // 160000 B
  };
  for (const auto& c : calls)
    for (int algo : {c.algo, 0}) {
      SCOPED_TRACE(testing::Message() << "coll " << c.coll << " algo " << algo << " count " << c.count);
      const Est got = costModel(&cb, P, 1, c.coll, algo, c.count, scFloat32, c.density);
      const Est want = costModel(c.largeBand ? &cl : &cs, P, 1, c.coll, algo, c.count, scFloat32, c.density);
      EXPECT_DOUBLE_EQ(got.s, want.s);
      EXPECT_EQ(got.pick, want.pick);
      const Est other = costModel(c.largeBand ? &cs : &cl, P, 1, c.coll, algo, c.count, scFloat32, c.density);
      EXPECT_NE(got.s, other.s) << "the two bands must give different prices here";
    }
}

// Between two bands' measured sizes ("measured"), a prediction blends the
// bands log-linearly in size: t_small^(1-w) t_large^w with
// w = log(bytes / small's largest) / log(large's smallest / small's largest),
// so it meets each band's own price at that band's measured edge and never
// jumps where the bands' bytes meet. Every collective's model goes through it.
TEST(Estimate, BandsBlendBetweenTheirMeasuredSizes) {
  ScopedEnv a("SPARCOLL_ALPHA", nullptr), b("SPARCOLL_BETA", nullptr), g("SPARCOLL_GAMMA", nullptr),
      al("SPARCOLL_ALGO", nullptr);
  // Measured 1 KiB .. 16 KiB and 256 KiB .. 64 MiB; the bytes meet at 64 KiB.
  TwoBands f(R"("bytes": [0, 65535], "measured": [1024, 16384], )",
             R"("bytes": [65536, 18446744073709551615], "measured": [262144, 67108864], )");
  scConfig_t &cb = f.banded, &cs = f.small, &cl = f.large;
  const int P = 4;
  const struct {
    scCollective_t coll;
    int algo;
    size_t count;  // float32: bytes = 4 count (sparse: N; DSOP: n x n outputs)
    double density;
    double w;  // on the large band
  } calls[] = {
      {scCollAllReduce, scAlgoRing, 4096, 0, 0},        // 16 KiB: small's largest measured size
      {scCollAllReduce, scAlgoRing, 16384, 0, 0.5},     // 64 KiB: halfway (geometrically)
      {scCollAllReduce, scAlgoRecDbl, 32768, 0, 0.75},  // 128 KiB
      {scCollAllReduce, scAlgoRing, 65536, 0, 1},       // 256 KiB: large's smallest measured size
      {scCollAllGather, scAlgoRing, 2048, 0, 0.25},     // 8 KiB x 4 ranks = 32 KiB
      {scCollBroadcast, scAlgoBinomial, 16384, 0, 0.5},
      {scCollSparseAllReduce, scSsarRecDbl, 16384, 0.01, 0.5},
      {scCollSparseAllReduce, scDsarSplitAllGather, 16384, 0.3, 0.5},
      {scCollDsop, scDsopAllGather, 128, 0, 0.5},  // 128 x 128 x 4 B = 64 KiB
  };
  for (const auto& c : calls) {
    SCOPED_TRACE(testing::Message() << "coll " << c.coll << " algo " << c.algo << " count " << c.count);
    const double got = costModel(&cb, P, 1, c.coll, c.algo, c.count, scFloat32, c.density).s;
    const double ts = costModel(&cs, P, 1, c.coll, c.algo, c.count, scFloat32, c.density).s;
    const double tl = costModel(&cl, P, 1, c.coll, c.algo, c.count, scFloat32, c.density).s;
    EXPECT_NEAR(got, std::pow(ts, 1 - c.w) * std::pow(tl, c.w), 1e-12 * got);
  }
  // Continuous: just past small's largest measured size is small's price to
  // within a part in a thousand, and the time grows across the gap.
  const double next = costModel(&cb, P, 1, scCollAllReduce, scAlgoRing, 4097).s;
  EXPECT_NEAR(next, costModel(&cs, P, 1, scCollAllReduce, scAlgoRing, 4097).s, 1e-3 * next);
  double last = 0;
  for (size_t count = 4096; count <= 65536; count += 512) {
    const double t = costModel(&cb, P, 1, scCollAllReduce, scAlgoRing, count).s;
    EXPECT_GT(t, last);
    last = t;
  }
}

// The shared-medium term: with beta_shared = 1 and every other parameter 0,
// a dense estimate is the bytes all ranks send, which the library's own
// counters (scStats_t) measure on a real call of that size.
TEST(Estimate, SharedTermIsEveryRanksTraffic) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "the local transport's threads suffice";
  ScopedEnv a("SPARCOLL_ALPHA", nullptr), b("SPARCOLL_BETA", nullptr), g("SPARCOLL_GAMMA", nullptr),
      bs("SPARCOLL_BETA_SHARED", nullptr), al("SPARCOLL_ALGO", nullptr);
  const std::string file =
      writeTuning(tuningJson(R"([{"transport": "local", "alpha": 0, "beta": 0, "gamma": 0, "beta_shared": 1}])"));
  scConfig_t cfg = configWith(file.c_str());
  cfg.transport = scTransportLocal;
  const struct {
    scCollective_t coll;
    std::vector<scAlgo_t> algos;
  } colls[] = {{scCollAllReduce, {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl}},
               {scCollReduceScatter, {scAlgoRing, scAlgoRabenseifner}},
               {scCollAllGather, {scAlgoRing, scAlgoRecDbl}},
               {scCollBroadcast, {scAlgoBinomial, scAlgoScatterAllGather}}};
  for (int P : {2, 3, 4, 5, 6, 7, 8})
    for (const auto& c : colls)
      for (scAlgo_t algo : c.algos) {
        // A count every block divides: the schedules' traffic is then exact.
        const size_t count = size_t(P) * 840,
                     perCall = c.coll == scCollReduceScatter || c.coll == scCollAllGather ? count / size_t(P) : count;
        std::vector<uint64_t> sent(static_cast<size_t>(P), 0);
        sctest::run(
            P,
            [&](scComm_t comm, int rank) {
              std::vector<float> in(count, 1.0f), out(count, 0.0f);
              SC_OK(comm, scCommResetStats(comm));
              switch (c.coll) {
                case scCollAllReduce:
                  SC_OK(comm, scAllReduce(in.data(), out.data(), perCall, scFloat32, scSum, algo, comm, nullptr));
                  break;
                case scCollReduceScatter:
                  SC_OK(comm, scReduceScatter(in.data(), out.data(), perCall, scFloat32, scSum, algo, comm, nullptr));
                  break;
                case scCollAllGather:
                  SC_OK(comm, scAllGather(in.data(), out.data(), perCall, scFloat32, algo, comm, nullptr));
                  break;
                default: SC_OK(comm, scBroadcast(in.data(), perCall, scFloat32, 0, algo, comm, nullptr));
              }
              scStats_t st{};
              SC_OK(comm, scCommGetStats(comm, &st));
              sent[size_t(rank)] = st.bytesSent;
            },
            &cfg);
        uint64_t total = 0;
        for (uint64_t x : sent) total += x;
        SCOPED_TRACE(testing::Message() << "P " << P << " coll " << c.coll << " algo " << algo);
        EXPECT_DOUBLE_EQ(costModel(&cfg, P, 1, c.coll, algo, perCall).s, double(total));
      }
}

// A communicator's estimate is the comm-free model's of its size, on as many
// machines as it found (local: one; MPI: its shared-memory split, one machine
// under CTest's mpirun), unless SPARCOLL_MACHINES says otherwise; its picks
// are the *AlgoFor ones.
TEST(Estimate, CommunicatorMatchesCostModel) {
  const std::string file = twoLevelFile();
  scConfig_t cfg = configWith(file.c_str());
  for (const char* machinesEnv : {(const char*)nullptr, "2"}) {
    ScopedEnv env("SPARCOLL_MACHINES", machinesEnv);
    const int machines = machinesEnv ? 2 : 1;
    for (int P : {2, 3, 4}) {
      scConfig_t local = cfg;
      local.transport = sctest::mode() == sctest::Mode::Mpi ? scTransportMpi : scTransportLocal;
      sctest::run(
          P,
          [&](scComm_t comm, int) {
            for (size_t count : {size_t(2), size_t(5000), size_t(1) << 20}) {
              Est e;
              ASSERT_EQ(scEstimateTime(comm, scCollAllReduce, scAlgoAuto, count, scFloat32, 0, &e.s, &e.pick),
                        scSuccess)
                  << scGetLastError(comm);
              const Est want = costModel(&local, P, machines, scCollAllReduce, scAlgoAuto, count);
              EXPECT_DOUBLE_EQ(e.s, want.s);
              EXPECT_EQ(e.pick, want.pick);
              scAlgo_t a = scAlgoAuto;
              ASSERT_EQ(scAllReduceAlgoFor(comm, count * 4, &a), scSuccess);
              EXPECT_EQ(int(a), e.pick);
              const double n = double(count) * 4;
              EXPECT_NEAR(e.s, readme(scCollAllReduce, a, P, n, machines > 1 ? kInter : kIntra), 1e-12 * e.s);
            }
            // Sparse: auto's pick is scSparseAlgoFor's for every rank at density x N.
            for (double d : {1e-4, 1e-2, 0.5}) {
              const size_t N = 1 << 20;
              Est e;
              ASSERT_EQ(scEstimateTime(comm, scCollSparseAllReduce, 0, N, scFloat32, d, &e.s, &e.pick), scSuccess)
                  << scGetLastError(comm);
              std::vector<size_t> nnz(size_t(P), size_t(std::llround(d * N)));
              scSparseAlgo_t a = scSparseAuto;
              ASSERT_EQ(scSparseAlgoFor(comm, nnz.data(), N, scIndexU32, scFloat32, nullptr, 1, &a), scSuccess);
              EXPECT_EQ(e.pick, int(a)) << "density " << d;
              EXPECT_GT(e.s, 0);
              Est dense;
              ASSERT_EQ(scEstimateTime(comm, scCollSparseAllReduce, scSparseDense, N, scFloat32, d, &dense.s, nullptr),
                        scSuccess);
              EXPECT_LE(e.s, dense.s);
            }
            // DSOP: auto's pick is scDsopAlgoFor's for n = m = count.
            for (size_t n : {size_t(8), size_t(300), size_t(4000)}) {
              Est e;
              ASSERT_EQ(scEstimateTime(comm, scCollDsop, 0, n, scFloat32, 0, &e.s, &e.pick), scSuccess);
              scDsopAlgo_t a = scDsopAuto;
              ASSERT_EQ(scDsopAlgoFor(comm, n, n, scFloat32, &a), scSuccess);
              EXPECT_EQ(e.pick, int(a)) << "n " << n;
              for (int x = 1; x < scNumDsopAlgos; ++x) {
                double t = 0;
                ASSERT_EQ(scEstimateTime(comm, scCollDsop, x, n, scFloat32, 0, &t, nullptr), scSuccess);
                EXPECT_GE(t, e.s) << "auto's pick is the fastest DSOP algorithm";
              }
            }
          },
          &cfg);
    }
  }
}

// Parameters: the environment over the tuning file over the built-in
// defaults; a level the file lacks takes the other level's numbers.
TEST(Estimate, ParameterPrecedence) {
  ScopedEnv a("SPARCOLL_ALPHA", nullptr), b("SPARCOLL_BETA", nullptr), g("SPARCOLL_GAMMA", nullptr),
      f("SPARCOLL_TUNING_FILE", nullptr);
  const int P = 4;
  const double n = 4000;
  auto ring = [&](const scConfig_t* cfg, int machines) {
    return costModel(cfg, P, machines, scCollAllReduce, scAlgoRing, 1000).s;
  };
  scConfig_t cfg = configWith(nullptr);
  cfg.transport = scTransportMpi;
  // Built-in mpi defaults: alpha 5 us, beta 1/4e9, gamma 1/4e9 (README).
  const Abg builtin{5e-6, 1.0 / 4e9, 1.0 / 4e9};
  EXPECT_NEAR(ring(&cfg, 1), readme(scCollAllReduce, scAlgoRing, P, n, builtin), 1e-15);
  EXPECT_NEAR(ring(&cfg, 2), readme(scCollAllReduce, scAlgoRing, P, n, builtin), 1e-15);
  const std::string intraOnly =
      writeTuning(tuningJson(R"([{"transport": "mpi", "alpha": 2e-6, "beta": 1e-10, "gamma": 5e-11}])"));
  cfg.tuningFile = intraOnly.c_str();
  EXPECT_NEAR(ring(&cfg, 1), readme(scCollAllReduce, scAlgoRing, P, n, kIntra), 1e-15);
  EXPECT_NEAR(ring(&cfg, 2), readme(scCollAllReduce, scAlgoRing, P, n, kIntra), 1e-15) << "inter copies intra";
  cfg.transport = scTransportLocal;  // no entry for local: its built-in defaults (3 us, 1/6e9, 1/4e9)
  EXPECT_NEAR(ring(&cfg, 1), readme(scCollAllReduce, scAlgoRing, P, n, {3e-6, 1.0 / 6e9, 1.0 / 4e9}), 1e-15);
  cfg.transport = scTransportMpi;
  {
    ScopedEnv envA("SPARCOLL_ALPHA", "1e-3"), envG("SPARCOLL_GAMMA", "0");
    EXPECT_NEAR(ring(&cfg, 1), readme(scCollAllReduce, scAlgoRing, P, n, {1e-3, 1e-10, 0}), 1e-15);
    EXPECT_NEAR(ring(&cfg, 2), readme(scCollAllReduce, scAlgoRing, P, n, {1e-3, 1e-10, 0}), 1e-15);
    // A communicator reads the same (local: the file has no local entry, so its built-in beta).
    const bool local = sctest::mode() == sctest::Mode::Local;
    sctest::run(
        P,
        [&](scComm_t comm, int) {
          double s = 0;
          ASSERT_EQ(scEstimateTime(comm, scCollAllReduce, scAlgoRing, 1000, scFloat32, 0, &s, nullptr), scSuccess);
          EXPECT_NEAR(s, readme(scCollAllReduce, scAlgoRing, P, n, {1e-3, local ? 1.0 / 6e9 : 1e-10, 0}), 1e-15);
        },
        &cfg);
  }
  {
    ScopedEnv envB("SPARCOLL_BETA", "-1");
    scCostModel_t m = nullptr;
    EXPECT_EQ(scCostModelCreate(&m, &cfg, P, 1, 0), scInvalidArgument);
    EXPECT_NE(std::string(scGetLastError(nullptr)).find("SPARCOLL_BETA='-1' must be a finite number >= 0"),
              std::string::npos);
  }
}

TEST(Estimate, BadArguments) {
  scConfig_t cfg = configWith(nullptr);
  scCostModel_t m = nullptr;
  auto fails = [&](scResult_t r, const char* needle) {
    EXPECT_EQ(r, scInvalidArgument);
    EXPECT_NE(std::string(scGetLastError(nullptr)).find(needle), std::string::npos) << scGetLastError(nullptr);
  };
  fails(scCostModelCreate(&m, &cfg, 0, 1, 0), "nranks must be >= 1");
  fails(scCostModelCreate(&m, &cfg, 4, 5, 0), "machines must be in [1, nranks = 4]");
  fails(scCostModelCreate(&m, &cfg, 4, 1, 1), "the mpi transport works on host memory");
  cfg.transport = scTransportNccl;
  fails(scCostModelCreate(&m, &cfg, 4, 1, 0), "the nccl transport works on device memory");
  cfg.transport = scTransportLocal;
  ASSERT_EQ(scCostModelCreate(&m, &cfg, 4, 1, 1), scSuccess);
  double s = 0;
  fails(scCostModelEstimateTime(m, scCollective_t(9), 0, 10, scFloat32, 0, &s, nullptr), "unknown collective 9");
  fails(scCostModelEstimateTime(m, scCollReduceScatter, scAlgoRecDbl, 10, scFloat32, 0, &s, nullptr),
        "algorithm 'recdbl' is not available for reduce-scatter");
  fails(scCostModelEstimateTime(m, scCollAllReduce, 7, 10, scFloat32, 0, &s, nullptr), "unknown algorithm 7");
  fails(scCostModelEstimateTime(m, scCollSparseAllReduce, 0, 10, scFloat32, 0, &s, nullptr),
        "density must be in (0, 1]");
  fails(scCostModelEstimateTime(m, scCollSparseAllReduce, 0, 10, scFloat32, 1.5, &s, nullptr),
        "density must be in (0, 1]");
  fails(scCostModelEstimateTime(m, scCollDsop, 0, 0, scFloat32, 0, &s, nullptr), "count = n = m >= 1");
  fails(scCostModelEstimateTime(m, scCollAllReduce, 0, 10, scDataType_t(99), 0, &s, nullptr), "unknown data type");
  fails(scCostModelEstimateTime(m, scCollAllGather, 0, SIZE_MAX / 2, scFloat32, 0, &s, nullptr), "overflows");
  fails(scCostModelEstimateTime(m, scCollAllReduce, 0, 10, scFloat32, 0, nullptr, nullptr), "seconds output is NULL");
  fails(scCostModelEstimateTime(nullptr, scCollAllReduce, 0, 10, scFloat32, 0, &s, nullptr), "cost model is NULL");
  scCostModelDestroy(m);
  EXPECT_EQ(scCostModelDestroy(nullptr), scSuccess);
  EXPECT_EQ(scEstimateTime(nullptr, scCollAllReduce, 0, 10, scFloat32, 0, &s, nullptr), scInvalidArgument);
}

}  // namespace
}  // namespace mtest
