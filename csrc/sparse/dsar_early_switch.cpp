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
#include <algorithm>

#include "algo/fold.h"
#include "sparse/schedules.h"

namespace sc::sp {
namespace {

// The counts of one sparse stage, in the ops memory of s.meta(): what
// SparseOps::split writes for two parts, then the word the partner's count
// arrives in.
struct StageCounts {
  uint64_t n[3];      // entries of the lower and of the upper half (n[2] = 0)
  uint64_t first[3];  // where each half starts in the stream
  uint64_t theirs;    // the partner's count for the half this rank keeps
};

// A stage's halves: `keep` is summed with `theirs`, the partner's part of
// it; `give` goes to the partner.
struct Halves {
  Stream keep, give, theirs;
};

// A sparse stage: the partial sum is split at the halving point `mid` and the
// counts are traded (the count round), so each side knows what arrives. The
// previous stage's merged count may still be in ops memory (meta word 0): the
// split takes it from there, and the one read after the count round brings
// back both halves' counts, whose sum it is. One host read per stage.
Halves sparseHalves(SpCtx& s, Stream& cur, const HalvingStage& h, uint64_t mid) {
  auto* dev = reinterpret_cast<StageCounts*>(s.meta() + 1);  // word 0: the pending count
  if (cur.dense) {
    const uint64_t marks[2] = {kDenseMark, kDenseMark};
    s.ops.fromHost(dev->n, marks, sizeof marks);
  } else {
    const uint64_t bounds[3] = {cur.lo, mid, cur.lo + cur.len};
    s.ops.split(cur.idx, cur.n, cur.nKnown ? nullptr : s.meta(), bounds, 2, dev->n, dev->first);
  }
  const int keepPart = h.lower ? 0 : 1, givePart = 1 - keepPart;  // the lower rank keeps the lower half
  s.c.exchange({P2POp{P2POp::Send, h.peer, &dev->n[givePart], 8}, P2POp{P2POp::Recv, h.peer, &dev->theirs, 8}});
  StageCounts c;
  s.read(&c, dev, sizeof c);
  if (!cur.dense && !cur.nKnown) {
    cur.n = c.n[0] + c.n[1];
    cur.nKnown = true;
  }
  return {s.view(cur, c.first[keepPart], c.n[keepPart], h.keepOff, h.keepLen),
          s.view(cur, c.first[givePart], c.n[givePart], h.giveOff, h.giveLen),
          s.receiving(c.theirs, h.keepOff, h.keepLen, s.pick({cur.home}))};
}

// A dense stage: both sides know every size, no count round.
Halves denseHalves(SpCtx& s, const Stream& cur, const HalvingStage& h) {
  return {s.view(cur, 0, 0, h.keepOff, h.keepLen), s.view(cur, 0, 0, h.giveOff, h.giveLen),
          s.receiving(kDenseMark, h.keepOff, h.keepLen, s.pick({cur.home}))};
}

}  // namespace

Stream dsarEarlySwitch(SpCtx& s, const Stream& in, int groupSize) {
  const Fold f(s.size);
  const Pieces pc = vectorPieces(f, s.N);
  int sparseStages = 0;  // log2 G, at most log2 P'
  while ((2 << sparseStages) <= std::min(groupSize, f.p2)) ++sparseStages;
  char* out = static_cast<char*>(s.out());
  auto densifyInPlace = [&](const Stream& x) { return s.toDense(x, out + x.lo * s.vsz, kOut); };

  Stream cur = s.foldIn(f, in);
  if (!f.sitsOut(s.rank)) {
    // Reduce-scatter by recursive halving: sparse within the groups, dense across them.
    if (sparseStages == 0) cur = densifyInPlace(cur);
    const int nr = f.newRank(s.rank);
    int lo = 0, stage = 0;  // this rank is responsible for pieces [lo, lo + 2d) before stage d
    for (int d = f.p2 / 2; d >= 1; d /= 2, ++stage) {
      const HalvingStage h = halvingStage(f, pc, nr, lo, d);
      const Halves x = stage < sparseStages ? sparseHalves(s, cur, h, pc[lo + d]) : denseHalves(s, cur, h);
      std::vector<P2POp> v;
      s.addSend(v, h.peer, s.onWire(x.give));
      s.addRecv(v, h.peer, x.theirs);
      s.c.exchange(std::move(v));
      // Sums commute bit for bit, so the kept half comes first on both partners:
      // dense stages then add in place inside the output.
      cur = s.merge(x.keep, x.theirs);
      if (stage + 1 == sparseStages) cur = densifyInPlace(cur);  // the early switch
      lo = h.keepLo;
    }
    // This rank's piece of the sum, dense in its place in the output.
    if (cur.home != kOut || cur.val != out + cur.lo * s.vsz) cur = densifyInPlace(cur);
    // Allgather of the pieces by recursive doubling.
    doublingOnPieces(s.c, f, out, pc);
  }
  f.unfold(s.c, out, s.N);
  return Stream::denseOutput(s.N, out);
}

}  // namespace sc::sp
