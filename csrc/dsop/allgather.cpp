// DSOP baseline "allgather" (Enderlin et al., Sec. 4.1): allgather every
// (a_i, b_i), then every rank sums all P outer products itself.
//   sends (P-1)(n+m) elements per rank; computes P*n*m multiply-adds.
#include "dsop/algos.h"

namespace sc::dsop {

void allGather(Problem& pb) {
  const char* V = gatherPairs(pb);
  const size_t ld = pb.n + pb.m;
  const Pairs all{V, ld, pb.v.at(V, pb.n), ld, size_t(pb.P())};
  pb.product(all, Rect{0, pb.n, 0, pb.m}, pb.G, pb.m, false);
}

}  // namespace sc::dsop
