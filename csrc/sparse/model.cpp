// The terms follow the schedules step by step (alpha per round a rank takes
// part in, beta per byte it sends, gamma per byte it reduces), with sizes from
// the uniform model: a partial sum over a set S of ranks has expectedUnion(S)
// entries spread evenly over [0, N). A stream counts as dense on the wire and in
// the merges exactly when the switch rule says so.
#include "sparse/model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "algo/dense.h"
#include "algo/fold.h"
#include "sparse/static_block.h"

namespace sc::sp {
namespace {

struct Terms {
  const ModelInput& in;
  double a, b, g, cs, sc, read;
  int P;
  Fold f;
  double N;

  // A byte on the critical path, shared medium included: the sparse schedules
  // are symmetric (every rank sends about as much in every step), so all P
  // ranks put it on the medium.
  static double perByte(const ModelInput& i, const model::Params& p) {
    return p.beta + double(i.model->P) * p.betaShared;
  }

  // p: the parameters of the band of the call's bytes (N values), as a rule
  // would match it (callers go through Model::priced, which blends bands).
  Terms(const ModelInput& i, const model::Params& p)
      : in(i),
        a(p.alpha),
        b(perByte(i, p)),
        g(p.gamma),
        cs(kSparseEntryCost * g * double(i.vsz)),
        sc(kScatterEntryCost * g * double(i.vsz)),
        // A device communicator reads counts back once per sparse step
        // (split algorithms: once for the split, once for the owners' sums).
        read(i.model->device ? 15e-6 : 0.0),
        P(i.model->P),
        f(i.model->P),
        N(double(i.N)),
        logMiss(size_t(P) + 1, 0.0) {
    // p is clamped below 1 so the sums stay finite (a full rank then gives a union of N - 1e-13 N).
    for (int j = 0; j < P; ++j)
      logMiss[j + 1] = logMiss[j] + std::log1p(-std::min(1.0 - 1e-15, i.N ? double(i.k[j]) / N : 0.0));
  }

  // Counts from doubles are clamped below 2^64: a dim near SIZE_MAX rounds up
  // to 2^64 as a double, which does not convert back.
  static uint64_t count(double x) { return uint64_t(std::min(x, 1.8e19)); }
  bool sparse(double n, double len) const { return in.rule.sparseOk(count(std::ceil(n)), count(len)); }
  double wire(double n, double len) const {
    return sparse(n, len) ? n * double(in.isz + in.vsz) : len * double(in.vsz);
  }
  double dense(double len) const { return g * double(in.vsz) * len; }  // a dense reduce (2 reads, 1 write)
  double zero(double len) const { return dense(len) / 3; }             // a memset writes a third of that
  double densify(double n, double len) const { return zero(len) + sc * n; }
  double merge(double na, double nb, double len) const {
    const bool sa = sparse(na, len), sb = sparse(nb, len);
    if (!sa && !sb) return dense(len);
    if (!sa || !sb) return sc * (sa ? na : nb);  // scatter-add into the dense one
    return sparse(na + nb, len) ? cs * (na + nb) : densify(na, len) + sc * nb;
  }
  // An input too big for the sparse form is densified first, by every algorithm.
  double inputCost() const { return sparse(kmax(), N) ? 0 : densify(kmax(), N); }
  double kmax() const { return double(*std::max_element(in.k.begin(), in.k.end())); }
  // Expected union of old ranks [lo, hi) from prefix sums of log(1 - k_i / N):
  // every group the schedules form is a contiguous range of old ranks.
  std::vector<double> logMiss;  // logMiss[i] = sum_{j < i} log(1 - k_j / N)
  double u(int lo, int hi) const { return N * -std::expm1(logMiss[hi] - logMiss[lo]); }
  double uAll() const { return u(0, P); }
  // The largest expected partial sum over groups of `d` new ranks.
  double groupUnion(int d) const {
    double m = 0;
    for (int lo = 0; lo < f.p2; lo += d) m = std::max(m, u(f.firstOld(lo), f.firstOld(lo + d)));
    return m;
  }
  double foldCost(double result) const {  // fold in + result out, for folded ranks
    if (f.r == 0) return 0;
    return 2 * (2 * a + read) + b * wire(kmax(), N) + merge(kmax(), kmax(), N) + b * wire(result, N);
  }
  double outputCost(double K) const { return in.denseOutput && sparse(K, N) ? densify(K, N) : 0; }

  // The dense fallback runs scAllReduce's auto (native priced as ring).
  double denseAllReduce() const {
    const size_t bytes = count(N * double(in.vsz));  // may exceed 2^64: scSparseAlgoFor takes any dim
    const scAlgo_t algo = model::chooseDense(*in.model, Coll::AllReduce, scAlgoAuto, bytes);
    return densify(kmax(), N) + model::predictDense(*in.model, Coll::AllReduce, algo, bytes);
  }

  // No size round and no count read: the allgather of P blocks of the packed
  // size, then the local sum of all P x capacity slots.
  double staticAllGather() const {
    const double slots = double(P) * double(in.k[0]);
    const StaticLayout L{in.k[0], in.isz, in.vsz};
    const size_t bytes = count(double(P) * double(L.bytes()));
    const scAlgo_t algo = model::chooseDense(*in.model, Coll::AllGather, scAlgoAuto, bytes);
    return model::predictDense(*in.model, Coll::AllGather, algo, bytes) + cs * slots + densify(slots, N);
  }

  double recDbl() const {
    double t = 0;
    for (int d = 1; d < f.p2; d *= 2) {
      const double e = groupUnion(d);
      t += 2 * a + read + b * wire(e, N) + merge(e, e, N);
    }
    const double K = uAll();
    return inputCost() + t + foldCost(K) + outputCost(K);
  }

