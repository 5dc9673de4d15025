// hierarchical: the seed's three-level schedule for large blocks, over the
// pattern of levels.cpp. Per node:
//   round 1  level 1: whole blocks to and from the neighbours on this node;
//            level 2: this rank's block to each remote node, cut into chunks
//            over its out-neighbours there (whole to a lone one); each rank
//            receives its chunk of every fan it is in, straight into the
//            sender's block of recv;
//   round 2  level 3: the members of each fan allgather their chunks inside
//            the node, again straight into recv.
// Each block crosses to a remote node once instead of once per neighbour
// there; the members' forwards stay inside the node. Chunk boundaries are a
// function of the block's size and the fan's weights, so every member
// computes the same ones (allgatherv included: all members receive from the
// sender, so all know its block size).
#include "neighbor/topology.h"

namespace sc::nbr {

void hierarchical(Call& k, const void* send, void* recv, const Layout& L) {
  const Topology& t = k.t;
  const Hierarchical& h = t.hier;
  Ctx& c = k.c;
  copySelf(k, send, recv, L);
  auto block = [&](int r) { return c.at(recv, L.first(t.inNbr(r))); };

  // Round 1: levels 1 and 2.
  std::vector<P2POp> ops;
  for (int j : h.intraOut) ops.push_back(c.send(j, send, L.sendcount));
  for (int j : h.wholeOut) ops.push_back(c.send(j, send, L.sendcount));
  for (const Fan& f : h.fansOut)
    for (size_t x = 0; x < f.members.size(); ++x)
      ops.push_back(c.send(f.members[x], c.at(send, f.off(x, L.sendcount)), f.len(x, L.sendcount)));
  for (int i : h.intraIn) ops.push_back(c.recv(i, block(i), L.count(t.inNbr(i))));
  for (int i : h.wholeIn) ops.push_back(c.recv(i, block(i), L.count(t.inNbr(i))));
  for (const Fan& f : h.fansIn) {
    const size_t n = L.count(t.inNbr(f.sender)), x = size_t(f.pos);
    ops.push_back(c.recv(f.sender, block(f.sender) + f.off(x, n) * c.esz, f.len(x, n)));
  }
  c.exchange(std::move(ops));

  // Round 2: level 3, fan by fan in sender order (both ends of a pair of
  // members list their messages in that order).
  ops.clear();
  for (const Fan& f : h.fansIn) {
    const size_t n = L.count(t.inNbr(f.sender)), me = size_t(f.pos);
    char* b = block(f.sender);
    for (size_t x = 0; x < f.members.size(); ++x) {
      if (x == me) continue;
      ops.push_back(c.send(f.members[x], b + f.off(me, n) * c.esz, f.len(me, n)));
      ops.push_back(c.recv(f.members[x], b + f.off(x, n) * c.esz, f.len(x, n)));
    }
  }
  c.exchange(std::move(ops));

  for (const InNbr& n : t.in) copyRepeats(k, recv, L, n);
}

}  // namespace sc::nbr
