// Per-rank traffic of each dense schedule, derived in the test from the
// algorithms' definitions (not from the library's code): which blocks a rank
// sends and receives in each step, and how the ring cuts them into pipeline
// slices. Zero-length messages are not sent. Counts are in elements.
//
//  ring allreduce   reduce-scatter: rank r sends every block but b_r and
//                   receives every block but b_{r-1}, each in slices of
//                   `slice` elements; allgather: sends every block but
//                   b_{r+1}, receives every block but b_r, whole. Blocks are
//                   balanced (sizes differ by at most one, larger first).
//                   Sent bytes: 2S - |b_r| - |b_{r+1}|.
//  rabenseifner     fold: among ranks < 2q (q = P - P', P' = 2^floor(log2 P))
//                   the even rank sends its vector to the odd one and gets the
//                   result back. The P' others (new rank n) split the vector in
//                   P' balanced pieces; halving at distance d = P'/2..1 sends
//                   the partner's aligned group of d pieces and receives its
//                   own; doubling at d = 1..P'/2 does the reverse.
//  recdbl           fold as above, then log2 P' exchanges of the whole vector.
//  reduce-scatter   ring: (P-1) blocks each way, sliced; halving: fold of the
//                   whole vector, pieces of whole rank blocks (new rank n < q
//                   owns two), halving as above, then the odd rank of a folded
//                   pair sends the even one its block.
//  allgather        ring: (P-1) blocks each way, whole; doubling: the even
//                   rank of a pair sends its block up, doubling over the
//                   pieces, the odd rank sends the whole result down.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sparcoll/sparcoll.h"

namespace dtest {

struct Traffic {
  uint64_t bytesSent = 0, bytesRecv = 0, msgsSent = 0, msgsRecv = 0;
  bool operator==(const Traffic& o) const {
    return bytesSent == o.bytesSent && bytesRecv == o.bytesRecv && msgsSent == o.msgsSent && msgsRecv == o.msgsRecv;
  }
  std::string str() const;
};
Traffic fromStats(const scStats_t& s);

enum class Coll { AllReduce, ReduceScatter, AllGather };

// Expected traffic of rank r for one call; algo is ring, rabenseifner or recdbl
// (never auto / native). count as passed to the call (recvcount / sendcount for
// reduce-scatter / allgather); slice = ring pipeline slice in elements.
Traffic expectedTraffic(Coll coll, scAlgo_t algo, int P, int r, size_t count, size_t esz, size_t slice);

// Broadcast of count elements from root, ranks numbered rel = r - root mod P:
//  binomial           rel > 0 receives the whole buffer once (from rel minus
//                     its lowest set bit); every rank sends it to rel + m for
//                     each power of two m below its lowest set bit (the root:
//                     below P) with rel + m < P.
//  scatter_allgather  the same tree, each edge carrying the balanced blocks
//                     (Blocks{count, P}, block b belongs to rank b) of the
//                     child's subtree rel' .. rel' + lowbit(rel') - 1 (cut at
//                     P): one message per contiguous run of absolute block
//                     numbers (two where the run wraps past P - 1); then the
//                     ring allgather: every block but b_{r+1} sent, every block
//                     but b_r received, empty ones skipped.
Traffic expectedBroadcastTraffic(scAlgo_t algo, int P, int r, int root, size_t count, size_t esz);

}  // namespace dtest
