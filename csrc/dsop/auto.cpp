// scDsopAuto: the alpha-beta-gamma model of the communicator (scConfig_t,
// SPARCOLL_ALPHA/BETA/GAMMA) applied to each DSOP schedule. With s_in / s_out
// the input / output element sizes, P ranks, and the collectives priced by the
// dense model (algo/select.cpp; native collectives, which it cannot price, are
// priced as ring):
//   allgather       AG(P(n+m) s_in)                                + C(nm, P)
//   allreduce       AR(nm s_out)                                   + C(nm, 1)
//   allreduce_ring  AR_ring(nm s_out)                              + C(nm, 1)
//   g_rabenseifner  AG(P(n+m) s_in)                    + AG_ring(nm s_out) + C(nm/P, P)
//   all_scatter     ceil((P-1)/8) a + ((n - n/P) + (P-1)m) s_in b + AG_ring(nm s_out) + C(nm/P, P)
// where C(E, K) = g s_out E (1 + (K-1)/4) is the kernel writing E results from
// K pairs: the first pair costs a streaming pass like one reduction, further
// pairs are in-cache multiply-adds (a quarter of a pass each, measured on the
// host kernel). Ties go to the first of all_scatter, g_rabenseifner,
// allreduce_ring, allreduce, allgather. One rank: allreduce (no copies at all).
#include <cmath>

#include "algo/dense.h"
#include "dsop/algos.h"

namespace sc::dsop {
namespace {

double collective(const scComm& comm, Coll coll, scAlgo_t forced, double bytes) {
  const size_t b = size_t(bytes);
  scAlgo_t a = forced == scAlgoAuto ? chooseAlgo(comm, coll, scAlgoAuto, b) : forced;
  if (a == scAlgoNative) a = scAlgoRing;
  return sc::predictSeconds(comm, coll, a, b);
}

}  // namespace

double predictSeconds(const scComm& comm, scDsopAlgo_t algo, size_t n, size_t m, scDataType_t in) {
  const double P = comm.size(), N = double(n), M = double(m);
  const double si = double(dtypeSize(in)), so = double(dtypeSize(outputType(in)));
  const double a = comm.cfg.alpha, b = comm.cfg.beta, g = comm.cfg.gamma;
  auto C = [&](double E, double K) { return g * so * E * (1 + (K - 1) / 4); };
  const double vecs = collective(comm, Coll::AllGather, scAlgoAuto, P * (N + M) * si);
  const double blocks = collective(comm, Coll::AllGather, scAlgoRing, N * M * so);
  switch (algo) {
    case scDsopAllGather: return vecs + C(N * M, P);
    case scDsopAllReduce: return collective(comm, Coll::AllReduce, scAlgoAuto, N * M * so) + C(N * M, 1);
    case scDsopAllReduceRing: return collective(comm, Coll::AllReduce, scAlgoRing, N * M * so) + C(N * M, 1);
    case scDsopGRabenseifner: return vecs + blocks + C(N * M / P, P);
    case scDsopAllScatter:
      return std::ceil((P - 1) / kScatterGroup) * a + ((N - std::floor(N / P)) + (P - 1) * M) * si * b + blocks +
             C(N * M / P, P);
    default: return INFINITY;
  }
}

scDsopAlgo_t choose(const scComm& comm, scDsopAlgo_t requested, size_t n, size_t m, scDataType_t in) {
  SC_ARG(requested >= 0 && requested < scNumDsopAlgos, "unknown DSOP algorithm ", int(requested));
  if (requested != scDsopAuto) return requested;
  if (comm.size() == 1) return scDsopAllReduce;
  const scDsopAlgo_t order[] = {scDsopAllScatter, scDsopGRabenseifner, scDsopAllReduceRing, scDsopAllReduce,
                                scDsopAllGather};
  scDsopAlgo_t best = order[0];
  double bestT = INFINITY;
  for (scDsopAlgo_t x : order) {
    const double t = predictSeconds(comm, x, n, m, in);
    if (t < bestT) { bestT = t; best = x; }
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
