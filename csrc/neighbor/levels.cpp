// hierarchical's pattern (the seed's communication-pattern phase), built
// fully distributed at creation from the node map:
//  - out-neighbours on this rank's node: level 1, direct;
//  - per remote node R, D_R = this rank's distinct out-neighbours on R. One
//    alone gets the whole block; two or more form a fan: the block is cut
//    into |D_R| chunks, one per member (level 2), and the members allgather
//    the chunks inside R (level 3). The block crosses to R once.
// Balance by load (the seed's hypergraph): a fan is a hyperedge over its
// members, of weight |D_R| - 1 (the forwards a member makes of each byte of
// its chunk). A rank's load is the weight of the hyperedges it is in, and a
// fan's chunks are inversely proportional to its members' loads, so a rank
// that sits in many fans forwards less of each.
// Three rounds of words along the remote edges: a sender tells each remote
// out-neighbour the size of its fan there; each answers its fans' senders
// with its load; the sender sends each member the fan (members, weights).
#include <map>

#include "neighbor/create.h"
#include "neighbor/meta.h"

namespace sc::nbr {
namespace {

constexpr uint64_t kWeightScale = uint64_t(1) << 20;  // weight of a rank of load 1

// The prefix sums the chunk boundaries are cut by.
void sumUp(Fan& f) {
  f.below.assign(1, 0);
  for (uint64_t w : f.weights) f.below.push_back(f.below.back() + w);
}

}  // namespace

void buildHierarchical(Topology& t, Meta& m) {
  Hierarchical& h = t.hier;
  std::map<int, std::vector<int>> byNode;  // remote node -> distinct out-neighbours there, ascending
  for (int j : t.out) {
    if (t.remote(j)) byNode[t.nodeOf[size_t(j)]].push_back(j);
    else h.intraOut.push_back(j);
  }
  std::vector<int> remoteIn;
  for (const InNbr& n : t.in) {
    if (t.remote(n.rank)) remoteIn.push_back(n.rank);
    else h.intraIn.push_back(n.rank);
  }

  // Fan sizes, sender to members.
  std::vector<Meta::Msg> sends, recvs;
  for (auto& [node, D] : byNode)
    for (int d : D) sends.push_back({d, {uint64_t(D.size())}});
  for (int s : remoteIn) recvs.push_back({s, {0}});
  m.exchange(sends, recvs);
  std::vector<int> fanSenders;
  std::vector<uint64_t> fanSize;
  uint64_t load = 0;
  for (auto& r : recvs) {
    if (r.words[0] < 2) {
      h.wholeIn.push_back(r.peer);
      continue;
    }
    fanSenders.push_back(r.peer);
    fanSize.push_back(r.words[0]);
    load += r.words[0] - 1;
  }

  // Loads, members to senders.
  sends.clear();
  recvs.clear();
  for (int s : fanSenders) sends.push_back({s, {load}});
  for (auto& [node, D] : byNode)
    if (D.size() >= 2)
      for (int d : D) recvs.push_back({d, {0}});
  m.exchange(sends, recvs);
  size_t next = 0;
  for (auto& [node, D] : byNode) {
    if (D.size() < 2) {
      h.wholeOut.push_back(D[0]);
      continue;
    }
    Fan f;
    f.sender = t.rank;
    f.members = D;
    for (size_t i = 0; i < D.size(); ++i)
      f.weights.push_back(std::max<uint64_t>(1, kWeightScale / recvs[next++].words[0]));
    sumUp(f);
    h.fansOut.push_back(std::move(f));
  }

  // The fans, senders to members: members then weights.
  sends.clear();
  recvs.clear();
  for (const Fan& f : h.fansOut)
    for (int d : f.members) {
      std::vector<uint64_t> w(f.members.begin(), f.members.end());
      w.insert(w.end(), f.weights.begin(), f.weights.end());
      sends.push_back({d, std::move(w)});
    }
  for (size_t i = 0; i < fanSenders.size(); ++i)
    recvs.push_back({fanSenders[i], std::vector<uint64_t>(2 * fanSize[i])});
  m.exchange(sends, recvs);
  for (auto& r : recvs) {
    const size_t n = r.words.size() / 2;
    Fan f;
    f.sender = r.peer;
    f.members.assign(r.words.begin(), r.words.begin() + long(n));
    f.weights.assign(r.words.begin() + long(n), r.words.end());
    sumUp(f);
    f.pos = int(std::find(f.members.begin(), f.members.end(), t.rank) - f.members.begin());
    SC_REQUIRE(f.pos < int(n), scInternalError, "hierarchical: rank ", r.peer, " lists rank ", t.rank,
               " in a fan it is not in");
    h.fansIn.push_back(std::move(f));
  }
}

}  // namespace sc::nbr
