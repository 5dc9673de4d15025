// core/numeric.h, exhaustively: the 16-bit conversions that the CPU backend,
// the top-k reference and the CUDA kernels all run. Every float16 pattern is
// widened and checked against its value computed with ldexp (and the
// compiler's _Float16); every one of the 2^32 float32 patterns is narrowed to
// float16 and to bfloat16 and compared with a rounding written from the
// definition in double arithmetic (the nearest of the two neighbours, ties to
// the even one), and float16 also with the compiler's own _Float16 conversion
// on a spread sample (it is a slow software routine). NaNs: sign kept,
// quieted, the payload's top bits kept.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/numeric.h"

namespace {

using namespace sc::num;

// Runs f(x) for every 32-bit pattern on two threads; returns the failures' count
// and the first failing pattern.
template <typename F>
uint64_t forAll32(F f, uint32_t* firstBad) {
  std::atomic<uint64_t> bad{0};
  std::atomic<uint32_t> first{0xffffffffu};
  auto part = [&](uint64_t lo, uint64_t hi) {
    uint64_t n = 0;
    for (uint64_t x = lo; x < hi; ++x)
      if (!f(uint32_t(x))) {
        if (n++ == 0) {
          uint32_t cur = first.load();
          while (uint32_t(x) < cur && !first.compare_exchange_weak(cur, uint32_t(x))) {
          }
        }
      }
    bad += n;
  };
  const uint64_t half = uint64_t(1) << 31;
  std::thread t(part, 0, half);
  part(half, uint64_t(1) << 32);
  t.join();
  *firstBad = first.load();
  return bad.load();
}

bool isNan32(uint32_t x) { return (x & 0x7fffffffu) > 0x7f800000u; }

TEST(Numeric, HalfWideningEveryPattern) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const uint32_t got = halfToF32Bits(uint16_t(h));
    const bool neg = h & 0x8000u;
    const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    ASSERT_EQ(got >> 31, uint32_t(neg)) << std::hex << h;
    if (e == 31 && m != 0) {  // NaN: quiet bit and payload carried over
      ASSERT_TRUE(isNan32(got)) << std::hex << h;
      ASSERT_EQ((got >> 13) & 0x3ffu, m) << std::hex << h;
      continue;
    }
    const double mag = e == 31  ? INFINITY
                       : e == 0 ? std::ldexp(double(m), -24)
                                : std::ldexp(double(1024 + m), int(e) - 25);
    ASSERT_EQ(double(std::fabs(asF32(got))), mag) << std::hex << h;
    ASSERT_EQ(halfToFloat(uint16_t(h)), asF32(got)) << std::hex << h;
#if defined(__FLT16_MAX__)
    _Float16 c;
    const uint16_t hb = uint16_t(h);
    std::memcpy(&c, &hb, 2);
    ASSERT_EQ(bitsOf(float(c)), got) << std::hex << h;
#endif
  }
}

// float16 from the definition, in double arithmetic: q = |v| / step (exact:
// step is a power of two, one unit in the last place of a float16 in v's
// binade, 2^-24 below 2^-14), the neighbours floor(q) and floor(q) + 1, the
// nearer wins, ties to the even one; the pattern of k units in binade p is
// ((p + 15) << 10) + k - 1024 (k = 2048 rolls into the next binade), and from
// 0x7c00 on it is Inf.
uint16_t halfReference(uint32_t x) {
  static const std::vector<double> kStep = [] {
    std::vector<double> t(256);
    for (int E = 0; E < 256; ++E) t[E] = E - 127 >= -14 ? std::ldexp(1.0, E - 127 - 10) : std::ldexp(1.0, -24);
    return t;
  }();
  const uint16_t s = uint16_t((x >> 16) & 0x8000u);
  if (isNan32(x)) return uint16_t(s | 0x7e00u | ((x >> 13) & 0x3ffu));
  const uint32_t E = (x >> 23) & 0xffu;
  const int p = int(E) - 127;
  if (p >= 16) return uint16_t(s | 0x7c00u);  // Inf, or >= 65536
  const double q = std::fabs(double(asF32(x))) / kStep[E];
  const uint32_t k = uint32_t(q);
  const double dlo = q - double(k), dhi = double(k + 1) - q;
  const uint32_t kk = dlo < dhi ? k : dlo > dhi ? k + 1 : (k & 1u) ? k + 1 : k;
  uint32_t bits = p >= -14 ? (uint32_t(p + 15) << 10) + (kk - 1024u) : kk;
  if (bits > 0x7c00u) bits = 0x7c00u;
  return uint16_t(s | bits);
}

