// A distributed graph topology (scTopologyCreate) and the patterns of its
// neighbour allgather algorithms, computed once at creation: what this rank
// sends to whom and receives from whom, in which round. The schedules
// (naive.cpp, combining.cpp, hierarchical.cpp, native.cpp) only read them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "algo/ctx.h"
#include "core/kept_pick.h"
#include "sparcoll/neighbor.h"

namespace sc::nbr {

// A distinct in-neighbour and the blocks of recv it fills: a source listed
// twice in `sources` fills two.
struct InNbr {
  int rank;
  std::vector<int> slots;
};

// Per round of a schedule, for the cost model: the most messages and blocks a
// rank sends or receives, the blocks split by whether they cross nodes, and
// the blocks it copies locally besides (combining's packing and unpacking);
// and the blocks every rank sends, summed, by level (what a shared medium
// carries, priced at beta_shared).
struct RoundCost {
  double msgs = 0, interBlocks = 0, intraBlocks = 0, copyBlocks = 0;
  double sharedIntra = 0, sharedInter = 0;
};
using Cost = std::vector<RoundCost>;

// combining: built by friends.cpp, run by combining.cpp.
struct CombinedIn {
  int deliverer;             // the friend that brings the group's blocks here
  std::vector<int> members;  // the group in its order: the message's blocks
};
struct Combining {
  int k = 1, theta = 0;
  std::vector<int> group;                // this rank's friend group in its order; size 1: none
  int pos = 0;                           // this rank's place in it
  std::vector<int> share;                // common out-neighbours this rank brings the group's blocks to
  std::vector<int> directOut, directIn;  // distinct neighbours outside the group's pattern
  std::vector<CombinedIn> combinedIn;
  std::vector<int> groupIn;  // in-neighbours in this rank's group (their blocks come in phase 1)
};

// hierarchical: built by levels.cpp, run by hierarchical.cpp. A fan is one
// sender's block cut into chunks over its out-neighbours on one remote node.
struct Fan {
  int sender = -1;
  std::vector<int> members;       // ascending; chunk t goes to members[t]
  std::vector<uint64_t> weights;  // chunk shares (the members' inverse loads)
  int pos = -1;                   // receiving side: this rank's place among members
  std::vector<uint64_t> below;    // sums of the weights before each member, and the total
  // [off, off + len) of chunk t of an n-element block: n * below[t] / total, rounded down.
  size_t off(size_t t, size_t n) const { return size_t((unsigned __int128)below[t] * n / below.back()); }
  size_t len(size_t t, size_t n) const { return off(t + 1, n) - off(t, n); }
};
struct Hierarchical {
  std::vector<int> intraOut, intraIn;  // level 1: distinct neighbours on this node
  std::vector<int> wholeOut, wholeIn;  // remote neighbours alone on their node: whole blocks
  std::vector<Fan> fansOut;            // level 2: this rank's block, per remote node
  std::vector<Fan> fansIn;             // levels 2 and 3: chunks this rank gets and spreads, by sender
};

// The blocks of one call, in elements: block e (from sources[e]) has
// counts[e] elements at recv + displs[e]; this rank sends sendcount.
struct Layout {
  size_t sendcount = 0;
  std::vector<size_t> counts, displs;
  bool uniform = true;  // allgather: every block has sendcount elements
  size_t first(const InNbr& n) const { return displs[size_t(n.slots[0])]; }
  size_t count(const InNbr& n) const { return counts[size_t(n.slots[0])]; }
};

class Topology {
 public:
  scComm* comm = nullptr;
  int rank = 0, size = 1;
  std::vector<int> sources, destinations;
  std::vector<InNbr> in;       // distinct in-neighbours but this rank, ascending
  std::vector<int> out;        // distinct out-neighbours but this rank, ascending
  std::vector<int> selfSlots;  // blocks this rank fills with its own (self-loops)
  std::vector<int> nodeOf;     // node of every rank, the lowest rank on it: the schedules' (maybe virtual)
  std::vector<int> machineOf;  // the same for the machines: the cost model's (equal to nodeOf unless virtual)
  Combining comb;
  Hierarchical hier;
  Cost cost[scNumNbrAlgos];      // per algorithm, maxima over ranks (agreed at creation)
  std::shared_ptr<void> native;  // the transport's own neighbourhood (MPI: dist-graph communicator)
  Layout uniform;                // the allgather's last layout, reused while its sendcount stays
  // naive's and native's messages, kept from call to call (no allocation
  // once warm; calls on a topology never overlap: its communicator holds
  // each one), and the allgather call they were made for (keptNaiveOps).
  mutable std::vector<P2POp> ops;
  struct OpsKey {
    const void* send = nullptr;
    const void* recv = nullptr;
    size_t sendcount = 0;
    int dt = -1;
    bool operator==(const OpsKey& o) const {
      return send == o.send && recv == o.recv && sendcount == o.sendcount && dt == o.dt;
    }
  };
  mutable OpsKey opsKey;
  // The allgather's last arguments that passed every check (api_neighbor.cpp).
  struct Checked {
    OpsKey call;
    int algo = -1;
    const void* stream = nullptr;
    bool operator==(const Checked& o) const { return call == o.call && algo == o.algo && stream == o.stream; }
  };
  Checked checked;
  KeptPick lastPick;  // auto's (model.cpp: chooseAlgo)

