// For n bytes on P ranks, P' = 2^floor(log2 P), f = 1 when P is not a power
// of two (the fold's extra steps), as coefficients of (alpha, beta, gamma):
//   ring          2(P-1),        2(P-1)/P n,             (P-1)/P n
//   rabenseifner  2(log2 P'+f),  (2(P'-1)/P' + 2f) n,    ((P'-1)/P' + f) n
//   recdbl        log2 P'+2f,    (log2 P'+2f) n,         (log2 P'+f) n
// Reduce-scatter and allgather take the reduce-scatter / allgather halves
// (their recursive variants: halving, doubling). Broadcast:
//   binomial           ceil(log2 P),          ceil(log2 P) n,   0
//   scatter_allgather  ceil(log2 P) + P-1,    2(P-1)/P n,       0
// and, as the coefficient of betaShared, every rank's bytes sent, summed
// (sharedBytes below). README "Cost model".
#include "model/dense.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/comm.h"

namespace sc::model {
namespace {

int pow2Below(int P) {
  int p = 1;
  while (p <= P / 2) p *= 2;  // not p * 2 <= P: that overflows int for P >= 2^30
  return p;
}

const char* collName(Coll c) {
  switch (c) {
    case Coll::AllReduce: return "allreduce";
    case Coll::ReduceScatter: return "reduce-scatter";
    case Coll::AllGather: return "allgather";
    case Coll::Broadcast: return "broadcast";
  }
  return "?";
}

// What the collective offers, for the message of an algorithm it does not.
const char* offerList(Coll c) {
  switch (c) {
    case Coll::AllReduce: return "ring, rabenseifner, recdbl, native, auto";
    case Coll::ReduceScatter: return "ring, rabenseifner, native, auto";
    case Coll::AllGather: return "ring, recdbl, native, auto";
    case Coll::Broadcast: return "binomial, scatter_allgather, native, auto";
  }
  return "";
}

int ceilLog2(int P) {
  int l = 0;
  while ((int64_t(1) << l) < P) ++l;
  return l;
}

// Per rank, on the critical path: messages, bytes sent, bytes reduced.
Coef criticalPath(Coll coll, scAlgo_t algo, int P, double n) {
  if (coll == Coll::Broadcast) {
    // binomial: ceil(log2 P) rounds of the whole buffer; scatter_allgather: a
    // binomial scatter (ceil(log2 P) rounds, (P-1)/P n in all on the critical
    // path) then a ring allgather ((P-1) steps of n/P). native as the latter.
    const double L = ceilLog2(P), q = (P - 1.0) / P;
    if (algo == scAlgoBinomial) return {L, L * n, 0};
    return {L + (P - 1), 2 * q * n, 0};
  }
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

// The set bits of 0 .. P-1, summed, in O(log P): bit b is set in
// (P >> (b+1)) << b of them, plus the part of the last incomplete period.
double popcountSum(int P) {
  double s = 0;
  for (int b = 0; b < 31 && (int64_t(1) << b) < P; ++b) {
    const int64_t period = int64_t(1) << (b + 1), half = int64_t(1) << b;
    const int64_t periods = int64_t(P) / period;  // whole periods: integer division meant
    s += double(periods * half + std::max<int64_t>(0, int64_t(P) % period - half));
  }
  return s;
}

// Every rank's bytes sent, summed (what a shared medium carries); the same
// counts scStats_t reports. e = P - P' ranks fold: the even rank of a pair
// sends its input up, the odd one the result down.
double sharedBytes(Coll coll, scAlgo_t algo, int P, double n) {
  if (coll == Coll::Broadcast) {
    if (algo == scAlgoBinomial) return (P - 1) * n;  // each non-root receives the buffer once
    // scatter: relative rank r receives its subtree's blocks, min(lowbit(r),
    // P - r) of them. Summed over r, each rank's block is counted once per
    // non-root rank on its path from the root (parent of x: x - lowbit(x)),
    // i.e. popcount(x) times: the blocks are the set bits of 0 .. P-1.
    return popcountSum(P) * n / P + (P - 1.0) * n;
  }
  // In doubles: 2 (P' - 1) overflows int for P near 2^31.
  const double p2 = pow2Below(P), e = P - p2, lg = std::log2(p2);
  switch (coll == Coll::AllReduce ? algo : algo == scAlgoNative ? scAlgoRing : algo) {
    case scAlgoRabenseifner:
      if (coll == Coll::AllReduce) return 2 * (p2 - 1) * n + 2 * e * n;
      [[fallthrough]];
    case scAlgoRecDbl:
      if (coll == Coll::AllReduce) return p2 * lg * n + 2 * e * n;
      return (p2 - 1) * n + e * n + e * n / P;  // halving reduce-scatter, doubling allgather
    default: return (coll == Coll::AllReduce ? 2.0 : 1.0) * (P - 1.0) * n;  // ring, native
  }
}

}  // namespace

Coef denseCoef(Coll coll, scAlgo_t algo, int P, double n) {
  if (P <= 1) return {};
  Coef c = criticalPath(coll, algo, P, n);
  c.s = sharedBytes(coll, algo, P, n);
  return c;
}

double predictDense(const Model& m, Coll coll, scAlgo_t algo, size_t bytes) {
  const Coef c = denseCoef(coll, algo, m.P, double(bytes));
  // A tree of links (a topology file): the steps' messages share links, and
  // the most loaded link of each step sets its pace (Model::linkSecondsPerByte).
  const double link =
      m.links && algo >= 0 && algo < scNumAlgos ? m.linkSecondsPerByte[int(coll)][algo] * double(bytes) : 0;
  return m.priced(double(bytes), [&](const Params& p) {
    const double t = c.dot(p);
    return link > 0 ? std::max(t, c.a * p.alpha + c.g * p.gamma + link) : t;
  });
}

bool denseOffers(Coll coll, scAlgo_t x) {
  switch (coll) {
    case Coll::AllReduce: return x == scAlgoRing || x == scAlgoRabenseifner || x == scAlgoRecDbl || x == scAlgoNative;
    case Coll::ReduceScatter: return x == scAlgoRing || x == scAlgoRabenseifner || x == scAlgoNative;
    case Coll::AllGather: return x == scAlgoRing || x == scAlgoRecDbl || x == scAlgoNative;
    case Coll::Broadcast: return x == scAlgoBinomial || x == scAlgoScatterAllGather || x == scAlgoNative;
  }
  return false;
}

scAlgo_t chooseDense(const Model& m, Coll coll, scAlgo_t requested, size_t bytes) {
  SC_ARG(requested >= 0 && requested < scNumAlgos, "unknown algorithm ", int(requested));
  if (requested != scAlgoAuto) {
    SC_ARG(denseOffers(coll, requested), "algorithm '", algoName(requested), "' is not available for ", collName(coll),
           " (", collName(coll), ": ", offerList(coll), ")");
    return requested;
  }
  // A configured default the collective does not offer (recdbl for a
  // reduce-scatter) falls through to the rules and the model.
  if (m.denseAlgo != scAlgoAuto && denseOffers(coll, m.denseAlgo)) return m.denseAlgo;
  if (const int r = ruleFor(m, int(coll), bytes); r > 0) return scAlgo_t(r);
  const bool bc = coll == Coll::Broadcast;
  const scAlgo_t candidates[] = {bc ? scAlgoBinomial : scAlgoRing,
                                 bc                        ? scAlgoScatterAllGather
                                 : coll == Coll::AllGather ? scAlgoRecDbl
                                                           : scAlgoRabenseifner,
                                 coll == Coll::AllReduce ? scAlgoRecDbl
                                 : bc                    ? scAlgoBinomial
                                                         : scAlgoRing};
  scAlgo_t best = candidates[0];
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
