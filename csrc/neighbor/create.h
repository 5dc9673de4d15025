// scTopologyCreate's steps, run in order by create.cpp: the checks every rank
// agrees on (validate.cpp), the node map (nodes.cpp), the neighbour lists,
// each algorithm's pattern (friends.cpp, levels.cpp, native.cpp) and the cost
// model's figures (model.cpp).
#pragma once

#include <memory>
#include <vector>

#include "neighbor/topology.h"

namespace sc::nbr {

class Meta;

// Environment knobs, read once per creation; a malformed value is a bad
// argument like any other.
struct Knobs {
  int ranksPerNode = 0;  // SPARCOLL_RANKS_PER_NODE; 0: the machine's nodes
  int k = 0;             // SPARCOLL_NBR_K; 0: the model's
  int theta = -1;        // SPARCOLL_NBR_THETA; -1: the model's
};

// One rank's arguments as passed.
struct Declared {
  const int* sources;
  int indegree;
  const int* destinations;
  int outdegree;
  bool topoNull;  // the output handle pointer is NULL
};

// Throws scInvalidArgument on every rank when any rank passed a bad argument
// or knob, or when the declared edges are not symmetric.
Knobs validate(Meta& m, const Declared& d);
std::unique_ptr<Topology> create(scComm& comm, const Declared& d);

// The machines (collective: an allgather of keys), and the virtual nodes of
// SPARCOLL_RANKS_PER_NODE (local), each as the lowest rank on the node of every rank.
std::vector<int> machineMap(scComm& comm, Meta& m);
std::vector<int> virtualNodes(int P, int ranksPerNode);
void buildCombining(Topology& t, Meta& m, const Knobs& kn, const std::vector<std::vector<int>>& sourcesOfOut);
void buildHierarchical(Topology& t, Meta& m);
void buildNative(Topology& t);

// Each algorithm's rounds as this rank sees them (create.cpp takes the
// maximum over ranks).
Cost naiveCost(const Topology& t);
Cost combiningCost(const Topology& t);
Cost hierarchicalCost(const Topology& t);

}  // namespace sc::nbr
