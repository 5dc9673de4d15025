#include <cstring>

#include "common/harness.h"

TEST(CApi, VersionAndErrorStrings) {
  int a = -1, b = -1, c = -1;
  scGetVersion(&a, &b, &c);
  EXPECT_EQ(a, SPARCOLL_VERSION_MAJOR);
  EXPECT_EQ(b, SPARCOLL_VERSION_MINOR);
  EXPECT_EQ(c, SPARCOLL_VERSION_PATCH);
  for (int r = 0; r < scNumResults; ++r) EXPECT_STRNE(scGetErrorString(scResult_t(r)), "unknown result code");
  EXPECT_STREQ(scGetErrorString(scResult_t(99)), "unknown result code");
  EXPECT_NE(scGetLastError(nullptr), nullptr);
}
