// Steps shared by the DSOP schedules: gathering the vector pairs, and the
// "compute my row block, allgather the row blocks" half of g_rabenseifner and
// all_scatter.
#include <algorithm>

#include "algo/dense.h"
#include "dsop/algos.h"

namespace sc::dsop {

void allGatherVectors(Ctx& c, void* buf, size_t count) {
  if (c.size == 1) return;
  const size_t total = count * c.size;
  // The communicator's allgather choice (config, SPARCOLL_ALGO or the model).
  switch (chooseAlgo(c.comm, Coll::AllGather, scAlgoAuto, total * c.esz)) {
    case scAlgoRing: ringAllGather(c, buf, Blocks{total, size_t(c.size)}); break;
    case scAlgoRecDbl: doublingAllGather(c, c.at(buf, c.rank * count), buf, count); break;
    case scAlgoNative:
      c.comm.transport->nativeAllGather(c.at(buf, c.rank * count), buf, count, c.dt, c.stream, c.dl);
      break;
    default: SC_THROW(scInternalError, "unresolved allgather algorithm");
  }
}

void groupedExchange(Ctx& c, const std::function<void(int, int, std::vector<P2POp>&)>& addOps) {
  const int P = c.size, r = c.rank;
  for (int d0 = 1; d0 < P; d0 += kScatterGroup) {
    std::vector<P2POp> ops;
    for (int d = d0; d < std::min(P, d0 + kScatterGroup); ++d) addOps((r + d) % P, (r - d + P) % P, ops);
    c.exchange(std::move(ops));
  }
}

const char* gatherPairs(Problem& pb) {
  Ctx& v = pb.v;
  const size_t ld = pb.n + pb.m;
  char* V = v.scratch(Scratch::DsopVectors, ld * pb.P());
  char* mine = v.at(V, pb.rank() * ld);
  v.copy(mine, pb.a, pb.n);
  v.copy(v.at(mine, pb.n), pb.b, pb.m);
  allGatherVectors(v, V, ld);
  return V;
}

void rowBlocksAllGather(Problem& pb, const Pairs& pairs, bool localRows) {
  const Blocks R = pb.rows(), GB = pb.rowBlocks();
  const int r = pb.rank();
  pb.product(pairs, Rect{localRows ? 0 : R.off(r), R.len(r), 0, pb.m}, pb.g.at(pb.G, GB.off(r)), pb.m, false);
  // Irregular blocks (n % P != 0, or none at all when n < P): the ring walks the
  // row layout, and zero-row blocks send no message.
  ringAllGather(pb.g, pb.G, GB);
}

}  // namespace sc::dsop
