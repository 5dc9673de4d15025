// combining: message combining over friend groups, for small blocks
// (Ghazimirsaeed et al., after Mirsadeghi et al.). The pattern comes from
// friends.cpp. A rank in a group of g:
//   round 1  sends its block to the g-1 friends and receives theirs into the
//            group buffer (g blocks, in the group's order); meanwhile, edges
//            outside the group's pattern go direct, one message per distinct
//            neighbour;
//   round 2  sends the whole group buffer, one message, to each common
//            out-neighbour in its share; receives one such message from each
//            group that delivers here.
// So a rank sends g-1 + |direct| + |share| messages instead of one per
// out-edge. Received group messages are unpacked into recv's blocks.
// allgatherv first tells the friends the size of each block (a round of
// 8-byte messages, read back to the host on device communicators).
#include <numeric>

#include "neighbor/meta.h"
#include "neighbor/topology.h"

namespace sc::nbr {
namespace {

// The sizes (elements) of the group's blocks, in the group's order.
std::vector<size_t> groupCounts(Call& k, const Layout& L) {
  const Combining& p = k.t.comb;
  std::vector<size_t> n(p.group.size(), L.sendcount);
  if (L.uniform || p.group.size() < 2) return n;
  std::vector<Meta::Msg> sends, recvs;
  for (int f : p.group)
    if (f != k.t.rank) {
      sends.push_back({f, {uint64_t(L.sendcount)}});
      recvs.push_back({f, {0}});
    }
  Meta(*k.t.comm, k.c.stream, &k.t.nodeOf).exchange(sends, recvs);
  size_t i = 0;
  for (size_t m = 0; m < p.group.size(); ++m)
    if (p.group[m] != k.t.rank) n[m] = size_t(recvs[i++].words[0]);
  return n;
}

}  // namespace

void combining(Call& k, const void* send, void* recv, const Layout& L) {
  const Topology& t = k.t;
  const Combining& p = t.comb;
  Ctx& c = k.c;
  copySelf(k, send, recv, L);

  const std::vector<size_t> gn = groupCounts(k, L);
  std::vector<size_t> goff(gn.size() + 1, 0);
  std::partial_sum(gn.begin(), gn.end(), goff.begin() + 1);
  char* gbuf = c.scratch(Scratch::NbrGroup, goff.back());
  auto member = [&](int r) { return size_t(std::find(p.group.begin(), p.group.end(), r) - p.group.begin()); };

  // Round 1: the friends' exchange, and the direct edges.
  std::vector<P2POp> ops;
  if (p.group.size() > 1) c.copy(c.at(gbuf, goff[size_t(p.pos)]), send, L.sendcount);
  for (size_t m = 0; m < p.group.size(); ++m) {
    if (int(m) == p.pos) continue;
    ops.push_back(c.send(p.group[m], send, L.sendcount));
    ops.push_back(c.recv(p.group[m], c.at(gbuf, goff[m]), gn[m]));
  }
  for (int j : p.directOut) ops.push_back(c.send(j, send, L.sendcount));
  for (int i : p.directIn) {
    const InNbr& n = t.inNbr(i);
    ops.push_back(c.recv(i, c.at(recv, L.first(n)), L.count(n)));
  }
  c.exchange(std::move(ops));

  // Round 2: the group's blocks to this rank's share; other groups' blocks in.
  // Incoming group messages land in one staging buffer, in combinedIn order.
  std::vector<size_t> inOff(p.combinedIn.size() + 1, 0);
  for (size_t x = 0; x < p.combinedIn.size(); ++x) {
    size_t n = 0;
    for (int r : p.combinedIn[x].members) n += L.count(t.inNbr(r));
    inOff[x + 1] = inOff[x] + n;
  }
  char* stage = c.scratch(Scratch::NbrStage, inOff.back());
  ops.clear();
  for (int j : p.share) ops.push_back(c.send(j, gbuf, goff.back()));
  for (size_t x = 0; x < p.combinedIn.size(); ++x)
    ops.push_back(c.recv(p.combinedIn[x].deliverer, c.at(stage, inOff[x]), inOff[x + 1] - inOff[x]));
  c.exchange(std::move(ops));

  // Unpacking: every block into its first slot, then the repeats.
  for (size_t x = 0; x < p.combinedIn.size(); ++x) {
    size_t off = inOff[x];
    for (int r : p.combinedIn[x].members) {
      const InNbr& n = t.inNbr(r);
      c.copy(c.at(recv, L.first(n)), c.at(stage, off), L.count(n));
      off += L.count(n);
      copyRepeats(k, recv, L, n);
    }
  }
  for (int i : p.groupIn) {
    const InNbr& n = t.inNbr(i);
    c.copy(c.at(recv, L.first(n)), c.at(gbuf, goff[member(i)]), L.count(n));
    copyRepeats(k, recv, L, n);
  }
  for (int i : p.directIn) copyRepeats(k, recv, L, t.inNbr(i));
}

}  // namespace sc::nbr
