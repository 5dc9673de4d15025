// scDsopAuto: the cost model (model/model.h: the tuning file's parameters,
// SPARCOLL_ALPHA/BETA/GAMMA) applied to each DSOP schedule. With s_in / s_out
// the input / output element sizes, P ranks, and the collectives priced by the
// dense model (model/dense.cpp, which prices native as ring):
//   allgather       AG(P(n+m) s_in)                                + C(nm, P)
//   allreduce       AR(nm s_out)                                   + C(nm, 1)
//   allreduce_ring  AR_ring(nm s_out)                              + C(nm, 1)
//   g_rabenseifner  AG(P(n+m) s_in)                    + AG_ring(nm s_out) + C(nm/P, P)
//   all_scatter     ceil((P-1)/8) a + ((n - n/P) + (P-1)m) s_in b + AG_ring(nm s_out) + C(nm/P, P)
// where C(E, K) = g s_out E (1 + (K-1)/4) is the kernel writing E results from
// K pairs: the first pair costs a streaming pass like one reduction, further
// pairs are in-cache multiply-adds (a quarter of a pass each, measured on the
// host kernel). AG and AR are what the dense autos would run. A tuning-file
// rule (bytes = n m s_out) beats the model. Ties go to the first of
// all_scatter, g_rabenseifner, allreduce_ring, allreduce, allgather. One rank:
// allreduce (no copies at all).
#include <algorithm>
#include <cmath>

#include "algo/dense.h"
#include "dsop/algos.h"

namespace sc::dsop {
namespace {

model::Coef collective(const model::Model& m, Coll coll, scAlgo_t forced, double bytes) {
  const size_t b = size_t(std::min(bytes, 1.8e19));  // huge n x m: converting past 2^64 is undefined
  const scAlgo_t a = forced == scAlgoAuto ? model::chooseDense(m, coll, scAlgoAuto, b) : forced;
  return model::denseCoef(coll, a, m.P, bytes);
}

model::Coef coef(const model::Model& m, scDsopAlgo_t algo, size_t n, size_t m_, scDataType_t in) {
  const double P = m.P, N = double(n), M = double(m_);
  const double si = double(dtypeSize(in)), so = double(dtypeSize(outputType(in)));
  auto C = [&](double E, double K) { return model::Coef{0, 0, so * E * (1 + (K - 1) / 4)}; };
  const model::Coef vecs = collective(m, Coll::AllGather, scAlgoAuto, P * (N + M) * si);
  const model::Coef blocks = collective(m, Coll::AllGather, scAlgoRing, N * M * so);
  switch (algo) {
    case scDsopAllGather: return vecs + C(N * M, P);
    case scDsopAllReduce: return collective(m, Coll::AllReduce, scAlgoAuto, N * M * so) + C(N * M, 1);
    case scDsopAllReduceRing: return collective(m, Coll::AllReduce, scAlgoRing, N * M * so) + C(N * M, 1);
    case scDsopGRabenseifner: return vecs + blocks + C(N * M / P, P);
    case scDsopAllScatter: {
      // Every rank scatters alike: P times its bytes on a shared medium.
      const double sent = ((N - std::floor(N / P)) + (P - 1) * M) * si;
      return model::Coef{std::ceil((P - 1) / kScatterGroup), sent, 0, P * sent} + blocks + C(N * M / P, P);
    }
    default: SC_THROW(scInternalError, "no DSOP model for algorithm ", int(algo));
  }
}

// The call's bytes as rules and bands count them: n x m outputs.
double outputBytes(size_t n, size_t mm, scDataType_t in) {
  return double(n) * double(mm) * double(dtypeSize(outputType(in)));
}

}  // namespace

double predictSeconds(const model::Model& m, scDsopAlgo_t algo, size_t n, size_t mm, scDataType_t in) {
  // Priced with the band of the call's bytes, as a rule would match it.
  const model::Coef c = coef(m, algo, n, mm, in);
  return m.priced(outputBytes(n, mm, in), [&](const model::Params& p) { return c.dot(p); });
}

scDsopAlgo_t choose(const model::Model& m, scDsopAlgo_t requested, size_t n, size_t mm, scDataType_t in) {
  SC_ARG(requested >= 0 && requested < scNumDsopAlgos, "unknown DSOP algorithm ", int(requested));
  if (requested != scDsopAuto) return requested;
  const double bytes = outputBytes(n, mm, in);
  if (const int r = model::ruleFor(m, scCollDsop, uint64_t(std::min(bytes, 1.8e19))); r > 0) return scDsopAlgo_t(r);
  if (m.P == 1) return scDsopAllReduce;
  const scDsopAlgo_t order[] = {scDsopAllScatter, scDsopGRabenseifner, scDsopAllReduceRing, scDsopAllReduce,
                                scDsopAllGather};
  scDsopAlgo_t best = order[0];
  double bestT = INFINITY;
  for (scDsopAlgo_t x : order) {
    const double t = predictSeconds(m, x, n, mm, in);
    if (t < bestT) {
      bestT = t;
      best = x;
    }
  }
  return best;
}

void run(Problem& pb, scDsopAlgo_t algo) {
  switch (algo) {
    case scDsopAllGather: return allGather(pb);
    case scDsopAllReduce: return allReduce(pb);
    case scDsopAllReduceRing: return allReduceRing(pb);
    case scDsopGRabenseifner: return gRabenseifner(pb);
    case scDsopAllScatter: return allScatter(pb);
    default: SC_THROW(scInternalError, "unresolved DSOP algorithm ", int(algo));
  }
}

}  // namespace sc::dsop
