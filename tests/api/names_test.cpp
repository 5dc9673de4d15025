// scAlgoName / scAlgoFromName: every scAlgo_t value round-trips through its
// name; an unknown name, and NULL arguments, are scInvalidArgument with a
// message (scGetLastError(NULL)) naming the valid algorithms.
#include <cstring>
#include <set>
#include <string>

#include "common/harness.h"

namespace {

const char* const kAll = "auto, ring, rabenseifner, recdbl, native, binomial, scatter_allgather";

TEST(AlgoNames, EveryValueRoundTrips) {
  std::set<std::string> seen;
  for (int i = 0; i < scNumAlgos; ++i) {
    const char* n = scAlgoName(scAlgo_t(i));
    ASSERT_NE(n, nullptr);
    EXPECT_STRNE(n, "?") << "value " << i;
    EXPECT_TRUE(seen.insert(n).second) << "two values are named '" << n << "'";
    scAlgo_t back = scAlgo_t(-1);
    ASSERT_EQ(scAlgoFromName(n, &back), scSuccess) << n << ": " << scGetLastError(nullptr);
    EXPECT_EQ(back, scAlgo_t(i)) << n;
  }
  // The spellings the benchmarks, tuning files and SPARCOLL_ALGO use.
  EXPECT_STREQ(scAlgoName(scAlgoAuto), "auto");
  EXPECT_STREQ(scAlgoName(scAlgoRabenseifner), "rabenseifner");
  EXPECT_STREQ(scAlgoName(scAlgoRecDbl), "recdbl");
  EXPECT_STREQ(scAlgoName(scAlgoScatterAllGather), "scatter_allgather");
}

TEST(AlgoNames, OutOfRangeValueIsQuestionMark) {
  EXPECT_STREQ(scAlgoName(scNumAlgos), "?");
  EXPECT_STREQ(scAlgoName(scAlgo_t(-1)), "?");
  EXPECT_STREQ(scAlgoName(scAlgo_t(1000)), "?");
}

TEST(AlgoNames, UnknownNameListsTheValidOnes) {
  for (const char* bad : {"Ring", "ring ", "", "rec_dbl", "?", "ssar_recdbl"}) {
    scAlgo_t a = scAlgoNative;
    EXPECT_EQ(scAlgoFromName(bad, &a), scInvalidArgument) << "'" << bad << "'";
    EXPECT_EQ(a, scAlgoNative) << "output written on failure for '" << bad << "'";
    const std::string msg = scGetLastError(nullptr);
    EXPECT_NE(msg.find(std::string("unknown algorithm '") + bad + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(kAll), std::string::npos) << msg;
  }
}

TEST(AlgoNames, NullArguments) {
  scAlgo_t a = scAlgoRing;
  EXPECT_EQ(scAlgoFromName(nullptr, &a), scInvalidArgument);
  EXPECT_EQ(a, scAlgoRing);
  std::string msg = scGetLastError(nullptr);
  EXPECT_NE(msg.find("name is NULL"), std::string::npos) << msg;
  EXPECT_NE(msg.find(kAll), std::string::npos) << msg;
  EXPECT_EQ(scAlgoFromName("ring", nullptr), scInvalidArgument);
  msg = scGetLastError(nullptr);
  EXPECT_NE(msg.find("algo output is NULL"), std::string::npos) << msg;
  EXPECT_EQ(scAlgoFromName(nullptr, nullptr), scInvalidArgument);
}

// No communicator or initialisation is needed.
TEST(AlgoNames, SuccessNeedsNoCommunicator) {
  scAlgo_t a = scAlgoAuto;
  EXPECT_EQ(scAlgoFromName("binomial", &a), scSuccess);
  EXPECT_EQ(a, scAlgoBinomial);
}

}  // namespace
