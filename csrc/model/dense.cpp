// For n bytes on P ranks, P' = 2^floor(log2 P), f = 1 when P is not a power
// of two (the fold's extra steps), as coefficients of (alpha, beta, gamma):
//   ring          2(P-1),        2(P-1)/P n,             (P-1)/P n
//   rabenseifner  2(log2 P'+f),  (2(P'-1)/P' + 2f) n,    ((P'-1)/P' + f) n
//   recdbl        log2 P'+2f,    (log2 P'+2f) n,         (log2 P'+f) n
// Reduce-scatter and allgather take the reduce-scatter / allgather halves
// (their recursive variants: halving, doubling). README "Cost model".
#include "model/dense.h"

#include <cmath>

#include "core/comm.h"

namespace sc::model {
namespace {

int pow2Below(int P) {
  int p = 1;
  while (p <= P / 2) p *= 2;  // not p * 2 <= P: that overflows int for P >= 2^30
  return p;
}

const char* collName(Coll c) {
  return c == Coll::AllReduce ? "allreduce" : c == Coll::ReduceScatter ? "reduce-scatter" : "allgather";
}

}  // namespace

Coef denseCoef(Coll coll, scAlgo_t algo, int P, double n) {
  if (P <= 1) return {};
  const int p2 = pow2Below(P);
  const double f = P != p2 ? 1.0 : 0.0, lg = std::log2(double(p2)), q = (P - 1.0) / P, q2 = (p2 - 1.0) / p2;
  const double rs = coll != Coll::AllGather ? 1.0 : 0.0, ag = coll != Coll::ReduceScatter ? 1.0 : 0.0;
  switch (algo) {
    case scAlgoRabenseifner:
    case scAlgoRecDbl:
      if (coll == Coll::AllReduce && algo == scAlgoRecDbl) return {lg + 2 * f, (lg + 2 * f) * n, (lg + f) * n};
      return {(rs + ag) * (lg + f), ((rs + ag) * q2 + 2 * f) * n, rs * (q2 + f) * n};
    default:  // ring, and native priced as ring
      return {(rs + ag) * (P - 1), (rs + ag) * q * n, rs * q * n};
  }
}

double predictDense(const Model& m, Coll coll, scAlgo_t algo, size_t bytes) {
  return denseCoef(coll, algo, m.P, double(bytes)).dot(m.params());
}

bool denseOffers(Coll coll, scAlgo_t x) {
  switch (coll) {
    case Coll::AllReduce: return x > scAlgoAuto && x < scNumAlgos;
    case Coll::ReduceScatter: return x == scAlgoRing || x == scAlgoRabenseifner || x == scAlgoNative;
    case Coll::AllGather: return x == scAlgoRing || x == scAlgoRecDbl || x == scAlgoNative;
  }
  return false;
}

scAlgo_t chooseDense(const Model& m, Coll coll, scAlgo_t requested, size_t bytes) {
  SC_ARG(requested >= 0 && requested < scNumAlgos, "unknown algorithm ", int(requested));
  if (requested != scAlgoAuto) {
    SC_ARG(denseOffers(coll, requested), "algorithm '", algoName(requested), "' is not available for ",
           collName(coll), " (reduce-scatter: ring, rabenseifner, native; allgather: ring, recdbl, native)");
    return requested;
  }
  // A configured default the collective does not offer (recdbl for a
  // reduce-scatter) falls through to the rules and the model.
  if (m.denseAlgo != scAlgoAuto && denseOffers(coll, m.denseAlgo)) return m.denseAlgo;
  if (const int r = ruleFor(m, int(coll), bytes); r > 0) return scAlgo_t(r);
  const scAlgo_t candidates[] = {scAlgoRing, coll == Coll::AllGather ? scAlgoRecDbl : scAlgoRabenseifner,
                                 coll == Coll::AllReduce ? scAlgoRecDbl : scAlgoRing};
  scAlgo_t best = scAlgoRing;
  double bestT = INFINITY;
  for (scAlgo_t x : candidates) {
    const double t = predictDense(m, coll, x, bytes);
    if (t < bestT) {
      bestT = t;
      best = x;
    }
  }
  return best;
}

}  // namespace sc::model
