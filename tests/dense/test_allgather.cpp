// scAllGather correctness (ring, recdbl = recursive doubling, native, auto):
// P x sendcount x dtype x in-place (sendbuf == recvbuf + rank * sendcount).
// The payload is arbitrary bits (NaN patterns included): nothing is computed,
// every byte must arrive, and every rank must hold the same vector.
#include <tuple>

#include "dense_check.h"

namespace dtest {
namespace {

class AllGatherGrid : public testing::TestWithParam<std::tuple<int, scAlgo_t>> {};

TEST_P(AllGatherGrid, AllTypes) {
  const int P = std::get<0>(GetParam());
  const scAlgo_t algo = std::get<1>(GetParam());
  DT_SKIP_UNLESS_RUNS(P);
  CrossRank xr(P);
  const scConfig_t cfg = config();
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        bool ok = true;
        for (scDataType_t dt : kAllTypes)
          for (size_t sc : smallCounts(P))
            for (bool inPlace : {false, true})
              ok = ok && checkAllGather(comm, rank, P, {algo, dt, scSum, sc, inPlace}, uint64_t(dt) * 7919 + sc, &xr);
        xr.finish(rank);
      },
      &cfg);
  xr.verify();
}

// About 2^20 + 3 elements gathered (sendcount = ceil((2^20+3) / P)), three
// dtypes per algorithm.
TEST_P(AllGatherGrid, BigCount) {
  const int P = std::get<0>(GetParam());
  const scAlgo_t algo = std::get<1>(GetParam());
  DT_SKIP_UNLESS_RUNS(P);
  const size_t sc = (kBigCount + size_t(P) - 1) / size_t(P);
  CrossRank xr(P);
  const scConfig_t cfg = config();
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        bool ok = true;
        for (int j = 0; ok && j < 3; ++j) {
          const scDataType_t dt = kAllTypes[(3 * int(algo) + j) % 10];
          ok = checkAllGather(comm, rank, P, {algo, dt, scSum, sc, j == 1}, 77 + uint64_t(j), &xr);
        }
        xr.finish(rank);
      },
      &cfg);
  xr.verify();
}

INSTANTIATE_TEST_SUITE_P(Dense, AllGatherGrid,
                         testing::Combine(testing::ValuesIn(gridP()),
                                          testing::Values(scAlgoRing, scAlgoRecDbl, scAlgoNative, scAlgoAuto)),
                         PAlgoName());

}  // namespace
}  // namespace dtest
