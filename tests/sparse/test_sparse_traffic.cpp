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
// message; so are the host's reads of counts (scStats_t.hostReads). The
// identical case spreads k evenly over the P ranges (the table's assumption
// for the split); the disjoint split case puts all of rank r's indices in
// range r+1 (every entry leaves its rank: the table's upper bound).
// Sends and receives are symmetric here, so both directions are checked.
#include <cmath>
#include <cstdlib>

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
  // Host reads of counts (scStats_t.hostReads), header included, with the
  // owners of the split algorithms summing by merges and by one sort.
  uint64_t readsMerge, readsSort;
};

std::vector<int> powersOfTwo() {
  std::vector<int> out;
  for (int P : gridP({2, 4, 8}))
    if ((P & (P - 1)) == 0 && P > 1) out.push_back(P);
  return out;
}

void checkOnce(int P, Dist dist, scSparseAlgo_t algo, const Expect& e, uint64_t reads) {
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
    EXPECT_EQ(st.hostReads, reads) << "rank " << rank;
  });
}

// Both ways of summing at the split's owners (split.cpp): same traffic, same
// result, their own number of host reads.
void checkTraffic(int P, Dist dist, scSparseAlgo_t algo, const Expect& e) {
  for (const char* sum : {"merge", "sort"}) {
    SCOPED_TRACE(testing::Message() << "P=" << P << " " << distName(dist) << " " << scSparseAlgoName(algo)
                                    << ", owner sum by " << sum);
    setenv("SPARCOLL_SPARSE_OWNER_SUM", sum, 1);
    checkOnce(P, dist, algo, e, sum[0] == 'm' ? e.readsMerge : e.readsSort);
    unsetenv("SPARCOLL_SPARSE_OWNER_SUM");
  }
}

TEST(SparseTraffic, SsarRecDblTable31) {
  for (int P : powersOfTwo()) {
    const uint64_t lg = uint64_t(std::log2(P)), Pu = uint64_t(P);
    // K = k: every stage moves k elements -> log2(P) k. Each stage: 1 count + 2 payload messages.
    // Reads: the header, one per stage (own merged count + the partner's), the result's count.
    checkTraffic(P, Dist::Identical, scSsarRecDbl, {lg * kK, 0, lg * 8, lg + 3 * lg, lg + 2, lg + 2});
    // K = P k: stage t moves 2^(t-1) k -> (P - 1) k.
    checkTraffic(P, Dist::Disjoint, scSsarRecDbl, {(Pu - 1) * kK, 0, lg * 8, lg + 3 * lg, lg + 2, lg + 2});
  }
}

TEST(SparseTraffic, SsarSplitAllGatherTable31) {
  for (int P : powersOfTwo()) {
    const uint64_t lg = uint64_t(std::log2(P)), Pu = uint64_t(P);
    // K = k, k/P per range: split (P-1)/P k + allgather (P-1)/P k = 2 (P-1)/P k.
    // Messages: header lg, split counts P-1, split payload 2(P-1), meta allgather lg, allgather 2 lg.
    // Reads: header, split counts, the owners' counts; merging adds one per piece (P-1).
    checkTraffic(P, Dist::EvenIdentical, scSsarSplitAllGather,
                 {2 * (Pu - 1) * kK / Pu, 0, 2 * (Pu - 1) * 8, lg + (Pu - 1) + 2 * (Pu - 1) + lg + 2 * lg, 3 + (Pu - 1),
                  3});
    // K = P k: the split sends all k (to one owner), the allgather (P-1) k: P k.
    // Each owner gets one non-empty piece and has none of its own: nothing to merge.
    checkTraffic(P, Dist::Elsewhere, scSsarSplitAllGather,
                 {Pu * kK, 0, 2 * (Pu - 1) * 8, lg + (Pu - 1) + 2 + lg + 2 * lg, 3, 3});
  }
}

TEST(SparseTraffic, DsarSplitAllGatherTable31) {
  for (int P : powersOfTwo()) {
    const uint64_t lg = uint64_t(std::log2(P)), Pu = uint64_t(P);
    // k sparse elements in the split, then the ring allgather of (P-1)/P N dense values.
    // Reads: header and split counts; the owner's one piece densifies without a read.
    checkTraffic(P, Dist::Elsewhere, scDsarSplitAllGather,
                 {kK, (Pu - 1) * kN / Pu, (Pu - 1) * 8, lg + (Pu - 1) + 2 + (Pu - 1), 2, 2});
  }
}

// Early-switching DSAR with every stage sparse (G = P): one host read per
// stage (the split takes the previous merge's count from device memory), plus
// the header's and the final densify's.
TEST(SparseTraffic, DsarEarlySwitchReadsOncePerStage) {
  for (int P : powersOfTwo()) {
    SCOPED_TRACE(testing::Message() << "P=" << P);
    const uint64_t lg = uint64_t(std::log2(P));
    const std::vector<Input> in = makeAll(Dist::EvenIdentical, kN, kK, P, 5, false);
    const std::vector<uint8_t> want = expectedDense(in, kN, scFloat32, scSum);
    scSparseOptions_t opt = SC_SPARSE_OPTIONS_INITIALIZER;
    opt.earlyGroupSize = P;
    sctest::run(P, [&](scComm_t comm, int rank) {
      const auto idx = packIndices(in[rank].idx, scIndexU32);
      const auto val = packValues(in[rank].val, scFloat32);
      std::vector<float> out(kN);
      ASSERT_EQ(scCommResetStats(comm), scSuccess);
      ASSERT_EQ(scSparseAllReduceEx(idx.data(), val.data(), in[rank].idx.size(), kN, scIndexU32, scFloat32, scSum,
                                    scDsarEarlySwitch, &opt, out.data(), comm, nullptr),
                scSuccess)
          << scGetLastError(comm);
      scStats_t st{};
      ASSERT_EQ(scCommGetStats(comm, &st), scSuccess);
      EXPECT_EQ(compareDense(out.data(), want, kN, scFloat32), "");
      EXPECT_EQ(st.hostReads, lg + 2) << "rank " << rank;
    });
  }
}

}  // namespace
}  // namespace sptest
