// Exact top-k against std::partial_sort (by |v| descending, ties to the smaller
// index), and the threshold (DGC-style) variant against the exact result.
#include <algorithm>
#include <limits>
#include <numeric>

#include "topk_util.h"

using namespace tk;

namespace {

// The k largest |v_i| by std::partial_sort, returned sorted by index.
std::vector<uint64_t> partialSortTopk(const Buf& v, size_t k) {
  std::vector<uint64_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](uint64_t a, uint64_t b) {
    const double x = std::fabs(v.at(a)), y = std::fabs(v.at(b));
    return x > y || (x == y && a < b);
  });
  order.resize(k);
  std::sort(order.begin(), order.end());
  return order;
}

// The k largest abs bit patterns (the library's key: NaN > Inf > finite), ties
// to the smaller index, by a full sort: an oracle that also orders NaNs.
std::vector<uint64_t> bitsSortTopk(const Buf& v, size_t k) {
  const uint64_t mask = esz(v.dt) == 8 ? ~(uint64_t(1) << 63) : (uint64_t(1) << (8 * esz(v.dt) - 1)) - 1;
  std::vector<uint64_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
    const uint64_t x = v.bits(a) & mask, y = v.bits(b) & mask;
    return x > y || (x == y && a < b);
  });
  order.resize(k);
  std::sort(order.begin(), order.end());
  return order;
}

// Values with many ties: integers in [-20, 20].
std::vector<double> tiedVector(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> d(-20, 20);
  std::vector<double> x(n);
  for (auto& e : x) e = d(rng);
  return x;
}

}  // namespace

TEST(TopkExact, MatchesPartialSort) {
  for (scDataType_t dt : {scFloat32, scFloat64, scFloat16, scBfloat16}) {
    for (size_t n : {size_t(1), size_t(17), size_t(1000), size_t(4099)}) {
      for (bool ties : {false, true}) {
        const Buf v(ties ? tiedVector(n, n) : randomVector(n, n), dt);
        for (size_t k : {size_t(1), n / 3 + 1, n}) {
          scTopkConfig_t c = config(scTopkExact, k);
          c.indexType = k % 2 ? scTopkIndexU32 : scTopkIndexU64;
          const Sel s = select(v, c);
          ASSERT_EQ(s.rc, scSuccess) << scGetLastError(nullptr);
          ASSERT_EQ(s.idx, partialSortTopk(v, k)) << "dtype " << dt << " n " << n << " k " << k;
          for (size_t j = 0; j < k; ++j) EXPECT_EQ(s.bits[j], v.bits(s.idx[j]));
          EXPECT_EQ(s.info.nnz, k);
          EXPECT_EQ(s.info.selected, k);
        }
      }
    }
  }
}

