// The standard reduction of any P to a power of two P' = 2^floor(log2 P):
// among the first 2r ranks (r = P - P'), each even rank hands its data to the
// odd rank above it and sits out; the others renumber to 0..P'-1.
#pragma once

#include <vector>

#include "algo/ctx.h"

namespace sc {

struct Fold {
  int P, p2, r;
  explicit Fold(int P) : P(P), p2(pow2Floor(P)), r(P - pow2Floor(P)) {}
  bool folded(int rank) const { return rank < 2 * r; }         // takes part in the fold
  bool sitsOut(int rank) const { return folded(rank) && rank % 2 == 0; }
  int newRank(int rank) const { return folded(rank) ? (rank % 2 ? rank / 2 : -1) : rank - r; }
  int oldRank(int nr) const { return nr < r ? 2 * nr + 1 : nr + r; }
};

// P' contiguous element ranges indexed by new rank: piece i = [off[i], off[i+1]).
using Pieces = std::vector<size_t>;

// Recursive halving over pieces: `mine` holds this rank's full vector; on
// return `work` piece nr holds the sum of piece nr over the P' ranks.
void halvingOnPieces(Ctx& c, const Fold& f, const void* mine, void* work, const Pieces& pc);
// Recursive doubling over pieces: `buf` piece nr is filled; on return all are.
void doublingOnPieces(Ctx& c, const Fold& f, void* buf, const Pieces& pc);

}  // namespace sc
