#include "fit.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace sctune {

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  const size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + long(h), v.end());
  if (v.size() % 2) return v[h];
  return 0.5 * (v[h] + *std::max_element(v.begin(), v.begin() + long(h)));
}

Eigen::VectorXd nonNegativeLeastSquares(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, double* sse) {
  const long k = A.cols();
  // Columns differ by many orders of magnitude (a step count next to a byte
  // count): solve on unit-norm columns, then scale back.
  Eigen::VectorXd norms = A.colwise().norm().transpose();
  for (long j = 0; j < k; ++j)
    if (norms(j) == 0) norms(j) = 1;
  const Eigen::MatrixXd An = A * norms.cwiseInverse().asDiagonal();
  Eigen::VectorXd best = Eigen::VectorXd::Zero(k);
  double bestErr = b.squaredNorm();  // the empty subset: every parameter 0
  // The optimum of a convex problem over x >= 0 is the unconstrained optimum
  // on its own support, so the best feasible subset solution is the optimum.
  // k is 2 to 4 here: 2^k - 1 small solves.
  for (unsigned mask = 1; mask < (1u << k); ++mask) {
    std::vector<long> cols;
    for (long j = 0; j < k; ++j)
      if (mask >> j & 1u) cols.push_back(j);
    const Eigen::MatrixXd sub = An(Eigen::all, cols);
    const Eigen::VectorXd xs = sub.completeOrthogonalDecomposition().solve(b);
    if (!xs.allFinite() || (xs.array() < 0).any()) continue;
    const double err = (sub * xs - b).squaredNorm();
    if (err < bestErr) {
      bestErr = err;
      best.setZero();
      for (size_t c = 0; c < cols.size(); ++c) best(cols[c]) = xs(long(c));
    }
  }
  if (sse) *sse = bestErr;
  return best.cwiseQuotient(norms);
}

OverheadFit fitMessageOverhead(const std::vector<OverheadRow>& rows) {
  OverheadFit f;
  std::vector<long> use;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].dMessages != 0 && rows[i].naiveSeconds > 0) use.push_back(long(i));
  f.points = int(use.size());
  if (!use.empty()) {
    Eigen::MatrixXd A(long(use.size()), 1);
    Eigen::VectorXd b(long(use.size()));
    for (size_t k = 0; k < use.size(); ++k) {
      const OverheadRow& r = rows[size_t(use[k])];
      A(long(k), 0) = r.dMessages / r.naiveSeconds;
      b(long(k)) = (r.diff - r.known) / r.naiveSeconds;
    }
    f.o = nonNegativeLeastSquares(A, b)(0);
  }
  for (const OverheadRow& r : rows) f.predictedDiff.push_back(r.known + (std::isnan(f.o) ? 0 : f.o) * r.dMessages);
  return f;
}

namespace {

// One weighted fit over the rows marked in `use`; fills params, predictions
// and residuals for every row.
void fitOnce(const Eigen::MatrixXd& A, const Eigen::VectorXd& t, const Eigen::VectorXd& off,
             const std::vector<bool>& use, FitResult& r) {
  std::vector<long> rows;
  for (long i = 0; i < t.size(); ++i)
    if (use[size_t(i)]) rows.push_back(i);
  const Eigen::VectorXd w = t(rows).cwiseInverse();
  const Eigen::MatrixXd Aw = w.asDiagonal() * A(rows, Eigen::all);
  const Eigen::VectorXd bw = w.cwiseProduct(t(rows) - off(rows));
  r.params = nonNegativeLeastSquares(Aw, bw);
  const Eigen::VectorXd p = off + A * r.params;
  r.predicted.assign(p.data(), p.data() + p.size());
  r.relResidual.resize(size_t(t.size()));
  for (long i = 0; i < t.size(); ++i) r.relResidual[size_t(i)] = (p(i) - t(i)) / t(i);
  // Weighted R²: 1 - SS_res / SS_tot with weights 1/t², around the weighted mean.
  double sw = 0, swt = 0;
  for (long i : rows) {
    sw += 1 / (t(i) * t(i));
    swt += 1 / t(i);
  }
  const double mean = swt / sw;
  double res = 0, tot = 0;
  std::vector<double> absRel;
  for (long i : rows) {
    const double q = 1 / (t(i) * t(i));
    res += q * (p(i) - t(i)) * (p(i) - t(i));
    tot += q * (t(i) - mean) * (t(i) - mean);
    absRel.push_back(std::fabs(r.relResidual[size_t(i)]));
  }
  r.r2 = tot > 0 ? 1 - res / tot : (res == 0 ? 1 : 0);
  r.medianAbsRelError = median(absRel);
  r.points = int(rows.size());
}

}  // namespace

