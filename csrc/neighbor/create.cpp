// scTopologyCreate's collective part, in order: the checks every rank agrees
// on (validate.cpp); this rank's neighbour lists; the node map (nodes.cpp);
// who else sends to each out-neighbour, which each rank tells its
// in-neighbours (the common neighbourhoods combining needs); the patterns of
// combining (friends.cpp), hierarchical (levels.cpp) and native; and the
// cost model's figures, maxima over ranks. Set-up cost and memory: README
// "Neighbourhood collectives".
#include <algorithm>
#include <map>

#include "neighbor/create.h"
#include "neighbor/meta.h"

namespace sc::nbr {

std::unique_ptr<Topology> create(scComm& comm, const Declared& d) {
  Meta m(comm);
  const Knobs kn = validate(m, d);
  auto t = std::make_unique<Topology>();
  t->comm = &comm;
  t->rank = comm.rank();
  t->size = comm.size();
  if (d.indegree > 0) t->sources.assign(d.sources, d.sources + d.indegree);
  if (d.outdegree > 0) t->destinations.assign(d.destinations, d.destinations + d.outdegree);

  std::map<int, std::vector<int>> slots;
  for (int e = 0; e < d.indegree; ++e) {
    if (t->sources[size_t(e)] == t->rank) t->selfSlots.push_back(e);
    else slots[t->sources[size_t(e)]].push_back(e);
  }
  for (auto& [r, s] : slots) t->in.push_back({r, std::move(s)});
  for (int j : t->destinations)
    if (j != t->rank) t->out.push_back(j);
  std::sort(t->out.begin(), t->out.end());
  t->out.erase(std::unique(t->out.begin(), t->out.end()), t->out.end());

  t->machineOf = machineMap(comm, m);
  t->nodeOf = kn.ranksPerNode > 0 ? virtualNodes(t->size, kn.ranksPerNode) : t->machineOf;

  // Each rank tells its in-neighbours who sends to it.
  std::vector<uint64_t> mySources;
  for (const InNbr& n : t->in) mySources.push_back(uint64_t(n.rank));
  std::vector<Meta::Msg> sends, recvs;
  for (const InNbr& n : t->in) sends.push_back({n.rank, mySources});
  for (int j : t->out) recvs.push_back({j, {}});
  m.exchangeVar(sends, recvs);
  std::vector<std::vector<int>> sourcesOfOut;
  for (auto& r : recvs) sourcesOfOut.emplace_back(r.words.begin(), r.words.end());

  buildCombining(*t, m, kn, sourcesOfOut);
  buildHierarchical(*t, m);

  // The model's figures: every algorithm's rounds, maxima over ranks (the
  // shared blocks: sums).
  t->cost[scNbrNaive] = naiveCost(*t);
  t->cost[scNbrCombining] = combiningCost(*t);
  t->cost[scNbrHierarchical] = hierarchicalCost(*t);
  std::vector<double> flat, shared;
  for (const Cost& c : t->cost)
    for (const RoundCost& r : c) {
      flat.insert(flat.end(), {r.msgs, r.interBlocks, r.intraBlocks, r.copyBlocks});
      shared.insert(shared.end(), {r.sharedIntra, r.sharedInter});
    }
  m.allReduce(flat, scMax);
  m.allReduce(shared, scSum);
  size_t i = 0, j = 0;
  for (Cost& c : t->cost)
    for (RoundCost& r : c) {
      r = {flat[i], flat[i + 1], flat[i + 2], flat[i + 3], shared[j], shared[j + 1]};
      i += 4;
      j += 2;
    }
  t->cost[scNbrNative] = t->cost[scNbrNaive];

  buildNative(*t);
  return t;
}

}  // namespace sc::nbr
