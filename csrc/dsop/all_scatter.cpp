// DSOP "all_scatter" (the future work of Enderlin et al., Sec. 7): rank q only
// needs rows R_q of every a_i, so instead of allgathering whole vectors every
// rank sends each peer q the slice a_i[R_q] together with b_i — an irregular
// all-to-all, posted as grouped send/recv rounds (groupedExchange). Each rank
// then computes its row block from the P slices, and the row blocks are
// ring-allgathered as in g_rabenseifner.
//   sends (n - rows(r)) + (P-1)m + nm - rows(r+1)m elements: the g_rabenseifner
//   figure minus (P-2)n + rows(r) — never more, less for P > 2 or rows(r) > 0.
#include "dsop/algos.h"

namespace sc::dsop {

void allScatter(Problem& pb) {
  Ctx& v = pb.v;
  const int P = pb.P(), r = pb.rank();
  const Blocks R = pb.rows();
  const size_t mine = R.len(r), m = pb.m;
  // Receive layout: P slices of my rows (pair q at q*mine), then P b vectors.
  char* A = v.scratch(Scratch::DsopRows, P * (mine + m));
  char* B = v.at(A, P * mine);
  v.copy(v.at(A, r * mine), v.at(pb.a, R.off(r)), mine);
  v.copy(v.at(B, r * m), pb.b, m);
  groupedExchange(v, [&](int to, int from, std::vector<P2POp>& ops) {
    ops.push_back(v.send(to, v.at(pb.a, R.off(to)), R.len(to)));
    ops.push_back(v.send(to, pb.b, m));
    ops.push_back(v.recv(from, v.at(A, from * mine), mine));
    ops.push_back(v.recv(from, v.at(B, from * m), m));
  });
  rowBlocksAllGather(pb, Pairs{A, mine, B, m, size_t(P)}, true);
}

}  // namespace sc::dsop
