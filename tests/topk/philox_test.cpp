// Philox4x32-10 against Random123's published known-answer vectors, and the
// stream layout the selection relies on.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "topk/philox.h"
#include "topk/select_math.h"

using namespace sc::topk;

TEST(TopkPhilox, Random123KnownAnswers) {
  struct Kat {
    Philox4 ctr;
    uint32_t k0, k1;
    Philox4 out;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       0xffffffff,
       0xffffffff,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       0xa4093822,
       0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Kat& t : kats) {
    const Philox4 r = philox4x32_10(t.ctr, t.k0, t.k1);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(r.v[w], t.out.v[w]) << "word " << w;
  }
}

TEST(TopkPhilox, StreamLayout) {
  // Element i uses word i%4 of counter block i/4; step and domain change the stream.
  const uint64_t seed = 0x0123456789abcdefull;
  const Philox4 b = philoxBlock(seed, 7, Domain::Select, 5);
  for (int w = 0; w < 4; ++w) EXPECT_EQ(selectBits(seed, 7, 20 + w), b.v[w]);
  EXPECT_NE(selectBits(seed, 7, 20), selectBits(seed, 8, 20));
  EXPECT_NE(selectBits(seed, 7, 20), selectBits(seed + 1, 7, 20));
  EXPECT_NE(philoxBlock(seed, 7, Domain::Select, 5).v[0], philoxBlock(seed, 7, Domain::Sample, 5).v[0]);
  // Sample positions cover the range uniformly enough to hit every bucket of 16.
  std::set<uint64_t> seen;
  for (uint64_t j = 0; j < 4096; ++j) {
    const uint64_t pos = scaleToRange(sampleBits(seed, 0, j), 1000);
    ASSERT_LT(pos, 1000u);
    seen.insert(pos / 16);
  }
  EXPECT_EQ(seen.size(), 63u);  // ceil(1000/16)
}

TEST(TopkMath, HalfConversionsRoundToNearestEven) {
  // Every half converts to float32 and back unchanged (NaNs stay NaN).
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t back = f32BitsToHalf(halfToF32Bits(uint16_t(h)));
    if ((h & 0x7fff) > 0x7c00) EXPECT_GT(back & 0x7fff, 0x7c00) << h;
    else ASSERT_EQ(back, h) << h;
  }
  // Ties to even: 1 + 2^-11 -> 1; 1 + 3*2^-11 -> 1 + 2^-9 (0x3c02); 65520 -> Inf; 2^-25 -> 0.
  EXPECT_EQ(f32BitsToHalf(0x3f801000u), 0x3c00);
  EXPECT_EQ(f32BitsToHalf(0x3f803000u), 0x3c02);
  EXPECT_EQ(f32BitsToHalf(0x477ff000u), 0x7c00);
  EXPECT_EQ(f32BitsToHalf(0x477fefffu), 0x7bff);
  EXPECT_EQ(f32BitsToHalf(0x33000000u), 0x0000);
  EXPECT_EQ(f32BitsToHalf(0x33000001u), 0x0001);
  EXPECT_EQ(f32BitsToBf16(0x3f808000u), 0x3f80);
  EXPECT_EQ(f32BitsToBf16(0x3f818000u), 0x3f82);
}

TEST(TopkMath, QuantizationAndDecisionAreExact) {
  // q(max) lies in [2^30, 2^31); halving the value halves q exactly.
  const uint32_t one = 0x3f800000u, half = 0x3f000000u;
  const int ee = effExp<F32>(one);
  EXPECT_EQ(quantize<F32>(one, ee), uint64_t(1) << 30);
  EXPECT_EQ(quantize<F32>(half, ee), uint64_t(1) << 29);
  EXPECT_EQ(quantize<F32>(0, ee), 0u);
  // Case 2 gives p = 1 for the maximum, whatever u.
  const Decision d = makeDecision(false, 4, 8, 1u << 30, (1u << 30) + 7 * 100);
  EXPECT_TRUE(chooses(d, 0xffffffffu, 1u << 30));
  EXPECT_GT(d.b, 0u);
  // Shares sum to k and differ from k*len/n by less than one.
  uint64_t total = 0;
  for (uint64_t s = 0; s < 1000; s += 64)
    total += shareBefore(37, std::min<uint64_t>(1000, s + 64), 1000) - shareBefore(37, s, 1000);
  EXPECT_EQ(total, 37u);
  EXPECT_EQ(shareBefore(uint64_t(1) << 40, uint64_t(1) << 40, uint64_t(1) << 41), uint64_t(1) << 39);
}

