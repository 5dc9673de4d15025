// native without a library collective to call: naive's messages posted on the
// transport directly, as one group (ncclGroupStart/End on nccl), outside
// sparcoll's traffic counters like every native call.
#include <algorithm>

#include "neighbor/create.h"
#include "neighbor/native.h"

namespace sc::nbr {
namespace {

bool notMpiKey(scComm&, uint64_t*) { return false; }
std::shared_ptr<void> notMpiNeighborhood(const Topology&) { return nullptr; }
void notMpiAllGather(Call&, const void*, void*, const Layout&) {
  SC_THROW(scInternalError, "MPI neighbourhood collective called in a build without MPI");
}

}  // namespace

ToolkitFn<bool(scComm&, uint64_t*)> mpiNodeKey{notMpiKey};
ToolkitFn<std::shared_ptr<void>(const Topology&)> mpiNeighborhood{notMpiNeighborhood};
ToolkitFn<void(Call&, const void*, void*, const Layout&)> mpiNeighborAllGather{notMpiAllGather};

void buildNative(Topology& t) { t.native = mpiNeighborhood(t); }

void native(Call& k, const void* send, void* recv, const Layout& L) {
  if (k.t.native) {
    mpiNeighborAllGather(k, send, recv, L);
    return;
  }
  copySelf(k, send, recv, L);
  std::vector<P2POp>& ops = keptNaiveOps(k, send, recv, L);
  ops.erase(std::remove_if(ops.begin(), ops.end(), [](const P2POp& o) { return o.bytes == 0; }), ops.end());
  if (auto round = k.t.comm->transport->post(ops, k.c.stream, k.c.dl)) round->wait(k.c.dl);
}

}  // namespace sc::nbr
