// One neighbour allgather on one rank, checked against the sequential
// reference: every block bit-identical (allgather moves bytes, so exact
// equality), the send buffer untouched, and the gaps between and after the
// blocks of recv untouched.
#pragma once

#include <cstring>
#include <functional>
#include <string>

#include "common/harness.h"
#include "dense/dense_data.h"
#include "nbr_graphs.h"
#include "sparcoll/neighbor.h"

namespace ntest {

const char* algoStr(scNbrAlgo_t a);
extern const scNbrAlgo_t kAllAlgos[5];

struct Case {
  scNbrAlgo_t algo;
  scDataType_t dt;
  size_t count;   // allgather: sendcount; allgatherv: base of vcount()
  bool v;         // scNeighborAllGatherV with uneven blocks and gaps in recv
  uint64_t salt;  // payload seed
  std::string label() const;
};

// The layout of rank's recv and what it must hold: block e from sources[e],
// each followed (allgatherv) by a gap, in reverse slot order for odd ranks.
struct Expected {
  std::vector<size_t> counts, displs;  // elements
  size_t span = 0;                     // elements of recv, gaps included
  dtest::Bytes recv;                   // span elements; gaps hold kPoison
  dtest::Bytes send;
};
constexpr uint8_t kPoison = 0xA5;
Expected reference(const Graph& g, int rank, const Case& c);

// Where the call's buffers live: host memory by default; the GPU suite
// gives device memory and its stream.
struct Memory {
  std::function<void*(size_t)> alloc = [](size_t n) { return ::operator new(n ? n : 1); };
  std::function<void(void*)> release = [](void* p) { ::operator delete(p); };
  std::function<void(void*, const void*, size_t)> toMem = [](void* d, const void* s, size_t n) {
    if (n) std::memcpy(d, s, n);
  };
  std::function<void(void*, const void*, size_t)> fromMem = toMem;
  void* stream = nullptr;
};

// Creates g's topology on this rank; ADD_FAILURE and NULL on error.
scTopology_t makeTopology(scComm_t comm, const Graph& g, int rank);
// One checked call; false when the call itself failed (peers may then wait
// for this rank until their deadline, so stop issuing calls).
bool checkCall(scComm_t comm, scTopology_t topo, const Graph& g, int rank, const Case& c, const Memory& mem = Memory{});

}  // namespace ntest
