// DSOP baseline "allreduce" (Enderlin et al., Sec. 4.1): every rank forms its
// own outer product a b^T in G, then G is summed by the communicator's dense
// allreduce — whichever algorithm scAllReduce resolves scAlgoAuto to
// (scConfig_t.algo, SPARCOLL_ALGO, else the model), native (MPI_Allreduce /
// ncclAllReduce, the paper's baseline) included.
//   sends 2(P-1)/P n m elements per rank with ring; computes n*m products.
#include "dsop/algos.h"

namespace sc::dsop {

void allReduce(Problem& pb) {
  pb.product(pb.local(), Rect{0, pb.n, 0, pb.m}, pb.G, pb.m, false);
  if (pb.P() == 1) return;
  Ctx& g = pb.g;
  const scResult_t r = scAllReduce(pb.G, pb.G, pb.n * pb.m, g.dt, scSum, scAlgoAuto, &g.comm, g.stream);
  SC_REQUIRE(r == scSuccess, r, "the dense allreduce of the outer products failed: ", g.comm.lastError);
}

}  // namespace sc::dsop
