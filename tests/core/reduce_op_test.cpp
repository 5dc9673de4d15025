// core/reduce_op.h, the reduction operators that the CPU backend and the CUDA
// kernels both run, checked bit for bit against references written from the
// definitions with no code in common with the library:
//  - float16/bfloat16 sum, prod, max, min: every one of the 65536 patterns of
//    the first operand against a set of a few hundred special and boundary
//    patterns of the second (all 2^32 pairs would take minutes). Operands are
//    decoded with ldexp, the result is computed in double (exact for sums and
//    products of float16, and of bfloat16 products), rounded to float32 and
//    then to the 16-bit format by a rounding written from the definition (the
//    nearer neighbour, ties to the even one): "widened to float32 and rounded
//    once" taken literally. NaN results must be NaN (their payload is free);
//    max/min are IEEE 754-2019 maximum/minimum (NaN propagates, -0 < +0) and
//    must return the selected operand's bits in either argument order, NaNs
//    included (two NaNs: the format's quiet NaN).
//  - avg's division of every float16/bfloat16 pattern by a set of rank counts;
//  - integers: every int8 and uint8 pair, and the boundary values of the wider
//    types, against wrap-around arithmetic in 128 bits; truncating division;
//  - nonZero on every 16-bit pattern, and the run-time op dispatch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/reduce_op.h"

namespace {

using sc::Arith;
using sc::BFloat16;
using sc::Half;

// --- 16-bit formats from the definition ---------------------------------------
struct Format {
  int frac, expBits;  // fraction and exponent field widths
  int p() const { return frac + 1; }
  int bias() const { return (1 << (expBits - 1)) - 1; }
  int emin() const { return 1 - bias(); }
  int emax() const { return bias(); }
};
constexpr Format kHalf{10, 5}, kBf16{7, 8}, kF32{23, 8};

// The value of a pattern: (-1)^s 2^(e - bias) 1.f, subnormals 2^emin 0.f.
double decode(uint32_t bits, Format f) {
  const bool neg = (bits >> (f.frac + f.expBits)) & 1;
  const uint32_t e = (bits >> f.frac) & ((1u << f.expBits) - 1), m = bits & ((1u << f.frac) - 1);
  double v;
  if (e == (1u << f.expBits) - 1) v = m ? NAN : INFINITY;
  else if (e == 0) v = std::ldexp(double(m), f.emin() - f.frac);
  else v = std::ldexp(double(m + (1u << f.frac)), int(e) - f.bias() - f.frac);
  return neg ? -v : v;
}

// v rounded to format f: the nearer of the two representable neighbours, ties
// to the even one; beyond the largest finite value (after rounding) Inf.
double roundTo(double v, Format f) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  int e;
  std::frexp(std::fabs(v), &e);  // |v| in [2^(e-1), 2^e)
  const double quantum = std::ldexp(1.0, std::max(e - 1, f.emin()) - f.frac);
  const double q = std::fabs(v) / quantum;  // exact: a power-of-two scaling
  double k = std::floor(q);
  const double rest = q - k;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(k, 2.0) == 1.0)) k += 1;
  double r = k * quantum;
  if (r > std::ldexp(2.0 - std::ldexp(1.0, -f.frac), f.emax())) r = INFINITY;
  return std::copysign(r, v);
}

// Every exponent (or a spread of them for bfloat16) with the mantissas at the
// edges and the middle of the binade, both signs: zeros, subnormals, the
// smallest normals, ones, the largest finite values, Inf and NaNs.
std::vector<uint16_t> specials(Format f) {
  std::vector<uint32_t> exps;
  if (f.expBits == 5) {
    for (uint32_t e = 0; e < 32; ++e) exps.push_back(e);
  } else {
    exps = {0, 1, 2, 3, 50, 100, 119, 120, 125, 126, 127, 128, 129, 130, 134, 135, 150, 200, 250, 253, 254, 255};
  }
  const uint32_t top = 1u << (f.frac - 1), all = (1u << f.frac) - 1;
  std::vector<uint16_t> out;
  for (uint32_t sign : {0u, 1u})
    for (uint32_t e : exps)
      for (uint32_t m : {0u, 1u, 2u, top - 1, top, top + 1, all - 1, all})
        out.push_back(uint16_t((sign << 15) | (e << f.frac) | m));
  return out;
}