  const InNbr& inNbr(int r) const;  // r must be an in-neighbour
  bool remote(int r) const { return nodeOf[size_t(r)] != nodeOf[size_t(rank)]; }
  bool otherMachine(int r) const { return machineOf[size_t(r)] != machineOf[size_t(rank)]; }
};

// A call on a topology: its Ctx counts node-crossing traffic by the topology's nodes.
struct Call {
  Call(const Topology& t, scDataType_t dt, void* stream) : t(t), c(*t.comm, dt, scSum, stream) { c.nodeOf = &t.nodeOf; }
  const Topology& t;
  Ctx c;
};

// The schedules. recv's blocks are filled as the Layout says.
void naive(Call& k, const void* send, void* recv, const Layout& L);
void combining(Call& k, const void* send, void* recv, const Layout& L);
void hierarchical(Call& k, const void* send, void* recv, const Layout& L);
// Grouped send/recv on the transport itself (uncounted), or its own
// neighbourhood collective when it has one (MPI).
void native(Call& k, const void* send, void* recv, const Layout& L);

// naive's messages, into ops (native posts them too).
void naiveOps(const Call& k, const void* send, void* recv, const Layout& L, std::vector<P2POp>& ops);
// The same in the topology's ops, kept while an allgather repeats its
// buffers, count and type (a loop's calls): made again only when they
// change, or for every allgatherv (its layout is the caller's each time).
std::vector<P2POp>& keptNaiveOps(const Call& k, const void* send, void* recv, const Layout& L);

// Shared by the schedules: the self-loop blocks, and the other blocks of an
// in-neighbour listed more than once, copied from its first. (Inline: on
// every call's path, and most topologies have no self-loop.)
inline void copySelf(Call& k, const void* send, void* recv, const Layout& L) {
  for (int e : k.t.selfSlots) k.c.copy(k.c.at(recv, L.displs[size_t(e)]), send, L.sendcount);
}
void copyRepeats(Call& k, void* recv, const Layout& L, const InNbr& n);

// The cost model (model.cpp): algo's terms (native: naive's), and its
// predicted seconds for blocks of `bytes`, the terms priced at that size.
scNbrCostTerms_t costTerms(const Topology& t, scNbrAlgo_t algo);
double predictSeconds(const Topology& t, scNbrAlgo_t algo, double bytes);
scNbrAlgo_t chooseAlgo(const Topology& t, double bytes);
// auto's pick worked out (chooseAlgo keeps it), and the kept one for a
// whole number of bytes, inline for a call's path.
scNbrAlgo_t pickAlgo(const Topology& t, double bytes);
inline scNbrAlgo_t chooseAlgo(const Topology& t, uint64_t bytes) {
  return scNbrAlgo_t(t.lastPick.get(bytes, [&] { return pickAlgo(t, double(bytes)); }));
}

}  // namespace sc::nbr
