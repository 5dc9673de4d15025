// Overlapping buffers in the dense collectives. Each defines one in-place form
// (sparcoll.h): allreduce recvbuf == sendbuf, reduce-scatter recvbuf ==
// sendbuf + rank*recvcount, allgather sendbuf == recvbuf + rank*sendcount.
// Any other overlap used to be accepted and return garbage; it must be
// scInvalidArgument naming the buffers, before anything is sent, for every
// algorithm. Every rank makes a bad call (so none waits for a peer), and the
// communicator still works afterwards. Buffers that touch without sharing a
// byte are fine.
#include <cstdint>
#include <vector>

#include "dense_check.h"

namespace dtest {
namespace {

const scAlgo_t kAllAlgos[] = {scAlgoAuto, scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoNative};

TEST(DenseErrors, PartialOverlapRejected) {
  const int P = anyP(3);
  const size_t n = 10;
  sctest::run(P, [&](scComm_t comm, int rank) {
    std::vector<float> buf(size_t(P) * n * 3, 1.0f);
    float* b = buf.data();
    const size_t me = size_t(rank) * n;
    for (scAlgo_t a : kAllAlgos) {
      SCOPED_TRACE(algoStr(a));
      // allreduce: recvbuf one element after or before sendbuf.
      EXPECT_TRUE(failedWith(scAllReduce(b, b + 1, n, scFloat32, scSum, a, comm, nullptr), scInvalidArgument, comm,
                             "recvbuf (40 bytes) overlaps sendbuf (40 bytes) at recvbuf = sendbuf + 4 bytes"));
      EXPECT_TRUE(failedWith(scAllReduce(b + 1, b, n, scFloat32, scMax, a, comm, nullptr), scInvalidArgument, comm,
                             "recvbuf = sendbuf - 4 bytes"));
      EXPECT_TRUE(failedWith(scAllReduce(b, b + n - 1, n, scFloat32, scSum, a, comm, nullptr), scInvalidArgument, comm,
                             "overlaps sendbuf"));
    }
    for (scAlgo_t a : {scAlgoAuto, scAlgoRing, scAlgoRabenseifner, scAlgoNative}) {
      SCOPED_TRACE(algoStr(a));
      // reduce-scatter: one element past this rank's in-place block, and the
      // start of sendbuf on ranks other than 0 (in place only on rank 0).
      EXPECT_TRUE(failedWith(scReduceScatter(b, b + me + 1, n, scFloat32, scSum, a, comm, nullptr), scInvalidArgument,
                             comm, "not in place (recvbuf == sendbuf + rank*recvcount"));
      EXPECT_TRUE(failedWith(scReduceScatter(b + 1, b, n, scFloat32, scSum, a, comm, nullptr), scInvalidArgument, comm,
                             "overlaps sendbuf"));
    }
    for (scAlgo_t a : {scAlgoAuto, scAlgoRing, scAlgoRecDbl, scAlgoNative}) {
      SCOPED_TRACE(algoStr(a));
      // allgather: sendbuf one element past this rank's in-place block.
      EXPECT_TRUE(failedWith(scAllGather(b + me + 1, b, n, scFloat32, a, comm, nullptr), scInvalidArgument, comm,
                             "not in place (sendbuf == recvbuf + rank*sendcount"));
      EXPECT_TRUE(failedWith(scAllGather(b, b + 1, n, scFloat32, a, comm, nullptr), scInvalidArgument, comm,
                             "overlaps sendbuf"));
    }
    // Adjacent, disjoint buffers are not an overlap: recvbuf right after
    // sendbuf (and the communicator still works after the errors above).
    std::vector<int32_t> ar(2 * n, rank + 1);
    SC_OK(comm, scAllReduce(ar.data(), ar.data() + n, n, scInt32, scSum, scAlgoRing, comm, nullptr));
    EXPECT_EQ(ar[n], P * (P + 1) / 2);
    EXPECT_EQ(ar[2 * n - 1], P * (P + 1) / 2);
    std::vector<int32_t> rs(size_t(P) * n + n, rank + 1);
    SC_OK(comm,
          scReduceScatter(rs.data(), rs.data() + size_t(P) * n, n, scInt32, scMax, scAlgoRabenseifner, comm, nullptr));
    EXPECT_EQ(rs[size_t(P) * n], P);
    std::vector<int32_t> ag(size_t(P) * n + n, rank + 1);
    SC_OK(comm, scAllGather(ag.data() + size_t(P) * n, ag.data(), n, scInt32, scAlgoRecDbl, comm, nullptr));
    for (int q = 0; q < P; ++q) EXPECT_EQ(ag[size_t(q) * n], q + 1);
  });
}

}  // namespace
}  // namespace dtest
