// scAllReduce correctness: P x count x algorithm x dtype x op x in-place, exact
// integer-valued data, results bit-identical on every rank.
#include <tuple>

#include "dense_check.h"

namespace dtest {
namespace {

class AllReduceGrid : public testing::TestWithParam<std::tuple<int, scAlgo_t>> {};

// Every dtype x op x count in {0, 1, P-1, 1000} x {out-of-place, in-place}.
TEST_P(AllReduceGrid, AllTypesAndOps) {
  const int P = std::get<0>(GetParam());
  const scAlgo_t algo = std::get<1>(GetParam());
  DT_SKIP_UNLESS_RUNS(P);
  struct Ref { scDataType_t dt; scRedOp_t op; size_t count; Bytes want; };
  std::vector<Ref> refs;
  for (scDataType_t dt : kAllTypes)
    for (scRedOp_t op : kAllOps)
      for (size_t count : smallCounts(P)) refs.push_back({dt, op, count, makeExpected(dt, op, P, 0, count)});
  CrossRank xr(P);
  const scConfig_t cfg = config();
  sctest::run(P, [&](scComm_t comm, int rank) {
    bool ok = true;
    for (size_t k = 0; ok && k < refs.size(); ++k)
      for (bool inPlace : {false, true}) {
        const Ref& ref = refs[k];
        ok = ok && checkAllReduce(comm, rank, P, {algo, ref.dt, ref.op, ref.count, inPlace}, ref.want, &xr);
      }
    xr.finish(rank);
  }, &cfg);
  xr.verify();
}

// count = 2^20 + 3 (several ring pipeline slices, uneven blocks) for three
// (dtype, op, in-place) triples per algorithm; over the five algorithms every
// dtype and every op appears.
TEST_P(AllReduceGrid, BigCount) {
  const int P = std::get<0>(GetParam());
  const scAlgo_t algo = std::get<1>(GetParam());
  DT_SKIP_UNLESS_RUNS(P);
  struct Triple { scDataType_t dt; scRedOp_t op; bool inPlace; };
  static const Triple kTriples[10] = {
      {scFloat32, scSum, false}, {scBfloat16, scProd, true}, {scInt32, scMin, true},  {scFloat16, scAvg, false},
      {scUint8, scMax, false},   {scInt64, scSum, true},     {scFloat64, scAvg, true}, {scUint64, scProd, false},
      {scInt8, scAvg, false},    {scUint32, scMax, true}};
  // Local threads share one reference; MPI ranks each compute and verify a
  // 1/P share of it, the cross-rank identity check covers the rest.
  const bool shared = sctest::mode() == sctest::Mode::Local;
  std::vector<Triple> picks;
  std::vector<Bytes> refs;
  for (int j = 0; j < 3; ++j) {
    picks.push_back(kTriples[(2 * int(algo) + j) % 10]);
    if (shared) refs.push_back(makeExpected(picks.back().dt, picks.back().op, P, 0, kBigCount));
  }
  CrossRank xr(P);
  const scConfig_t cfg = config();
  sctest::run(P, [&](scComm_t comm, int rank) {
    bool ok = true;
    for (size_t j = 0; ok && j < picks.size(); ++j) {
      const Call c{algo, picks[j].dt, picks[j].op, kBigCount, picks[j].inPlace};
      if (shared) {
        ok = checkAllReduce(comm, rank, P, c, refs[j], &xr);
      } else {
        const Share s = share(kBigCount, P, rank);
        ok = checkAllReduce(comm, rank, P, c, makeExpected(c.dt, c.op, P, s.first, s.len), &xr, s.first);
      }
    }
    xr.finish(rank);
  }, &cfg);
  xr.verify();
}

INSTANTIATE_TEST_SUITE_P(Dense, AllReduceGrid,
                         testing::Combine(testing::ValuesIn(gridP()),
                                          testing::Values(scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl,
                                                          scAlgoNative, scAlgoAuto)),
                         PAlgoName());

}  // namespace
}  // namespace dtest
