// The fit of sparcoll-tune on synthetic timings. The coefficient columns are
// written out here from the README's formulas ("Choosing an algorithm"): the
// test checks the fit, not the library's model, which the tool reads from
// scEstimateTime.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

#include "fit.h"

namespace sctune {
namespace {

struct Coef {
  double a, b, g;
};

// Coefficients of alpha, beta, gamma for n bytes on P ranks (n: the full vector).
std::vector<Coef> denseColumns(int P, double n) {
  int p2 = 1;
  while (p2 * 2 <= P) p2 *= 2;
  const double f = P != p2 ? 1 : 0, lg = std::log2(double(p2)), q = (P - 1.0) / P, q2 = (p2 - 1.0) / p2;
  return {
      {2.0 * (P - 1), 2 * q * n, q * n},                   // allreduce ring
      {2 * (lg + f), (2 * q2 + 2 * f) * n, (q2 + f) * n},  // allreduce rabenseifner
      {lg + 2 * f, (lg + 2 * f) * n, (lg + f) * n},        // allreduce recdbl
      {P - 1.0, q * n, q * n},                             // reduce-scatter ring
      {lg + f, (q2 + 2 * f) * n, (q2 + f) * n},            // reduce-scatter rabenseifner (halving)
      {P - 1.0, q * n, 0},                                 // allgather ring
      {lg + f, (q2 + 2 * f) * n, 0},                       // allgather recdbl
  };
}

struct Data {
  Eigen::MatrixXd A;
  Eigen::VectorXd t;
};

// Sizes 4 B .. 256 MiB (x4), every algorithm; t = A x times (1 + u), u uniform in [-noise, noise].
Data synthetic(int P, double alpha, double beta, double gamma, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-noise, noise);
  std::vector<Coef> rows;
  for (double n = 4; n <= double(256 << 20); n *= 4)
    for (const Coef& c : denseColumns(P, n)) rows.push_back(c);
  Data d{Eigen::MatrixXd(long(rows.size()), 3), Eigen::VectorXd(long(rows.size()))};
  for (size_t i = 0; i < rows.size(); ++i) {
    d.A.row(long(i)) << rows[i].a, rows[i].b, rows[i].g;
    d.t(long(i)) = (rows[i].a * alpha + rows[i].b * beta + rows[i].g * gamma) * (1 + u(rng));
  }
  return d;
}

const double kAlpha = 3e-6, kBeta = 1 / 6e9, kGamma = 1 / 4e9;

class FitRecovers : public ::testing::TestWithParam<int> {};

TEST_P(FitRecovers, ParametersWithinOnePercentUnderTwoPercentNoise) {
  const int P = GetParam();
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const Data d = synthetic(P, kAlpha, kBeta, kGamma, 0.02, seed);
    const FitResult r = fitLinear(d.A, d.t);
    EXPECT_NEAR(r.params(0) / kAlpha, 1, 0.01) << "P " << P << " seed " << seed;
    EXPECT_NEAR(r.params(1) / kBeta, 1, 0.01) << "P " << P << " seed " << seed;
    EXPECT_NEAR(r.params(2) / kGamma, 1, 0.01) << "P " << P << " seed " << seed;
    EXPECT_EQ(r.nDropped, 0) << "2 % noise is no outlier";
    EXPECT_GT(r.r2, 0.99);
    EXPECT_LT(r.medianAbsRelError, 0.02);
    EXPECT_EQ(r.points, int(d.t.size()));
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, FitRecovers, ::testing::Values(2, 3, 4, 8));

// The shared-medium term: every rank's bytes sent, summed (the library's
// sharedBytes, written out here for the same rows), plus broadcast's two
// trees, whose ratio of shared to critical-path bytes differs from the
// others' (at P = 2 only the broadcasts tell beta from beta_shared).
struct Row4 {
  double a, b, g, s;
};
std::vector<Row4> sharedRows(int P, double n) {
  int p2 = 1;
  while (p2 * 2 <= P) p2 *= 2;
  const double e = P - p2, lg = std::log2(double(p2));
  const std::vector<double> shared = {2.0 * (P - 1) * n,
                                      2 * (p2 - 1) * n + 2 * e * n,
                                      p2 * lg * n + 2 * e * n,
                                      (P - 1.0) * n,
                                      (p2 - 1) * n + e * n + e * n / P,
                                      (P - 1.0) * n,
                                      (p2 - 1) * n + e * n + e * n / P};
  std::vector<Row4> rows;
  const std::vector<Coef> c = denseColumns(P, n);
  for (size_t i = 0; i < c.size(); ++i) rows.push_back({c[i].a, c[i].b, c[i].g, shared[i]});
  const double L = std::ceil(std::log2(double(P)));
  double blocks = 0;
  for (int r = 1; r < P; ++r) blocks += std::min(r & -r, P - r);
  rows.push_back({L, L * n, 0, (P - 1) * n});                                           // binomial
  rows.push_back({L + P - 1, 2 * (P - 1.0) / P * n, 0, blocks * n / P + (P - 1) * n});  // scatter_allgather
  return rows;
}

class FitRecoversShared : public ::testing::TestWithParam<int> {};

TEST_P(FitRecoversShared, FourParametersWithinOnePercentUnderOnePercentNoise) {
  const int P = GetParam();
  const double kShared = kBeta / 2;  // memory bandwidth shared by every rank
  for (unsigned seed = 1; seed <= 5; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-0.01, 0.01);
    std::vector<Row4> rows;
    for (double n = 4; n <= double(256 << 20); n *= 2)
      for (const Row4& r : sharedRows(P, n)) rows.push_back(r);
    Eigen::MatrixXd A(long(rows.size()), 4);
    Eigen::VectorXd t(long(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row4& r = rows[i];
      A.row(long(i)) << r.a, r.b, r.g, r.s;
      t(long(i)) = (r.a * kAlpha + r.b * kBeta + r.g * kGamma + r.s * kShared) * (1 + u(rng));
    }
    const FitResult f = fitLinear(A, t);
    // At P = 2 only the two broadcasts tell beta from beta_shared: 2 % there.
    const double tol = P == 2 ? 0.02 : 0.01;
    EXPECT_NEAR(f.params(0) / kAlpha, 1, tol) << "P " << P << " seed " << seed;
    EXPECT_NEAR(f.params(1) / kBeta, 1, tol) << "P " << P << " seed " << seed;
    EXPECT_NEAR(f.params(2) / kGamma, 1, tol) << "P " << P << " seed " << seed;
    EXPECT_NEAR(f.params(3) / kShared, 1, tol) << "P " << P << " seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, FitRecoversShared, ::testing::Values(2, 3, 4, 8));

// Bands: up to 64 KiB the times follow one set of parameters, above another
// (a cache, a burst, a protocol switch); fitBands finds the cut between the
// two measured sizes and each band's parameters; one regime stays one band.
TEST(Fit, BandsFindTheRegimes) {
  const int P = 4;
  const double small[3] = {1e-6, 1 / 20e9, 1 / 30e9}, large[3] = {2e-5, 1 / 3e9, 1 / 2e9};
  std::vector<Coef> rows;
  std::vector<double> x;
  for (double n = 16; n <= double(64 << 20); n *= 4)
    for (const Coef& c : denseColumns(P, n)) rows.push_back(c), x.push_back(n);
  Eigen::MatrixXd A(long(rows.size()), 3);
  Eigen::VectorXd t(long(rows.size())), one(long(rows.size()));
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-0.02, 0.02);
  for (size_t i = 0; i < rows.size(); ++i) {
    const double* p = x[i] <= 65536 ? small : large;
    A.row(long(i)) << rows[i].a, rows[i].b, rows[i].g;
    t(long(i)) = (rows[i].a * p[0] + rows[i].b * p[1] + rows[i].g * p[2]) * (1 + u(rng));
    one(long(i)) = (rows[i].a * large[0] + rows[i].b * large[1] + rows[i].g * large[2]) * (1 + u(rng));
  }
  const BandedFit f = fitBands(A, t, {}, x);
  ASSERT_EQ(f.bands.size(), 2u);
  EXPECT_EQ(f.bands[0].lo, 16);
  EXPECT_EQ(f.bands[0].hi, 65536);
  EXPECT_EQ(f.bands[1].lo, 262144);
  // What each band's sizes can tell under 2 % noise: alpha and beta below
  // 64 KiB (gamma is a percent of those times), beta and gamma above.
  EXPECT_NEAR(f.bands[0].fit.params(0) / small[0], 1, 0.02);
  EXPECT_NEAR(f.bands[0].fit.params(1) / small[1], 1, 0.02);
  EXPECT_NEAR(f.bands[1].fit.params(1) / large[1], 1, 0.02);
  EXPECT_NEAR(f.bands[1].fit.params(2) / large[2], 1, 0.02);
  EXPECT_LT(f.medianAbsRelError, 0.02);
  EXPECT_EQ(f.bandOf(0), 0);
  EXPECT_EQ(f.bandOf(long(rows.size()) - 1), 1);
  const auto bytes = bandBytes(f.bands);
  ASSERT_EQ(bytes.size(), 2u);
  EXPECT_EQ(bytes[0].first, 0u);
  EXPECT_EQ(bytes[0].second, 131071u);  // the midpoint of 64 KiB and 256 KiB starts the next band
  EXPECT_EQ(bytes[1].first, 131072u);
  EXPECT_EQ(bytes[1].second, UINT64_MAX);
  const BandedFit g = fitBands(A, one, {}, x);
  EXPECT_EQ(g.bands.size(), 1u) << "one regime, one band";
  EXPECT_NEAR(g.bands[0].fit.params(1) / large[1], 1, 0.01);
}

TEST(Fit, ExactDataIsExact) {
  const Data d = synthetic(4, kAlpha, kBeta, kGamma, 0, 1);
  const FitResult r = fitLinear(d.A, d.t);
  EXPECT_NEAR(r.params(0) / kAlpha, 1, 1e-9);
  EXPECT_NEAR(r.params(1) / kBeta, 1, 1e-9);
  EXPECT_NEAR(r.params(2) / kGamma, 1, 1e-9);
  EXPECT_NEAR(r.r2, 1, 1e-12);
  EXPECT_LT(r.medianAbsRelError, 1e-9);
}

TEST(Fit, OutliersAreDroppedAndTheRefitIsClean) {
  Data d = synthetic(4, kAlpha, kBeta, kGamma, 0.01, 7);
  // One run slowed down by something else on the machine, one too fast (a
  // timer glitch): with weights 1/t² the fast one is what pulls the fit.
  const long slow = 40, fast = 70;
  d.t(slow) *= 3;
  d.t(fast) *= 0.3;
  const FitResult r = fitLinear(d.A, d.t);
  EXPECT_EQ(r.nDropped, 2);
  EXPECT_TRUE(r.dropped[size_t(slow)]);
  EXPECT_TRUE(r.dropped[size_t(fast)]);
  // Residuals are reported for the dropped points too.
  EXPECT_NEAR(r.relResidual[size_t(slow)], -2.0 / 3, 0.03);
  EXPECT_NEAR(r.relResidual[size_t(fast)], 7.0 / 3, 0.1);
  EXPECT_EQ(r.points, int(d.t.size()) - 2);
  EXPECT_NEAR(r.params(0) / kAlpha, 1, 0.01);
  EXPECT_NEAR(r.params(1) / kBeta, 1, 0.01);
  EXPECT_NEAR(r.params(2) / kGamma, 1, 0.01);
  // Without the outlier pass the parameters are off by far more.
  const FitResult raw = fitLinear(d.A, d.t, {}, false);
  EXPECT_EQ(raw.nDropped, 0);
  auto off = [](const FitResult& f) {
    return std::fabs(f.params(0) / kAlpha - 1) + std::fabs(f.params(1) / kBeta - 1) +
           std::fabs(f.params(2) / kGamma - 1);
  };
  EXPECT_GT(off(raw), 0.05);
  EXPECT_LT(off(r), 0.02);
}

TEST(Fit, NoDropsWhenEveryPointIsWithinFiftyPercent) {
  // A model error of up to 30 % everywhere is large, but not an outlier: the
  // cut is at least 50 %.
  Data d = synthetic(3, kAlpha, kBeta, kGamma, 0, 1);
  for (long i = 0; i < d.t.size(); i += 2) d.t(i) *= 1.3;
  EXPECT_EQ(fitLinear(d.A, d.t).nDropped, 0);
}

TEST(Fit, ParametersStayNonNegativeWhenTheDataImplyANegativeAlpha) {
  // Times with a negative latency term: t = -2 us x steps + beta n + gamma n,
  // on the sizes where that is still positive (what a fit of a pipelined,
  // overlapping implementation can look like).
  std::vector<Coef> rows;
  std::vector<double> ts;
  for (double n = 1 << 20; n <= double(256 << 20); n *= 2)
    for (const Coef& c : denseColumns(4, n)) {
      rows.push_back(c);
      ts.push_back(-2e-6 * c.a + kBeta * c.b + kGamma * c.g);
    }
  Eigen::MatrixXd A(long(rows.size()), 3);
  Eigen::VectorXd t(long(rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    A.row(long(i)) << rows[i].a, rows[i].b, rows[i].g;
    t(long(i)) = ts[i];
    ASSERT_GT(ts[i], 0);
  }
  // The unconstrained weighted fit does come out negative ...
  const Eigen::VectorXd w = t.cwiseInverse();
  const Eigen::VectorXd free = (w.asDiagonal() * A).colPivHouseholderQr().solve(Eigen::VectorXd::Ones(t.size()));
  ASSERT_LT(free(0), 0);
  // ... the tool's is not.
  const FitResult r = fitLinear(A, t);
  EXPECT_EQ(r.params(0), 0);
  EXPECT_GT(r.params(1), 0);
  EXPECT_GT(r.params(2), 0);
  EXPECT_LT(r.medianAbsRelError, 0.05);
}

TEST(Fit, NonNegativeLeastSquaresMatchesTheUnconstrainedOptimumWhenFeasible) {
  Eigen::MatrixXd A(4, 2);
  A << 1, 0, 1, 1, 1, 2, 1, 3;
  const Eigen::VectorXd b = (Eigen::VectorXd(4) << 1, 3, 5, 7).finished();
  double sse = 1;
  const Eigen::VectorXd x = nonNegativeLeastSquares(A, b, &sse);
  EXPECT_NEAR(x(0), 1, 1e-12);
  EXPECT_NEAR(x(1), 2, 1e-12);
  EXPECT_NEAR(sse, 0, 1e-20);
  // b = 5 - k: the free slope is negative; non-negative: slope 0, mean level.
  const Eigen::VectorXd c = (Eigen::VectorXd(4) << 5, 4, 3, 2).finished();
  const Eigen::VectorXd y = nonNegativeLeastSquares(A, c, &sse);
  EXPECT_NEAR(y(0), 3.5, 1e-12);
  EXPECT_EQ(y(1), 0);
}

TEST(Rules, PickSlowerThanTenPercent) {
  EXPECT_FALSE(pickTooSlow(1.10, 1.0));
  EXPECT_TRUE(pickTooSlow(1.11, 1.0));
  EXPECT_FALSE(pickTooSlow(1.0, 1.0));
}

TEST(Rules, GeometricCells) {
  const std::vector<double> xs{1024, 4096, 16384};
  double lo, hi;
  geometricCell(xs, 0, &lo, &hi);
  EXPECT_DOUBLE_EQ(lo, 512);
  EXPECT_DOUBLE_EQ(hi, 2048);
  geometricCell(xs, 1, &lo, &hi);
  EXPECT_DOUBLE_EQ(lo, 2048);
  EXPECT_DOUBLE_EQ(hi, 8192);
  geometricCell(xs, 2, &lo, &hi);
  EXPECT_DOUBLE_EQ(lo, 8192);
  EXPECT_DOUBLE_EQ(hi, 32768);
  geometricCell({0.01}, 0, &lo, &hi);
  EXPECT_DOUBLE_EQ(lo, 0.01);
  EXPECT_DOUBLE_EQ(hi, 0.01);
}

TEST(Rules, AdjacentSizesWithTheSameAlgorithmMerge) {
  const double K = 1024;
  const std::vector<SizeVerdict> v{{1 * K, "ring", false},    {4 * K, "native", true},  {16 * K, "native", true},
                                   {64 * K, "recdbl", true},  {256 * K, "ring", false}, {1024 * K, "native", true},
                                   {4096 * K, "native", true}};
  const std::vector<ByteRule> r = emitRules(v);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].algorithm, "native");  // 4K and 16K merged
  EXPECT_EQ(r[0].lo, 2048u);
  EXPECT_EQ(r[0].hi, 32767u);
  EXPECT_EQ(r[1].algorithm, "recdbl");  // touches the first, another algorithm: not merged
  EXPECT_EQ(r[1].lo, 32768u);
  EXPECT_EQ(r[1].hi, 131071u);
  EXPECT_EQ(r[2].algorithm, "native");  // 1M and 4M merged; not across the 256K gap
  EXPECT_EQ(r[2].lo, 524288u);
  EXPECT_EQ(r[2].hi, 8388608u);  // half a step (x2) beyond the largest size
}

TEST(Rules, NoRuleWhereTheModelIsRightAndCellsNeverOverlap) {
  std::vector<SizeVerdict> v;
  for (double b : {1.0, 2.0, 3.0, 4.0, 1000.0}) v.push_back({b, "native", true});
  EXPECT_TRUE(emitRules({{1024, "ring", false}}).empty());
  const auto one = emitRules(v);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].lo, 1u);
  EXPECT_EQ(one[0].hi, uint64_t(std::llround(1000 * std::sqrt(1000 / 4.0))));
  // Tiny sizes whose midpoints round together still get disjoint cells.
  for (size_t i = 0; i < v.size(); ++i) v[i].best = i % 2 ? "ring" : "native";
  const auto alt = emitRules(v);
  ASSERT_EQ(alt.size(), v.size());
  for (size_t i = 1; i < alt.size(); ++i) {
    EXPECT_EQ(alt[i].lo, alt[i - 1].hi + 1);
    EXPECT_LE(alt[i].lo, alt[i].hi);
  }
}

