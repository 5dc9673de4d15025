// C API of the topology file (sparcoll.h: scCommGetLinkTraffic, scCommGetRingOrder).
#include <algorithm>

#include "core/api_guard.h"
#include "topology/topology.h"

using namespace sc;

// Read like the statistics: held as a call (the calls write the counters).
extern "C" scResult_t scCommGetLinkTraffic(scComm_t comm, uint64_t* bytes, int* nlinks) {
  return scCall(comm, [&] {
    SC_ARG(comm && nlinks, "NULL argument");
    SC_ARG(*nlinks >= 0, "*nlinks = ", *nlinks, " is negative (the room in bytes)");
    SC_ARG(*nlinks == 0 || bytes, "bytes is NULL with *nlinks = ", *nlinks);
    const int room = *nlinks;
    if (!comm->topo) {
      *nlinks = 0;
      return;
    }
    const auto& b = comm->topo->linkBytes;
    std::copy_n(b.begin(), std::min<size_t>(size_t(room), b.size()), bytes);
    *nlinks = int(b.size());
  });
}

extern "C" scResult_t scCommGetRingOrder(scComm_t comm, int* order) {
  return scGuard(comm, [&] {
    SC_ARG(comm && order, "NULL argument");
    for (int i = 0; i < comm->size(); ++i) order[i] = comm->topo ? comm->topo->order[size_t(i)] : i;
  });
}
