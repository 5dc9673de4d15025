// The neighbourhood model's estimates (README, "Neighbourhood collectives"):
// the message overhead o from the tuning file, the environment or alpha's
// share, scTopologyCostTerms, the terms every estimate sums, and
// scCostModelNeighborTime, which prices terms without a topology.
#include <gtest/gtest.h>

#include <cmath>
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
  } cases[] = {{plain, nullptr, alpha / 12}, {measured, nullptr, 3e-6}, {measured, "2.5e-7", 2.5e-7}, {plain, "0", 0}};
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << c.file << " SPARCOLL_MESSAGE_OVERHEAD=" << (c.env ? c.env : "(unset)"));
    ScopedEnv env("SPARCOLL_MESSAGE_OVERHEAD", c.env);
    const scConfig_t cfg = configWith(c.file.c_str());
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          const scTopology_t t = completeTopology(comm, rank, P);
          ASSERT_NE(t, nullptr);
          for (size_t bytes : {size_t(8), size_t(1024), size_t(1) << 20}) {
            double s = 0;
            ASSERT_EQ(scTopologyEstimateTime(t, bytes, scNbrNaive, &s, nullptr), scSuccess) << scGetLastError(comm);
            EXPECT_NEAR(s, alpha + c.o * (P - 2) + beta * (P - 1) * double(bytes), 1e-15) << bytes << " B";
          }
          EXPECT_EQ(scTopologyDestroy(t), scSuccess);
        },
        &cfg);
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
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
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
                    std::string::npos)
              << scGetLastError(comm);
          EXPECT_EQ(scTopologyCostTerms(t, scNbrAlgo_t(9), &c), scInvalidArgument);
          EXPECT_EQ(scTopologyCostTerms(t, scNbrNaive, nullptr), scInvalidArgument);
          EXPECT_NE(std::string(scGetLastError(comm)).find("terms output is NULL"), std::string::npos);
          EXPECT_EQ(scTopologyDestroy(t), scSuccess);
        },
        &cfg);
  }
}

// SPARCOLL_MODEL_TRANSPORT prices a communicator as another transport's (its
// file entry, here mpi's on local threads); SPARCOLL_MACHINES=M makes the
// neighbourhood's machines M blocks of consecutive ranks, whose blocks the
// model prices at the inter level. A bad transport name fails the creation.
TEST(NeighborModel, ModelTransportAndMachines) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "the local transport's threads stand in";
  ScopedEnv a("SPARCOLL_ALPHA", nullptr), b("SPARCOLL_BETA", nullptr), f("SPARCOLL_TUNING_FILE", nullptr),
      m("SPARCOLL_MACHINES", nullptr), mo("SPARCOLL_MESSAGE_OVERHEAD", nullptr),
      mt("SPARCOLL_MODEL_TRANSPORT", nullptr), rpn("SPARCOLL_RANKS_PER_NODE", nullptr);
  const int P = 4;
  const std::string file = writeTuning(tuningJson(
      R"([{"transport": "mpi", "alpha": 7e-6, "beta": 2e-9, "gamma": 0, "message_overhead": 1e-6},
          {"transport": "local", "alpha": 3e-6, "beta": 1e-9, "gamma": 0, "message_overhead": 0}])"));
  scConfig_t cfg = configWith(file.c_str());
  cfg.transport = scTransportLocal;
  auto naive = [&](double* seconds, scNbrCostTerms_t* terms) {
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          const scTopology_t t = completeTopology(comm, rank, P);
          ASSERT_NE(t, nullptr);
          if (rank == 0) {
            ASSERT_EQ(scTopologyEstimateTime(t, 1000, scNbrNaive, seconds, nullptr), scSuccess);
            ASSERT_EQ(scTopologyCostTerms(t, scNbrNaive, terms), scSuccess);
          }
          EXPECT_EQ(scTopologyDestroy(t), scSuccess);
        },
        &cfg);
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

