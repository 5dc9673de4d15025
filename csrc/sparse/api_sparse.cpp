// C API of the sparse allreduce: checks and the header round (call.cpp), the
// algorithm (auto: model.cpp), the schedule, then the result — densified into
// the caller's vector, or copied into a scSparseResult_t — and avg's division.
#include <cstring>

#include "core/api_guard.h"
#include "sparse/call.h"
#include "sparse/model.h"
#include "sparse/schedules.h"

namespace sc::sp {

static_assert(int(Scratch::Count) - int(Scratch::SparseOps) == kOpsSlots, "a scratch slot per ops temporary");

std::unique_ptr<SparseOps> makeOps(scComm& comm, scIndexType_t it, scDataType_t vt, void* stream, const Deadline& dl) {
  OpsEnv env;
  env.stream = stream;
  env.device = comm.device() ? comm.cfg.device : -1;
  env.dl = dl;
  env.scratch = [&comm, stream](int slot, size_t bytes) {
    return comm.scratch(Scratch::SparseOps + slot, bytes, stream);
  };
  return comm.device() ? makeCudaOps(it, vt, env) : makeCpuOps(it, vt, env);
}

namespace {

Stream runAlgo(SpCtx& s, scSparseAlgo_t algo, const Stream& in, int group) {
  switch (algo) {
    case scSsarRecDbl: return ssarRecDbl(s, in);
    case scSsarSplitAllGather: return ssarSplitAllGather(s, in);
    case scDsarSplitAllGather: return dsarSplitAllGather(s, in);
    case scDsarEarlySwitch: return dsarEarlySwitch(s, in, group);
    case scSparseDense: return denseFallback(s, in);
    default: SC_THROW(scInternalError, "unresolved sparse algorithm ", int(algo));
  }
}

void toDenseOutput(SpCtx& s, const Stream& r, void* out) {
  if (!r.dense) s.ops.densify(r.idx, r.val, r.n, 0, s.N, out);
  else if (r.val != out) s.c.copy(out, r.val, s.N);
}

// The sparse result: a dense sum goes back to sparse when its non-zeros are
// few enough (the upper-bound switch can go dense early), else stays dense.
void toSparseResult(SpCtx& s, Stream r, scSparseResult& R) {
  if (r.dense) {
    const int h = s.pick({r.home});
    const SpCtx::Arrays a = s.buffer(h, s.N, s.N);
    s.ops.sparsify(r.val, s.N, 0, a.idx, a.val, s.meta());
    uint64_t n = 0;
    s.read(&n, s.meta(), 8);
    if (s.rule.sparseOk(n, s.N)) {
      r.dense = false;
      r.n = n;
      r.idx = a.idx;
      r.val = a.val;
    }
  }
  R.dense = r.dense;
  R.nnz = r.dense ? s.N : r.n;
  if (!r.dense) s.c.comm.backend->copy(R.reserveIdx(r.n * s.isz), r.idx, r.n * s.isz, s.c.stream);
  s.c.copy(R.reserveVal(R.nnz * s.vsz), r.val, R.nnz);
}

void sparseAllReduce(scComm* comm, CallArgs a, const scSparseOptions_t* opts) {
  checkComm(comm);
  std::exception_ptr localError;
  try {
    a.opt = readOptions(opts);
    localChecks(*comm, a);
  } catch (...) {
    localError = std::current_exception();
  }
  // Unusable arguments still let this rank take part in the header round.
  const bool typesOk = (a.it == scIndexU32 || a.it == scIndexU64) && a.vt >= 0 && a.vt < scNumTypes;
  const scIndexType_t it = typesOk ? a.it : scIndexU32;
  const scDataType_t vt = typesOk ? a.vt : scFloat32;
  void* stream = comm->device() ? a.stream : nullptr;
  // The header round compares the ranks' arguments itself (and names them).
  setCall(*comm, {"scSparseAllReduce", CallSig::kNoCount});
  Ctx c(*comm, vt, scSum, stream);
  std::unique_ptr<SparseOps> ops = makeOps(*comm, it, vt, stream, c.dl);
  const SwitchRule rule{indexSize(it), dtypeSize(vt), localError ? 0.0 : a.opt.switchDensity};
  auto out = [&]() -> void* {
    if (!a.wantSparse) return a.denseOut;
    return comm->scratch(Scratch::SparseOut, std::max<size_t>(a.dim * dtypeSize(vt), 1), stream);
  };
  SpCtx s(c, *ops, rule, a.dim, out);
  const Prepared p = headerRound(s, a, localError);

  const int P = s.size;
  scSparseAlgo_t algo = a.algo;
  int group = a.opt.earlyGroupSize;
  Stream r = p.in;
  if (P > 1 && a.dim > 0) {
    ModelInput mi;
    mi.model = &comm->model;
    mi.N = a.dim;
    for (const Header& h : p.hdr) mi.k.push_back(h.nnz);
    mi.isz = s.isz;
    mi.vsz = s.vsz;
    mi.rule = rule;
    mi.denseOutput = !a.wantSparse;
    if (algo == scSparseAuto) algo = chooseSparse(mi);
    if (algo == scDsarEarlySwitch && group == 0) group = bestGroupSize(mi);
    r = runAlgo(s, algo, p.in, group);
  } else if (algo == scSparseAuto) {
    algo = scSparseDense;  // one rank: nothing to communicate; report the trivial choice
  }
  const bool avg = a.op == scAvg && P > 1;
  if (!a.wantSparse) {
    if (a.dim) toDenseOutput(s, r, a.denseOut);
    if (avg) comm->backend->divide(a.denseOut, a.dim, vt, P, stream);
    return;
  }
  scSparseResult& R = *a.result;
  R.valid = false;
  toSparseResult(s, r, R);
  if (avg) comm->backend->divide(R.val, R.nnz, vt, P, stream);
  R.dim = a.dim;
  R.itype = it;
  R.vtype = vt;
  R.algo = algo;
  R.valid = true;
}

CallArgs args(const void* indices, const void* values, size_t nnz, size_t dim, scIndexType_t itype, scDataType_t vtype,
              scRedOp_t op, scSparseAlgo_t algo, void* stream) {
  CallArgs a;
  a.idx = indices;
  a.val = values;
  a.nnz = nnz;
  a.dim = dim;
  a.it = itype;
  a.vt = vtype;
  a.op = op;
  a.algo = algo;
  a.stream = stream;
  return a;
}

}  // namespace
}  // namespace sc::sp

