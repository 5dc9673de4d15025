// One entry to every collective's model, with the sizes of the call the
// estimate stands for (sparcoll.h, scEstimateTime): the same functions the
// autos run, so an estimate's pick is what the call would run.
#include "model/estimate.h"

#include <cmath>
#include <cstdint>

#include "algo/dense.h"
#include "dsop/algos.h"
#include "sparse/call.h"
#include "sparse/model.h"

namespace sc::model {
namespace {

Estimate dense(const Model& m, Coll c, int algo, size_t count, size_t esz) {
  SC_ARG(algo >= 0 && algo < scNumAlgos, "unknown algorithm ", algo);
  // The full vector per rank, as the dense autos and the rules count it.
  const size_t P = c == Coll::AllReduce || c == Coll::Broadcast ? 1 : size_t(m.P);
  SC_ARG(count <= SIZE_MAX / P / esz, "count ", count, " overflows size_t bytes");
  const size_t bytes = count * P * esz;
  const scAlgo_t pick = chooseDense(m, c, scAlgoAuto, bytes);
  const scAlgo_t run = algo == scAlgoAuto ? pick : chooseDense(m, c, scAlgo_t(algo), bytes);
  return {predictDense(m, c, run, bytes), int(pick)};
}

Estimate sparse(const Model& m, int algo, size_t N, scDataType_t dt, double density) {
  SC_ARG(algo >= 0 && algo < scNumSparseAlgos, "unknown sparse algorithm ", algo);
  SC_ARG(density > 0 && density <= 1, "density must be in (0, 1] for sparse_allreduce, got ", density);
  SC_ARG(N <= SIZE_MAX / dtypeSize(dt), "count ", N, " overflows size_t bytes");
  if (m.P == 1 || N == 0) return {0, scSparseDense};  // nothing to communicate, as the call reports
  sp::ModelInput in;
  in.model = &m;
  in.N = N;
  in.k.assign(size_t(m.P), uint64_t(std::llround(density * double(N))));
  in.isz = N <= (uint64_t(1) << 32) ? 4 : 8;  // the smallest index type that addresses N
  in.vsz = dtypeSize(dt);
  in.rule = sp::SwitchRule{in.isz, in.vsz, sp::readOptions(nullptr).switchDensity};
  const scSparseAlgo_t pick = sp::chooseSparse(in);
  const scSparseAlgo_t run = algo == scSparseAuto ? pick : scSparseAlgo_t(algo);
  return {sp::predictSparse(in, run), int(pick)};
}

Estimate dsopSquare(const Model& m, int algo, size_t n, scDataType_t dt) {
  SC_ARG(algo >= 0 && algo < scNumDsopAlgos, "unknown DSOP algorithm ", algo);
  dsop::outputType(dt);  // a dtype DSOP does not take fails here
  SC_ARG(n >= 1, "DSOP needs count = n = m >= 1");
  const scDsopAlgo_t pick = dsop::choose(m, scDsopAuto, n, n, dt);
  const scDsopAlgo_t run = algo == scDsopAuto ? pick : scDsopAlgo_t(algo);
  return {dsop::predictSeconds(m, run, n, n, dt), int(pick)};
}

}  // namespace

Estimate estimate(const Model& m, int coll, int algo, size_t count, scDataType_t dt, double density) {
  checkDtype(dt);
  switch (coll) {
    case scCollAllReduce:
    case scCollReduceScatter:
    case scCollAllGather:
    case scCollBroadcast: return dense(m, Coll(coll), algo, count, dtypeSize(dt));
    case scCollSparseAllReduce: return sparse(m, algo, count, dt, density);
    case scCollDsop: return dsopSquare(m, algo, count, dt);
    default: SC_THROW(scInvalidArgument, "unknown collective ", coll);
  }
}

}  // namespace sc::model
