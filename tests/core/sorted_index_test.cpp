// core/sorted_index.h, the index logic that the sparse CPU reference and the
// sparse/DSOP kernels both run: the input check, the binary search, the split
// into index ranges, run heads, the in-order sum of a run and the scatter,
// each against a direct reference on random and edge-case arrays.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/sorted_index.h"

namespace {

namespace sorted = sc::sorted;

template <typename I>
std::vector<I> sortedIndices(std::mt19937_64& rng, size_t n, uint64_t lo, uint64_t hi, bool unique) {
  std::uniform_int_distribution<uint64_t> d(lo, hi - 1);
  std::vector<I> v(n);
  for (auto& x : v) x = I(d(rng));
  std::sort(v.begin(), v.end());
  if (unique) v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

TEST(SortedIndex, FaultAt) {
  const std::vector<uint32_t> x = {3, 5, 5, 4, 9, 12};
  using sorted::faultAt;
  EXPECT_EQ(faultAt(x.data(), 0, 10, false), sorted::kOk);
  EXPECT_EQ(faultAt(x.data(), 1, 10, false), sorted::kOk);
  EXPECT_EQ(faultAt(x.data(), 2, 10, false), sorted::kDuplicate);
  EXPECT_EQ(faultAt(x.data(), 3, 10, false), sorted::kUnsorted);
  EXPECT_EQ(faultAt(x.data(), 4, 10, false), sorted::kOk);
  EXPECT_EQ(faultAt(x.data(), 5, 10, false), sorted::kRange);  // 12 >= 10
  EXPECT_EQ(faultAt(x.data(), 3, 10, true), sorted::kOk);      // range only
  EXPECT_EQ(faultAt(x.data(), 4, 9, true), sorted::kRange);    // 9 >= 9
  const std::vector<uint64_t> big = {0, ~uint64_t(0)};
  EXPECT_EQ(faultAt(big.data(), 1, ~uint64_t(0), false), sorted::kRange);
  EXPECT_EQ(faultAt(big.data(), 1, 0, false), sorted::kRange);  // dim 0: every index is out of range
}

template <typename I>
void checkLowerBound(uint64_t hi) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::vector<I> x = sortedIndices<I>(rng, size_t(rng() % 64), 0, hi, trial % 2);
    std::vector<uint64_t> keys = {0, hi, hi + 1, ~uint64_t(0)};
    for (I v : x) keys.insert(keys.end(), {uint64_t(v), uint64_t(v) + 1, uint64_t(v) - 1});
    for (uint64_t k : keys) {
      const auto want = std::lower_bound(x.begin(), x.end(), k, [](I a, uint64_t b) { return uint64_t(a) < b; });
      ASSERT_EQ(sorted::lowerBound(x.data(), x.size(), k), uint64_t(want - x.begin())) << "key " << k;
    }
  }
}

TEST(SortedIndex, LowerBound) {
  checkLowerBound<uint32_t>(1000);
  checkLowerBound<uint32_t>(uint64_t(1) << 32);
  checkLowerBound<uint64_t>(uint64_t(1) << 40);
}

// Part p holds the indices in [bounds[p], bounds[p + 1]), counted one by one.
TEST(SortedIndex, PartStartSplitsByRange) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const uint64_t lo = rng() % 100, len = 1 + rng() % 500;
    const int parts = 1 + int(rng() % 9);
    std::vector<uint64_t> bounds(parts + 1);
    for (int p = 0; p <= parts; ++p) bounds[p] = lo + len * p / parts;  // may repeat: empty parts
    const std::vector<uint32_t> x = sortedIndices<uint32_t>(rng, size_t(rng() % 200), lo, lo + len, true);
    uint64_t first = 0;
    for (int p = 0; p < parts; ++p) {
      const uint64_t count =
          uint64_t(std::count_if(x.begin(), x.end(), [&](uint32_t v) { return v >= bounds[p] && v < bounds[p + 1]; }));
      ASSERT_EQ(sorted::partStart(x.data(), x.size(), bounds.data(), parts, p), first) << "part " << p;
      first += count;
    }
    ASSERT_EQ(sorted::partStart(x.data(), x.size(), bounds.data(), parts, parts), x.size());
    ASSERT_EQ(first, x.size());
  }
  const uint64_t none[3] = {0, 5, 10};
  EXPECT_EQ(sorted::partStart(static_cast<const uint32_t*>(nullptr), 0, none, 2, 1), 0u);  // empty input
}

TEST(SortedIndex, RunHeads) {
  const std::vector<uint64_t> k = {1, 1, 2, 3, 3, 3, 7};
  const std::vector<bool> want = {true, false, true, true, false, false, true};
  for (size_t i = 0; i < k.size(); ++i) EXPECT_EQ(sorted::runHead(k.data(), i), want[i]) << i;
}

// The run is summed left to right: float16 2048 + 1 + 1 stays 2048 (each +1 is
// a tie to even), where a tree would give 2048 + 2 = 2050.
TEST(SortedIndex, SumRunIsLeftToRight) {
  const std::vector<sc::Half> v = {{0x6800}, {0x3c00}, {0x3c00}};  // 2048, 1, 1
  const sc::Half s = sorted::sumRun<sc::Half>([&](uint64_t i) { return v[i]; }, 0, 3);
  EXPECT_EQ(s.bits, 0x6800);
  const sc::Half t = sorted::sumRun<sc::Half>([&](uint64_t i) { return v[2 - i]; }, 0, 3);  // 1 + 1 + 2048
  EXPECT_EQ(t.bits, 0x6801);
  const std::vector<int8_t> w = {100, 100, -56};  // wraps through -56 and back
  EXPECT_EQ(sorted::sumRun<int8_t>([&](uint64_t i) { return w[i]; }, 0, 3), int8_t(-112));
  EXPECT_EQ(sorted::sumRun<int8_t>([&](uint64_t i) { return w[i]; }, 2, 3), int8_t(-56));  // a run of one
}

TEST(SortedIndex, ScatterAt) {
  const std::vector<uint32_t> x = {10, 12, 15};
  const std::vector<float> v = {1.5f, -2.0f, 4.0f};
  std::vector<float> dense(6, 1.0f);
  for (uint64_t i = 0; i < x.size(); ++i) sorted::scatterAt<true>(x.data(), v.data(), i, 10, dense.data());
  EXPECT_EQ(dense, (std::vector<float>{2.5f, 1.0f, -1.0f, 1.0f, 1.0f, 5.0f}));
  for (uint64_t i = 0; i < x.size(); ++i) sorted::scatterAt<false>(x.data(), v.data(), i, 10, dense.data());
  EXPECT_EQ(dense, (std::vector<float>{1.5f, 1.0f, -2.0f, 1.0f, 1.0f, 4.0f}));
}

}  // namespace