TEST(TopkExact, SignedZerosAndTiesBreakByIndex) {
  // -0 and +0 tie; the first k by index win.
  std::vector<double> x = {0.0, -0.0, 3.0, -3.0, 0.0, 3.0, -0.0};
  const Buf v(x, scFloat32);
  EXPECT_EQ(select(v, config(scTopkExact, 2)).idx, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(select(v, config(scTopkExact, 4)).idx, (std::vector<uint64_t>{0, 2, 3, 5}));
  EXPECT_EQ(select(v, config(scTopkExact, 5)).idx, (std::vector<uint64_t>{0, 1, 2, 3, 5}));
}

TEST(TopkExact, AllKeysEqual) {
  // One run of ties: the first k indices, whatever the width or the sign.
  for (scDataType_t dt : {scFloat32, scFloat64, scFloat16, scBfloat16}) {
    std::vector<double> x(10007, 1.5);
    for (size_t i = 0; i < x.size(); i += 3) x[i] = -1.5;
    const Buf v(x, dt);
    for (size_t k : {size_t(1), size_t(2), size_t(5000), size_t(10006), size_t(10007)}) {
      const Sel s = select(v, config(scTopkExact, k));
      ASSERT_EQ(s.rc, scSuccess) << scGetLastError(nullptr);
      std::vector<uint64_t> first(k);
      std::iota(first.begin(), first.end(), 0);
      ASSERT_EQ(s.idx, first) << "dtype " << dt << " k " << k;
      for (size_t j = 0; j < k; ++j) EXPECT_EQ(s.bits[j], v.bits(j));
    }
  }
}

TEST(TopkExact, TiesSpreadAcrossDigitsNanAndInf) {
  // Magnitudes one ulp apart (they differ in the lowest digit only), powers of
  // two apart (the highest digits), +-0, Inf and NaN, each repeated at spread
  // indices, so ties straddle the k-th key at every k and the cut falls in
  // every radix pass.
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (scDataType_t dt : {scFloat32, scFloat64, scFloat16, scBfloat16}) {
    const double ulp = dt == scFloat64 ? 0x1p-52 : dt == scFloat32 ? 0x1p-23 : dt == scFloat16 ? 0x1p-10 : 0x1p-7;
    const std::vector<double> pool = {1.0, 1.0 + ulp, 1.0 + 2 * ulp, -1.0, 2.0, 0.5, 1024.0, 0.0, -0.0, inf, -inf, nan};
    std::mt19937_64 rng(dt);
    std::vector<double> x(3001);
    for (auto& e : x) e = pool[rng() % pool.size()];
    const Buf v(x, dt);
    for (size_t k = 1; k <= x.size(); k += 97) {
      const Sel s = select(v, config(scTopkExact, k));
      ASSERT_EQ(s.rc, scSuccess) << scGetLastError(nullptr);
      ASSERT_EQ(s.idx, bitsSortTopk(v, k)) << "dtype " << dt << " k " << k;
      for (size_t j = 0; j < k; ++j) EXPECT_EQ(s.bits[j], v.bits(s.idx[j]));
    }
  }
}

TEST(TopkThreshold, IsTheExactTopOfItsCount) {
  for (scDataType_t dt : {scFloat32, scFloat64, scBfloat16}) {
    for (bool ties : {false, true}) {
      const size_t n = 20000, k = 200;
      const Buf v(ties ? tiedVector(n, 5) : randomVector(n, 5), dt);
      for (uint64_t step = 0; step < 5; ++step) {
        scTopkConfig_t c = config(scTopkThreshold, k, 512, 77, step);
        const Sel s = select(v, c);
        ASSERT_EQ(s.rc, scSuccess) << scGetLastError(nullptr);
        ASSERT_LE(s.idx.size(), k);
        ASSERT_GT(s.idx.size(), 0u);
        // Whatever the sampled threshold, the result is the exact top-|result|
        // when no tie straddles it, and always consists of the largest values.
        const std::vector<uint64_t> top = partialSortTopk(v, k);
        double minKept = 1e300;
        for (uint64_t i : s.idx) minKept = std::min(minKept, std::fabs(v.at(i)));
        size_t larger = 0;
        for (size_t i = 0; i < n; ++i) larger += std::fabs(v.at(i)) > minKept;
        EXPECT_LE(larger, s.idx.size()) << "an element larger than a kept one was dropped";
        if (s.idx.size() == k) EXPECT_EQ(s.idx, top);
        if (!ties) EXPECT_GT(s.idx.size(), k / 2) << "a 1% sample should land the threshold near the k-th value";
      }
    }
  }
}

TEST(TopkThreshold, TooManyCandidatesFallsBackToExact) {
  // Every magnitude equal: every element is a candidate; the exact top-k keeps the first k.
  const Buf v(std::vector<double>(5000, -2.5), scFloat32);
  const Sel s = select(v, config(scTopkThreshold, 10));
  std::vector<uint64_t> first(10);
  std::iota(first.begin(), first.end(), 0);
  EXPECT_EQ(s.idx, first);
}

TEST(TopkThreshold, HalfTheKeysAboveTheCut) {
  // Half the elements (at random positions) share the largest magnitude: the
  // sampled cut is that magnitude, half the vector are candidates, and the
  // result is the exact top-k: the first k of them by index.
  for (scDataType_t dt : {scFloat32, scFloat16, scFloat64}) {
    const size_t n = 50001;
    std::vector<double> x = randomVector(n, 8, 0.1);
    std::mt19937_64 rng(9);
    for (auto& e : x) e = (rng() & 1) ? (rng() & 2 ? 4.0 : -4.0) : std::fmax(-1.0, std::fmin(1.0, e));
    const Buf v(x, dt);
    for (size_t k : {size_t(1), size_t(300), size_t(20000)}) {
      for (uint64_t step = 0; step < 3; ++step) {
        const Sel s = select(v, config(scTopkThreshold, k, 512, 3, step));
        ASSERT_EQ(s.rc, scSuccess) << scGetLastError(nullptr);
        ASSERT_EQ(s.idx, bitsSortTopk(v, k)) << "dtype " << dt << " k " << k << " step " << step;
        EXPECT_EQ(s.info.nnz, k);
      }
    }
  }
}

TEST(TopkThreshold, SampleCountIsConfigurable) {
  const Buf v(randomVector(10000, 6), scFloat32);
  scTopkConfig_t c = config(scTopkThreshold, 100);
  c.samples = 10000;
  EXPECT_EQ(select(v, c).rc, scSuccess);
  c.samples = 1;
  const Sel s = select(v, c);
  EXPECT_EQ(s.rc, scSuccess);
  EXPECT_LE(s.idx.size(), 100u);
}
