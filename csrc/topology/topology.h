// The network's tree from a topology file (scConfig_t.topologyFile /
// SPARCOLL_TOPOLOGY_FILE): JSON version 1, scripts/cluster's format with its
// validation rules. At creation every rank learns its machine's name
// (gethostname, or SPARCOLL_HOSTNAME for simulations and tests), the ranks'
// names are gathered, each is matched to a host of the file, and the ring
// order is the ranks sorted by (depth-first position of their host, rank):
// Patarasuk & Yuan's contention-free ring on a tree, where every link is
// crossed once each way per ring step (Lemma 6: the ranks of one host stay
// consecutive, in rank order).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "topology/comm_topo.h"

struct scComm;

namespace sc {
struct Config;
namespace topo {

struct Link {
  double rate = 0;   // bit/s, 0: unshaped (no rate given)
  double delay = 0;  // seconds, one way
};

struct Tree {
  std::string name;
  std::vector<std::string> switchName, hostName;
  std::vector<int> parent;      // switch -> parent switch, -1 for the root
  std::vector<int> depth;       // switch -> depth (root 0)
  std::vector<Link> uplink;     // switch -> its uplink (the root's unused)
  std::vector<int> hostSwitch;  // host -> its switch
  std::vector<int> hostSlots;
  std::vector<Link> hostLink;
  std::vector<int> hostDfs;    // host -> position in the depth-first order
  std::vector<int> dfsHost;    // position -> host
  std::vector<int> switchDfs;  // switch -> position of the switch in the walk
  int root = 0;

  int hosts() const { return int(hostName.size()); }
  int switches() const { return int(switchName.size()); }
  int nlinks() const { return 2 * (hosts() + switches()); }
  // Directed link ids (sparcoll.h, scCommGetLinkTraffic).
  static int hostUp(int h) { return 2 * h; }
  static int hostDown(int h) { return 2 * h + 1; }
  int switchUp(int s) const { return 2 * hosts() + 2 * s; }
  int switchDown(int s) const { return 2 * hosts() + 2 * s + 1; }
  // The directed links a message from host a to host b crosses, in order
  // (empty when a == b).
  std::vector<int> path(int a, int b) const;
  // The host a machine name denotes: the host of that name, else the host
  // whose address (scripts/cluster's: host i is 10.77.0.(i+1) of
  // 10.77.0.0/16) it is, else the host named by its first label (a fully
  // qualified "n0.example.org" is host n0); -1 when none.
  int findHost(const std::string& machine) const;
  // Rate of a directed link in bit/s (0: unshaped).
  double linkRate(int link) const;
};

// Parses a version-1 description; scInvalidArgument naming `path` and the key.
Tree parse(const std::string& text, const std::string& path);

// Ranks sorted by (hostDfs[hostOf[rank]], rank): order[i] = rank at ring position i.
std::vector<int> ringOrder(const Tree& t, const std::vector<int>& hostOf);

// The machine name of rank `rank` of P: SPARCOLL_HOSTNAME when set (one name
// for every rank, or a comma-separated list of exactly P names, entry r for
// rank r), else gethostname. Throws scInvalidArgument naming the variable.
std::string machineName(int rank, int P);

// Builds rank `rank`'s topology from the gathered names (all ranks pass the
// same names and text, so all throw the same errors): scInvalidArgument for
// a bad file or a machine the file does not list. rankOrder: keep the rings
// in rank order but count the links (SPARCOLL_RING_ORDER=rank, for comparisons).
std::shared_ptr<CommTopo> build(const std::string& text, const std::string& path,
                                const std::vector<std::string>& machines, int rank, bool rankOrder = false);
// SPARCOLL_RING_ORDER: "topology" (default) or "rank"; scInvalidArgument otherwise.
bool rankOrderWanted();

// Creation steps (core/api_comm.cpp). Nothing happens without a file.
// Refuses configurations that cannot take a topology (device communicators)
// before anything is made: scInvalidUsage.
void checkSupported(const Config& c, bool device);
// Host communicators of a transport with peers in other processes (mpi):
// gathers the ranks' names and file digests over the communicator's own
// transport and sets comm.topo. Every rank must call it.
void setupExchanged(scComm& comm);
// Local communicators (threads of this process): the names are known here.
void setupLocal(const std::vector<scComm*>& comms);
// scCommShrink: the new communicator's ranks are the old `kept` ranks, in order.
void setupShrunk(scComm& newComm, const scComm& old, const std::vector<int>& kept);

}  // namespace topo
}  // namespace sc
