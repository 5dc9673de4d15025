// scAlgoName / scAlgoFromName, scDataTypeName / scDataTypeFromName and
// scRedOpName / scRedOpFromName: every value round-trips through its name; an
// unknown name, and NULL arguments, are scInvalidArgument with a message
// (scGetLastError(NULL)) naming the valid ones.
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

TEST(DataTypeNames, EveryValueRoundTripsAndAliasesParse) {
  std::set<std::string> seen;
  for (int i = 0; i < scNumTypes; ++i) {
    const char* n = scDataTypeName(scDataType_t(i));
    ASSERT_NE(n, nullptr);
    EXPECT_STRNE(n, "?") << "value " << i;
    EXPECT_TRUE(seen.insert(n).second) << "two values are named '" << n << "'";
    scDataType_t back = scDataType_t(-1);
    ASSERT_EQ(scDataTypeFromName(n, &back), scSuccess) << n << ": " << scGetLastError(nullptr);
    EXPECT_EQ(back, scDataType_t(i)) << n;
  }
  EXPECT_STREQ(scDataTypeName(scFloat32), "float");
  EXPECT_STREQ(scDataTypeName(scBfloat16), "bfloat16");
  EXPECT_STREQ(scDataTypeName(scNumTypes), "?");
  const struct {
    const char* name;
    scDataType_t t;
  } aliases[] = {{"float32", scFloat32}, {"fp16", scFloat16}, {"f64", scFloat64}, {"bf16", scBfloat16},
                 {"int", scInt32},       {"char", scInt8},    {"half", scFloat16}};
  for (const auto& a : aliases) {
    scDataType_t t = scDataType_t(-1);
    ASSERT_EQ(scDataTypeFromName(a.name, &t), scSuccess) << a.name;
    EXPECT_EQ(t, a.t) << a.name;
  }
}

TEST(DataTypeNames, UnknownNameListsTheValidOnes) {
  scDataType_t t = scInt64;
  EXPECT_EQ(scDataTypeFromName("float8", &t), scInvalidArgument);
  EXPECT_EQ(t, scInt64);
  const std::string msg = scGetLastError(nullptr);
  EXPECT_NE(msg.find("unknown data type 'float8'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("bf16"), std::string::npos) << msg;
  EXPECT_EQ(scDataTypeFromName(nullptr, &t), scInvalidArgument);
  EXPECT_EQ(scDataTypeFromName("float", nullptr), scInvalidArgument);
}

TEST(RedOpNames, EveryValueRoundTrips) {
  std::string all;
  for (int i = 0; i < scNumOps; ++i) {
    const char* n = scRedOpName(scRedOp_t(i));
    ASSERT_STRNE(n, "?");
    all += (all.empty() ? "" : ", ") + std::string(n);
    scRedOp_t back = scRedOp_t(-1);
    ASSERT_EQ(scRedOpFromName(n, &back), scSuccess) << n;
    EXPECT_EQ(back, scRedOp_t(i));
  }
  EXPECT_EQ(all, "sum, prod, max, min, avg");
  EXPECT_STREQ(scRedOpName(scRedOp_t(-1)), "?");
  scRedOp_t op = scMax;
  EXPECT_EQ(scRedOpFromName("product", &op), scInvalidArgument);
  EXPECT_EQ(op, scMax);
  const std::string msg = scGetLastError(nullptr);
  EXPECT_NE(msg.find("unknown reduction 'product': one of sum, prod, max, min, avg"), std::string::npos) << msg;
  EXPECT_EQ(scRedOpFromName(nullptr, &op), scInvalidArgument);
}

}  // namespace