// The reference of one operation on 16-bit patterns a, b.
template <typename T>
struct Reference16 {
  Format f;
  double val(uint16_t b) const { return decode(b, f); }
  // Widened to float32 and rounded once: exact (or double-rounded, which is
  // innocuous for 53 >= 2 * 24 + 2) in double, then float32, then the format.
  double arith(double exact) const { return roundTo(roundTo(exact, kF32), f); }
  // Checks a result pattern against a reference value.
  ::testing::AssertionResult same(uint16_t got, double want) const {
    const double g = val(got);
    if (std::isnan(want) ? std::isnan(g) : (g == want && std::signbit(g) == std::signbit(want)))
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got 0x" << std::hex << got << " = " << g << ", want " << want;
  }
};

// IEEE 754-2019 maximum (max) / minimum of patterns a, b of values x, y: a NaN
// operand gives NaN (that operand; two NaNs: the format's quiet NaN with an
// empty payload, sign clear), -0 < +0, else the larger / smaller operand.
uint16_t ieee(bool max, uint16_t a, uint16_t b, double x, double y, const Format& f) {
  if (std::isnan(x) && std::isnan(y)) return uint16_t(((1u << f.expBits) - 1) << f.frac | 1u << (f.frac - 1));
  if (std::isnan(x)) return a;
  if (std::isnan(y)) return b;
  if (x == y) return (std::signbit(x) == max) ? b : a;  // max: +0 wins, min: -0 wins
  return (x < y) == max ? b : a;
}

template <typename T>
void checkPairs(Format f) {
  const Reference16<T> ref{f};
  const std::vector<uint16_t> bs = specials(f);
  std::vector<double> ys;
  for (uint16_t b : bs) ys.push_back(ref.val(b));
  uint64_t bad = 0;
  for (uint32_t ai = 0; ai < 0x10000u; ++ai) {
    const uint16_t a = uint16_t(ai);
    const double x = ref.val(a);
    for (size_t j = 0; j < bs.size(); ++j) {
      const uint16_t b = bs[j];
      const double y = ys[j];
      const T A{a}, B{b};
      auto check = [&](const char* op, uint16_t got, double want) {
        const auto r = ref.same(got, want);
        if (!r && ++bad <= 10) ADD_FAILURE() << op << "(0x" << std::hex << a << ", 0x" << b << "): " << r.message();
      };
      check("sum", Arith<T>::sum(A, B).bits, ref.arith(x + y));
      check("prod", Arith<T>::prod(A, B).bits, ref.arith(x * y));
      // max/min are IEEE 754-2019 maximum/minimum selecting an operand
      // unchanged, and both argument orders give the same bits.
      auto select = [&](const char* op, uint16_t got, uint16_t want) {
        if (got != want && ++bad <= 10)
          ADD_FAILURE() << op << "(0x" << std::hex << a << ", 0x" << b << ") = 0x" << got << ", want 0x" << want;
      };
      select("max", Arith<T>::max(A, B).bits, ieee(true, a, b, x, y, f));
      select("min", Arith<T>::min(A, B).bits, ieee(false, a, b, x, y, f));
      select("max reversed", Arith<T>::max(B, A).bits, ieee(true, a, b, x, y, f));
      select("min reversed", Arith<T>::min(B, A).bits, ieee(false, a, b, x, y, f));
    }
  }
  EXPECT_EQ(bad, 0u);
}

