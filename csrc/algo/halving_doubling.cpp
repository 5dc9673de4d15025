// Recursive halving (reduce-scatter) and recursive doubling (allgather) on the
// P' power-of-two ranks left by the fold, over arbitrary contiguous pieces.
// Rabenseifner's allreduce, the halving reduce-scatter and the doubling
// allgather are all these two loops with different piece layouts.
#include "algo/fold.h"

namespace sc {

void halvingOnPieces(Ctx& c, const Fold& f, const void* mine, void* work, const Pieces& pc) {
  const int nr = f.newRank(c.rank);
  int lo = 0, hi = f.p2;  // pieces this rank is still responsible for
  const void* cur = mine;
  for (int d = f.p2 / 2; d >= 1; d /= 2) {
    const int partner = nr ^ d;
    const bool lower = (nr & d) == 0;
    const int keepLo = lower ? lo : lo + d, giveLo = lower ? lo + d : lo;
    const size_t keepOff = pc[keepLo], keepLen = pc[keepLo + d] - keepOff;
    const size_t giveOff = pc[giveLo], giveLen = pc[giveLo + d] - giveOff;
    char* tmp = c.scratch(3, keepLen);
    const int peer = f.oldRank(partner);
    c.sendrecv(peer, c.at(cur, giveOff), giveLen, peer, tmp, keepLen);
    // Lower rank's data first, so every op (NaN-aware max/min too) combines the
    // operands in one order whoever computes it.
    if (nr < partner) c.reduce(c.at(work, keepOff), c.at(cur, keepOff), tmp, keepLen);
    else c.reduce(c.at(work, keepOff), tmp, c.at(cur, keepOff), keepLen);
    cur = work;
    lo = keepLo;
    hi = keepLo + d;
  }
  if (cur != work) c.copy(c.at(work, pc[nr]), c.at(cur, pc[nr]), pc[nr + 1] - pc[nr]);
  (void)hi;
}

void doublingOnPieces(Ctx& c, const Fold& f, void* buf, const Pieces& pc) {
  const int nr = f.newRank(c.rank);
  for (int d = 1; d < f.p2; d *= 2) {
    const int partner = nr ^ d;
    const int myLo = nr & ~(d - 1), theirLo = partner & ~(d - 1);
    const int peer = f.oldRank(partner);
    c.sendrecv(peer, c.at(buf, pc[myLo]), pc[myLo + d] - pc[myLo],
               peer, c.at(buf, pc[theirLo]), pc[theirLo + d] - pc[theirLo]);
  }
}

}  // namespace sc
