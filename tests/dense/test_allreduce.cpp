// scAllReduce correctness: P x count x algorithm x dtype x op x in-place, exact
// integer-valued data, results bit-identical on every rank.
#include <tuple>
#include <vector>

#include "dense_check.h"

namespace dtest {
namespace {

class AllReduceGrid : public testing::TestWithParam<std::tuple<int, scAlgo_t>> {};

// Every dtype x op x count in {0, 1, P-1, 1000} x {out-of-place, in-place}.
TEST_P(AllReduceGrid, AllTypesAndOps) {
  const int P = std::get<0>(GetParam());
  const scAlgo_t algo = std::get<1>(GetParam());
  DT_SKIP_UNLESS_RUNS(P);
  struct Ref {
    scDataType_t dt;
    scRedOp_t op;
    size_t count;
    Bytes want;
  };
  std::vector<Ref> refs;
  for (scDataType_t dt : kAllTypes)
    for (scRedOp_t op : kAllOps)
      for (size_t count : smallCounts(P)) refs.push_back({dt, op, count, makeExpected(dt, op, P, 0, count)});
  CrossRank xr(P);
  const scConfig_t cfg = config();
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        bool ok = true;
        for (size_t k = 0; ok && k < refs.size(); ++k)
          for (bool inPlace : {false, true}) {
            const Ref& ref = refs[k];
            ok = ok && checkAllReduce(comm, rank, P, {algo, ref.dt, ref.op, ref.count, inPlace}, ref.want, &xr);
          }
        xr.finish(rank);
      },
      &cfg);
  xr.verify();
}

// count = 2^20 + 3 (several ring pipeline slices, uneven blocks) for three
// (dtype, op, in-place) triples per algorithm; over the five algorithms every
// dtype and every op appears.
TEST_P(AllReduceGrid, BigCount) {
  const int P = std::get<0>(GetParam());
  const scAlgo_t algo = std::get<1>(GetParam());
  DT_SKIP_UNLESS_RUNS(P);
  struct Triple {
    scDataType_t dt;
    scRedOp_t op;
    bool inPlace;
  };
  static const Triple kTriples[10] = {{scFloat32, scSum, false}, {scBfloat16, scProd, true}, {scInt32, scMin, true},
                                      {scFloat16, scAvg, false}, {scUint8, scMax, false},    {scInt64, scSum, true},
                                      {scFloat64, scAvg, true},  {scUint64, scProd, false},  {scInt8, scAvg, false},
                                      {scUint32, scMax, true}};
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
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
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
      },
      &cfg);
  xr.verify();
}

// avg over many ranks on 8-bit integers: the division by P must not wrap P to
// the element type (int8(130) = -126, int8(256) = uint8(256) = 0, a SIGFPE).
// Rank 0 holds the extreme value, the others 0: no sum wraps, so the result is
// the truncated quotient (-128 / P = 0, 255 / 130 = 1, 255 / 256 = 0).
TEST(AllReduceAvg, ManyRanksEightBit) {
  if (sctest::mode() != sctest::Mode::Local) GTEST_SKIP() << "thread ranks only (P = 130 and 256)";
  for (int P : {130, 256}) {
    SCOPED_TRACE(testing::Message() << "P=" << P);
    const scConfig_t cfg = config(120);
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          for (scDataType_t dt : {scInt8, scUint8}) {
            const uint8_t extreme = dt == scInt8 ? 0x80 : 0xff;  // -128 / 255
            std::vector<uint8_t> buf(3, rank == 0 ? extreme : 0);
            ASSERT_EQ(scAllReduce(buf.data(), buf.data(), buf.size(), dt, scAvg, scAlgoRecDbl, comm, nullptr),
                      scSuccess)
                << scGetLastError(comm);
            const int want = dt == scInt8 ? -128 / P : 255 / P;
            for (uint8_t v : buf)
              ASSERT_EQ(dt == scInt8 ? int(int8_t(v)) : int(v), want) << typeStr(dt) << " rank " << rank;
          }
        },
        &cfg);
  }
}

INSTANTIATE_TEST_SUITE_P(Dense, AllReduceGrid,
                         testing::Combine(testing::ValuesIn(gridP()),
                                          testing::Values(scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoNative,
                                                          scAlgoAuto)),
                         PAlgoName());

}  // namespace
}  // namespace dtest
