// scReduceScatter correctness (ring, rabenseifner = recursive halving, native,
// auto): P x recvcount x dtype x op x in-place (NCCL's convention: recvbuf ==
// sendbuf + rank * recvcount), exact integer-valued data.
#include <tuple>

#include "dense_check.h"

namespace dtest {
namespace {

class ReduceScatterGrid : public testing::TestWithParam<std::tuple<int, scAlgo_t>> {};

// Every dtype x op x recvcount in {0, 1, P-1, 1000} x {out-of-place, in-place}.
TEST_P(ReduceScatterGrid, AllTypesAndOps) {
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
      for (size_t rc : smallCounts(P)) refs.push_back({dt, op, rc, makeExpected(dt, op, P, 0, size_t(P) * rc)});
  const scConfig_t cfg = config();
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        bool ok = true;
        for (size_t k = 0; ok && k < refs.size(); ++k)
          for (bool inPlace : {false, true}) {
            const Ref& ref = refs[k];
            ok = ok && checkReduceScatter(comm, rank, P, {algo, ref.dt, ref.op, ref.count, inPlace}, ref.want);
          }
      },
      &cfg);
}

// A whole vector of about 2^20 + 3 elements (recvcount = ceil((2^20+3) / P)):
// three (dtype, op, in-place) triples per algorithm.
TEST_P(ReduceScatterGrid, BigCount) {
  const int P = std::get<0>(GetParam());
  const scAlgo_t algo = std::get<1>(GetParam());
  DT_SKIP_UNLESS_RUNS(P);
  struct Triple {
    scDataType_t dt;
    scRedOp_t op;
    bool inPlace;
  };
  static const Triple kTriples[8] = {{scFloat32, scSum, false}, {scInt8, scProd, true},     {scFloat16, scMax, true},
                                     {scUint64, scAvg, false},  {scBfloat16, scSum, false}, {scInt32, scMin, true},
                                     {scFloat64, scAvg, true},  {scUint8, scProd, false}};
  const size_t rc = (kBigCount + size_t(P) - 1) / size_t(P);
  // Local threads share one reference of the whole vector; an MPI rank
  // computes only its own block's.
  const bool shared = sctest::mode() == sctest::Mode::Local;
  std::vector<Triple> picks;
  std::vector<Bytes> refs;
  for (int j = 0; j < 3; ++j) {
    picks.push_back(kTriples[(2 * int(algo) + j) % 8]);
    if (shared) refs.push_back(makeExpected(picks.back().dt, picks.back().op, P, 0, size_t(P) * rc));
  }
  const scConfig_t cfg = config();
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        bool ok = true;
        for (size_t j = 0; ok && j < picks.size(); ++j) {
          const Call c{algo, picks[j].dt, picks[j].op, rc, picks[j].inPlace};
          if (shared) ok = checkReduceScatter(comm, rank, P, c, refs[j]);
          else
            ok = checkReduceScatter(comm, rank, P, c, makeExpected(c.dt, c.op, P, size_t(rank) * rc, rc),
                                    size_t(rank) * rc);
        }
      },
      &cfg);
}

INSTANTIATE_TEST_SUITE_P(Dense, ReduceScatterGrid,
                         testing::Combine(testing::ValuesIn(gridP()),
                                          testing::Values(scAlgoRing, scAlgoRabenseifner, scAlgoNative, scAlgoAuto)),
                         PAlgoName());

}  // namespace
}  // namespace dtest
