// Bucketed approximate top-k in expectation (CPU reference): expected count,
// selection frequency proportional to |v_i| (chi-square), partial last bucket,
// all-zero bucket, one huge element, fixed-k-per-bucket output, at-most variant.
// Statistics use many steps of the Philox stream; the seeds are fixed, so the
// tests are deterministic, and the bounds (3 sigma, chi-square at p = 0.999)
// would catch a wrong probability or a biased generator.
#include <algorithm>
#include <map>
#include <numeric>

#include "topk_util.h"

using namespace tk;

namespace {

// Counts over `trials` steps: per-element selection counts and per-trial totals.
struct Freq {
  std::vector<uint64_t> perElement;
  std::vector<double> totals;
};

// Trial t uses step t of the stream, or (varySeed) seed base + t.
Freq sampleSelections(const Buf& v, scTopkConfig_t cfg, int trials, bool varySeed = false) {
  Freq f{std::vector<uint64_t>(v.size(), 0), {}};
  const uint64_t seed0 = cfg.seed;
  for (int t = 0; t < trials; ++t) {
    (varySeed ? cfg.seed : cfg.step) = (varySeed ? seed0 : 0) + uint64_t(t);
    const Sel s = select(v, cfg);
    EXPECT_EQ(s.rc, scSuccess) << scGetLastError(nullptr);
    expectSortedUnique(s.idx, v.size());
    for (uint64_t i : s.idx) ++f.perElement[i];
    f.totals.push_back(double(s.idx.size()));
  }
  return f;
}

double mean(const std::vector<double>& x) { return std::accumulate(x.begin(), x.end(), 0.0) / double(x.size()); }

// Wilson-Hilferty approximation of the chi-square quantile with `dof` degrees of freedom.
double chi2Quantile(double dof, double z) {
  const double a = 2.0 / (9.0 * dof);
  return dof * std::pow(1 - a + z * std::sqrt(a), 3);
}

// Mean count within 3 sigma of sum p_i, sigma^2 = sum p_i(1-p_i) / trials.
void expectMeanCount(const Freq& f, const std::vector<double>& p, double expected) {
  double var = 0;
  for (double x : p) var += x * (1 - x);
  const double sigma = std::sqrt(var / double(f.totals.size()));
  EXPECT_NEAR(mean(f.totals), expected, 3 * sigma + 1e-9) << "sigma " << sigma;
}

// Pearson's statistic over elements with 0 < p < 1: sum (o - Tp)^2 / (Tp(1-p)).
void expectChiSquare(const Freq& f, const std::vector<double>& p, int trials) {
  double chi2 = 0;
  int dof = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0 || p[i] >= 1) {
      EXPECT_EQ(f.perElement[i], p[i] <= 0 ? 0u : uint64_t(trials)) << "element " << i << " p " << p[i];
      continue;
    }
    const double e = trials * p[i];
    chi2 += (double(f.perElement[i]) - e) * (double(f.perElement[i]) - e) / (e * (1 - p[i]));
    ++dof;
  }
  ASSERT_GT(dof, 0);
  EXPECT_LT(chi2, chi2Quantile(dof, 3.09)) << "dof " << dof;
}

}  // namespace

TEST(TopkApprox, ExpectedCountIsK) {
  const std::vector<double> x = randomVector(4096, 11);
  const Buf v(x, scFloat32);
  const scTopkConfig_t cfg = config(scTopkApprox, 41, 512, 5);
  const int trials = 400;
  const Freq f = sampleSelections(v, cfg, trials, /*varySeed=*/true);
  expectMeanCount(f, probabilities(x, 41, 512, false), 41.0);
  expectChiSquare(f, probabilities(x, 41, 512, false), trials);
}

TEST(TopkApprox, FrequencyProportionalToMagnitude) {
  // One bucket, magnitudes 1..16 (case 1: Linf <= L1/k), so p_i = k|v_i|/L1.
  std::vector<double> x(512);
  for (size_t i = 0; i < x.size(); ++i) x[i] = double(i % 16 + 1) * (i % 3 ? 1 : -1);
  const Buf v(x, scFloat32);
  const int trials = 1500;
  const Freq f = sampleSelections(v, config(scTopkApprox, 32, 512, 99), trials);
  const std::vector<double> p = probabilities(x, 32, 512, false);
  expectChiSquare(f, p, trials);
  expectMeanCount(f, p, 32.0);
  // A wrong hypothesis must fail: uniform selection probability k/L.
  std::vector<double> uniform(512, 32.0 / 512);
  double chi2 = 0;
  for (size_t i = 0; i < 512; ++i) {
    const double e = trials * uniform[i];
    chi2 += (double(f.perElement[i]) - e) * (double(f.perElement[i]) - e) / (e * (1 - uniform[i]));
  }
  EXPECT_GT(chi2, chi2Quantile(512, 3.09)) << "the frequency test cannot tell |v|-proportional from uniform";
}