  // The split phase: count round, P-1 payload rounds, P-1 merges at the owner.
  double split() const {
    const double slice = kmax() / P, len = N / P;
    double t = inputCost() + 2 * (P - 1) * a + read + b * (P - 1) * wire(slice, len);
    for (int j = 1; j < P; ++j) t += merge(u(0, j) / P, slice, len);  // no read: a device owner sorts once
    return t;
  }
  double ringAllGather() const {
    return (P - 1) * a + b * (P - 1) / P * N * double(in.vsz) + densify(uAll() / P, N / P);
  }

  double splitAllGather() const {
    const double K = uAll(), Kp = K / P;
    const int lg = int(std::log2(double(f.p2)));
    double t = split() + (lg + (f.r ? 2 : 0)) * a + read;  // + the count round
    if (!sparse(Kp, N / P) || !sparse(K, N)) return t + ringAllGather();
    t += lg * a + b * (f.p2 - 1) * Kp * (f.r ? 2 : 1) * double(in.isz + in.vsz);
    if (f.r) t += 2 * a + b * K * double(in.isz + in.vsz);
    return t + outputCost(K);
  }

  double dsarSplit() const { return split() + ringAllGather(); }

  double earlySwitch(int G) const {
    double t = inputCost();
    if (f.r)  // fold in (a sparse input), unfold (the dense result)
      t += 3 * a + read + b * wire(kmax(), N) + merge(kmax(), kmax(), N) + b * N * double(in.vsz);
    int stage = 0;
    for (int d = f.p2 / 2; d >= 1; d /= 2, ++stage) {
      const int groupRanks = 1 << stage;  // ranks merged into each partial before this stage
      const double len = N / (2.0 * groupRanks);
      if (groupRanks < G) {
        const double e = groupUnion(groupRanks) / (2.0 * groupRanks);  // entries in the half given away
        t += 2 * a + read + b * wire(e, len) + merge(e, e, len);
      } else {
        t += a + b * len * double(in.vsz) + dense(len);
      }
    }
    // The switch (or, with G >= P', the final) densify of this rank's range.
    const int gs = std::min(G, f.p2);
    const double e = groupUnion(gs) / gs, len = N / gs;
    t += sparse(e, len) ? densify(e, len) : dense(len);
    const int lg = int(std::log2(double(f.p2)));
    return t + lg * a + b * (f.p2 - 1.0) / f.p2 * N * double(in.vsz);
  }
};

}  // namespace

double expectedUnion(const ModelInput& in, const std::vector<int>& ranks) {
  if (in.N == 0) return 0;
  double logMiss = 0;  // log prod_i (1 - k_i / N)
  for (int r : ranks) {
    const double p = std::min(1.0, double(in.k[r]) / double(in.N));
    if (p >= 1.0) return double(in.N);
    logMiss += std::log1p(-p);
  }
  return double(in.N) * -std::expm1(logMiss);
}

// The call's bytes, as bands and rules count them: N values.
static double callBytes(const ModelInput& in) { return double(in.N) * double(in.vsz); }

int bestGroupSize(const ModelInput& in) {
  const Fold f(in.model->P);
  int best = 1;
  double bestT = INFINITY;
  for (int G = 1; G <= f.p2; G *= 2) {
    const double t =
        in.model->priced(callBytes(in), [&](const model::Params& p) { return Terms(in, p).earlySwitch(G); });
    if (t < bestT) {
      bestT = t;
      best = G;
    }
  }
  return best;
}

double predictSparse(const ModelInput& in, scSparseAlgo_t algo, int groupSize) {
  if (in.model->P == 1) return 0;
  const int G = algo == scDsarEarlySwitch ? (groupSize > 0 ? groupSize : bestGroupSize(in)) : 0;
  return in.model->priced(callBytes(in), [&](const model::Params& p) {
    const Terms T(in, p);
    switch (algo) {
      case scSsarRecDbl: return T.recDbl();
      case scSsarSplitAllGather: return T.splitAllGather();
      case scDsarSplitAllGather: return T.dsarSplit();
      case scDsarEarlySwitch: return T.earlySwitch(G);
      case scSparseDense: return T.denseAllReduce();
      default: return double(INFINITY);
    }
  });
}

double predictStatic(const ModelInput& in) {
  if (in.model->P == 1) return 0;
  return in.model->priced(callBytes(in), [&](const model::Params& p) { return Terms(in, p).staticAllGather(); });
}

bool staticAdvised(const ModelInput& in) {
  if (in.model->P == 1 || in.N == 0) return true;  // nothing to communicate: the static path only sums locally
  return predictStatic(in) < kSparseMargin * predictSparse(in, scSparseDense);
}

double meanDensity(const ModelInput& in) {
  if (in.N == 0 || in.k.empty()) return 0;
  double sum = 0;
  for (uint64_t k : in.k) sum += double(k);
  return sum / double(in.k.size()) / double(in.N);
}

scSparseAlgo_t chooseSparse(const ModelInput& in) {
  const int rule = model::ruleFor(*in.model, scCollSparseAllReduce, uint64_t(in.N) * in.vsz, meanDensity(in));
  if (rule > 0) return scSparseAlgo_t(rule);
  const double dense = predictSparse(in, scSparseDense);
  scSparseAlgo_t best = scSparseDense;
  double bestT = kSparseMargin * dense;
  for (scSparseAlgo_t a : {scSsarRecDbl, scSsarSplitAllGather, scDsarSplitAllGather, scDsarEarlySwitch}) {
    const double t = predictSparse(in, a);
    if (t < bestT) {
      bestT = t;
      best = a;
    }
  }
  return best;
}

}  // namespace sc::sp
