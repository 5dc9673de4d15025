// scAlgoAuto: the alpha-beta-gamma model (Hockney, with gamma for the local
// reduction; Thakur, Rabenseifner & Gropp 2005). For n bytes on P ranks,
// P' = 2^floor(log2 P), f = 1 when P is not a power of two:
//   ring          2(P-1) a + 2(P-1)/P n b + (P-1)/P n g
//   rabenseifner  2(log2 P' + f) a + (2(P'-1)/P' + 2f) n b + ((P'-1)/P' + f) n g
//   recdbl        (log2 P' + 2f) a + (log2 P' + 2f) n b + (log2 P' + f) n g
// reduce-scatter / allgather take the reduce-scatter / allgather halves.
#include <cmath>

#include "algo/dense.h"

namespace sc {

double predictSeconds(const scComm& comm, Coll coll, scAlgo_t algo, size_t bytes) {
  const double a = comm.cfg.alpha, b = comm.cfg.beta, g = comm.cfg.gamma, n = double(bytes);
  const int P = comm.size(), p2 = pow2Floor(P);
  const double f = P != p2 ? 1.0 : 0.0, lg = std::log2(double(p2));
  const double rs = coll != Coll::AllGather ? 1.0 : 0.0, ag = coll != Coll::ReduceScatter ? 1.0 : 0.0;
  if (P == 1) return 0.0;
  switch (algo) {
    case scAlgoRing:
      return (rs + ag) * (P - 1) * a + (rs + ag) * (P - 1.0) / P * n * b + rs * (P - 1.0) / P * n * g;
    case scAlgoRabenseifner:
    case scAlgoRecDbl:
      if (coll == Coll::AllReduce && algo == scAlgoRecDbl)
        return (lg + 2 * f) * a + (lg + 2 * f) * n * b + (lg + f) * n * g;
      return (rs + ag) * (lg + f) * a + ((rs + ag) * (p2 - 1.0) / p2 + 2 * f) * n * b +
             rs * ((p2 - 1.0) / p2 + f) * n * g;
    default:
      return INFINITY;
  }
}

scAlgo_t chooseAlgo(const scComm& comm, Coll coll, scAlgo_t requested, size_t bytes) {
  SC_ARG(requested >= 0 && requested < scNumAlgos, "unknown algorithm ", int(requested));
  scAlgo_t algo = requested == scAlgoAuto ? comm.cfg.algo : requested;
  const char* what = coll == Coll::AllReduce ? "allreduce" : coll == Coll::ReduceScatter ? "reduce-scatter" : "allgather";
  // Each collective has its own set; an unsupported explicit choice is an error,
  // an unsupported configured default falls back to the model.
  auto supported = [&](scAlgo_t x) {
    switch (coll) {
      case Coll::AllReduce: return x != scAlgoAuto;
      case Coll::ReduceScatter: return x == scAlgoRing || x == scAlgoRabenseifner || x == scAlgoNative;
      case Coll::AllGather: return x == scAlgoRing || x == scAlgoRecDbl || x == scAlgoNative;
    }
    return false;
  };
  if (requested != scAlgoAuto)
    SC_ARG(supported(algo), "algorithm '", algoName(algo), "' is not available for ", what,
           " (reduce-scatter: ring, rabenseifner, native; allgather: ring, recdbl, native)");
  if (algo != scAlgoAuto && supported(algo)) return algo;
  const scAlgo_t candidates[] = {scAlgoRing, coll == Coll::AllGather ? scAlgoRecDbl : scAlgoRabenseifner,
                                 coll == Coll::AllReduce ? scAlgoRecDbl : scAlgoRing};
  scAlgo_t best = scAlgoRing;
  double bestT = INFINITY;
  for (scAlgo_t x : candidates) {
    const double t = predictSeconds(comm, coll, x, bytes);
    if (t < bestT) { bestT = t; best = x; }
  }
  return best;
}

}  // namespace sc
