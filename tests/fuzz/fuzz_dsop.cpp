// DSOP (dense and sparse inputs), scDsopAlgoFor, scDsopAlgoName and
// scDsopOutputType on local communicators of 1-3 ranks: any n, m, dtype and
// algorithm, NULL vectors or matrix, G overlapping a or b (one arena per
// rank, same layout on every rank), sparse indices unsorted / duplicate / out
// of range. DSOP checks its inputs locally (dsop.h), so every rank gets the
// same pairs: a bad input on one rank alone would be a mismatched call.
#include "fuzz_util.h"

namespace {

size_t outSize(scDataType_t dt) { return dt == scFloat64 ? 8 : 4; }

// Sparse (index, value) pairs of rank r for a vector of length len.
struct Pairs {
  std::vector<uint64_t> idx;
  std::vector<uint8_t> val;
};

Pairs drawPairs(FuzzedDataProvider& p, size_t nnz, size_t len, scDataType_t dt) {
  Pairs s;
  s.idx.resize(nnz ? nnz : 1);
  const bool sorted = p.ConsumeBool();
  uint64_t at = 0;
  for (size_t i = 0; i < nnz; ++i) {
    if (sorted) at += p.ConsumeIntegralInRange<uint64_t>(i ? 1 : 0, 3);
    else at = p.ConsumeIntegralInRange<uint64_t>(0, len + 1);
    s.idx[i] = at;
  }
  s.val = fz::filled(p, nnz * fz::elemSize(dt));
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  const int P = p.ConsumeIntegralInRange<int>(1, 3);
  scComm_t* comms = fz::localComms(P);
  const scDataType_t dt = fz::pickEnum<scDataType_t>(p, scNumTypes);
  const scDsopAlgo_t algo = fz::pickEnum<scDsopAlgo_t>(p, scNumDsopAlgos);
  const size_t n = fz::pickCount(p, 64), m = fz::pickCount(p, 64);
  const int what = p.ConsumeIntegralInRange<int>(0, 9);
  if (what == 0) {  // the local helpers
    scDataType_t out;
    scDsopAlgo_t a;
    const bool nul = p.ConsumeBool();
    fz::expectClean("scDsopOutputType", scDsopOutputType(dt, nul ? nullptr : &out));
    fz::expectClean("scDsopAlgoFor", scDsopAlgoFor(comms[0], n, m, dt, nul ? nullptr : &a), comms[0]);
    if (!scDsopAlgoName(algo)) fz::fail("scDsopAlgoName", scSuccess, "NULL");
    return 0;
  }
  const bool huge = n > 4096 || m > 4096;
  const size_t si = fz::elemSize(dt), so = outSize(dt);
  const size_t aB = huge ? 1 : n * si, bB = huge ? 1 : m * si, gB = huge ? 1 : n * m * so;
  // a, b and G start at multiples of 8 in the arena: the API takes typed arrays.
  const size_t offB = (aB + 7) / 8 * 8, offG = (offB + bB + 7) / 8 * 8;
  // Layout: a, b, G one after another, or G shifted back onto a / b.
  const int mode = p.ConsumeIntegralInRange<int>(0, 7);  // 0-4 disjoint, 5 G over a, 6 G over b, 7 NULLs
  // Kept a multiple of 8: the API takes typed arrays, so G stays aligned.
  const size_t shift = p.ConsumeIntegralInRange<size_t>(0, aB + bB) / 8 * 8;
  const bool nullA = mode == 7 && p.ConsumeBool(), nullB = mode == 7 && p.ConsumeBool(),
             nullG = mode == 7 && !nullA && !nullB;
  const bool stream = p.ConsumeIntegralInRange<int>(0, 15) == 0;
  const bool sparse = what >= 6;
  std::vector<std::vector<uint8_t>> arena;
  for (int r = 0; r < P; ++r) arena.push_back(fz::filled(p, offG + gB));
  const size_t aNnz = sparse ? p.ConsumeIntegralInRange<size_t>(0, huge ? 4 : n + 1) : 0;
  const size_t bNnz = sparse ? p.ConsumeIntegralInRange<size_t>(0, huge ? 4 : m + 1) : 0;
  const Pairs pa = drawPairs(p, aNnz, n, dt), pb = drawPairs(p, bNnz, m, dt);
  std::vector<scResult_t> rc(P);
  fz::onRanks(P, [&](int r) {
    uint8_t* base = arena[r].data();
    const void* a = nullA ? nullptr : base;
    const void* b = nullB ? nullptr : base + offB;
    void* G = nullG ? nullptr : base + offG;
    if (mode == 5) G = base + std::min(shift, aB - 1) / 8 * 8;
    if (mode == 6) G = base + offB + std::min(shift, bB - 1) / 8 * 8;
    // Overlapping G must still fit in the arena: it was sized for a, b, G apart.
    if ((mode == 5 || mode == 6) && static_cast<uint8_t*>(G) + gB > base + arena[r].size()) G = base;
    void* s = stream ? fz::bogusStream() : nullptr;
    if (!sparse) {
      rc[r] = scDsop(a, n, b, m, G, dt, algo, comms[r], s);
      return;
    }
    // Sparse: G may overlap the values; the index arrays are separate.
    const uint64_t* ai = nullA ? nullptr : pa.idx.data();
    const uint64_t* bi = nullB ? nullptr : pb.idx.data();
    const void* av = nullA ? nullptr : pa.val.data();
    const void* bv = nullB ? nullptr : pb.val.data();
    if (mode == 5 || mode == 6) {
      av = mode == 5 ? G : av;
      bv = mode == 6 ? G : bv;
    }
    rc[r] = scDsopSparse(ai, av, aNnz, n, bi, bv, bNnz, m, G, dt, algo, comms[r], s);
  });
  fz::expectAgree("DSOP", rc, comms);
  return 0;
}
