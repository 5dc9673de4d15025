// DSOP "Generalized Rabenseifner" (Enderlin et al., Sec. 4.3): Rabenseifner's
// reduce-scatter is replaced by an allgather of the vectors — each rank then
// computes its contiguous row block of G from all P pairs (rows balanced to
// within one; a rank may own none when n < P) — and the allgather of the
// blocks distributes G.
//   sends (P-1)(n+m) + nm - rows(r+1) m elements; computes n*m multiply-adds.
#include "dsop/algos.h"

namespace sc::dsop {

void gRabenseifner(Problem& pb) {
  const char* V = gatherPairs(pb);
  const size_t ld = pb.n + pb.m;
  rowBlocksAllGather(pb, Pairs{V, ld, pb.v.at(V, pb.n), ld, size_t(pb.P())}, false);
}

}  // namespace sc::dsop
