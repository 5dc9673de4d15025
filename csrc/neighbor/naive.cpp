// naive: how MPI libraries serve a neighbour allgather (Open MPI's coll/basic,
// MPICH's linear algorithm): one round, with a send per out-edge and a
// receive per in-edge, in declaration order (a repeated edge is a repeated
// message). A self-loop is a local copy. Every rank sends outdegree and
// receives indegree messages, self-loops aside.
#include "neighbor/topology.h"

namespace sc::nbr {

void naiveOps(const Call& k, const void* send, void* recv, const Layout& L, std::vector<P2POp>& ops) {
  const Topology& t = k.t;
  ops.clear();
  for (int j : t.destinations)
    if (j != t.rank) ops.push_back(k.c.send(j, send, L.sendcount));
  for (size_t e = 0; e < t.sources.size(); ++e)
    if (t.sources[e] != t.rank) ops.push_back(k.c.recv(t.sources[e], k.c.at(recv, L.displs[e]), L.counts[e]));
}

std::vector<P2POp>& keptNaiveOps(const Call& k, const void* send, void* recv, const Layout& L) {
  const Topology& t = k.t;
  // An allgather's layout follows from its sendcount; its messages then
  // from the buffers and the element size. None has zero bytes (a zero
  // sendcount returns before any schedule), so posting removes none of them.
  const Topology::OpsKey key{send, recv, L.sendcount, int(k.c.dt)};
  if (L.uniform && L.sendcount && t.opsKey == key) return t.ops;
  naiveOps(k, send, recv, L, t.ops);
  t.opsKey = L.uniform && L.sendcount ? key : Topology::OpsKey{};
  return t.ops;
}

void naive(Call& k, const void* send, void* recv, const Layout& L) {
  copySelf(k, send, recv, L);
  std::vector<P2POp>& ops = keptNaiveOps(k, send, recv, L);
  if (!ops.empty()) k.c.exchange(ops);  // a rank without neighbours (but itself) posts nothing
}

}  // namespace sc::nbr