TEST(ReduceOp, HalfEveryPatternAgainstSpecials) { checkPairs<Half>(kHalf); }
TEST(ReduceOp, Bf16EveryPatternAgainstSpecials) { checkPairs<BFloat16>(kBf16); }

template <typename T>
void checkDivide(Format f) {
  const Reference16<T> ref{f};
  uint64_t bad = 0;
  for (int d : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 24, 100, 127, 128, 255, 256, 1000, 4096, 65535}) {
    const sc::DivideBy<T> div{d};
    for (uint32_t ai = 0; ai < 0x10000u; ++ai) {
      const auto r = ref.same(div(T{uint16_t(ai)}).bits, ref.arith(ref.val(uint16_t(ai)) / d));
      if (!r && ++bad <= 10) ADD_FAILURE() << "0x" << std::hex << ai << " / " << std::dec << d << ": " << r.message();
    }
  }
  EXPECT_EQ(bad, 0u);
}

TEST(ReduceOp, HalfDivideEveryPattern) { checkDivide<Half>(kHalf); }
TEST(ReduceOp, Bf16DivideEveryPattern) { checkDivide<BFloat16>(kBf16); }

TEST(ReduceOp, HalfKnownAnswers) {
  auto h = [](uint16_t b) { return Half{b}; };
  EXPECT_EQ(Arith<Half>::sum(h(0x3c00), h(0x3c00)).bits, 0x4000);   // 1 + 1 = 2
  EXPECT_EQ(Arith<Half>::sum(h(0x6800), h(0x3c00)).bits, 0x6800);   // 2048 + 1: tie to even, 2048
  EXPECT_EQ(Arith<Half>::sum(h(0x6801), h(0x3c00)).bits, 0x6802);   // 2050 + 1: tie to even, 2052
  EXPECT_EQ(Arith<Half>::sum(h(0x7bff), h(0x5000)).bits, 0x7c00);   // 65504 + 32 overflows to Inf
  EXPECT_EQ(Arith<Half>::sum(h(0x0001), h(0x8001)).bits, 0x0000);   // x + (-x) = +0
  EXPECT_EQ(Arith<Half>::sum(h(0x8000), h(0x8000)).bits, 0x8000);   // -0 + -0 = -0
  EXPECT_EQ(Arith<Half>::prod(h(0x0001), h(0x3800)).bits, 0x0000);  // 2^-24 / 2: tie to even, 0
  EXPECT_EQ(Arith<Half>::max(h(0x8000), h(0x0000)).bits, 0x0000);   // -0 < +0, either order
  EXPECT_EQ(Arith<Half>::max(h(0x0000), h(0x8000)).bits, 0x0000);
  EXPECT_EQ(Arith<Half>::min(h(0x0000), h(0x8000)).bits, 0x8000);
  EXPECT_EQ(Arith<Half>::max(h(0x7e01), h(0x3c00)).bits, 0x7e01);  // NaN first: kept, payload and all
  EXPECT_EQ(Arith<Half>::min(h(0x3c00), h(0xfe03)).bits, 0xfe03);  // NaN second: kept too
  EXPECT_EQ(Arith<Half>::max(h(0x7e01), h(0xfe03)).bits, 0x7e00);  // two NaNs: the quiet NaN, either order
  EXPECT_EQ(Arith<Half>::max(h(0xfe03), h(0x7e01)).bits, 0x7e00);
  EXPECT_EQ(Arith<Half>::max(h(0x7c01), h(0x7c00)).bits, 0x7c01);  // a signalling NaN is selected as it is
}

// --- integers -----------------------------------------------------------------
// Wrap-around arithmetic: the value modulo 2^bits, in the type's range (the
// 128-bit unsigned product is exact modulo 2^128, so modulo 2^bits too).
using u128 = unsigned __int128;
template <typename T>
T wrap(u128 v) {
  constexpr int bits = 8 * sizeof(T);
  const u128 low = v & ((u128(1) << bits) - 1);
  if (std::is_signed_v<T> && (low >> (bits - 1))) return T(__int128(low) - (__int128(1) << bits));
  return T(low);
}