FitResult fitLinear(const Eigen::MatrixXd& A, const Eigen::VectorXd& t, const Eigen::VectorXd& offset, bool outliers) {
  const Eigen::VectorXd off = offset.size() ? offset : Eigen::VectorXd::Zero(t.size());
  FitResult r;
  std::vector<bool> use(size_t(t.size()), true);
  fitOnce(A, t, off, use, r);
  r.dropped.assign(use.size(), false);
  if (!outliers) return r;
  const double med = median(r.relResidual);
  std::vector<double> dev;
  for (double x : r.relResidual) dev.push_back(std::fabs(x - med));
  r.cut = std::max(3 * median(dev), 0.5);
  int keep = 0;
  for (size_t i = 0; i < use.size(); ++i) {
    use[i] = std::fabs(r.relResidual[i]) <= r.cut;
    keep += use[i];
  }
  // Too few left to determine every parameter: keep them all.
  if (keep == int(use.size()) || keep <= A.cols()) return r;
  fitOnce(A, t, off, use, r);
  for (size_t i = 0; i < use.size(); ++i) r.dropped[i] = !use[i];
  r.nDropped = int(use.size()) - keep;
  return r;
}

int BandedFit::bandOf(long row) const {
  for (size_t b = 0; b < bands.size(); ++b)
    if (std::binary_search(bands[b].rows.begin(), bands[b].rows.end(), row)) return int(b);
  return -1;
}

namespace {

// The fits of one cut (cut[b]: the index of band b's first size in xs).
BandedFit fitCut(const Eigen::MatrixXd& A, const Eigen::VectorXd& t, const Eigen::VectorXd& off,
                 const std::vector<double>& x, const std::vector<double>& xs, const std::vector<size_t>& cut,
                 bool outliers) {
  BandedFit r;
  const size_t n = size_t(t.size());
  r.predicted.assign(n, NAN);
  r.relResidual.assign(n, NAN);
  r.dropped.assign(n, false);
  for (size_t b = 0; b < cut.size(); ++b) {
    BandFit band;
    band.lo = xs[cut[b]];
    band.hi = b + 1 < cut.size() ? xs[cut[b + 1] - 1] : xs.back();
    for (size_t i = 0; i < n; ++i)
      if (x[i] >= band.lo && x[i] <= band.hi) band.rows.push_back(long(i));
    band.fit = fitLinear(A(band.rows, Eigen::all), t(band.rows), off(band.rows), outliers);
    for (size_t k = 0; k < band.rows.size(); ++k) {
      const size_t i = size_t(band.rows[k]);
      r.predicted[i] = band.fit.predicted[k];
      r.relResidual[i] = band.fit.relResidual[k];
      r.dropped[i] = band.fit.dropped[k];
    }
    r.points += band.fit.points;
    r.nDropped += band.fit.nDropped;
    r.bands.push_back(std::move(band));
  }
  std::vector<double> kept;
  for (size_t i = 0; i < n; ++i)
    if (!r.dropped[i]) kept.push_back(std::fabs(r.relResidual[i]));
  r.medianAbsRelError = median(kept);
  return r;
}

double squaredRelError(const BandedFit& f) {
  double s = 0;
  for (double e : f.relResidual) s += e * e;
  return s;
}

// Leave-one-size-out: each measured size predicted by its band fitted
// without it; the median |relative error| over all points. More bands always
// fit the points they were fitted on better; this is what they predict.
double crossValidated(const Eigen::MatrixXd& A, const Eigen::VectorXd& t, const Eigen::VectorXd& off,
                      const std::vector<double>& x, const std::vector<double>& xs, const BandedFit& f) {
  std::vector<double> errs;
  for (const BandFit& band : f.bands)
    for (double size : xs) {
      if (size < band.lo || size > band.hi) continue;
      std::vector<long> train, test;
      for (long i : band.rows) (x[size_t(i)] == size ? test : train).push_back(i);
      if (long(train.size()) <= A.cols()) return INFINITY;  // too few left to fit
      const FitResult r = fitLinear(A(train, Eigen::all), t(train), off(train), false);
      for (long i : test) {
        const double pred = off(i) + A.row(i).dot(r.params);
        errs.push_back(std::fabs(pred / t(i) - 1));
      }
    }
  return median(errs);
}

// Every cut of K sizes into `bands` bands of at least minSizes each:
// calls f(cut) with cut[0] = 0 and increasing starts.
template <typename F>
void eachCut(size_t K, int bands, int minSizes, std::vector<size_t>& cut, F&& f) {
  if (int(cut.size()) == bands) {
    if (K - cut.back() >= size_t(minSizes)) f(cut);
    return;
  }
  for (size_t s = cut.back() + size_t(minSizes); s + size_t(minSizes) * size_t(bands - int(cut.size())) <= K; ++s) {
    cut.push_back(s);
    eachCut(K, bands, minSizes, cut, f);
    cut.pop_back();
  }
}

}  // namespace

