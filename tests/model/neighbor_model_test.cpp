// The neighbourhood model's estimates (README, "Neighbourhood collectives"):
// the message overhead o from the tuning file, the environment or alpha's
// share, and scTopologyCostTerms, the terms every estimate sums.
#include <gtest/gtest.h>

#include <string>

#include "common/harness.h"
#include "model_util.h"

namespace mtest {
namespace {

// The neighbourhood model (README, "Neighbourhood collectives"): naive on a
// complete graph of P ranks is one round of P - 1 messages each way, priced
// alpha + o (P - 2) + beta (P - 1) bytes (every block intra-node here), with
// each further message's overhead o: the file's message_overhead, else
// alpha / 12; SPARCOLL_MESSAGE_OVERHEAD beats both.
TEST(NeighborModel, RoundIsAlphaPlusMessageOverheads) {
  ScopedEnv a("SPARCOLL_ALPHA", nullptr), b("SPARCOLL_BETA", nullptr), f("SPARCOLL_TUNING_FILE", nullptr),
      m("SPARCOLL_MACHINES", nullptr), mo("SPARCOLL_MESSAGE_OVERHEAD", nullptr);
  const int P = 4;
  const double alpha = 1e-5, beta = 1e-9;
  const std::string tr = sctest::mode() == sctest::Mode::Local ? "local" : "mpi";
  const std::string entry = R"({"transport": ")" + tr + R"(", "alpha": 1e-5, "beta": 1e-9, "gamma": 0)";
  const std::string plain = writeTuning(tuningJson("[" + entry + "}]")),
                    measured = writeTuning(tuningJson("[" + entry + R"(, "message_overhead": 3e-6}])"));
  const struct {
    const std::string& file;
    const char* env;
    double o;
  } cases[] = {{plain, nullptr, alpha / 12}, {measured, nullptr, 3e-6}, {measured, "2.5e-7", 2.5e-7},
               {plain, "0", 0}};
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << c.file << " SPARCOLL_MESSAGE_OVERHEAD=" << (c.env ? c.env : "(unset)"));
    ScopedEnv env("SPARCOLL_MESSAGE_OVERHEAD", c.env);
    const scConfig_t cfg = configWith(c.file.c_str());
    sctest::run(P, [&](scComm_t comm, int rank) {
      const scTopology_t t = completeTopology(comm, rank, P);
      ASSERT_NE(t, nullptr);
      for (size_t bytes : {size_t(8), size_t(1024), size_t(1) << 20}) {
        double s = 0;
        ASSERT_EQ(scTopologyEstimateTime(t, bytes, scNbrNaive, &s, nullptr), scSuccess) << scGetLastError(comm);
        EXPECT_NEAR(s, alpha + c.o * (P - 2) + beta * (P - 1) * double(bytes), 1e-15) << bytes << " B";
      }
      EXPECT_EQ(scTopologyDestroy(t), scSuccess);
    }, &cfg);
  }
  ScopedEnv bad("SPARCOLL_MESSAGE_OVERHEAD", "-1");
  scConfig_t cfg = configWith(plain.c_str());
  scCostModel_t cm = nullptr;
  EXPECT_EQ(scCostModelCreate(&cm, &cfg, P, 1, 0), scInvalidArgument);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("SPARCOLL_MESSAGE_OVERHEAD='-1' must be a finite number >= 0"),
            std::string::npos)
      << scGetLastError(nullptr);
}

