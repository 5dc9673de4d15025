// Per-rank traffic of each neighbour allgather schedule, derived in the test
// from the algorithms' definitions (README "Neighbourhood collectives"), not
// from the library's patterns: only the friend groups, which the library
// chooses, are read from it (and checked to be groups the definition
// allows). Zero-byte messages are not sent.
//
//  naive         a message per out-edge and per in-edge, self-loops aside.
//  combining     group G of g ranks (in its order), C(G) = the out-neighbours
//                every member has, members excluded, ascending; member t
//                delivers to C[t], C[t+g], ... Per rank: (allgatherv: a size
//                word to and from each friend), its block to and from each
//                friend, direct messages to distinct out-neighbours outside G
//                and C(G), direct receives from distinct in-neighbours s with
//                this rank neither in G(s) nor in C(G(s)); then the group's
//                blocks to its share, and one message per other group whose
//                C holds this rank.
//  hierarchical  out-neighbours on this node get whole blocks; per remote
//                node the distinct out-neighbours there, D: one gets the
//                whole block, two or more get chunk t of the block cut by
//                weights w_d = max(1, 2^20 / load(d)), load(d) = sum over the
//                fans d is in of (|fan| - 1), chunk t = [n W_<t / W,
//                n W_<t+1 / W); each member sends its chunk to the others.
//                Inter-node bytes: one block per remote node with an out-neighbour.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nbr_graphs.h"
#include "sparcoll/sparcoll.h"

namespace ntest {

struct Traffic {
  uint64_t bytesSent = 0, bytesRecv = 0, msgsSent = 0, msgsRecv = 0, interBytes = 0, interMsgs = 0;
  bool operator==(const Traffic& o) const;
  std::string str() const;
};
Traffic fromStats(const scStats_t& s);

// What the formulas need besides the graph.
struct World {
  const Graph& g;
  std::vector<int> node;                // node of every rank
  std::vector<std::vector<int>> group;  // every rank's friend group, in its order
  std::vector<size_t> elems;            // every rank's block, in elements
  size_t esz;
  bool v;  // allgatherv (combining's size words)
};

Traffic naiveTraffic(const World& w, int r);
Traffic combiningTraffic(const World& w, int r);
Traffic hierarchicalTraffic(const World& w, int r);

// C(G), ascending (empty for a group of one).
std::vector<int> commonNeighbours(const Graph& g, const std::vector<int>& group);

}  // namespace ntest
