// Deadlines: one rank never joins the collective. Every other rank must get
// scTimeout no earlier than the configured deadline and well before 10x it
// (or scRemoteError relaying the timeout of the rank that aborted first);
// its communicator is then aborted, so the next call fails fast with
// scInvalidUsage and a message naming the earlier failure. Each case uses a
// fresh communicator (sctest::run), so stray messages cannot match later calls.
#include <chrono>
#include <tuple>

#include "dense_check.h"

#ifdef SPARCOLL_TEST_MPI
#include <mpi.h>
#endif

namespace dtest {
namespace {

constexpr double kDeadline = 1.0;

enum class What { AllReduce, ReduceScatter, AllGather, Barrier };

struct Case {
  What what;
  scAlgo_t algo;
  std::string name() const {
    static const char* w[] = {"AllReduce", "ReduceScatter", "AllGather", "Barrier"};
    return std::string(w[int(what)]) + (what == What::Barrier ? "" : std::string("_") + algoStr(algo));
  }
};

scResult_t issue(const Case& c, scComm_t comm, int P, std::vector<int32_t>& buf) {
  int32_t* b = buf.data();
  switch (c.what) {
    case What::AllReduce: return scAllReduce(b, b, 64, scInt32, scSum, c.algo, comm, nullptr);
    case What::ReduceScatter: return scReduceScatter(b, b + 128, 64 / size_t(P), scInt32, scSum, c.algo, comm, nullptr);
    case What::AllGather: return scAllGather(b, b + 64, 64 / size_t(P), scInt32, c.algo, comm, nullptr);
    case What::Barrier: return scBarrier(comm, nullptr);
  }
  return scInternalError;
}

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// MPI: the absent rank keeps its communicator until the others are done, so
// their messages to it arrive while it exists (Open MPI 4.1 hangs a later
// MPI_COMM_WORLD collective when eager messages land on a communicator the
// receiver has already freed).
void syncWorld() {
#ifdef SPARCOLL_TEST_MPI
  MPI_Barrier(MPI_COMM_WORLD);
#endif
}

// Runs `c` on P ranks with rank `skip` absent; checks the others.
void expectTimeout(int P, int skip, const Case& c, const scConfig_t& cfg, double deadline) {
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        if (rank == skip) {  // never joins
          syncWorld();
          return;
        }
        std::vector<int32_t> buf(256, rank + 1);
        const auto t0 = std::chrono::steady_clock::now();
        const scResult_t r = issue(c, comm, P, buf);
        const double took = seconds(t0);
        // The first rank whose deadline expires times out; the others may learn
        // of its abort first (scRemoteError relaying its timeout), which can come
        // a little before their own deadline, never long before.
        const bool relayed = r == scRemoteError && contains(scGetLastError(comm), "aborted the communicator");
        EXPECT_TRUE(failedWith(r, relayed ? scRemoteError : scTimeout, comm, "deadline"))
            << c.name() << " with rank " << skip << " absent";
        EXPECT_GE(took, deadline * (relayed ? 0.5 : 0.999)) << "returned before the deadline";
        EXPECT_LT(took, 10 * deadline) << "returned long after the deadline";
        const std::string first = scGetLastError(comm);
        // The communicator is aborted: later calls fail at once, naming the cause.
        for (int k = 0; k < 2; ++k) {
          const auto t1 = std::chrono::steady_clock::now();
          const scResult_t again =
              k == 0 ? scAllReduce(buf.data(), buf.data(), 4, scInt32, scSum, scAlgoRing, comm, nullptr)
                     : scBarrier(comm, nullptr);
          EXPECT_LT(seconds(t1), 0.5 * deadline) << "a call on an aborted communicator did not fail fast";
          EXPECT_TRUE(failedWith(again, scInvalidUsage, comm, "abort"));
          EXPECT_TRUE(contains(scGetLastError(comm), "deadline"))
              << "'" << scGetLastError(comm) << "' does not name the earlier failure ('" << first << "')";
        }
        syncWorld();
      },
      &cfg);
}

class Timeout : public testing::TestWithParam<std::tuple<int, Case>> {};

TEST_P(Timeout, OneRankNeverJoins) {
  const int P = std::get<0>(GetParam());
  const Case c = std::get<1>(GetParam());
  DT_SKIP_UNLESS_RUNS(P);
  const scConfig_t cfg = config(kDeadline);
  // Vary the absent rank: last, first, or one in the middle (a folded one for P = 5).
  const int skip = int(c.what) % 2 == 0 ? P - 1 : (int(c.algo) % 2 ? 0 : P / 2);
  expectTimeout(P, skip, c, cfg, kDeadline);
}

// sparcoll's own schedules (point-to-point rounds).
const Case kP2Cases[] = {{What::AllReduce, scAlgoRing}};
const Case kP5Cases[] = {
    {What::AllReduce, scAlgoRing},     {What::AllReduce, scAlgoRabenseifner},     {What::AllReduce, scAlgoRecDbl},
    {What::ReduceScatter, scAlgoRing}, {What::ReduceScatter, scAlgoRabenseifner}, {What::AllGather, scAlgoRing},
    {What::AllGather, scAlgoRecDbl}};
// The library's collectives (native = MPI_Iallreduce / shared-memory direct,
// barrier = MPI_Ibarrier / local barrier): a separate suite, run last.
const Case kNativeCases[] = {{What::AllReduce, scAlgoNative},
                             {What::ReduceScatter, scAlgoNative},
                             {What::AllGather, scAlgoNative},
                             {What::Barrier, scAlgoAuto}};

std::string caseName(const testing::TestParamInfo<std::tuple<int, Case>>& i) {
  return "P" + std::to_string(std::get<0>(i.param)) + "_" + std::get<1>(i.param).name();
}

INSTANTIATE_TEST_SUITE_P(P2, Timeout, testing::Combine(testing::Values(2), testing::ValuesIn(kP2Cases)), caseName);
INSTANTIATE_TEST_SUITE_P(P5, Timeout, testing::Combine(testing::Values(5), testing::ValuesIn(kP5Cases)), caseName);

// With timeoutSeconds <= 0 the deadline comes from SPARCOLL_TIMEOUT.
TEST(TimeoutEnv, DeadlineFromEnvironment) {
  const int P = anyP(2);
  ScopedEnv env("SPARCOLL_TIMEOUT", "1.5");
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = 0;
  expectTimeout(P, 0, {What::AllReduce, scAlgoRecDbl}, cfg, 1.5);
}

class TimeoutNative : public Timeout {};

TEST_P(TimeoutNative, OneRankNeverJoins) {
  const int P = std::get<0>(GetParam());
  const Case c = std::get<1>(GetParam());
  DT_SKIP_UNLESS_RUNS(P);
  expectTimeout(P, P - 1, c, config(kDeadline), kDeadline);
}

const Case kNativeP2Cases[] = {{What::AllReduce, scAlgoNative}, {What::Barrier, scAlgoAuto}};
INSTANTIATE_TEST_SUITE_P(ZP2, TimeoutNative, testing::Combine(testing::Values(2), testing::ValuesIn(kNativeP2Cases)),
                         caseName);
INSTANTIATE_TEST_SUITE_P(ZP5, TimeoutNative, testing::Combine(testing::Values(5), testing::ValuesIn(kNativeCases)),
                         caseName);

}  // namespace
}  // namespace dtest
