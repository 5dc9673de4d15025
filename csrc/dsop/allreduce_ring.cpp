// DSOP "allreduce_ring" (Enderlin et al., Sec. 4.2) with the outer product
// fused into the ring: G is cut into P balanced element blocks; in reduce-
// scatter step s rank r sends block r-s-1 and receives the partial sum of block
// r-s-2 straight into G, then adds its own a b^T restricted to that block in
// one pass (kernel accumulate). A block of the local product is thus computed
// only when the ring needs it, never stored separately, and no scratch or
// separate reduction pass is needed. A ring allgather of the blocks follows.
//   sends 2nm - |B_r| - |B_{r+1}| elements (2(P-1)/P nm when P divides nm).
// In the communicator's ring order (algo/ring.cpp): positions instead of
// ranks, blocks named by the ranks at the positions; identity without a
// topology file.
#include "algo/dense.h"
#include "dsop/algos.h"

namespace sc::dsop {

void allReduceRing(Problem& pb) {
  Ctx& g = pb.g;
  const int P = pb.P(), p = g.ringPos(pb.rank());
  const Blocks E{pb.n * pb.m, size_t(P)};
  const Pairs mine = pb.local();
  auto localBlock = [&](size_t blk, bool accumulate) {
    elementRange(g.comm, pb.in(), mine, pb.m, E.off(blk), E.len(blk), g.at(pb.G, E.off(blk)), accumulate, g.stream);
  };
  if (P == 1) return localBlock(0, false);
  localBlock(size_t(g.ringRank(p - 1)), false);  // the block this rank starts the ring with
  for (int s = 0; s < P - 1; ++s) {
    const size_t sb = size_t(g.ringRank(p - s - 1)), rb = size_t(g.ringRank(p - s - 2));
    g.sendrecv(g.ringRank(p + 1), g.at(pb.G, E.off(sb)), E.len(sb), g.ringRank(p - 1), g.at(pb.G, E.off(rb)),
               E.len(rb));
    localBlock(rb, true);
  }
  ringAllGather(g, pb.G, E);  // block r is complete
}

}  // namespace sc::dsop