TEST(Numeric, HalfNarrowingEveryFloat) {
  uint32_t first = 0;
  const uint64_t bad = forAll32(
      [](uint32_t x) {
        const uint16_t got = f32BitsToHalf(x);
        return got == halfReference(x) && floatToHalf(asF32(x)) == got;
      },
      &first);
  EXPECT_EQ(bad, 0u) << "first failing float32 pattern 0x" << std::hex << first << ": got 0x" << f32BitsToHalf(first)
                     << ", want 0x" << halfReference(first);
}

TEST(Numeric, HalfNarrowingMatchesTheCompiler) {
#if !defined(__FLT16_MAX__)
  GTEST_SKIP() << "this compiler has no _Float16 to compare with";
#else
  // Every 509th pattern (a prime stride: every exponent, every low-bit
  // residue) plus every pattern next to a float16 rounding boundary.
  auto check = [](uint32_t x) {
    if (isNan32(x)) return;
    const _Float16 ref = _Float16(asF32(x));
    uint16_t want;
    std::memcpy(&want, &ref, 2);
    ASSERT_EQ(f32BitsToHalf(x), want) << std::hex << x;
  };
  for (uint64_t x = 0; x < (uint64_t(1) << 32); x += 509) ASSERT_NO_FATAL_FAILURE(check(uint32_t(x)));
  for (uint32_t hi = 0; hi < 0x80000u; ++hi)  // the 13 dropped bits at 0x0fff, 0x1000, 0x1001
    for (uint32_t low : {0x0fffu, 0x1000u, 0x1001u}) ASSERT_NO_FATAL_FAILURE(check((hi << 13) | low));
#endif
}

TEST(Numeric, HalfRoundTripIsIdentity) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const bool nan = (h & 0x7fffu) > 0x7c00u;
    const uint16_t back = f32BitsToHalf(halfToF32Bits(uint16_t(h)));
    // A signalling NaN comes back quieted; everything else unchanged.
    ASSERT_EQ(back, nan ? uint16_t(h | 0x200u) : uint16_t(h)) << std::hex << h;
  }
}

// bfloat16 from the definition: the two neighbours t and t + 1 (in bit
// pattern order, which is value order for one sign), nearest wins, ties to
// the even pattern; overflow past the largest finite value lands on Inf.
uint16_t bf16Reference(uint32_t x) {
  if (isNan32(x)) return uint16_t((x >> 16) | 0x40u);
  const uint16_t t = uint16_t(x >> 16);
  if ((x & 0x7fffffffu) == 0x7f800000u) return t;  // Inf
  const double v = std::fabs(double(asF32(x)));
  const double lo = std::fabs(double(asF32(uint32_t(t) << 16)));
  const uint32_t up = uint32_t(t + 1) << 16;
  const double hi = (up & 0x7fffffffu) == 0x7f800000u ? std::ldexp(1.0, 128) : std::fabs(double(asF32(up)));
  if (v - lo < hi - v) return t;
  if (v - lo > hi - v) return uint16_t(t + 1);
  return (t & 1u) ? uint16_t(t + 1) : t;
}

TEST(Numeric, Bf16NarrowingEveryFloat) {
  uint32_t first = 0;
  const uint64_t bad = forAll32(
      [](uint32_t x) {
        const uint16_t got = f32BitsToBf16(x);
        return got == bf16Reference(x) && floatToBf16(asF32(x)) == got;
      },
      &first);
  EXPECT_EQ(bad, 0u) << "first failing float32 pattern 0x" << std::hex << first << ": got 0x" << f32BitsToBf16(first)
                     << ", want 0x" << bf16Reference(first);
}

TEST(Numeric, Bf16WideningAndKnownAnswers) {
  for (uint32_t b = 0; b < 0x10000u; ++b) ASSERT_EQ(bitsOf(bf16ToFloat(uint16_t(b))), b << 16);
  EXPECT_EQ(f32BitsToBf16(0x3f808000u), 0x3f80u);  // tie, even stays
  EXPECT_EQ(f32BitsToBf16(0x3f818000u), 0x3f82u);  // tie, odd rounds up
  EXPECT_EQ(f32BitsToBf16(0x7f7fffffu), 0x7f80u);  // largest float rounds to Inf
  EXPECT_EQ(f32BitsToHalf(bitsOf(65519.0f)), 0x7bffu);
  EXPECT_EQ(f32BitsToHalf(bitsOf(65520.0f)), 0x7c00u);
  EXPECT_EQ(f32BitsToHalf(bitsOf(std::ldexp(1.0f, -25))), 0x0000u);  // tie to even: 0
  EXPECT_EQ(f32BitsToHalf(bitsOf(std::ldexp(1.5f, -25))), 0x0001u);
}

}  // namespace
