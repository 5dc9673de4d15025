// scAlgoAuto and its overrides: the cost model's picks (scAllReduceAlgoFor),
// that an auto call really runs the schedule the model names (its traffic is
// that schedule's), and that SPARCOLL_ALGO / scConfig_t.algo / the per-call
// argument force the choice, in that order of precedence: call > env > config.
#include "dense_check.h"
#include "traffic_model.h"

namespace dtest {
namespace {

constexpr size_t kSliceBytes = 512;

scAlgo_t algoFor(scComm_t comm, size_t bytes) {
  scAlgo_t a = scAlgoAuto;
  const scResult_t r = scAllReduceAlgoFor(comm, bytes, &a);
  EXPECT_EQ(r, scSuccess) << scGetLastError(comm);
  return a;
}

Traffic stats(scComm_t comm) {
  scStats_t s{};
  EXPECT_EQ(scCommGetStats(comm, &s), scSuccess) << scGetLastError(comm);
  return fromStats(s);
}

// One checked auto allreduce of `count` float32; returns its measured traffic.
Traffic autoAllReduce(scComm_t comm, int rank, int P, size_t count, scAlgo_t algo = scAlgoAuto) {
  EXPECT_EQ(scCommResetStats(comm), scSuccess);
  EXPECT_TRUE(checkAllReduce(comm, rank, P, {algo, scFloat32, scSum, count, false},
                             makeExpected(scFloat32, scSum, P, 0, count), nullptr));
  return stats(comm);
}

Traffic model(scAlgo_t a, int P, int rank, size_t count) {
  if (a == scAlgoNative) return {};
  return expectedTraffic(Coll::AllReduce, a, P, rank, count, 4, kSliceBytes / 4);
}

class AutoSelect : public testing::TestWithParam<int> {};

// Latency-bound tiny messages go to recursive doubling, bandwidth-bound large
// ones to ring or Rabenseifner; every rank makes the same choice, and an auto
// call moves exactly the traffic of the chosen schedule.
TEST_P(AutoSelect, ModelPicksAndAutoRunsThePick) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  const scConfig_t cfg = config(30, kSliceBytes);
  CrossRank xr(P);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        EXPECT_EQ(algoFor(comm, 8), scAlgoRecDbl) << "8-byte allreduce on " << P << " ranks";
        const scAlgo_t big = algoFor(comm, size_t(64) << 20);
        EXPECT_TRUE(big == scAlgoRing || big == scAlgoRabenseifner) << "64 MiB allreduce picked " << algoStr(big);
        std::vector<int> picks;
        for (size_t bytes = 4; bytes <= (size_t(64) << 20); bytes *= 4) {
          const scAlgo_t a = algoFor(comm, bytes);
          EXPECT_TRUE(a == scAlgoRing || a == scAlgoRabenseifner || a == scAlgoRecDbl)
              << bytes << " bytes: auto resolved to " << algoStr(a);
          picks.push_back(int(a));
        }
        xr.add(rank, "picks", picks.data(), picks.size() * sizeof(int));
        for (size_t count : {size_t(2), size_t(300), size_t(5000), size_t(300000)}) {
          const scAlgo_t a = algoFor(comm, count * 4);
          EXPECT_EQ(autoAllReduce(comm, rank, P, count), model(a, P, rank, count))
              << "auto allreduce of " << count << " floats did not run " << algoStr(a);
        }
        xr.finish(rank);
      },
      &cfg);
  xr.verify();
}

INSTANTIATE_TEST_SUITE_P(Dense, AutoSelect, testing::Values(4, 8),
                         [](const testing::TestParamInfo<int>& i) { return "P" + std::to_string(i.param); });

const scAlgo_t kForcible[] = {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoNative};

// The auto choice is `forced` for every size, and auto calls run it.
void expectForced(scComm_t comm, int rank, int P, scAlgo_t forced) {
  EXPECT_EQ(algoFor(comm, 8), forced);
  EXPECT_EQ(algoFor(comm, size_t(64) << 20), forced);
  for (size_t count : {size_t(3), size_t(100000)})
    EXPECT_EQ(autoAllReduce(comm, rank, P, count), model(forced, P, rank, count))
        << "auto allreduce of " << count << " floats did not run " << algoStr(forced);
}

TEST(AutoConfig, EnvironmentForcesAlgorithm) {
  const int P = anyP(4);
  const scConfig_t cfg = config(30, kSliceBytes);
  for (scAlgo_t forced : kForcible) {
    SCOPED_TRACE(std::string("SPARCOLL_ALGO=") + algoStr(forced));
    ScopedEnv env("SPARCOLL_ALGO", algoStr(forced));
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          expectForced(comm, rank, P, forced);
          // An explicit algorithm in the call beats the environment.
          const scAlgo_t other = forced == scAlgoRing ? scAlgoRabenseifner : scAlgoRing;
          EXPECT_EQ(autoAllReduce(comm, rank, P, 1234, other), model(other, P, rank, 1234));
          // A forced algorithm the collective does not offer (recdbl reduce-scatter,
          // rabenseifner allgather) falls back to the model instead of failing.
          EXPECT_TRUE(checkReduceScatter(comm, rank, P, {scAlgoAuto, scInt32, scSum, 99, false},
                                         makeExpected(scInt32, scSum, P, 0, size_t(P) * 99)));
          EXPECT_TRUE(checkAllGather(comm, rank, P, {scAlgoAuto, scInt32, scSum, 99, true}, 3, nullptr));
        },
        &cfg);
  }
}

TEST(AutoConfig, ConfigForcesAlgorithm) {
  const int P = anyP(5);
  ScopedEnv env("SPARCOLL_ALGO", nullptr);
  for (scAlgo_t forced : kForcible) {
    SCOPED_TRACE(std::string("scConfig_t.algo=") + algoStr(forced));
    scConfig_t cfg = config(30, kSliceBytes);
    cfg.algo = forced;
    sctest::run(
        P, [&](scComm_t comm, int rank) { expectForced(comm, rank, P, forced); }, &cfg);
  }
}

// SPARCOLL_ALGO "forces" the choice (sparcoll.h): it wins over scConfig_t.algo.
TEST(AutoConfig, EnvironmentBeatsConfig) {
  const int P = anyP(3);
  ScopedEnv env("SPARCOLL_ALGO", "recdbl");
  scConfig_t cfg = config(30, kSliceBytes);
  cfg.algo = scAlgoRing;
  sctest::run(
      P, [&](scComm_t comm, int rank) { expectForced(comm, rank, P, scAlgoRecDbl); }, &cfg);
}

// SPARCOLL_ALGO=auto (or empty) means the cost model.
TEST(AutoConfig, EnvironmentAutoIsTheModel) {
  const int P = anyP(4);
  const scConfig_t cfg = config(30, kSliceBytes);
  for (const char* v : {"auto", ""}) {
    ScopedEnv env("SPARCOLL_ALGO", v);
    scAlgo_t tiny = scAlgoAuto;
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          const scAlgo_t a = algoFor(comm, 8);
          if (rank == 0 || sctest::mode() == sctest::Mode::Mpi) tiny = a;
        },
        &cfg);
    if (P > 1) EXPECT_EQ(tiny, scAlgoRecDbl) << "SPARCOLL_ALGO='" << v << "'";
  }
}

}  // namespace
}  // namespace dtest
