// scCommInitMpi's agreement on the configuration (transport/mpi/agree.cpp):
// a setting that fails or differs on one rank makes every rank fail within
// seconds, naming the rank and the setting. Before, the bad rank returned its
// error and the others blocked forever in MPI_Comm_split_type / MPI_Comm_dup.
// MPI only (under mpirun with 2 ranks); the local run skips.
#include <chrono>
#include <cstdlib>
#include <string>

#include "common/harness.h"
#include "reliability/reliability_util.h"

namespace {

using reltest::has;
using reltest::since;

// Sets `name` to `value` on rank 1 only, creates a communicator on every
// rank, and returns this rank's result and message. (SPARCOLL_TIMEOUT is
// read only without a timeout in the config.)
scResult_t createWithRankOne(const char* name, const char* value, std::string* msg) {
  const int rank = sctest::mpiWorldRank();
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.timeoutSeconds = std::string(name) == "SPARCOLL_TIMEOUT" ? 0 : 20;
  if (rank == 1) setenv(name, value, 1);
  scComm_t comm = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  const scResult_t r = scCommInitMpi(&comm, nullptr, &cfg);
  EXPECT_LT(since(t0), 5.0) << "a rank waited far past the exchange";
  *msg = scGetLastError(nullptr);
  if (rank == 1) unsetenv(name);
  if (comm) scCommDestroy(comm);
  reltest::syncWorld();
  return r;
}

class CreationAgrees : public ::testing::Test {
 protected:
  void SetUp() override {
    if (sctest::mode() != sctest::Mode::Mpi || sctest::mpiWorldSize() != 2) GTEST_SKIP() << "needs mpirun -np 2";
  }
};

// A setting that fails on rank 1: its own error there, scRemoteError naming
// rank 1 and its error on rank 0.
void failsOnRankOne(const char* name, const char* value, const char* words) {
  std::string msg;
  const scResult_t r = createWithRankOne(name, value, &msg);
  if (sctest::mpiWorldRank() == 1) {
    EXPECT_EQ(r, scInvalidArgument) << msg;
  } else {
    EXPECT_EQ(r, scRemoteError) << msg;
    EXPECT_TRUE(has(msg, "rank 1 failed to create the communicator")) << msg;
  }
  EXPECT_TRUE(has(msg, name)) << msg;
  EXPECT_TRUE(has(msg, words)) << msg;
}

TEST_F(CreationAgrees, AnUnreadableTuningFileOnOneRank) {
  failsOnRankOne("SPARCOLL_TUNING_FILE", "/nonexistent/sparcoll-tuning.json", "/nonexistent/sparcoll-tuning.json");
}

TEST_F(CreationAgrees, AnInvalidCheckOnOneRank) { failsOnRankOne("SPARCOLL_CHECK", "sometimes", "'sometimes'"); }

TEST_F(CreationAgrees, ANegativeTimeoutOnOneRank) { failsOnRankOne("SPARCOLL_TIMEOUT", "-1", "'-1'"); }

// Settings that differ: scInvalidUsage on both ranks, naming the setting and
// both values.
void differsOnRankOne(const char* name, const char* value, const char* valueWords) {
  std::string msg;
  EXPECT_EQ(createWithRankOne(name, value, &msg), scInvalidUsage) << msg;
  EXPECT_TRUE(has(msg, "the ranks' settings differ")) << msg;
  EXPECT_TRUE(has(msg, name)) << msg;
  EXPECT_TRUE(has(msg, valueWords)) << msg;
  EXPECT_TRUE(has(msg, "rank 0") && has(msg, "rank 1")) << msg;
}

TEST_F(CreationAgrees, MachinesSetOnOneRankOnly) { differsOnRankOne("SPARCOLL_MACHINES", "2", "unset"); }

TEST_F(CreationAgrees, AnAlgorithmOnOneRankOnly) { differsOnRankOne("SPARCOLL_ALGO", "ring", "ring"); }

TEST_F(CreationAgrees, AModelParameterOnOneRankOnly) { differsOnRankOne("SPARCOLL_BETA", "1e-9", "1e-09"); }

// Every rank alike: the communicator is made and works.
TEST_F(CreationAgrees, TheSameSettingsOnEveryRank) {
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  scComm_t comm = nullptr;
  ASSERT_EQ(scCommInitMpi(&comm, nullptr, &cfg), scSuccess) << scGetLastError(nullptr);
  float x = 1;
  EXPECT_EQ(scAllReduce(&x, &x, 1, scFloat32, scSum, scAlgoRing, comm, nullptr), scSuccess);
  EXPECT_EQ(x, 2.0f);
  scCommDestroy(comm);
}

}  // namespace