TEST(TopkApprox, OneHugeElementUsesEpsilonCorrection) {
  // ||v||_inf > ||v||_1 / k_b: the huge element has p = 1 and the rest share the
  // remaining k_b - 1 through eps; the count is still k_b in expectation.
  std::vector<double> x = randomVector(512, 3, 0.01);
  x[137] = 1e6;
  const Buf v(x, scFloat64);
  const int trials = 1500;
  const Freq f = sampleSelections(v, config(scTopkApprox, 16, 512, 7), trials);
  const std::vector<double> p = probabilities(x, 16, 512, false);
  EXPECT_EQ(p[137], 1.0);
  EXPECT_EQ(f.perElement[137], uint64_t(trials));
  expectMeanCount(f, p, 16.0);
  expectChiSquare(f, p, trials);
}

TEST(TopkApprox, AtMostVariantSelectsAtMostK) {
  std::vector<double> x = randomVector(1024, 8);
  x[5] = 500;  // p = min(1, ...) clips: the expectation drops below k
  const Buf v(x, scFloat32);
  const int trials = 600;
  const Freq f = sampleSelections(v, config(scTopkApproxAtMost, 20, 512, 4), trials);
  const std::vector<double> p = probabilities(x, 20, 512, true);
  const double expected = std::accumulate(p.begin(), p.end(), 0.0);
  EXPECT_LT(expected, 20.0 - 0.5);
  expectMeanCount(f, p, expected);
  expectChiSquare(f, p, trials);
}

TEST(TopkApprox, PartialLastBucketGetsItsShare) {
  const std::vector<double> x = randomVector(1000, 21);
  const Buf v(x, scFloat32);
  const size_t k = 100;
  const int trials = 500;
  const Freq f = sampleSelections(v, config(scTopkApprox, k, 512, 2), trials);
  // Bucket [512, 1000): share floor(100*1000/1000) - floor(100*512/1000) = 49.
  double last = 0;
  for (size_t i = 512; i < 1000; ++i) last += double(f.perElement[i]);
  const std::vector<double> p = probabilities(x, k, 512, false);
  double var = 0;
  for (size_t i = 512; i < 1000; ++i) var += p[i] * (1 - p[i]);
  EXPECT_NEAR(last / trials, 49.0, 3 * std::sqrt(var / trials));
  expectMeanCount(f, p, double(k));
}

TEST(TopkApprox, AllZeroBucketSelectsNothing) {
  std::vector<double> x = randomVector(1536, 4);
  std::fill(x.begin() + 512, x.begin() + 1024, 0.0);
  const Buf v(x, scBfloat16);
  for (int t = 0; t < 50; ++t) {
    const Sel s = select(v, config(scTopkApprox, 30, 512, 1, uint64_t(t)));
    ASSERT_EQ(s.rc, scSuccess) << scGetLastError(nullptr);
    for (uint64_t i : s.idx) EXPECT_TRUE(i < 512 || i >= 1024) << "selected zero element " << i;
  }
  // All zero everywhere: an empty selection, and fixed output pads with zeros.
  const Buf z(std::vector<double>(700, 0.0), scFloat32);
  EXPECT_EQ(select(z, config(scTopkApprox, 7, 100)).idx.size(), 0u);
  scTopkConfig_t fixed = config(scTopkApprox, 7, 100);
  fixed.output = scTopkFixedPerBucket;
  const Sel s = select(z, fixed);
  ASSERT_EQ(s.idx.size(), 7u);
  for (uint64_t b : s.bits) EXPECT_EQ(b, 0u);
  EXPECT_EQ(s.info.selected, 0u);
}

