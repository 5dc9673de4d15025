// Sparse allreduce (dense and sparse results), its options, result handles
// and accessors, scSparseAlgoFor, on local communicators of 1-3 ranks. Each
// rank draws its own indices (unsorted, duplicate, out of range allowed: the
// header round must report one rank's bad input on every rank); the other
// arguments are the same on every rank.
#include <limits>

#include "fuzz_util.h"

namespace {

struct Args {
  size_t dim, nnzCap;
  scIndexType_t it;
  scDataType_t vt;
  scRedOp_t op;
  scSparseAlgo_t algo;
  bool useOpts, toSparse, nullIdx, nullVal, nullOut, nullResult, stream;
  scSparseOptions_t opts;
};

scSparseOptions_t pickOptions(FuzzedDataProvider& p) {
  scSparseOptions_t o = SC_SPARSE_OPTIONS_INITIALIZER;
  if (p.ConsumeIntegralInRange<int>(0, 7) == 0) o.size = p.ConsumeIntegralInRange<size_t>(0, 64);
  o.flags = p.ConsumeBool() ? p.ConsumeIntegral<unsigned>() : p.ConsumeIntegralInRange<unsigned>(0, 1);
  const double dens[] = {0.0,
                         SC_SPARSE_SWITCH_COMPUTE_AWARE,
                         1.0,
                         1.5,
                         -0.5,
                         std::numeric_limits<double>::quiet_NaN(),
                         std::numeric_limits<double>::infinity(),
                         1e-300};
  o.switchDensity = dens[p.ConsumeIntegralInRange<int>(0, 7)];
  o.earlyGroupSize = p.ConsumeBool() ? 0 : p.ConsumeIntegralInRange<int>(-2, 8);
  return o;
}

// Rank r's (indices, values): nnz entries, index width by itype.
struct Input {
  std::vector<uint8_t> idx, val;
  size_t nnz;
};

Input drawInput(FuzzedDataProvider& p, const Args& a) {
  Input in;
  const bool hugeNnz = p.ConsumeIntegralInRange<int>(0, 31) == 0;
  in.nnz = hugeNnz ? fz::hugeCount(p) : p.ConsumeIntegralInRange<size_t>(0, a.nnzCap);
  const size_t n = hugeNnz ? 1 : in.nnz;  // an impossible nnz gets a token buffer: it must be refused
  const size_t isz = a.it == scIndexU64 ? 8 : 4;
  in.idx.assign(n * isz + 1, 0);
  const bool sorted = p.ConsumeBool();
  uint64_t prev = 0;
  const size_t span = a.dim < (size_t(1) << 40) ? a.dim : (size_t(1) << 40);
  for (size_t i = 0; i < n; ++i) {
    uint64_t v;
    if (sorted) {  // usually valid: strictly increasing below dim
      prev += p.ConsumeIntegralInRange<uint64_t>(i ? 1 : 0, span / (n + 1) + 1);
      v = prev;
    } else {
      v = p.ConsumeIntegralInRange<uint64_t>(0, span + 1);
    }
    if (isz == 4) {
      const uint32_t w = uint32_t(v);
      std::memcpy(&in.idx[i * 4], &w, 4);
    } else {
      std::memcpy(&in.idx[i * 8], &v, 8);
    }
  }
  in.val = fz::filled(p, n * fz::elemSize(a.vt));
  return in;
}

scResult_t callRank(const Args& a, const Input& in, scComm_t comm, std::vector<uint8_t>& out, scSparseResult_t res) {
  const void* idx = a.nullIdx ? nullptr : in.idx.data();
  const void* val = a.nullVal ? nullptr : in.val.data();
  const scSparseOptions_t* o = a.useOpts ? &a.opts : nullptr;
  void* stream = a.stream ? fz::bogusStream() : nullptr;
  if (a.toSparse)
    return scSparseAllReduceToSparse(idx, val, in.nnz, a.dim, a.it, a.vt, a.op, a.algo, o, a.nullResult ? nullptr : res,
                                     comm, stream);
  void* dense = a.nullOut ? nullptr : out.data();
  if (!a.useOpts) return scSparseAllReduce(idx, val, in.nnz, a.dim, a.it, a.vt, a.op, a.algo, dense, comm, stream);
  return scSparseAllReduceEx(idx, val, in.nnz, a.dim, a.it, a.vt, a.op, a.algo, o, dense, comm, stream);
}

// Every accessor, with NULL outputs too; values are read back in full so
// ASan checks that the result's buffers are as long as it says.
void readResult(FuzzedDataProvider& p, scSparseResult_t r, const Args& a) {
  int dense = 0;
  size_t nnz = 0, dim = 0;
  const void *idx = nullptr, *val = nullptr;
  scSparseAlgo_t algo;
  const bool nul = p.ConsumeIntegralInRange<int>(0, 7) == 0;
  fz::expectClean("scSparseResultIsDense", scSparseResultIsDense(r, nul ? nullptr : &dense));
  fz::expectClean("scSparseResultNnz", scSparseResultNnz(r, nul ? nullptr : &nnz));
  fz::expectClean("scSparseResultDim", scSparseResultDim(r, nul ? nullptr : &dim));
  fz::expectClean("scSparseResultIndices", scSparseResultIndices(r, nul ? nullptr : &idx));
  fz::expectClean("scSparseResultValues", scSparseResultValues(r, nul ? nullptr : &val));
  fz::expectClean("scSparseResultAlgo", scSparseResultAlgo(r, nul ? nullptr : &algo));
  if (nul || !val || !fz::validType(a.vt)) return;
  volatile uint8_t sink = 0;
  const size_t isz = a.it == scIndexU64 ? 8 : 4;
  for (size_t i = 0; i < nnz * fz::elemSize(a.vt); ++i) sink ^= static_cast<const uint8_t*>(val)[i];
  if (idx && !dense)
    for (size_t i = 0; i < nnz * isz; ++i) sink ^= static_cast<const uint8_t*>(idx)[i];
}

void algoFor(FuzzedDataProvider& p, scComm_t comm, int P) {
  std::vector<size_t> k(P);
  for (auto& x : k) x = p.ConsumeBool() ? p.ConsumeIntegral<size_t>() : p.ConsumeIntegralInRange<size_t>(0, 4096);
  const size_t dim = p.ConsumeBool() ? p.ConsumeIntegral<size_t>() : p.ConsumeIntegralInRange<size_t>(0, 1 << 20);
  scSparseOptions_t o = pickOptions(p);
  scSparseAlgo_t algo;
  const bool nul = p.ConsumeIntegralInRange<int>(0, 7) == 0;
  fz::expectClean("scSparseAlgoFor",
                  scSparseAlgoFor(comm, nul ? nullptr : k.data(), dim, fz::pickEnum<scIndexType_t>(p, 2),
                                  fz::pickEnum<scDataType_t>(p, scNumTypes), p.ConsumeBool() ? &o : nullptr,
                                  p.ConsumeIntegralInRange<int>(-1, 2), nul ? nullptr : &algo),
                  comm);
  if (!scSparseAlgoName(fz::pickEnum<scSparseAlgo_t>(p, scNumSparseAlgos)))
    fz::fail("scSparseAlgoName", scSuccess, "NULL");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  const int P = p.ConsumeIntegralInRange<int>(1, 3);
  scComm_t* comms = fz::localComms(P);
  if (p.ConsumeIntegralInRange<int>(0, 7) == 0) {
    algoFor(p, comms[0], P);
    return 0;
  }
  Args a;
  a.toSparse = p.ConsumeBool();
  // A sparse result lives in scratch of dim values: dim stays small enough to
  // allocate, except the impossible counts every call must refuse.
  a.dim = fz::pickCount(p, a.toSparse ? (1 << 16) : 4096);
  a.nnzCap = std::min<size_t>(a.dim + 2, 512);
  a.it = fz::pickEnum<scIndexType_t>(p, scNumIndexTypes);
  a.vt = fz::pickEnum<scDataType_t>(p, scNumTypes);
  a.op = fz::pickEnum<scRedOp_t>(p, scNumOps);
  a.algo = fz::pickEnum<scSparseAlgo_t>(p, scNumSparseAlgos);
  a.useOpts = p.ConsumeBool();
  a.opts = pickOptions(p);
  a.nullIdx = p.ConsumeIntegralInRange<int>(0, 15) == 0;
  a.nullVal = p.ConsumeIntegralInRange<int>(0, 15) == 0;
  a.nullOut = p.ConsumeIntegralInRange<int>(0, 15) == 0;
  a.nullResult = p.ConsumeIntegralInRange<int>(0, 15) == 0;
  a.stream = p.ConsumeIntegralInRange<int>(0, 15) == 0;
  std::vector<Input> in;
  for (int r = 0; r < P; ++r) in.push_back(drawInput(p, a));
  const bool hugeDim = a.dim > (size_t(1) << 40);
  std::vector<std::vector<uint8_t>> outs(P, std::vector<uint8_t>(
                                                hugeDim || a.toSparse ? 1 : a.dim * fz::elemSize(a.vt) + 1));
  std::vector<scSparseResult_t> res(P, nullptr);
  for (int r = 0; r < P; ++r) fz::expectClean("scSparseResultCreate", scSparseResultCreate(comms[r], &res[r]));
  std::vector<scResult_t> rc(P);
  fz::onRanks(P, [&](int r) { rc[r] = callRank(a, in[r], comms[r], outs[r], res[r]); });
  fz::expectAgree("sparse allreduce", rc, comms);
  if (a.toSparse && !a.nullResult) readResult(p, res[0], a);
  for (auto r : res) fz::expectClean("scSparseResultDestroy", scSparseResultDestroy(r));
  if (p.ConsumeBool()) {  // the NULL handle paths
    scSparseResult_t r = nullptr;
    fz::expectClean("scSparseResultCreate(NULL)", scSparseResultCreate(nullptr, p.ConsumeBool() ? &r : nullptr));
    if (r) scSparseResultDestroy(r);
    fz::expectClean("scSparseResultDestroy(NULL)", scSparseResultDestroy(nullptr));
    readResult(p, nullptr, a);
  }
  return 0;
}
