// Recursive doubling allreduce: log2 P' exchanges of the whole vector, each
// followed by a local reduction. Latency-optimal, so auto picks it for small
// messages; non-power-of-two P folds like Rabenseifner.
#include "algo/dense.h"
#include "algo/fold.h"

namespace sc {

void recdblAllReduce(Ctx& c, const void* send, void* recv, size_t count) {
  const Fold f(c.size);
  if (f.sitsOut(c.rank)) {
    c.sendrecv(c.rank + 1, send, count, -1, nullptr, 0);
  } else {
    char* tmp = c.scratch(3, count);
    const void* cur = send;
    if (f.folded(c.rank)) {
      c.sendrecv(-1, nullptr, 0, c.rank - 1, tmp, count);
      c.reduce(recv, tmp, cur, count);
      cur = recv;
    }
    const int nr = f.newRank(c.rank);
    for (int d = 1; d < f.p2; d *= 2) {
      const int partner = nr ^ d, peer = f.oldRank(partner);
      c.sendrecv(peer, cur, count, peer, tmp, count);
      // Same operand order on both partners keeps the ranks bit-identical.
      if (nr < partner) c.reduce(recv, cur, tmp, count);
      else c.reduce(recv, tmp, cur, count);
      cur = recv;
    }
    c.copy(recv, cur, count);
  }
  if (f.folded(c.rank)) {
    if (f.sitsOut(c.rank)) c.sendrecv(-1, nullptr, 0, c.rank + 1, recv, count);
    else c.sendrecv(c.rank - 1, recv, count, -1, nullptr, 0);
  }
}

}  // namespace sc
