// The radix select of topk/radix_select.h (the arithmetic the exact kernels
// run: kernels/topk_radix.cuh) against an independent oracle: std::sort of the
// keys. Covers every key width, ranks 1 and count, all keys equal, ties whose
// keys differ in one digit only, counts past 2^32, and the tie select over
// indices past 2^32.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

#include "topk/radix_select.h"

using namespace sc::topk;

namespace {

// The state the passes must end in, from the sorted keys: T = the rank-th
// largest, #{> T}, the ties admitted and #{== T}.
void expectSelects(const std::vector<uint64_t>& keys, int width, uint64_t rank) {
  std::vector<uint64_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end(), std::greater<uint64_t>());
  const uint64_t t = sorted[rank - 1];
  const uint64_t greater = uint64_t(std::count_if(keys.begin(), keys.end(), [&](uint64_t k) { return k > t; }));
  const uint64_t equal = uint64_t(std::count(keys.begin(), keys.end(), t));
  const RadixState s = radixSelectHost(width, radixStart(rank, keys.size()), [&](auto visit) {
    for (uint64_t k : keys) visit(k);
  });
  SCOPED_TRACE(::testing::Message() << "width " << width << " count " << keys.size() << " rank " << rank);
  EXPECT_EQ(s.prefix, t);
  EXPECT_EQ(s.greater, greater);
  EXPECT_EQ(s.rank, rank - greater);
  EXPECT_EQ(s.matching, equal);
  EXPECT_EQ(tieBreakNeeded(s), equal > rank - greater);
}

std::vector<uint64_t> randomKeys(size_t n, int width, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> k(n);
  for (auto& x : k) x = width == 64 ? rng() : rng() & ((uint64_t(1) << width) - 1);
  return k;
}

}  // namespace

TEST(TopkRadix, PassesCoverTheKeyOnceFromTheTop) {
  for (int width = 1; width <= 64; ++width) {
    const int np = radixPasses(width);
    EXPECT_EQ(np, (width + 10) / 11);
    int next = width;  // the bit above the next digit
    for (int p = 0; p < np; ++p) {
      const RadixPass ps = radixPass(width, p);
      EXPECT_GT(ps.bits, 0);
      EXPECT_LE(ps.bits, kRadixBits);
      EXPECT_EQ(ps.shift + ps.bits, next) << "width " << width << " pass " << p;
      if (p > 0) EXPECT_EQ(ps.bits, kRadixBits);
      next = ps.shift;
    }
    EXPECT_EQ(next, 0);
  }
  EXPECT_EQ(radixPasses(16), 2);
  EXPECT_EQ(radixPasses(32), 3);
  EXPECT_EQ(radixPasses(64), 6);
  EXPECT_EQ(radixHigh(~uint64_t(0), 64), 0u);
  EXPECT_EQ(radixHigh(~uint64_t(0), 60), 15u);
}

TEST(TopkRadix, IndexWidth) {
  EXPECT_EQ(indexWidth(1), 1);
  EXPECT_EQ(indexWidth(2), 1);
  EXPECT_EQ(indexWidth(3), 2);
  EXPECT_EQ(indexWidth(1024), 10);
  EXPECT_EQ(indexWidth(1025), 11);
  EXPECT_EQ(indexWidth(uint64_t(1) << 32), 32);
  EXPECT_EQ(indexWidth((uint64_t(1) << 32) + 1), 33);
  EXPECT_EQ(indexWidth(~uint64_t(0)), 64);
}

TEST(TopkRadix, RandomKeysEveryWidthAndRank) {
  for (int width : {16, 32, 64, 15, 31, 63, 5, 40}) {
    for (size_t n : {size_t(1), size_t(2), size_t(7), size_t(1000), size_t(4099)}) {
      const std::vector<uint64_t> keys = randomKeys(n, width, n * 131 + width);
      for (uint64_t rank : {uint64_t(1), uint64_t(2), uint64_t(n / 3 + 1), uint64_t(n - 1), uint64_t(n)})
        if (rank >= 1 && rank <= n) expectSelects(keys, width, rank);
    }
  }
}

TEST(TopkRadix, AllKeysEqual) {
  for (int width : {16, 32, 64}) {
    for (uint64_t key : {uint64_t(0), uint64_t(1), uint64_t(0x7c00), (uint64_t(1) << (width - 1)) - 1}) {
      const std::vector<uint64_t> keys(3001, key);
      for (uint64_t rank : {uint64_t(1), uint64_t(1500), uint64_t(3001)}) {
        expectSelects(keys, width, rank);
        const RadixState s = radixSelectHost(width, radixStart(rank, keys.size()), [&](auto visit) {
          for (uint64_t k : keys) visit(k);
        });
        EXPECT_EQ(s.greater, 0u);
        EXPECT_EQ(s.matching, 3001u);
      }
    }
  }
}

