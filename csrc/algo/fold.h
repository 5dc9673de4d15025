// The standard reduction of any P to a power of two P' = 2^floor(log2 P):
// among the first 2r ranks (r = P - P'), each even rank hands its data to the
// odd rank above it and sits out; the others renumber to 0..P'-1. At the end
// the odd rank hands the result back (the unfold). Written once here for every
// schedule that folds: dense (rabenseifner.cpp, recdbl.cpp) and sparse.
#pragma once

#include <vector>

#include "algo/ctx.h"

namespace sc {

struct Fold {
  int P, p2, r;
  explicit Fold(int P) : P(P), p2(pow2Floor(P)), r(P - pow2Floor(P)) {}
  // The stages of the power-of-two phase: log2 p2.
  int stages() const {
    int n = 0;
    while ((1 << n) < p2) ++n;
    return n;
  }
  bool folded(int rank) const { return rank < 2 * r; }  // takes part in the fold
  bool sitsOut(int rank) const { return folded(rank) && rank % 2 == 0; }
  int newRank(int rank) const { return folded(rank) ? (rank % 2 ? rank / 2 : -1) : rank - r; }
  int oldRank(int nr) const { return nr < r ? 2 * nr + 1 : nr + r; }
  // New rank nr stands for old ranks [firstOld(nr), firstOld(nr + 1)) (nr <= P').
  int firstOld(int nr) const { return nr < r ? 2 * nr : nr + r; }

  // The moves of the fold for any data: the even rank of a pair sends its data
  // up (send(rank + 1)), the odd one receives it (recv(rank - 1)).
  template <typename Send, typename Recv>
  void foldBy(int rank, Send send, Recv recv) const {
    if (sitsOut(rank)) send(rank + 1);
    else if (folded(rank)) recv(rank - 1);
  }
  // The moves of the unfold: the odd rank sends the result down (send(rank - 1)),
  // the even one receives it (recv(rank + 1)).
  template <typename Send, typename Recv>
  void unfoldBy(int rank, Send send, Recv recv) const {
    if (sitsOut(rank)) recv(rank + 1);
    else if (folded(rank)) send(rank - 1);
  }

  // The fold of a reduction on dense vectors of n elements: the odd rank
  // reduces its pair's vectors into work, the lower rank's operand first.
  // Returns the vector this rank brings to the power-of-two phase (src, work,
  // or nullptr for a rank that sits out).
  const void* foldIn(Ctx& c, const void* src, void* work, size_t n) const {
    const void* mine = sitsOut(c.rank) ? nullptr : src;
    c.phase("fold to a power of two");
    foldBy(
        c.rank, [&](int up) { c.sendTo(up, src, n); },
        [&](int down) {
          char* theirs = c.scratch(Scratch::Peer, n);
          c.recvFrom(down, theirs, n);
          c.reduce(work, theirs, src, n);
          mine = work;
        });
    return mine;
  }
  // The unfold of a dense result of n elements in buf.
  void unfold(Ctx& c, void* buf, size_t n) const {
    c.phase("unfold");
    unfoldBy(
        c.rank, [&](int down) { c.sendTo(down, buf, n); }, [&](int up) { c.recvFrom(up, buf, n); });
  }
};

// P' contiguous element ranges indexed by new rank: piece i = [off[i], off[i+1]).
using Pieces = std::vector<size_t>;
// A vector of count elements cut into P' balanced pieces (allreduce).
Pieces vectorPieces(const Fold& f, size_t count);
// Whole rank blocks of blockLen elements: new rank i's piece is the blocks of
// the old ranks it stands for (reduce-scatter, allgather).
Pieces rankBlockPieces(const Fold& f, size_t blockLen);

// One stage of recursive halving at distance d: new rank nr, responsible for
// pieces [lo, lo + 2d), keeps one half of them and gives the other half to
// its partner nr ^ d; the lower rank of the pair keeps the lower half.
struct HalvingStage {
  int partner, peer;                          // the partner's new and old rank
  bool lower;                                 // this rank is the lower one
  int keepLo, giveLo;                         // the first piece of each half
  size_t keepOff, keepLen, giveOff, giveLen;  // the halves in elements
};
HalvingStage halvingStage(const Fold& f, const Pieces& pc, int nr, int lo, int d);

// Recursive halving over pieces: `mine` holds this rank's full vector; on
// return `work` piece nr holds the sum of piece nr over the P' ranks.
void halvingOnPieces(Ctx& c, const Fold& f, const void* mine, void* work, const Pieces& pc);
// Recursive doubling over pieces: `buf` piece nr is filled; on return all are.
// own (optional): the same bytes as piece nr, sent from there at the first
// step (a caller's input, which the receiver reads faster than a block this
// rank has just written: single copy reads the sender's memory).
void doublingOnPieces(Ctx& c, const Fold& f, void* buf, const Pieces& pc, const void* own = nullptr);

}  // namespace sc
