/*
 * sparcoll — neighbourhood collectives on distributed graph topologies.
 *
 * A topology is a directed graph over the ranks of a communicator, declared
 * collectively with the semantics of MPI_Dist_graph_create_adjacent
 * (unweighted): each rank lists the ranks it receives from (`sources`, its
 * in-edges) and the ranks it sends to (`destinations`, its out-edges).
 * Multi-edges and self-loops are allowed. A neighbour allgather then sends
 * this rank's block along every out-edge and receives one block per in-edge.
 *
 * Algorithms (README "Neighbourhood collectives" has the traffic of each):
 *  naive         one round: a send per out-edge, a receive per in-edge (what
 *                MPI libraries do).
 *  combining     small blocks: ranks sharing more than theta out-neighbours
 *                form friend groups of at most k; friends exchange their
 *                blocks, then each sends the group's blocks in one message to
 *                its 1/k share of the common out-neighbours (Ghazimirsaeed et
 *                al.; Mirsadeghi et al.). Other edges go direct. theta and k
 *                come from the alpha-beta model; env SPARCOLL_NBR_THETA and
 *                SPARCOLL_NBR_K override them (k = 1: no groups).
 *  hierarchical  large blocks, three levels per node: direct exchange inside
 *                the node; a sender cuts its block into chunks, one per
 *                out-neighbour on a remote node, balanced by those ranks'
 *                load; they allgather the chunks inside their node. A block
 *                crosses to a remote node once. Nodes: MPI_Comm_split_type
 *                (SHARED) on mpi, the host name otherwise; env
 *                SPARCOLL_RANKS_PER_NODE=k makes virtual nodes of k
 *                consecutive ranks.
 *  native        MPI_Neighbor_allgather(v) on a dist-graph communicator with
 *                the same edges (mpi); grouped send/recv (nccl, local).
 *                Not counted in scStats_t, like every native call.
 *  auto          a tuning file's neighbor_allgather rule when one matches,
 *                else the alpha-beta model over each algorithm's rounds,
 *                messages and intra-/inter-node bytes (figures agreed at
 *                creation; README "Cost model").
 *
 * Buffers follow sparcoll.h (host or device memory as the communicator's
 * transport expects; device calls are stream-ordered on `stream`). `recv`
 * must not overlap `send`. Every rank must pass the same algo and, for
 * scNeighborAllGather, the same sendcount and dtype. Traffic of the scheduled
 * algorithms is counted in scCommGetStats, inter-node traffic apart.
 *
 * This header is self-contained C; sparcoll.h includes it.
 */
#ifndef SPARCOLL_NEIGHBOR_H_
#define SPARCOLL_NEIGHBOR_H_

#include <stddef.h>

#include "sparcoll/sparcoll.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct scTopology* scTopology_t;

typedef enum SC_ENUM_BASE {
  scNbrAuto = 0,
  scNbrNaive = 1,
  scNbrCombining = 2,
  scNbrHierarchical = 3,
  scNbrNative = 4,
  scNumNbrAlgos = 5
} scNbrAlgo_t;

/* Collective over every rank of `comm`. sources[0..indegree) and
 * destinations[0..outdegree) are ranks of comm, in any order, repeats allowed;
 * either array may be NULL when its degree is 0. Every edge must be declared
 * by both ends: rank j lists i in `destinations` exactly as often as rank i
 * lists j in `sources`. Any bad argument on any rank (negative degree, NULL
 * array with a positive degree, a rank outside [0, size), NULL topo, an
 * asymmetric declaration) makes the call return scInvalidArgument on every
 * rank, with a message naming the rank and argument, or one offending edge;
 * *topo is then NULL. The communication patterns of every algorithm are
 * computed here, once (cost: README). The topology refers to `comm`: destroy
 * it before the communicator. Creation communicates on the legacy default
 * stream of device communicators. */
scResult_t scTopologyCreate(scTopology_t* topo, scComm_t comm, int indegree, const int* sources, int outdegree,
                            const int* destinations);

/* Local; frees the patterns. A destroyed (or never created) handle is
 * rejected with scInvalidArgument by every call, this one included. Safe
 * against calls of other threads on topo: its queries are waited for; while
 * another thread is inside a call on its communicator (a neighbour
 * allgather...) it returns scInvalidUsage naming that call. */
scResult_t scTopologyDestroy(scTopology_t topo);

/* Degrees of this rank as declared. */
scResult_t scTopologyDegrees(scTopology_t topo, int* indegree, int* outdegree);