// scTopologyCostTerms are the estimate's terms: summed with the model's
// parameters (beta_shared too) they give scTopologyEstimateTime, for every
// explicit algorithm; naive's shared blocks are every edge's block.
// A message worth much (o = 100 alpha) makes combining form groups on the
// complete graph of 6 ranks and auto pick it at small blocks; a message worth
// nothing (o = 0) forms no group (theta beyond any neighbourhood, k = 1), and
// auto runs naive.
TEST(NeighborModel, CostTermsPriceTheEstimate) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "6 ranks: the local transport's threads";
  ScopedEnv a("SPARCOLL_ALPHA", nullptr), b("SPARCOLL_BETA", nullptr), f("SPARCOLL_TUNING_FILE", nullptr),
      m("SPARCOLL_MACHINES", nullptr), mo("SPARCOLL_MESSAGE_OVERHEAD", nullptr);
  const int P = 6;
  const double alpha = 1e-6, beta = 1e-9, betaShared = 3e-10;
  for (double o : {1e-4, 0.0}) {
    SCOPED_TRACE(testing::Message() << "message_overhead " << o);
    const std::string file = writeTuning(tuningJson(
        R"([{"transport": "local", "alpha": 1e-6, "beta": 1e-9, "gamma": 0, "beta_shared": 3e-10, "message_overhead": )" +
        std::to_string(o) + "}]"));
    scConfig_t cfg = configWith(file.c_str());
    cfg.transport = scTransportLocal;
    sctest::run(P, [&](scComm_t comm, int rank) {
      const scTopology_t t = completeTopology(comm, rank, P);
      ASSERT_NE(t, nullptr);
      for (scNbrAlgo_t algo : {scNbrNaive, scNbrCombining, scNbrHierarchical, scNbrNative}) {
        scNbrCostTerms_t c{};
        ASSERT_EQ(scTopologyCostTerms(t, algo, &c), scSuccess) << scGetLastError(comm);
        EXPECT_EQ(c.rounds[1] + c.extraMessages[1] + c.blocks[1] + c.sharedBlocks[1], 0)
            << "one machine: nothing inter-node";
        for (size_t bytes : {size_t(8), size_t(4096)}) {
          double s = 0;
          ASSERT_EQ(scTopologyEstimateTime(t, bytes, algo, &s, nullptr), scSuccess);
          EXPECT_NEAR(s,
                      c.rounds[0] * alpha + c.extraMessages[0] * o +
                          double(bytes) * (c.blocks[0] * beta + c.sharedBlocks[0] * betaShared),
                      1e-15)
              << "algo " << algo << ", " << bytes << " B";
        }
      }
      scNbrCostTerms_t naive{}, comb{};
      ASSERT_EQ(scTopologyCostTerms(t, scNbrNaive, &naive), scSuccess);
      ASSERT_EQ(scTopologyCostTerms(t, scNbrCombining, &comb), scSuccess);
      EXPECT_EQ(naive.rounds[0], 1);
      EXPECT_EQ(naive.extraMessages[0], P - 2);
      EXPECT_EQ(naive.blocks[0], P - 1);
      EXPECT_EQ(naive.sharedBlocks[0], P * (P - 1)) << "every rank sends its block to P - 1 others";
      if (o > 0) EXPECT_GT(comb.sharedBlocks[0], 0);
      int k = 0, size = 0;
      ASSERT_EQ(scTopologyFriendGroup(t, &k, nullptr, &size, nullptr), scSuccess);
      scNbrAlgo_t pick = scNbrAuto;
      ASSERT_EQ(scNeighborAlgoFor(t, 8, &pick), scSuccess);
      if (o > 0) {
        EXPECT_GE(size, 2) << "groups form where a message is worth 100 alpha";
        EXPECT_EQ(comb.rounds[0], 2);
        EXPECT_LT(comb.extraMessages[0], naive.extraMessages[0]);
        EXPECT_EQ(pick, scNbrCombining);
      } else {
        EXPECT_EQ(k, 1);
        EXPECT_EQ(size, 1);
        EXPECT_EQ(pick, scNbrNaive);
      }
      scNbrCostTerms_t c{};
      EXPECT_EQ(scTopologyCostTerms(t, scNbrAuto, &c), scInvalidArgument);
      EXPECT_NE(std::string(scGetLastError(comm)).find("algorithm 0 (auto): the terms are an explicit algorithm's"),
                std::string::npos) << scGetLastError(comm);
      EXPECT_EQ(scTopologyCostTerms(t, scNbrAlgo_t(9), &c), scInvalidArgument);
      EXPECT_EQ(scTopologyCostTerms(t, scNbrNaive, nullptr), scInvalidArgument);
      EXPECT_NE(std::string(scGetLastError(comm)).find("terms output is NULL"), std::string::npos);
      EXPECT_EQ(scTopologyDestroy(t), scSuccess);
    }, &cfg);
  }
}