using namespace sc;
using namespace sc::sp;

extern "C" scResult_t scSparseAllReduceEx(const void* indices, const void* values, size_t nnz, size_t dim,
                                          scIndexType_t itype, scDataType_t vtype, scRedOp_t op, scSparseAlgo_t algo,
                                          const scSparseOptions_t* opts, void* denseOut, scComm_t comm, void* stream) {
  return scCall(comm, [&] {
    CallArgs a = args(indices, values, nnz, dim, itype, vtype, op, algo, stream);
    a.denseOut = denseOut;
    sparseAllReduce(comm, a, opts);
  });
}

extern "C" scResult_t scSparseAllReduce(const void* indices, const void* values, size_t nnz, size_t dim,
                                        scIndexType_t itype, scDataType_t vtype, scRedOp_t op, scSparseAlgo_t algo,
                                        void* denseOut, scComm_t comm, void* stream) {
  return scSparseAllReduceEx(indices, values, nnz, dim, itype, vtype, op, algo, nullptr, denseOut, comm, stream);
}

extern "C" scResult_t scSparseAllReduceToSparse(const void* indices, const void* values, size_t nnz, size_t dim,
                                                scIndexType_t itype, scDataType_t vtype, scRedOp_t op,
                                                scSparseAlgo_t algo, const scSparseOptions_t* opts,
                                                scSparseResult_t result, scComm_t comm, void* stream) {
  return scCall(comm, [&] {
    CallArgs a = args(indices, values, nnz, dim, itype, vtype, op, algo, stream);
    a.result = result;
    a.wantSparse = true;
    sparseAllReduce(comm, a, opts);
  });
}

extern "C" scResult_t scSparseAlgoFor(scComm_t comm, const size_t* nnzPerRank, size_t dim, scIndexType_t itype,
                                      scDataType_t vtype, const scSparseOptions_t* opts, int denseOutput,
                                      scSparseAlgo_t* algo) {
  return scGuard(comm, [&] {
    checkComm(comm);
    SC_ARG(nnzPerRank != nullptr && algo != nullptr, "NULL argument");
    SC_ARG(itype == scIndexU32 || itype == scIndexU64, "unknown index type ", int(itype));
    checkDtype(vtype);
    const scSparseOptions_t o = readOptions(opts);
    ModelInput mi;
    mi.model = &comm->model;
    mi.N = dim;
    mi.k.assign(nnzPerRank, nnzPerRank + comm->size());
    mi.isz = indexSize(itype);
    mi.vsz = dtypeSize(vtype);
    mi.rule = SwitchRule{mi.isz, mi.vsz, o.switchDensity};
    mi.denseOutput = denseOutput != 0;
    *algo = comm->size() > 1 && dim > 0 ? chooseSparse(mi) : scSparseDense;
  });
}

extern "C" const char* scSparseAlgoName(scSparseAlgo_t algo) {
  static const char* names[] = {
      "auto", "ssar_recdbl", "ssar_split_allgather", "dsar_split_allgather", "dsar_early_switch", "dense"};
  return algo >= 0 && algo < scNumSparseAlgos ? names[algo] : "?";
}
