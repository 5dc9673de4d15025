// Recursive doubling allreduce: log2 P' exchanges of the whole vector, each
// followed by a local reduction. Latency-optimal, so auto picks it for small
// messages; non-power-of-two P folds like Rabenseifner.
#include "algo/dense.h"
#include "algo/fold.h"

namespace sc {

void recdblAllReduce(Ctx& c, const void* send, void* recv, size_t count) {
  const Fold f(c.size);
  const void* cur = f.foldIn(c, send, recv, count);
  if (cur) {
    char* theirs = c.scratch(Scratch::Peer, count);
    const int nr = f.newRank(c.rank);
    for (int d = 1, step = 0; d < f.p2; d *= 2, ++step) {
      c.phase("recursive doubling", step, f.stages());
      const int partner = nr ^ d, peer = f.oldRank(partner);
      c.sendrecv(peer, cur, count, peer, theirs, count);
      // Same operand order on both partners keeps the ranks bit-identical.
      if (nr < partner) c.reduce(recv, cur, theirs, count);
      else c.reduce(recv, theirs, cur, count);
      cur = recv;
    }
    c.copy(recv, cur, count);
  }
  f.unfold(c, recv, count);
}

}  // namespace sc