// SPARCOLL_MODEL_TRANSPORT prices a communicator as another transport's (its
// file entry, here mpi's on local threads); SPARCOLL_MACHINES=M makes the
// neighbourhood's machines M blocks of consecutive ranks, whose blocks the
// model prices at the inter level. A bad transport name fails the creation.
TEST(NeighborModel, ModelTransportAndMachines) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "the local transport's threads stand in";
  ScopedEnv a("SPARCOLL_ALPHA", nullptr), b("SPARCOLL_BETA", nullptr), f("SPARCOLL_TUNING_FILE", nullptr),
      m("SPARCOLL_MACHINES", nullptr), mo("SPARCOLL_MESSAGE_OVERHEAD", nullptr), mt("SPARCOLL_MODEL_TRANSPORT", nullptr),
      rpn("SPARCOLL_RANKS_PER_NODE", nullptr);
  const int P = 4;
  const std::string file = writeTuning(tuningJson(
      R"([{"transport": "mpi", "alpha": 7e-6, "beta": 2e-9, "gamma": 0, "message_overhead": 1e-6},
          {"transport": "local", "alpha": 3e-6, "beta": 1e-9, "gamma": 0, "message_overhead": 0}])"));
  scConfig_t cfg = configWith(file.c_str());
  cfg.transport = scTransportLocal;
  auto naive = [&](double* seconds, scNbrCostTerms_t* terms) {
    sctest::run(P, [&](scComm_t comm, int rank) {
      const scTopology_t t = completeTopology(comm, rank, P);
      ASSERT_NE(t, nullptr);
      if (rank == 0) {
        ASSERT_EQ(scTopologyEstimateTime(t, 1000, scNbrNaive, seconds, nullptr), scSuccess);
        ASSERT_EQ(scTopologyCostTerms(t, scNbrNaive, terms), scSuccess);
      }
      EXPECT_EQ(scTopologyDestroy(t), scSuccess);
    }, &cfg);
  };
  double s = 0;
  scNbrCostTerms_t c{};
  naive(&s, &c);
  EXPECT_NEAR(s, 3e-6 + 0 + 1000 * 3 * 1e-9, 1e-15) << "its own transport's entry";
  {
    ScopedEnv env("SPARCOLL_MODEL_TRANSPORT", "mpi");
    naive(&s, &c);
    EXPECT_NEAR(s, 7e-6 + 2 * 1e-6 + 1000 * 3 * 2e-9, 1e-15) << "mpi's entry";
    ScopedEnv two("SPARCOLL_MACHINES", "2");
    naive(&s, &c);
    // Machines {0, 1} and {2, 3}: each rank sends one block at home and two away.
    EXPECT_EQ(c.rounds[1], 1);
    EXPECT_EQ(c.blocks[1], 2);
    EXPECT_EQ(c.sharedBlocks[0], P * 1);
    EXPECT_EQ(c.sharedBlocks[1], P * 2);
  }
  ScopedEnv bad("SPARCOLL_MODEL_TRANSPORT", "tcp");
  scComm_t comms[P];
  EXPECT_EQ(scCommInitLocal(comms, P, nullptr, &cfg), scInvalidArgument);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("SPARCOLL_MODEL_TRANSPORT='tcp' is not one of mpi, nccl, local"),
            std::string::npos)
      << scGetLastError(nullptr);
}

}  // namespace
}  // namespace mtest