template <typename T>
void checkIntPair(T a, T b, uint64_t* bad) {
  const u128 x = u128(__int128(a)), y = u128(__int128(b));  // two's complement of signed values
  auto expect = [&](const char* op, T got, T want) {
    if (got != want && ++*bad <= 10)
      ADD_FAILURE() << op << "(" << +a << ", " << +b << ") = " << +got << ", want " << +want;
  };
  expect("sum", Arith<T>::sum(a, b), wrap<T>(x + y));
  expect("prod", Arith<T>::prod(a, b), wrap<T>(x * y));
  expect("max", Arith<T>::max(a, b), std::max(a, b));
  expect("min", Arith<T>::min(a, b), std::min(a, b));
}

TEST(ReduceOp, EightBitIntegersEveryPair) {
  uint64_t bad = 0;
  for (int a = -128; a < 128; ++a)
    for (int b = -128; b < 128; ++b) checkIntPair<int8_t>(int8_t(a), int8_t(b), &bad);
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) checkIntPair<uint8_t>(uint8_t(a), uint8_t(b), &bad);
  EXPECT_EQ(bad, 0u);
}

template <typename T>
std::vector<T> edges() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {L::min(),
                      T(L::min() + 1),
                      T(L::max() - 1),
                      L::max(),
                      T(0),
                      T(1),
                      T(2),
                      T(3),
                      T(L::max() / 2),
                      T(L::max() / 2 + 1),
                      T(0x5555555555555555ull),
                      T(0xaaaaaaaaaaaaaaaaull)};
  if (std::is_signed_v<T>) v.insert(v.end(), {T(-1), T(-2), T(-3), T(L::min() / 2)});
  return v;
}

template <typename T>
void checkWideIntegers() {
  uint64_t bad = 0;
  for (T a : edges<T>())
    for (T b : edges<T>()) checkIntPair<T>(a, b, &bad);
  EXPECT_EQ(bad, 0u);
}

