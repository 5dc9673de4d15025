// The dense tools' check data (common/verify.h). Sums of int8 and uint8 wrap
// modulo 256, and the data must make them wrap: inputs in the type's range
// whose sums over the ranks leave it, with the expected value wrapped the
// same way (here with 8-bit unsigned arithmetic, independent of wrap8).
// A saturating sum must be reported wrong. Every other case stays exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "common/verify.h"

namespace {

using scbench::DenseData;

constexpr uint64_t kElems = 4096;

// Sum over ranks of element i, wrapped by uint8_t arithmetic and read back as T.
template <typename T>
double wrappedSum(const DenseData& d, uint64_t i) {
  uint8_t acc = 0;
  for (int r = 0; r < d.P; ++r) acc = uint8_t(acc + uint8_t(T(d.input(r, i))));
  T out;
  std::memcpy(&out, &acc, 1);
  return double(out);
}

TEST(BenchCheckData, EightBitSumsWrap) {
  for (scDataType_t dt : {scInt8, scUint8})
    for (int P : {2, 3, 4, 7, 8, 120, 256}) {
      const DenseData d{scSum, P, 101, dt};
      const double lo = dt == scInt8 ? -128 : 0, hi = dt == scInt8 ? 127 : 255;
      uint64_t outside = 0;
      for (uint64_t i = 0; i < kElems; ++i) {
        double exact = 0;
        for (int r = 0; r < P; ++r) {
          const double x = d.input(r, i);
          ASSERT_TRUE(x >= lo && x <= hi && x == std::floor(x)) << "P " << P << " rank " << r << ": " << x;
          exact += x;
        }
        outside += exact < lo || exact > hi;
        const double want = dt == scInt8 ? wrappedSum<int8_t>(d, i) : wrappedSum<uint8_t>(d, i);
        ASSERT_EQ(d.reduced(i), want) << "dtype " << dt << " P " << P << " element " << i;
      }
      // Uniform inputs over the type: a quarter of 2-rank sums leave its range, more for larger P.
      EXPECT_GT(outside, kElems / 8) << "dtype " << dt << " P " << P << ": the sums rarely wrap";
    }
}

TEST(BenchCheckData, SaturatingSumIsWrong) {
  for (scDataType_t dt : {scInt8, scUint8}) {
    const DenseData d{scSum, 4, 7, dt};
    const double lo = dt == scInt8 ? -128 : 0, hi = dt == scInt8 ? 127 : 255;
    std::vector<char> got(kElems);
    scbench::fillValues(got.data(), kElems, dt, [&](uint64_t i) {
      double s = 0;
      for (int r = 0; r < d.P; ++r) s += d.input(r, i);
      return std::min(hi, std::max(lo, s));  // what a saturating implementation returns
    });
    EXPECT_GT(scbench::countWrong(got.data(), kElems, dt, [&](uint64_t i) { return d.reduced(i); }), kElems / 8);
  }
}

// Outside 8-bit sums the data keeps every partial result an exact integer <= kMax.
TEST(BenchCheckData, OtherCasesStayInRange) {
  for (scDataType_t dt : {scInt8, scUint8, scInt32, scFloat16, scBfloat16, scFloat32})
    for (scRedOp_t op : {scSum, scProd, scMax, scMin, scAvg})
      for (int P : {1, 2, 4, 8}) {
        const DenseData d{op, P, 5, dt};
        if (d.wraps()) continue;
        for (uint64_t i = 0; i < 512; ++i) {
          const double want = d.reduced(i);
          ASSERT_TRUE(want >= 0 && want <= DenseData::kMax && want == std::floor(want))
              << "dtype " << dt << " op " << op << " P " << P << ": " << want;
        }
      }
}

}  // namespace
