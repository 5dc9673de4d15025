// Per-rank traffic (scCommGetStats) against the thesis's Table 3.1 at the two
// extremes, for power-of-two P, in elements of (index + value) bytes:
//
//                          K = k (identical sets)   K = P k (disjoint sets)
//   SSAR_Rec_Dbl           log2(P) k                (P - 1) k
//   SSAR_Split_AllGather   2 (P - 1)/P k            P k
//   DSAR_Split_AllGather   -                        k + (P - 1)/P N (value elements)
//
// The count rounds are accounted separately and exactly: the header round
// (allgather of 40 bytes per rank: (P-1) 40 bytes sent), 8 bytes per count
// message. The identical case spreads k evenly over the P ranges (the table's
// assumption for the split); the disjoint split case puts all of rank r's
// indices in range r+1 (every entry leaves its rank: the table's upper bound).
// Sends and receives are symmetric here, so both directions are checked.
#include <cmath>

#include "sparse_check.h"

namespace sptest {
namespace {

constexpr uint64_t kN = 1 << 14;
constexpr uint64_t kK = 64;
constexpr uint64_t kElem = 4 + 4;  // uint32 index + float32 value
constexpr uint64_t kHeader = 40;

struct Expect {
  uint64_t payloadElems;  // (index, value) elements, as in Table 3.1
  uint64_t denseValues;   // plus dense values (DSAR's allgather)
  uint64_t countBytes;    // count rounds after the header round
  uint64_t msgs;          // messages, header round included
};

std::vector<int> powersOfTwo() {
  std::vector<int> out;
  for (int P : gridP({2, 4, 8}))
    if ((P & (P - 1)) == 0 && P > 1) out.push_back(P);
  return out;
}

void checkTraffic(int P, Dist dist, scSparseAlgo_t algo, const Expect& e) {
  SCOPED_TRACE(testing::Message() << "P=" << P << " " << distName(dist) << " " << scSparseAlgoName(algo));
  const std::vector<Input> in = makeAll(dist, kN, kK, P, 5, false);
  const std::vector<uint8_t> want = expectedDense(in, kN, scFloat32, scSum);
  const uint64_t bytes = (P - 1) * kHeader + e.countBytes + e.payloadElems * kElem + e.denseValues * 4;
  sctest::run(P, [&](scComm_t comm, int rank) {
    const auto idx = packIndices(in[rank].idx, scIndexU32);
    const auto val = packValues(in[rank].val, scFloat32);
    std::vector<float> out(kN);
    ASSERT_EQ(scCommResetStats(comm), scSuccess);
    ASSERT_EQ(scSparseAllReduce(idx.data(), val.data(), in[rank].idx.size(), kN, scIndexU32, scFloat32, scSum, algo,
                                out.data(), comm, nullptr),
              scSuccess)
        << scGetLastError(comm);
    scStats_t st{};
    ASSERT_EQ(scCommGetStats(comm, &st), scSuccess);
    EXPECT_EQ(compareDense(out.data(), want, kN, scFloat32), "");
    EXPECT_EQ(st.bytesSent, bytes) << "rank " << rank;
    EXPECT_EQ(st.bytesRecv, bytes) << "rank " << rank;
    EXPECT_EQ(st.msgsSent, e.msgs) << "rank " << rank;
    EXPECT_EQ(st.msgsRecv, e.msgs) << "rank " << rank;
  });
}

TEST(SparseTraffic, SsarRecDblTable31) {
  for (int P : powersOfTwo()) {
    const uint64_t lg = uint64_t(std::log2(P)), Pu = uint64_t(P);
    // K = k: every stage moves k elements -> log2(P) k. Each stage: 1 count + 2 payload messages.
    checkTraffic(P, Dist::Identical, scSsarRecDbl, {lg * kK, 0, lg * 8, lg + 3 * lg});
    // K = P k: stage t moves 2^(t-1) k -> (P - 1) k.
    checkTraffic(P, Dist::Disjoint, scSsarRecDbl, {(Pu - 1) * kK, 0, lg * 8, lg + 3 * lg});
  }
}

TEST(SparseTraffic, SsarSplitAllGatherTable31) {
  for (int P : powersOfTwo()) {
    const uint64_t lg = uint64_t(std::log2(P)), Pu = uint64_t(P);
    // K = k, k/P per range: split (P-1)/P k + allgather (P-1)/P k = 2 (P-1)/P k.
    // Messages: header lg, split counts P-1, split payload 2(P-1), meta allgather lg, allgather 2 lg.
    checkTraffic(P, Dist::EvenIdentical, scSsarSplitAllGather,
                 {2 * (Pu - 1) * kK / Pu, 0, 2 * (Pu - 1) * 8, lg + (Pu - 1) + 2 * (Pu - 1) + lg + 2 * lg});
    // K = P k: the split sends all k (to one owner), the allgather (P-1) k: P k.
    checkTraffic(P, Dist::Elsewhere, scSsarSplitAllGather,
                 {Pu * kK, 0, 2 * (Pu - 1) * 8, lg + (Pu - 1) + 2 + lg + 2 * lg});
  }
}

TEST(SparseTraffic, DsarSplitAllGatherTable31) {
  for (int P : powersOfTwo()) {
    const uint64_t lg = uint64_t(std::log2(P)), Pu = uint64_t(P);
    // k sparse elements in the split, then the ring allgather of (P-1)/P N dense values.
    checkTraffic(P, Dist::Elsewhere, scDsarSplitAllGather,
                 {kK, (Pu - 1) * kN / Pu, (Pu - 1) * 8, lg + (Pu - 1) + 2 + (Pu - 1)});
  }
}

}  // namespace
}  // namespace sptest
