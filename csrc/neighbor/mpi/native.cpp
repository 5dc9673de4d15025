// native on the MPI transport: MPI_Ineighbor_allgatherv on a dist-graph
// communicator with the topology's edges, made once with the topology
// (MPI_Dist_graph_create_adjacent: unweighted, no reordering, so every rank
// keeps its number), and completed under the call's deadline. Also the node
// key of nodes.cpp: MPI_Comm_split_type(SHARED) names a node by its lowest
// rank. Both MPI constructors block; they run after every rank has passed
// the topology's checks, so all ranks reach them.
#include <mpi.h>

#include <climits>

#include "neighbor/native.h"
#include "transport/mpi/util.h"

namespace sc::nbr {
namespace {

MPI_Comm parentOf(const scComm& comm) {
  const void* c = comm.transport->mpiComm();
  return c ? *static_cast<const MPI_Comm*>(c) : MPI_COMM_NULL;
}

bool sharedMemoryKey(scComm& comm, uint64_t* key) {
  const MPI_Comm parent = parentOf(comm);
  if (parent == MPI_COMM_NULL) return false;
  MPI_Comm local;
  mpiCheck(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
  // The split keeps the parent's order, so local rank 0 is the node's lowest rank.
  MPI_Group lg, pg;
  MPI_Comm_group(local, &lg);
  MPI_Comm_group(parent, &pg);
  int zero = 0, lowest = 0;
  MPI_Group_translate_ranks(lg, 1, &zero, pg, &lowest);
  MPI_Group_free(&lg);
  MPI_Group_free(&pg);
  MPI_Comm_free(&local);
  *key = uint64_t(lowest);
  return true;
}

std::shared_ptr<void> distGraph(const Topology& t) {
  const MPI_Comm parent = parentOf(*t.comm);
  if (parent == MPI_COMM_NULL) return nullptr;
  const int none = 0;
  auto* g = new MPI_Comm(MPI_COMM_NULL);
  const int rc =
      MPI_Dist_graph_create_adjacent(parent, int(t.sources.size()), t.sources.empty() ? &none : t.sources.data(),
                                     MPI_UNWEIGHTED, int(t.destinations.size()),
                                     t.destinations.empty() ? &none : t.destinations.data(), MPI_UNWEIGHTED,
                                     MPI_INFO_NULL, 0, g);
  if (rc != MPI_SUCCESS) delete g;
  mpiCheck(rc, "MPI_Dist_graph_create_adjacent");
  MPI_Comm_set_errhandler(*g, MPI_ERRORS_RETURN);
  return std::shared_ptr<void>(g, [](void* p) {
    auto* c = static_cast<MPI_Comm*>(p);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(c);
    delete c;
  });
}

int bytesAsInt(size_t elems, size_t esz, const char* what) {
  SC_ARG(elems <= size_t(INT_MAX) / esz, "native neighbour allgather on MPI: ", what, " of ", elems * esz,
         " bytes exceeds MPI's int counts (use another algorithm)");
  return int(elems * esz);
}

void neighborAllGather(Call& k, const void* send, void* recv, const Layout& L) {
  const size_t esz = k.c.esz;
  std::vector<int> counts, displs;
  for (size_t e = 0; e < L.counts.size(); ++e) {
    counts.push_back(bytesAsInt(L.counts[e], esz, "a block"));
    displs.push_back(bytesAsInt(L.displs[e], esz, "a displacement"));
  }
  char none = 0;  // MPI rejects NULL buffers even for zero bytes
  int zero = 0;
  MPI_Request req;
  mpiCheck(MPI_Ineighbor_allgatherv(send ? send : &none, bytesAsInt(L.sendcount, esz, "the block"), MPI_BYTE,
                                    recv ? recv : &none, counts.empty() ? &zero : counts.data(),
                                    displs.empty() ? &zero : displs.data(), MPI_BYTE,
                                    *static_cast<MPI_Comm*>(k.t.native.get()), &req),
           "MPI_Ineighbor_allgatherv");
  k.t.comm->transport->waitMpi(&req, k.c.dl);
}

}  // namespace

SC_PROVIDE(mpiNodeKey, sharedMemoryKey);
SC_PROVIDE(mpiNeighborhood, distGraph);
SC_PROVIDE(mpiNeighborAllGather, neighborAllGather);

}  // namespace sc::nbr
