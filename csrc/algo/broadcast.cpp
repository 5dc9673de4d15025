// Broadcast schedules, in place on buf, ranks numbered relative to the root
// (rel = rank - root mod P):
//  binomial           MPICH's binomial tree: rank rel receives the whole
//                     buffer from rel - lowbit(rel), then sends it to rel + m
//                     for each power of two m < lowbit(rel) (the root: < P),
//                     largest first. ceil(log2 P) rounds; for small messages.
//  scatter_allgather  van de Geijn: the same tree scatters the P balanced
//                     blocks of Blocks{count, P} (rank r ends with block r:
//                     each edge carries the blocks of the child's subtree),
//                     then a ring allgather of the blocks. About 2(P-1)/P of
//                     the buffer per rank; for large messages.
// A subtree is a range of relative ranks; its blocks, in absolute rank order,
// are one contiguous range or, where it wraps past rank P-1, two: each goes
// as its own message, in the same order on both sides.
#include "algo/dense.h"

namespace sc {
namespace {

// Rounds of the tree: ceil(log2 P).
int treeSteps(int P) {
  int s = 0;
  while ((1 << s) < P) ++s;
  return s;
}

// Lowest set bit of rel (rel > 0); the root's "parent mask" is the first
// power of two >= P.
int parentMask(int rel, int P) {
  if (rel == 0) return 1 << treeSteps(P);
  return rel & -rel;
}

int stepOf(int mask, int steps) {
  int lg = 0;
  while ((1 << lg) < mask) ++lg;
  return steps - 1 - lg;
}

// Sends (or receives) the blocks of relative ranks [a, b) to (from) peer.
void moveBlocks(Ctx& c, bool send, int peer, void* buf, const Blocks& L, int root, int a, int b) {
  const int P = c.size;
  auto segment = [&](int lo, int hi) {  // absolute blocks [lo, hi)
    const size_t off = L.off(size_t(lo)), n = L.off(size_t(hi)) - off;
    if (send) c.sendTo(peer, c.at(buf, off), n);
    else c.recvFrom(peer, c.at(buf, off), n);
  };
  const int lo = a + root, hi = b + root;
  if (hi <= P) segment(lo, hi);
  else if (lo >= P) segment(lo - P, hi - P);
  else {
    segment(lo, P);
    segment(0, hi - P);
  }
}

}  // namespace

void binomialBroadcast(Ctx& c, void* buf, size_t count, int root) {
  const int P = c.size, rel = mod(c.rank - root, P), steps = treeSteps(P), pm = parentMask(rel, P);
  if (rel != 0) {
    c.phase("binomial broadcast", stepOf(pm, steps), steps);
    c.recvFrom(mod(rel - pm + root, P), buf, count);
  }
  for (int m = pm / 2; m >= 1; m /= 2) {
    if (rel + m >= P) continue;
    c.phase("binomial broadcast", stepOf(m, steps), steps);
    c.sendTo(mod(rel + m + root, P), buf, count);
  }
}

void scatterAllGatherBroadcast(Ctx& c, void* buf, size_t count, int root) {
  const int P = c.size, rel = mod(c.rank - root, P), steps = treeSteps(P), pm = parentMask(rel, P);
  const Blocks L{count, size_t(P)};
  if (rel != 0) {
    c.phase("binomial scatter", stepOf(pm, steps), steps);
    moveBlocks(c, false, mod(rel - pm + root, P), buf, L, root, rel, std::min(rel + pm, P));
  }
  for (int m = pm / 2; m >= 1; m /= 2) {
    if (rel + m >= P) continue;
    c.phase("binomial scatter", stepOf(m, steps), steps);
    moveBlocks(c, true, mod(rel + m + root, P), buf, L, root, rel + m, std::min(rel + 2 * m, P));
  }
  ringAllGather(c, buf, L);
}

}  // namespace sc
