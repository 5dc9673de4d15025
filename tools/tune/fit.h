// The arithmetic of sparcoll-tune, apart from any communicator so that the
// unit tests can feed it synthetic timings: the weighted, non-negative least
// squares fit of a cost model that is linear in its parameters, its outlier
// pass, and the rules emitted where the fitted model picks a slow algorithm.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sctune {

// Fit of measured times t_i ≈ offset_i + A_i · x over x >= 0.
//  - Weights 1/t_i²: the squared error is relative, so 1 KiB and 256 MiB
//    points count alike (an unweighted fit would only see the large sizes).
//  - Non-negative: the best solution over every subset of free parameters
//    (the others held at 0) that is feasible; a negative latency or bandwidth
//    term has no meaning and would make the model pick nonsense elsewhere.
//  - Outliers: after a first fit, points whose relative residual exceeds
//    max(3 x MAD, 50 %) of the residuals are dropped and the fit is redone
//    once. Small (alpha-dominated) sizes are not treated specially.
struct FitResult {
  Eigen::VectorXd params;           // one per column of A, each >= 0
  std::vector<double> predicted;    // offset_i + A_i · params, every point
  std::vector<double> relResidual;  // (predicted - t) / t, every point
  std::vector<bool> dropped;        // left out of the second fit
  int nDropped = 0;
  double cut = 0;                // the outlier threshold that was applied
  double r2 = 0;                 // weighted R² over the kept points
  double medianAbsRelError = 0;  // median |relResidual| over the kept points
  int points = 0;                // kept points
};

// t must be positive and finite; offset empty means 0. outliers=false skips
// the second pass (a fit with as many points as parameters, say).
FitResult fitLinear(const Eigen::MatrixXd& A, const Eigen::VectorXd& t, const Eigen::VectorXd& offset = {},
                    bool outliers = true);

// A fit in bands of sizes: the points cut by their size (x_i, e.g. bytes)
// into contiguous bands, each fitted alone by fitLinear. Shared memory is
// faster while a call stays in cache, a shaped link passes its burst at line
// rate, a transport switches protocol: one line through all sizes then misses
// every regime by tens of percent. The cut: for each band count up to
// maxBands (each band at least minSizes distinct sizes), the cut with the
// least squared relative error (first pass, no outliers). The band count:
// the one whose cuts predict best, leave-one-size-out (each size predicted by
// its band fitted without it; median |relative error|), a count taking over
// from a smaller one only when at least a tenth better; so a straight line
// stays one band, and a band is never fitted to its own noise.
struct BandFit {
  double lo = 0, hi = 0;   // the smallest and largest size in the band
  std::vector<long> rows;  // the points in it
  FitResult fit;           // over those rows (in their order)
};
struct BandedFit {
  std::vector<BandFit> bands;       // by size, ascending
  std::vector<double> predicted;    // every point, by its band's fit
  std::vector<double> relResidual;  // every point
  std::vector<bool> dropped;        // every point
  int points = 0, nDropped = 0;     // kept and dropped, over all bands
  double medianAbsRelError = 0;     // median |relResidual| over the kept points
  int bandOf(long row) const;       // index into bands
};
BandedFit fitBands(const Eigen::MatrixXd& A, const Eigen::VectorXd& t, const Eigen::VectorXd& offset,
                   const std::vector<double>& x, int maxBands = 4, int minSizes = 2);

// The whole-byte bounds of bands of sizes: band i owns [lo_i, hi_i], the
// first from 0, the last to UINT64_MAX, interior boundaries at the geometric
// midpoint between one band's largest size and the next band's smallest.
std::vector<std::pair<uint64_t, uint64_t>> bandBytes(const std::vector<BandFit>& bands);

// The non-negative least-squares solution of min |A x - b|² (unweighted: the
// caller scales the rows), and its squared error in *sse when not null.
Eigen::VectorXd nonNegativeLeastSquares(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, double* sse = nullptr);

double median(std::vector<double> v);

// The neighbourhood model's message overhead o (what each message of a round
// adds beyond its first) from the probe: per block size, combining's measured
// time minus naive's, d, against the model's difference apart from o,
// `known` (the rounds' alphas and the blocks' betas, already fitted), plus o
// times the change in messages beyond each round's first, dm (negative where
// combining saves):  d = known + o dm.  Weighted least squares with weights
// 1 / naiveSeconds² (relative, as fitLinear), o >= 0: a saved message is
// never worth less than nothing. o is NaN when no row has dm != 0.
struct OverheadRow {
  double diff = 0, known = 0, dMessages = 0, naiveSeconds = 0;
};
struct OverheadFit {
  double o = NAN;
  std::vector<double> predictedDiff;  // known + o dm, per row
  int points = 0;                     // rows with dm != 0
};
OverheadFit fitMessageOverhead(const std::vector<OverheadRow>& rows);

// One measured size of one collective (at one density), as seen by the rules:
// the fastest algorithm measured there and whether the model's pick was more
// than the tolerance slower than it.
struct SizeVerdict {
  double bytes = 0;
  std::string best;
  bool needRule = false;
};

struct ByteRule {
  uint64_t lo = 0, hi = 0;  // inclusive
  std::string algorithm;
};

// True when the pick's measured time exceeds the best one by more than tol.
inline bool pickTooSlow(double pickSeconds, double bestSeconds, double tol = 0.10) {
  return pickSeconds > bestSeconds * (1 + tol);
}

// Interval [lo, hi] owned by xs[i] (xs sorted ascending, distinct): from the
// geometric midpoint with its lower neighbour to the one with its upper
// neighbour; the outermost values reach half a step (geometrically) beyond
// themselves, using the neighbouring step, so the measured grid is covered
// without extrapolating further. A single value owns [x, x].
void geometricCell(const std::vector<double>& xs, size_t i, double* lo, double* hi);

// Rules over sizes (sorted by bytes): one per size that needs one, owning its
// geometric cell in whole bytes (cells of consecutive sizes touch: hi + 1 =
// next lo), then consecutive rules naming the same algorithm merged into one.
std::vector<ByteRule> emitRules(const std::vector<SizeVerdict>& sizes);

}  // namespace sctune