/* send: sendcount elements of dt. recv: indegree blocks of sendcount
 * elements, block e from sources[e] (MPI's order; a source listed twice fills
 * two blocks). A call with the same send, recv, sendcount, dt, algo and
 * stream as the topology's last call that passed its checks is not checked
 * again (as a loop repeats its call), but for the communicator's state: a
 * buffer freed and allocated again at the same address is taken to be the
 * same kind of memory (host or device) as before. */
scResult_t scNeighborAllGather(const void* send, size_t sendcount, void* recv, scDataType_t dt, scNbrAlgo_t algo,
                               scTopology_t topo, void* stream);

/* As scNeighborAllGather with blocks of their own sizes: block e (from
 * sources[e]) has recvcounts[e] elements at recv + displs[e] elements, and
 * must be exactly the sendcount that rank passes. Blocks must not overlap.
 * auto agrees on the largest block over all ranks first (one 8-byte
 * allreduce); pass an algorithm to avoid it. */
scResult_t scNeighborAllGatherV(const void* send, size_t sendcount, void* recv, const size_t* recvcounts,
                                const size_t* displs, scDataType_t dt, scNbrAlgo_t algo, scTopology_t topo,
                                void* stream);

/* The algorithm scNbrAuto picks for blocks of `bytes` bytes. */
scResult_t scNeighborAlgoFor(scTopology_t topo, size_t bytes, scNbrAlgo_t* algo);

/* The cost model's prediction for a neighbour allgather of blocks of `bytes`
 * bytes on this topology, without running it. Local. algo: scNbrAuto prices
 * auto's pick; native is priced as naive (the same messages). seconds: the
 * prediction, the same on every rank; autoAlgo (may be NULL): what
 * scNbrAuto would run, as scNeighborAlgoFor. */
scResult_t scTopologyEstimateTime(scTopology_t topo, size_t bytes, scNbrAlgo_t algo, double* seconds,
                                  scNbrAlgo_t* autoAlgo);

/* The cost model's view of one algorithm on this topology, for tools that fit
 * the model to measured times (sparcoll-tune). Index [0] is the intra-node
 * level, [1] the inter-node level. scTopologyEstimateTime's prediction for
 * blocks of b bytes is
 *   sum over levels l of  rounds[l]·alpha_l + extraMessages[l]·o_l + b·blocks[l]·beta_l
 *                         + b·sharedBlocks[l]·beta_shared_l
 * with alpha, o (message_overhead) and beta of the cost model at b (README
 * "Neighbourhood collectives": a round is priced at the inter level when it
 * moves a block between machines; blocks[0] counts local copies too; a level
 * the tuning file lacks takes its beta from the other). Local; the same on
 * every rank. algo: an explicit algorithm (native: naive's terms). */
typedef struct {
  double rounds[2];        /* rounds in which some rank sends or receives */
  double extraMessages[2]; /* their messages beyond each round's first (the busiest rank's) */
  double blocks[2];        /* blocks on the busiest rank's critical path, summed over rounds */
  double sharedBlocks[2];  /* blocks every rank sends, summed over ranks and rounds (a shared medium's load) */
} scNbrCostTerms_t;
/* Fills *terms for algo on topo (see scNbrCostTerms_t above). */
scResult_t scTopologyCostTerms(scTopology_t topo, scNbrAlgo_t algo, scNbrCostTerms_t* terms);

/* The sum above without a topology: `terms` (scTopologyCostTerms', recorded
 * or made up) priced for blocks of `bytes` bytes with the parameters of
 * `model` (scCostModelCreate, sparcoll.h; its nranks and machines do not
 * enter), by the code scTopologyEstimateTime runs: a topology's terms priced
 * with the model its communicator holds (the same transport, memory, tuning
 * file and environment) give that topology's estimate exactly. For tools that
 * fit or try parameters on recorded terms (sparcoll-tune). Local. A NULL
 * argument, or a term that is negative or not finite, is scInvalidArgument
 * with a message naming it (scGetLastError(NULL)). */
scResult_t scCostModelNeighborTime(scCostModel_t model, const scNbrCostTerms_t* terms, size_t bytes, double* seconds);

/* This rank's friend group in the combining pattern, for tools and tests: the
 * k and theta in use, the group's size (1: no group) and, when members is not
 * NULL, its members in the group's order (room for *k entries). Any output
 * pointer may be NULL. */
scResult_t scTopologyFriendGroup(scTopology_t topo, int* k, int* theta, int* size, int* members);

#ifdef __cplusplus
}
#endif

#endif /* SPARCOLL_NEIGHBOR_H_ */