// scCostModelNeighborTime prices a topology's terms exactly as
// scTopologyEstimateTime does (the same code: sparcoll-tune fits on recorded
// terms with it), when its model is the one the communicator holds: with two
// bands per level (sizes between two bands' measured ones blend), with the
// inter level missing (its beta 4x the intra one's), and with the built-in
// parameters (neither level given); the ranks on 2 machines, so that both
// levels' terms count.
TEST(NeighborModel, CostModelPricesTermsAsTheTopology) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "6 ranks: the local transport's threads";
  ScopedEnv a("SPARCOLL_ALPHA", nullptr), b("SPARCOLL_BETA", nullptr), f("SPARCOLL_TUNING_FILE", nullptr),
      mo("SPARCOLL_MESSAGE_OVERHEAD", nullptr), mt("SPARCOLL_MODEL_TRANSPORT", nullptr),
      rpn("SPARCOLL_RANKS_PER_NODE", nullptr), m("SPARCOLL_MACHINES", "2");
  const int P = 6, machines = 2;
  const std::string intra =
      R"({"transport": "local", "level": "intra", "bytes": [0, 1023], "measured": [8, 512], "alpha": 2e-6,
          "beta": 1e-10, "gamma": 0, "beta_shared": 1e-11, "message_overhead": 5e-6},
         {"transport": "local", "level": "intra", "bytes": [1024, 18446744073709551615],
          "measured": [4096, 1048576], "alpha": 9e-6, "beta": 4e-10, "gamma": 0, "beta_shared": 2e-11})";
  const std::string inter =
      R"({"transport": "local", "level": "inter", "bytes": [0, 2047], "measured": [16, 1024], "alpha": 2e-5,
          "beta": 1e-9, "gamma": 0, "message_overhead": 1e-6},
         {"transport": "local", "level": "inter", "bytes": [2048, 18446744073709551615],
          "measured": [8192, 1048576], "alpha": 5e-5, "beta": 3e-9, "gamma": 0, "beta_shared": 1e-10})";
  const std::string files[] = {writeTuning(tuningJson("[" + intra + ", " + inter + "]")),
                               writeTuning(tuningJson("[" + intra + "]")), ""};
  // 700 B and 2000 B lie between the intra bands' measured sizes, 2000 B and
  // 5000 B between the inter ones'.
  const size_t sizes[] = {0, 8, 100, 512, 700, 1024, 2000, 4096, 5000, size_t(1) << 20, size_t(3) << 20};
  for (const std::string& file : files) {
    SCOPED_TRACE(file.empty() ? std::string("built-in parameters") : file);
    scConfig_t cfg = configWith(file.empty() ? nullptr : file.c_str());
    cfg.transport = scTransportLocal;
    scCostModel_t cm = nullptr;
    ASSERT_EQ(scCostModelCreate(&cm, &cfg, P, machines, 0), scSuccess) << scGetLastError(nullptr);
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          const scTopology_t t = completeTopology(comm, rank, P);
          ASSERT_NE(t, nullptr);
          for (scNbrAlgo_t algo : {scNbrNaive, scNbrCombining, scNbrHierarchical}) {
            scNbrCostTerms_t c{};
            ASSERT_EQ(scTopologyCostTerms(t, algo, &c), scSuccess) << scGetLastError(comm);
            if (algo == scNbrNaive) EXPECT_GT(c.blocks[1], 0) << "2 machines: inter-node blocks";
            for (size_t bytes : sizes) {
              double want = 0, got = -1;
              ASSERT_EQ(scTopologyEstimateTime(t, bytes, algo, &want, nullptr), scSuccess) << scGetLastError(comm);
              ASSERT_EQ(scCostModelNeighborTime(cm, &c, bytes, &got), scSuccess) << scGetLastError(nullptr);
              EXPECT_EQ(got, want) << "algo " << algo << ", " << bytes << " B";
            }
          }
          EXPECT_EQ(scTopologyDestroy(t), scSuccess);
        },
        &cfg);
    EXPECT_EQ(scCostModelDestroy(cm), scSuccess);
  }
}

// Bad arguments to scCostModelNeighborTime: each NULL, and each term negative,
// NaN or infinite, is scInvalidArgument naming it; zero terms cost nothing.
TEST(NeighborModel, CostModelNeighborTimeArguments) {
  ScopedEnv a("SPARCOLL_ALPHA", nullptr), b("SPARCOLL_BETA", nullptr), f("SPARCOLL_TUNING_FILE", nullptr),
      mo("SPARCOLL_MESSAGE_OVERHEAD", nullptr);
  scCostModel_t cm = nullptr;
  const scConfig_t cfg = configWith(nullptr);
  ASSERT_EQ(scCostModelCreate(&cm, &cfg, 4, 1, 0), scSuccess) << scGetLastError(nullptr);
  auto fails = [](scResult_t r, const std::string& msg) {
    EXPECT_EQ(r, scInvalidArgument);
    EXPECT_NE(std::string(scGetLastError(nullptr)).find(msg), std::string::npos) << scGetLastError(nullptr);
  };
  scNbrCostTerms_t zero{};
  double s = -1;
  ASSERT_EQ(scCostModelNeighborTime(cm, &zero, 1 << 20, &s), scSuccess) << scGetLastError(nullptr);
  EXPECT_EQ(s, 0);
  fails(scCostModelNeighborTime(nullptr, &zero, 8, &s), "cost model is NULL");
  fails(scCostModelNeighborTime(cm, nullptr, 8, &s), "terms is NULL");
  fails(scCostModelNeighborTime(cm, &zero, 8, nullptr), "seconds output is NULL");
  const char* names[] = {"rounds", "extraMessages", "blocks", "sharedBlocks"};
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < 2; ++l)
      for (double bad : {-1.0, double(NAN), double(INFINITY)}) {
        scNbrCostTerms_t c{};
        double* v[] = {c.rounds, c.extraMessages, c.blocks, c.sharedBlocks};
        v[k][l] = bad;
        SCOPED_TRACE(testing::Message() << names[k] << "[" << l << "] = " << bad);
        fails(scCostModelNeighborTime(cm, &c, 8, &s),
              std::string("terms->") + names[k] + "[" + std::to_string(l) + "] must be a finite number >= 0, got ");
      }
  EXPECT_EQ(scCostModelDestroy(cm), scSuccess);
}

}  // namespace
}  // namespace mtest