TEST(ReduceOp, WideIntegersWrap) {
  checkWideIntegers<int32_t>();
  checkWideIntegers<uint32_t>();
  checkWideIntegers<int64_t>();
  checkWideIntegers<uint64_t>();
  EXPECT_EQ(Arith<int32_t>::sum(INT32_MAX, 1), INT32_MIN);
  EXPECT_EQ(Arith<int64_t>::prod(INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(Arith<uint64_t>::sum(UINT64_MAX, 2), 1u);
}

// avg: truncation toward zero, in 64 bits, so an 8-bit type divides by 128 or 256.
TEST(ReduceOp, IntegerDivisionTruncates) {
  for (int d = 1; d <= 300; ++d) {
    for (int a = -128; a < 128; ++a) ASSERT_EQ(sc::DivideBy<int8_t>{d}(int8_t(a)), int8_t(a / d)) << a << " / " << d;
    for (int a = 0; a < 256; ++a) ASSERT_EQ(sc::DivideBy<uint8_t>{d}(uint8_t(a)), uint8_t(a / d)) << a << " / " << d;
  }
  EXPECT_EQ(Arith<int64_t>::div(INT64_MIN, 2), INT64_MIN / 2);
  EXPECT_EQ(Arith<int32_t>::div(-7, 2), -3);
  EXPECT_EQ(Arith<uint64_t>::div(UINT64_MAX, 3), UINT64_MAX / 3);
  EXPECT_EQ(Arith<float>::div(1.0f, 3), 1.0f / 3.0f);
}

// --- native floats: max/min select, sum/prod are one IEEE operation ---------------
TEST(ReduceOp, NativeFloats) {
  EXPECT_TRUE(std::signbit(Arith<float>::min(-0.0f, 0.0f)));
  EXPECT_TRUE(std::signbit(Arith<float>::min(0.0f, -0.0f)));
  EXPECT_FALSE(std::signbit(Arith<double>::max(0.0, -0.0)));
  EXPECT_FALSE(std::signbit(Arith<double>::max(-0.0, 0.0)));
  EXPECT_EQ(Arith<float>::sum(16777216.0f, 1.0f), 16777216.0f);  // tie to even
  EXPECT_EQ(Arith<double>::prod(3.0, 0.1), 3.0 * 0.1);
}

// NaN propagates through max/min whichever side it is on (IEEE 754-2019
// maximum/minimum): one NaN is returned unchanged, two give the quiet NaN.
template <typename F, typename B>
void checkNativeNan(B quiet) {
  const B sign = B(1) << (8 * sizeof(B) - 1);
  const F payload = sc::num::bitCast<F>(B(quiet | 5)), neg = sc::num::bitCast<F>(B(quiet | 3 | sign));
  const F inf = std::numeric_limits<F>::infinity();
  for (F other : {F(1), F(-1), F(0), -F(0), inf, -inf, std::numeric_limits<F>::lowest()}) {
    for (F nan : {payload, neg}) {
      const B nb = sc::num::bitCast<B>(nan);
      EXPECT_EQ(sc::num::bitCast<B>(Arith<F>::max(nan, other)), nb);
      EXPECT_EQ(sc::num::bitCast<B>(Arith<F>::max(other, nan)), nb);
      EXPECT_EQ(sc::num::bitCast<B>(Arith<F>::min(nan, other)), nb);
      EXPECT_EQ(sc::num::bitCast<B>(Arith<F>::min(other, nan)), nb);
    }
  }
  EXPECT_EQ(sc::num::bitCast<B>(Arith<F>::max(payload, neg)), quiet);
  EXPECT_EQ(sc::num::bitCast<B>(Arith<F>::min(neg, payload)), quiet);
}

TEST(ReduceOp, NativeFloatNanPropagates) {
  checkNativeNan<float, uint32_t>(0x7fc00000u);
  checkNativeNan<double, uint64_t>(0x7ff8000000000000ull);
}

// --- element functors ----------------------------------------------------------
TEST(ReduceOp, RunTimeDispatch) {
  for (scRedOp_t op : {scSum, scProd, scMax, scMin, scAvg}) {
    const int32_t got = sc::withReduceOp<int32_t>(op, [](auto f) { return f(6, 7); });
    const int32_t want = op == scProd ? 42 : op == scMax ? 7 : op == scMin ? 6 : 13;  // avg combines as sum
    EXPECT_EQ(got, want) << "op " << int(op);
  }
}

TEST(ReduceOp, NonZeroEveryPattern) {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    ASSERT_EQ(sc::nonZero(Half{uint16_t(b)}), decode(b, kHalf) != 0.0) << std::hex << b;  // NaN != 0
    ASSERT_EQ(sc::nonZero(BFloat16{uint16_t(b)}), decode(b, kBf16) != 0.0) << std::hex << b;
  }
  EXPECT_FALSE(sc::nonZero(-0.0));
  EXPECT_TRUE(sc::nonZero(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_TRUE(sc::nonZero(int8_t(-128)));
}

// widen() is exact: the reference decode of every pattern.
TEST(ReduceOp, WideningEveryPattern) {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const double h = decode(b, kHalf), g = decode(b, kBf16);
    const float wh = sc::widen(Half{uint16_t(b)}), wg = sc::widen(BFloat16{uint16_t(b)});
    if (std::isnan(h)) ASSERT_TRUE(std::isnan(wh)) << std::hex << b;
    else ASSERT_TRUE(double(wh) == h && std::signbit(wh) == std::signbit(h)) << std::hex << b;
    if (std::isnan(g)) ASSERT_TRUE(std::isnan(wg)) << std::hex << b;
    else ASSERT_TRUE(double(wg) == g && std::signbit(wg) == std::signbit(g)) << std::hex << b;
  }
}

}  // namespace