TEST(TopkRadix, TiesSpreadAcrossDigits) {
  // Keys equal in all digits but one, for each digit position in turn, with
  // many copies of each: the target's digit is decided at every pass, and the
  // rank often falls inside a run of equal keys.
  std::mt19937_64 rng(11);
  for (int width : {16, 32, 64}) {
    const uint64_t base = randomKeys(1, width - 1, width)[0];
    std::vector<uint64_t> keys;
    for (int p = 0; p < radixPasses(width); ++p) {
      const RadixPass ps = radixPass(width, p);
      for (unsigned d : {0u, 1u, (1u << ps.bits) - 1u}) {
        const uint64_t mask = uint64_t((1u << ps.bits) - 1u) << ps.shift;
        const uint64_t k = (base & ~mask) | (uint64_t(d) << ps.shift);
        keys.insert(keys.end(), 1 + rng() % 50, k);
      }
    }
    std::shuffle(keys.begin(), keys.end(), rng);
    for (uint64_t rank = 1; rank <= keys.size(); rank += 7) expectSelects(keys, width, rank);
    expectSelects(keys, width, keys.size());
  }
}

TEST(TopkRadix, EveryDigitTestedAloneAgreesWithTheLoop) {
  // The kernels let each thread test its digits with the counts above it (a
  // block scan): exactly one digit holds the target, and its state is the
  // loop's. Counts past 2^32 (vectors of more than 2^32 elements) included.
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 2000; ++trial) {
    const RadixPass ps{11 * int(rng() % 3), trial % 5 == 0 ? 7 : kRadixBits};
    std::vector<uint64_t> hist(kRadixBins, 0);
    const int filled = 1 + int(rng() % 40);
    const uint64_t scale = trial % 2 ? (uint64_t(1) << 34) : 100;
    for (int f = 0; f < filled; ++f) hist[rng() % (1u << ps.bits)] += 1 + rng() % scale;
    uint64_t total = 0;
    for (uint64_t c : hist) total += c;
    RadixState s{uint64_t(rng() % 4) << 40, 1 + rng() % total, rng() % 1000, total};
    if (trial % 7 == 0) s.rank = total;
    if (trial % 11 == 0) s.rank = 1;
    const RadixState loop = radixStep(s, ps, hist.data());
    int holders = 0;
    uint64_t above = 0;
    for (int d = kRadixBins - 1; d >= 0; --d) {
      if (radixHolds(s, above, hist[d])) {
        ++holders;
        const RadixState next = radixAdvance(s, ps, unsigned(d), above, hist[d]);
        EXPECT_EQ(next.prefix, loop.prefix);
        EXPECT_EQ(next.rank, loop.rank);
        EXPECT_EQ(next.greater, loop.greater);
        EXPECT_EQ(next.matching, loop.matching);
        EXPECT_EQ(next.prefix, s.prefix | (uint64_t(d) << ps.shift));
        EXPECT_GE(next.rank, 1u);
        EXPECT_LE(next.rank, next.matching);
      }
      above += hist[d];
    }
    ASSERT_EQ(holders, 1) << "trial " << trial;
  }
}

TEST(TopkRadix, LastTieOverIndicesPastTwoTo32) {
  // The tie select over u = n-1-i finds the rank-th smallest index among the
  // ties; indices here need 40 bits (4 passes).
  const uint64_t n = uint64_t(1) << 40;
  std::mt19937_64 rng(3);
  std::vector<uint64_t> ties;
  for (int j = 0; j < 500; ++j) ties.push_back(rng() % n);
  ties.push_back(0);
  ties.push_back(n - 1);
  ties.push_back(uint64_t(1) << 32);
  std::sort(ties.begin(), ties.end());
  ties.erase(std::unique(ties.begin(), ties.end()), ties.end());
  EXPECT_EQ(radixPasses(indexWidth(n)), 4);
  for (uint64_t rank : {uint64_t(1), uint64_t(2), uint64_t(ties.size() / 2), uint64_t(ties.size() - 1)}) {
    // As after a key select that admitted `rank` of the ties.
    const RadixState keys{0x3f80, rank, 17, ties.size()};
    ASSERT_TRUE(tieBreakNeeded(keys));
    const RadixState t = radixSelectHost(indexWidth(n), tieStart(keys), [&](auto visit) {
      for (uint64_t i : ties) visit(tieKey(i, n));
    });
    EXPECT_EQ(lastTie(t, n), ties[rank - 1]) << "rank " << rank;
  }
}