// The selection test and the quantization are computed in narrow integers for
// speed; both must equal the defining formulas (128-bit product, 64-bit shifts)
// on every input, or the CPU and GPU would select differently from the spec.
namespace {
uint64_t quantizeWide(uint64_t absb, int frac, int eeMax) {
  const int be = int(absb >> frac);
  const uint64_t m = (absb & ((uint64_t(1) << frac) - 1)) | (be ? uint64_t(1) << frac : 0);
  const int s = (kQuantBits - 1) - frac - (eeMax - (be ? be : 1));
  if (s >= 0) return m << s;
  return -s >= 64 ? 0 : m >> -s;
}

template <class F>
void checkQuantize(std::mt19937_64& rng, int trials) {
  using B = typename F::Bits;
  for (int t = 0; t < trials; ++t) {
    B a = B(rng()) & F::kAbsMask, b = B(rng()) & F::kAbsMask;
    if (t % 4 == 0) b = B(b >> (rng() % (sizeof(B) * 8)));  // many small and subnormal values
    if (!F::finite(a) || !F::finite(b)) continue;
    const B mx = a < b ? b : a, v = a < b ? a : b;
    const int ee = effExp<F>(mx);
    ASSERT_EQ(uint64_t(quantize<F>(v, ee)), quantizeWide(v, F::kFrac, ee)) << "v=" << uint64_t(v);
    ASSERT_EQ(uint64_t(quantize<F>(mx, ee)), quantizeWide(mx, F::kFrac, ee));
    ASSERT_LT(quantizeWide(mx, F::kFrac, ee), uint64_t(1) << 31);
  }
}
}  // namespace

TEST(TopkMath, NarrowQuantizationEqualsTheWideFormula) {
  std::mt19937_64 rng(7);
  checkQuantize<F32>(rng, 200000);
  checkQuantize<F64>(rng, 200000);
  checkQuantize<F16>(rng, 200000);
  checkQuantize<BF16>(rng, 200000);
  EXPECT_EQ(quantize<F32>(0x7f7fffffu, effExp<F32>(0x7f7fffffu)), 0x7fffff80u);  // FLT_MAX
  EXPECT_EQ(quantize<F32>(1u, effExp<F32>(1u)), 1u << 7);                        // smallest subnormal alone
}

TEST(TopkMath, ChoosesEqualsThe128BitTest) {
  std::mt19937_64 rng(11);
  auto wide = [](const Decision& d, uint32_t u, uint64_t q) {
    return (unsigned __int128)u * d.den < ((unsigned __int128)(d.a * q + d.b) << 32);
  };
  for (int t = 0; t < 1000000; ++t) {
    // Decisions as makeDecision builds them: len <= 2^32, kb <= len, qmax < 2^31, Q <= len*qmax.
    const uint64_t len = 1 + (t % 3 == 0 ? rng() % (uint64_t(1) << 32) : rng() % 4096);
    const uint64_t kb = rng() % (len + 1);
    const uint64_t qmax = (uint64_t(1) << 30) + rng() % (uint64_t(1) << 30);
    const uint64_t Q = qmax + rng() % ((len - 1) * qmax + 1);
    const Decision d = makeDecision(t % 5 == 0, kb, len, qmax, Q);
    if (d.den == 0) continue;
    const uint64_t q = t % 7 == 0 ? qmax : rng() % (qmax + 1);
    uint32_t u = uint32_t(rng());
    if (t % 3 == 1) {  // u at the boundary: floor/ceil of den-scaled p
      const unsigned __int128 num = (unsigned __int128)(d.a * q + d.b) << 32;
      const unsigned __int128 c = num / d.den;
      u = uint32_t(std::min<unsigned __int128>(c + (t & 8 ? 1 : 0), 0xffffffffu));
    }
    ASSERT_EQ(chooses(d, u, uint32_t(q)), wide(d, u, q)) << "t=" << t;
  }
}
