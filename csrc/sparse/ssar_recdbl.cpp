// SSAR_Rec_Dbl (thesis §3.3.3, Figure 3.9): log2 P' stages; in stage t every
// rank exchanges its partial sum with the rank 2^(t-1) away (a count round,
// then the stream) and merges. Identical index sets move k entries per stage
// (log2(P) k in all), disjoint sets 2^(t-1) k in stage t ((P-1) k in all); a
// partial sum that outgrows the sparse form goes dense and stays dense.
// Non-power-of-two P: the first 2r ranks fold pairwise (fold.h) and the odd
// rank of each pair returns the result at the end.
#include "algo/fold.h"
#include "sparse/schedules.h"

namespace sc::sp {

Stream ssarRecDbl(SpCtx& s, const Stream& in) {
  const Fold f(s.size);
  const int me = s.rank;
  Stream cur = s.foldIn(f, in);
  if (!f.sitsOut(me)) {
    const int nr = f.newRank(me);
    for (int d = 1; d < f.p2; d *= 2) {
      const int partner = nr ^ d, peer = f.oldRank(partner);
      const Stream theirs = s.exchange(peer, &cur, peer, 0, s.N, s.pick({cur.home}));
      // Lower rank's operand first: both partners compute the same bits.
      cur = nr < partner ? s.merge(cur, theirs) : s.merge(theirs, cur);
    }
  }
  cur = s.unfold(f, cur);
  s.settle(cur);
  return cur;
}

}  // namespace sc::sp