BandedFit fitBands(const Eigen::MatrixXd& A, const Eigen::VectorXd& t, const Eigen::VectorXd& offset,
                   const std::vector<double>& x, int maxBands, int minSizes) {
  const Eigen::VectorXd off = offset.size() ? offset : Eigen::VectorXd::Zero(t.size());
  std::vector<double> xs(x);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  const size_t K = xs.size();
  minSizes = std::max(minSizes, 1);
  std::vector<size_t> one{0};
  BandedFit best = fitCut(A, t, off, x, xs, one, true);
  double bestCv = crossValidated(A, t, off, x, xs, best);
  for (int bands = 2; bands <= maxBands && size_t(bands * minSizes) <= K; ++bands) {
    std::vector<size_t> cut{0}, bestCut;
    double bestErr = INFINITY;
    eachCut(K, bands, minSizes, cut, [&](const std::vector<size_t>& c) {
      const double e = squaredRelError(fitCut(A, t, off, x, xs, c, false));
      if (e < bestErr) bestErr = e, bestCut = c;
    });
    if (bestCut.empty()) break;
    BandedFit more = fitCut(A, t, off, x, xs, bestCut, true);
    const double cv = crossValidated(A, t, off, x, xs, more);
    if (cv < 0.9 * bestCv) best = std::move(more), bestCv = cv;
  }
  return best;
}

std::vector<std::pair<uint64_t, uint64_t>> bandBytes(const std::vector<BandFit>& bands) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (size_t b = 0; b < bands.size(); ++b) {
    const uint64_t lo = b == 0 ? 0 : out.back().second + 1;
    uint64_t hi = UINT64_MAX;
    if (b + 1 < bands.size()) hi = std::max(lo, uint64_t(std::llround(std::sqrt(bands[b].hi * bands[b + 1].lo))) - 1);
    out.emplace_back(lo, hi);
  }
  return out;
}

void geometricCell(const std::vector<double>& xs, size_t i, double* lo, double* hi) {
  const size_t n = xs.size();
  if (n == 1) {
    *lo = *hi = xs[0];
    return;
  }
  *lo = i > 0 ? std::sqrt(xs[i - 1] * xs[i]) : xs[0] / std::sqrt(xs[1] / xs[0]);
  *hi = i + 1 < n ? std::sqrt(xs[i] * xs[i + 1]) : xs[n - 1] * std::sqrt(xs[n - 1] / xs[n - 2]);
}

std::vector<ByteRule> emitRules(const std::vector<SizeVerdict>& sizes) {
  std::vector<double> xs;
  for (const auto& s : sizes) xs.push_back(s.bytes);
  // Whole-byte cells: an interior boundary B (the rounded midpoint) starts the
  // upper cell, so cell i is [B_i, B_{i+1} - 1]; tiny neighbouring sizes whose
  // boundaries round together keep at least one byte each.
  std::vector<uint64_t> lo(xs.size()), hi(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    double l, h;
    geometricCell(xs, i, &l, &h);
    lo[i] = uint64_t(std::llround(l));
    hi[i] = i + 1 < xs.size() ? uint64_t(std::llround(h)) - 1 : uint64_t(std::llround(h));
    if (i > 0) lo[i] = std::max(lo[i], hi[i - 1] + 1);
    hi[i] = std::max(hi[i], lo[i]);
  }
  std::vector<ByteRule> out;
  bool lastWasRule = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!sizes[i].needRule) {
      lastWasRule = false;
      continue;
    }
    if (lastWasRule && out.back().algorithm == sizes[i].best) out.back().hi = hi[i];
    else out.push_back({lo[i], hi[i], sizes[i].best});
    lastWasRule = true;
  }
  return out;
}

}  // namespace sctune
