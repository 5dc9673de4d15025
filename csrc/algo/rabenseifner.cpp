// Rabenseifner's allreduce ("Optimization of collective reduction operations",
// ICCS 2004): fold to P' ranks, recursive-halving reduce-scatter, recursive-
// doubling allgather, unfold. 2 log2 P' steps; each of the P' ranks sends
// 2(P'-1)/P' of the vector, the folded pairs one extra vector each way.
// The halving reduce-scatter and doubling allgather collectives reuse the same
// loops with pieces made of whole rank blocks.
#include "algo/dense.h"
#include "algo/fold.h"

namespace sc {
namespace {

// Folded pairs: the even rank sends its vector up, the odd one adds it.
// Returns the vector this rank brings to the power-of-two phase.
const void* foldIn(Ctx& c, const Fold& f, const void* src, void* work, size_t count) {
  if (!f.folded(c.rank)) return src;
  if (f.sitsOut(c.rank)) {
    c.sendrecv(c.rank + 1, src, count, -1, nullptr, 0);
    return nullptr;
  }
  char* tmp = c.scratch(3, count);
  c.sendrecv(-1, nullptr, 0, c.rank - 1, tmp, count);
  c.reduce(work, tmp, src, count);  // lower rank's data first
  return work;
}

// Pieces of whole rank blocks: new rank i owns the blocks of the old ranks it stands for.
Pieces blockPieces(const Fold& f, size_t blockLen) {
  Pieces pc(f.p2 + 1);
  for (int i = 0; i <= f.p2; ++i) pc[i] = (i < f.r ? 2 * i : i + f.r) * blockLen;
  return pc;
}

}  // namespace

void rabenseifnerAllReduce(Ctx& c, const void* send, void* recv, size_t count) {
  const Fold f(c.size);
  const void* mine = foldIn(c, f, send, recv, count);
  if (mine) {
    const Blocks B{count, size_t(f.p2)};
    Pieces pc(f.p2 + 1);
    for (int i = 0; i <= f.p2; ++i) pc[i] = i < f.p2 ? B.off(i) : count;
    halvingOnPieces(c, f, mine, recv, pc);
    doublingOnPieces(c, f, recv, pc);
  }
  if (f.folded(c.rank)) {  // unfold: the odd rank returns the result
    if (f.sitsOut(c.rank)) c.sendrecv(-1, nullptr, 0, c.rank + 1, recv, count);
    else c.sendrecv(c.rank - 1, recv, count, -1, nullptr, 0);
  }
}

void halvingReduceScatter(Ctx& c, const void* send, void* recv, size_t recvcount) {
  const Fold f(c.size);
  const size_t count = recvcount * c.size;
  char* work = c.scratch(2, count);
  const void* mine = foldIn(c, f, send, work, count);
  if (mine) halvingOnPieces(c, f, mine, work, blockPieces(f, recvcount));
  if (!f.folded(c.rank)) {
    c.copy(recv, c.at(work, c.rank * recvcount), recvcount);
  } else if (f.sitsOut(c.rank)) {
    c.sendrecv(-1, nullptr, 0, c.rank + 1, recv, recvcount);
  } else {  // holds blocks rank-1 and rank
    c.sendrecv(c.rank - 1, c.at(work, (c.rank - 1) * recvcount), recvcount, -1, nullptr, 0);
    c.copy(recv, c.at(work, c.rank * recvcount), recvcount);
  }
}

void doublingAllGather(Ctx& c, const void* send, void* recv, size_t sendcount) {
  const Fold f(c.size);
  const size_t count = sendcount * c.size;
  c.copy(c.at(recv, c.rank * sendcount), send, sendcount);
  if (f.sitsOut(c.rank)) {
    c.sendrecv(c.rank + 1, send, sendcount, -1, nullptr, 0);
  } else if (f.folded(c.rank)) {
    c.sendrecv(-1, nullptr, 0, c.rank - 1, c.at(recv, (c.rank - 1) * sendcount), sendcount);
  }
  if (!f.sitsOut(c.rank)) doublingOnPieces(c, f, recv, blockPieces(f, sendcount));
  if (f.folded(c.rank)) {
    if (f.sitsOut(c.rank)) c.sendrecv(-1, nullptr, 0, c.rank + 1, recv, count);
    else c.sendrecv(c.rank - 1, recv, count, -1, nullptr, 0);
  }
}

}  // namespace sc
