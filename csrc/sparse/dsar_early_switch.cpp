// Early-switching DSAR (thesis §3.3.4, Figures 3.12-3.13, §5.2.3): a
// recursive-halving reduce-scatter over the pieces of Blocks{N, P'} whose first
// log2(G) stages run on sparse streams — each rank splits its partial sum at
// the halving point, exchanges the half it gives away (count round, then the
// stream) and merges the half it keeps — within groups of G ranks (halving
// pairs the ranks P'/2 apart first, so a group is the G ranks P'/G apart);
// then every rank densifies its range early and the remaining stages are the
// dense halving across the groups (no count rounds: everything is dense). The
// foundation's recursive-doubling allgather over the same pieces finishes.
// Non-power-of-two P folds first and unfolds at the end, like Rabenseifner.
#include "algo/fold.h"
#include "sparse/schedules.h"

namespace sc::sp {

Stream dsarEarlySwitch(SpCtx& s, const Stream& in, int groupSize) {
  const Fold f(s.size);
  const int me = s.rank;
  const Blocks B{s.N, size_t(f.p2)};
  Pieces pc(f.p2 + 1);
  for (int i = 0; i <= f.p2; ++i) pc[i] = i < f.p2 ? B.off(i) : s.N;
  int sparseStages = 0;
  while ((2 << sparseStages) <= groupSize && (1 << (sparseStages + 1)) <= f.p2) ++sparseStages;
  char* out = static_cast<char*>(s.out());
  auto densifyInPlace = [&](const Stream& x) { return s.toDense(x, out + x.lo * s.vsz, kOut); };

  Stream cur = s.foldIn(f, in);
  if (!f.sitsOut(me)) {
    if (sparseStages == 0) cur = densifyInPlace(cur);
    const int nr = f.newRank(me);
    int lo = 0, stage = 0;  // pieces [lo, lo + 2d) are this rank's before stage d
    uint64_t* m = s.meta();  // [0..2] counts of the two halves, [3..5] offsets, [6] peer's count
    for (int d = f.p2 / 2; d >= 1; d /= 2, ++stage) {
      const int partner = nr ^ d, peer = f.oldRank(partner);
      const bool lower = (nr & d) == 0;
      const int keepLo = lower ? lo : lo + d, giveLo = lower ? lo + d : lo;
      const size_t kLo = pc[keepLo], kLen = pc[keepLo + d] - kLo;
      const size_t gLo = pc[giveLo], gLen = pc[giveLo + d] - gLo;
      Stream keep, give, theirs;
      if (stage >= sparseStages) {  // dense stage: sizes known on both sides
        keep = s.view(cur, 0, 0, kLo, kLen);
        give = s.view(cur, 0, 0, gLo, gLen);
        theirs = s.receiving(kDenseMark, kLo, kLen, s.pick({cur.home}));
      } else {
        s.settle(cur);
        if (cur.dense) {
          const uint64_t w = kDenseMark;
          s.ops.fromHost(m, &w, 8);
          s.ops.fromHost(m + 1, &w, 8);
        } else {
          const uint64_t bounds[3] = {cur.lo, pc[lo + d], cur.lo + cur.len};
          s.ops.split(cur.idx, cur.n, bounds, 2, m, m + 3);
        }
        const int givePart = lower ? 1 : 0;  // the lower rank keeps the lower half
        s.c.exchange({P2POp{P2POp::Send, peer, m + givePart, 8}, P2POp{P2POp::Recv, peer, m + 6, 8}});
        uint64_t h[7];
        s.ops.toHost(h, m, sizeof h);
        keep = s.view(cur, h[3 + 1 - givePart], h[1 - givePart], kLo, kLen);
        give = s.view(cur, h[3 + givePart], h[givePart], gLo, gLen);
        theirs = s.receiving(h[6], kLo, kLen, s.pick({cur.home}));
      }
      std::vector<P2POp> v;
      s.addSend(v, peer, s.onWire(give));
      s.addRecv(v, peer, theirs);
      s.c.exchange(std::move(v));
      // Sums commute bit for bit, so the kept half comes first on both partners:
      // dense stages then add in place inside the output.
      cur = s.merge(keep, theirs);
      if (stage + 1 == sparseStages) cur = densifyInPlace(cur);  // the early switch
      lo = keepLo;
    }
    if (cur.home != kOut || cur.val != out + cur.lo * s.vsz) cur = densifyInPlace(cur);
    doublingOnPieces(s.c, f, out, pc);
  }
  if (f.folded(me)) {
    if (f.sitsOut(me)) s.c.sendrecv(-1, nullptr, 0, me + 1, out, s.N);
    else s.c.sendrecv(me - 1, out, s.N, -1, nullptr, 0);
  }
  return Stream::denseOutput(s.N, out);
}

}  // namespace sc::sp