// The message overhead from the probe's rows: combining's time minus naive's
// = known + o dm. Synthetic rows made with a known o (and noise of +-0.5 % on
// every time) give it back within 1 %; rows where combining is slower than
// its known part allows (a saved message worth less than nothing) give 0;
// rows without a changed message count give no o.
TEST(MessageOverhead, RecoversAKnownOverhead) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(-0.005, 0.005);
  for (double o : {2e-7, 4.5e-6, 3e-5}) {
    std::vector<OverheadRow> rows;
    for (double b : {1.0, 16.0, 256.0, 4096.0}) {
      const double alpha = 8e-6, beta = 2e-10;
      // naive: 1 round, 14 extra messages, 15 blocks; combining: 2 rounds, 5
      // extra messages, 24 blocks (copies included).
      const double naive = alpha + 14 * o + b * 15 * beta, comb = 2 * alpha + 5 * o + b * 24 * beta;
      const double known = (2 - 1) * alpha + b * (24 - 15) * beta;
      const double tn = naive * (1 + noise(rng)), tc = comb * (1 + noise(rng));
      rows.push_back({tc - tn, known, 5 - 14.0, tn});
    }
    const OverheadFit f = fitMessageOverhead(rows);
    EXPECT_EQ(f.points, 4);
    EXPECT_NEAR(f.o, o, 0.01 * o + 2e-9) << "o " << o;  // noise of 0.5 % on times 1e-5 and up
    ASSERT_EQ(f.predictedDiff.size(), rows.size());
    for (size_t i = 0; i < rows.size(); ++i) EXPECT_DOUBLE_EQ(f.predictedDiff[i], rows[i].known + f.o * -9);
  }
  // Exact data: exact o.
  const OverheadFit exact = fitMessageOverhead({{1e-5 - 3 * 2e-6, 1e-5, -3, 4e-5}, {1e-5 - 3 * 2e-6, 1e-5, -3, 5e-5}});
  EXPECT_NEAR(exact.o, 2e-6, 1e-18);
}

TEST(MessageOverhead, NeverNegativeAndNothingWithoutAChange) {
  // Combining slower than its extra round alone: a saved message would have a
  // negative worth; o is 0.
  EXPECT_EQ(fitMessageOverhead({{5e-6, 3e-6, -4, 1e-5}, {6e-6, 3e-6, -4, 1e-5}}).o, 0);
  const OverheadFit none = fitMessageOverhead({{5e-6, 3e-6, 0, 1e-5}});
  EXPECT_TRUE(std::isnan(none.o));
  EXPECT_EQ(none.points, 0);
  ASSERT_EQ(none.predictedDiff.size(), 1u);
  EXPECT_EQ(none.predictedDiff[0], 3e-6);
  EXPECT_TRUE(std::isnan(fitMessageOverhead({}).o));
}

}  // namespace
}  // namespace sctune
