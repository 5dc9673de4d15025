// Which ranks share a node. Each rank finds a key for its machine — the
// lowest rank of its MPI shared-memory split when the transport is MPI
// (neighbor/mpi/), a hash of the host name elsewhere — the keys are gathered,
// and a machine is named by the lowest rank on it. SPARCOLL_MACHINES=M
// replaces them with M blocks of consecutive ranks. The schedules use these
// nodes, unless SPARCOLL_RANKS_PER_NODE=k makes virtual nodes of k
// consecutive ranks (tests and benchmarks on one machine). The cost model
// prices bytes by the machines either way: virtual nodes on one machine share
// its memory, and a byte between them costs what any intra-node byte costs.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>

#include "core/env.h"
#include "neighbor/create.h"
#include "neighbor/meta.h"
#include "neighbor/native.h"

namespace sc::nbr {
namespace {

uint64_t hostKey() {
  char name[HOST_NAME_MAX + 1] = {};
  gethostname(name, HOST_NAME_MAX);
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a
  for (const char* p = name; *p; ++p) h = (h ^ uint64_t(uint8_t(*p))) * 0x100000001B3ull;
  return h;
}

}  // namespace

std::vector<int> machineMap(scComm& comm, Meta& m) {
  const int P = comm.size();
  std::vector<int> nodeOf(size_t(P), 0);
  // SPARCOLL_MACHINES=M: M blocks of consecutive ranks, as the cost model's
  // machine count (and sparcoll-tune's split) take them. Every rank must
  // read the same M, or their maps (and hierarchical's schedule) would differ.
  const std::vector<uint64_t> ms = m.allGather(uint64_t(comm.cfg.machinesEnv));
  for (int r = 0; r < P; ++r)
    SC_ARG(ms[size_t(r)] == ms[0], env::name(env::Var::Machines), " differs between ranks: rank 0 has ",
           ms[0] ? std::to_string(ms[0]) : std::string("none"), ", rank ", r, " has ",
           ms[size_t(r)] ? std::to_string(ms[size_t(r)]) : std::string("none"));
  if (const int M = int(std::min<uint64_t>(ms[0], uint64_t(P))); M > 0) {
    for (int r = 0; r < P; ++r) {
      const int b = int(int64_t(r) * M / P);  // block b starts at the first rank q with q M / P = b
      nodeOf[size_t(r)] = int((int64_t(b) * P + M - 1) / M);
    }
    return nodeOf;
  }
  uint64_t key = 0;
  if (!mpiNodeKey(comm, &key)) key = hostKey();
  const std::vector<uint64_t> keys = m.allGather(key);
  std::unordered_map<uint64_t, int> lowest;
  for (int r = 0; r < P; ++r) nodeOf[size_t(r)] = lowest.try_emplace(keys[size_t(r)], r).first->second;
  return nodeOf;
}

std::vector<int> virtualNodes(int P, int ranksPerNode) {
  std::vector<int> nodeOf(size_t(P), 0);
  for (int r = 0; r < P; ++r) nodeOf[size_t(r)] = r - r % ranksPerNode;
  return nodeOf;
}

}  // namespace sc::nbr
