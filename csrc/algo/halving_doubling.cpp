// Recursive halving (reduce-scatter) and recursive doubling (allgather) on the
// P' power-of-two ranks left by the fold, over arbitrary contiguous pieces.
// Rabenseifner's allreduce, the halving reduce-scatter and the doubling
// allgather are all these two loops with different piece layouts.
#include "algo/fold.h"

namespace sc {

Pieces vectorPieces(const Fold& f, size_t count) {
  const Blocks B{count, size_t(f.p2)};
  Pieces pc(f.p2 + 1);
  for (int i = 0; i <= f.p2; ++i) pc[i] = i < f.p2 ? B.off(i) : count;
  return pc;
}

Pieces rankBlockPieces(const Fold& f, size_t blockLen) {
  Pieces pc(f.p2 + 1);
  for (int i = 0; i <= f.p2; ++i) pc[i] = size_t(f.firstOld(i)) * blockLen;
  return pc;
}

HalvingStage halvingStage(const Fold& f, const Pieces& pc, int nr, int lo, int d) {
  HalvingStage s;
  s.partner = nr ^ d;
  s.peer = f.oldRank(s.partner);
  s.lower = (nr & d) == 0;
  s.keepLo = s.lower ? lo : lo + d;
  s.giveLo = s.lower ? lo + d : lo;
  s.keepOff = pc[s.keepLo];
  s.keepLen = pc[s.keepLo + d] - s.keepOff;
  s.giveOff = pc[s.giveLo];
  s.giveLen = pc[s.giveLo + d] - s.giveOff;
  return s;
}

void halvingOnPieces(Ctx& c, const Fold& f, const void* mine, void* work, const Pieces& pc) {
  const int nr = f.newRank(c.rank);
  int lo = 0;  // this rank is responsible for pieces [lo, lo + 2d) before stage d
  const void* cur = mine;
  for (int d = f.p2 / 2, step = 0; d >= 1; d /= 2, ++step) {
    c.phase("recursive halving", step, f.stages());
    const HalvingStage h = halvingStage(f, pc, nr, lo, d);
    // Lower rank's data first, so every op (NaN-aware max/min too) combines the
    // operands in one order whoever computes it. Where the transport reduces
    // on arrival, the peer's half goes straight into work (the kept half,
    // which the round does not send).
    if (c.fusesReduce(h.peer)) {
      c.exchange({c.send(h.peer, c.at(cur, h.giveOff), h.giveLen),
                  c.recvReduce(h.peer, c.at(work, h.keepOff), c.at(cur, h.keepOff), h.lower, h.keepLen)});
    } else {
      char* theirs = c.scratch(Scratch::Peer, h.keepLen);
      c.sendrecv(h.peer, c.at(cur, h.giveOff), h.giveLen, h.peer, theirs, h.keepLen);
      if (h.lower) c.reduce(c.at(work, h.keepOff), c.at(cur, h.keepOff), theirs, h.keepLen);
      else c.reduce(c.at(work, h.keepOff), theirs, c.at(cur, h.keepOff), h.keepLen);
    }
    cur = work;
    lo = h.keepLo;
  }
  if (cur != work) c.copy(c.at(work, pc[nr]), c.at(cur, pc[nr]), pc[nr + 1] - pc[nr]);
}

void doublingOnPieces(Ctx& c, const Fold& f, void* buf, const Pieces& pc, const void* own) {
  const int nr = f.newRank(c.rank);
  for (int d = 1, step = 0; d < f.p2; d *= 2, ++step) {
    c.phase("recursive doubling", step, f.stages());
    const int partner = nr ^ d;
    const int myLo = nr & ~(d - 1), theirLo = partner & ~(d - 1);
    const int peer = f.oldRank(partner);
    c.sendrecv(peer, d == 1 && own ? own : c.at(buf, pc[myLo]), pc[myLo + d] - pc[myLo], peer, c.at(buf, pc[theirLo]),
               pc[theirLo + d] - pc[theirLo]);
  }
}

}  // namespace sc
