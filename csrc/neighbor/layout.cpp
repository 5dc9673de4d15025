// What every schedule shares: finding an in-neighbour's blocks, and the local
// copies that stand in for messages (self-loops, repeated sources).
#include <algorithm>

#include "neighbor/topology.h"

namespace sc::nbr {

const InNbr& Topology::inNbr(int r) const {
  auto it = std::lower_bound(in.begin(), in.end(), r, [](const InNbr& n, int x) { return n.rank < x; });
  SC_REQUIRE(it != in.end() && it->rank == r, scInternalError, "rank ", r, " is not an in-neighbour of rank ", rank);
  return *it;
}

// A source listed several times sends its block once; the copies fill the rest.
void copyRepeats(Call& k, void* recv, const Layout& L, const InNbr& n) {
  for (size_t s = 1; s < n.slots.size(); ++s)
    k.c.copy(k.c.at(recv, L.displs[size_t(n.slots[s])]), k.c.at(recv, L.first(n)), L.count(n));
}

}  // namespace sc::nbr