TEST(TopkApprox, FixedPerBucketTruncatesAndPads) {
  const size_t n = 2000, bucket = 256, k = 60;
  std::vector<double> x = randomVector(n, 31);
  x[300] = 1e4;  // a bucket with a dominant element: case 2
  for (scDataType_t dt : {scFloat32, scFloat16}) {
    const Buf v(x, dt);
    for (uint64_t step = 0; step < 20; ++step) {
      scTopkConfig_t var = config(scTopkApprox, k, bucket, 17, step);
      scTopkConfig_t fix = var;
      fix.output = scTopkFixedPerBucket;
      fix.indexType = scTopkIndexU64;
      const Sel sv = select(v, var), sf = select(v, fix);
      ASSERT_EQ(sf.rc, scSuccess) << scGetLastError(nullptr);
      ASSERT_EQ(sf.idx.size(), k);
      expectSortedUnique(sf.idx, n);
      EXPECT_EQ(sf.info.selected, sv.idx.size());
      // Per bucket: slots [floor(k s/n), floor(k e/n)); the first k_b entries of
      // the variable selection, then pads (value 0) at the first unselected indices.
      uint64_t deferred = 0;
      for (size_t s = 0; s < n; s += bucket) {
        const size_t e = std::min(n, s + bucket), s0 = k * s / n, s1 = k * e / n, kb = s1 - s0;
        std::vector<uint64_t> chosen;
        std::map<uint64_t, uint64_t> valueOf;
        for (size_t j = 0; j < sv.idx.size(); ++j)
          if (sv.idx[j] >= s && sv.idx[j] < e) {
            chosen.push_back(sv.idx[j]);
            valueOf[sv.idx[j]] = sv.bits[j];
          }
        const size_t keep = std::min(kb, chosen.size());
        deferred += chosen.size() - keep;
        std::vector<uint64_t> want(chosen.begin(), chosen.begin() + keep);
        for (uint64_t i = s; want.size() < kb; ++i)
          if (!valueOf.count(i)) want.push_back(i);
        std::sort(want.begin(), want.end());
        for (size_t j = 0; j < kb; ++j) {
          ASSERT_EQ(sf.idx[s0 + j], want[j]) << "bucket " << s / bucket << " slot " << j;
          const bool sent = valueOf.count(want[j]) &&
                            std::find(chosen.begin(), chosen.begin() + keep, want[j]) != chosen.begin() + keep;
          EXPECT_EQ(sf.bits[s0 + j], sent ? valueOf[want[j]] : 0u);
        }
      }
      EXPECT_EQ(sf.info.deferred, deferred);
    }
  }
}

TEST(TopkApprox, SameSeedSameSelectionDifferentStepDiffers) {
  const Buf v(randomVector(3000, 9), scFloat32);
  const scTopkConfig_t a = config(scTopkApprox, 90, 512, 123, 4);
  const Sel s1 = select(v, a), s2 = select(v, a);
  EXPECT_EQ(s1.idx, s2.idx);
  EXPECT_EQ(s1.bits, s2.bits);
  scTopkConfig_t b = a;
  b.step = 5;
  EXPECT_NE(select(v, b).idx, s1.idx);
  // Selected values are the input values.
  for (size_t j = 0; j < s1.idx.size(); ++j) EXPECT_EQ(s1.bits[j], v.bits(s1.idx[j]));
}

TEST(TopkApprox, BucketSizesFromOneToWholeVector) {
  const std::vector<double> x = randomVector(777, 12);
  for (scDataType_t dt : {scFloat32, scFloat64, scFloat16, scBfloat16}) {
    const Buf v(x, dt);
    for (size_t bucket : {size_t(1), size_t(3), size_t(100), size_t(777), size_t(5000)}) {
      for (int fixed = 0; fixed < 2; ++fixed) {
        scTopkConfig_t c = config(scTopkApprox, 77, bucket, 3);
        c.output = fixed ? scTopkFixedPerBucket : scTopkVariable;
        const Sel s = select(v, c);
        ASSERT_EQ(s.rc, scSuccess) << scGetLastError(nullptr);
        expectSortedUnique(s.idx, x.size());
        if (fixed) EXPECT_EQ(s.idx.size(), 77u);
        if (bucket == 1) EXPECT_EQ(s.info.selected, 77u) << "k_b in {0,1} with one element: p is 0 or 1";
      }
    }
  }
}

TEST(TopkApprox, KEqualsNSelectsEverythingNonZero) {
  std::vector<double> x = randomVector(600, 2);
  const Buf v(x, scFloat32);
  const Sel s = select(v, config(scTopkApprox, 600, 512, 1));
  EXPECT_EQ(s.idx.size(), 600u);
}
