// Rabenseifner's allreduce ("Optimization of collective reduction operations",
// ICCS 2004): fold to P' ranks, recursive-halving reduce-scatter, recursive-
// doubling allgather, unfold. 2 log2 P' steps; each of the P' ranks sends
// 2(P'-1)/P' of the vector, the folded pairs one extra vector each way.
// The halving reduce-scatter and doubling allgather collectives reuse the same
// loops with pieces made of whole rank blocks.
#include "algo/dense.h"
#include "algo/fold.h"

namespace sc {

void rabenseifnerAllReduce(Ctx& c, const void* send, void* recv, size_t count) {
  const Fold f(c.size);
  const void* mine = f.foldIn(c, send, recv, count);
  if (mine) {
    const Pieces pc = vectorPieces(f, count);
    halvingOnPieces(c, f, mine, recv, pc);
    doublingOnPieces(c, f, recv, pc);
  }
  f.unfold(c, recv, count);
}

void halvingReduceScatter(Ctx& c, const void* send, void* recv, size_t recvcount) {
  const Fold f(c.size);
  const size_t count = recvcount * c.size;
  char* work = c.scratch(Scratch::Work, count);
  const void* mine = f.foldIn(c, send, work, count);
  if (mine) halvingOnPieces(c, f, mine, work, rankBlockPieces(f, recvcount));
  // Unfold: the odd rank of a pair holds both blocks and sends the lower one down.
  c.phase("unfold");
  f.unfoldBy(
      c.rank, [&](int down) { c.sendTo(down, c.at(work, down * recvcount), recvcount); },
      [&](int up) { c.recvFrom(up, recv, recvcount); });
  if (!f.sitsOut(c.rank)) c.copy(recv, c.at(work, c.rank * recvcount), recvcount);
}

void doublingAllGather(Ctx& c, const void* send, void* recv, size_t sendcount) {
  const Fold f(c.size);
  c.copy(c.at(recv, c.rank * sendcount), send, sendcount);
  // Fold: the odd rank of a pair takes the even one's block beside its own.
  c.phase("fold to a power of two");
  f.foldBy(
      c.rank, [&](int up) { c.sendTo(up, send, sendcount); },
      [&](int down) { c.recvFrom(down, c.at(recv, down * sendcount), sendcount); });
  // Without a fold, this rank's first piece is its own block: sent from send.
  if (!f.sitsOut(c.rank)) doublingOnPieces(c, f, recv, rankBlockPieces(f, sendcount), f.p2 == c.size ? send : nullptr);
  f.unfold(c, recv, sendcount * c.size);
}

}  // namespace sc
