// A communicator's topology as the schedules see it (algo/ctx.h): the ring
// order and the links to every peer. The tree and the parser: topology.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sc::topo {

struct Tree;

// A communicator's topology: the tree, every rank's host, the ring order and
// its inverse, the links to each peer, and this rank's bytes per link.
struct CommTopo {
  std::shared_ptr<const Tree> tree;
  std::string path;
  std::vector<std::string> machine;       // every rank's machine name, as gathered
  std::vector<int> hostOf;                // rank -> host
  std::vector<int> order, pos;            // ring position -> rank, rank -> position
  std::vector<std::vector<int>> linksTo;  // peer -> directed links from this rank's host to the peer's
  std::vector<uint64_t> linkBytes;        // per directed link: this rank's sends' bytes
};

}  // namespace sc::topo
