// DSOP schedules (one file each), written once over Ctx's primitives and the
// DSOP kernel, so they run on host and device buffers over every transport.
// Two contexts per call: `v` moves the input vectors (input dtype, 16 bits for
// float16/bfloat16), `g` moves and sums blocks of G (output dtype).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "algo/ctx.h"
#include "core/overlap.h"
#include "dsop/kernels.h"
#include "sparcoll/dsop.h"

namespace sc::dsop {

struct Problem {
  Ctx& v;
  Ctx& g;
  const void* a;
  const void* b;
  size_t n, m;
  void* G;

  int P() const { return g.size; }
  int rank() const { return g.rank; }
  scDataType_t in() const { return v.dt; }
  // Rows of G per rank (balanced: sizes differ by at most one row)...
  Blocks rows() const { return Blocks{n, size_t(P())}; }
  // ... and the same blocks in elements of G (the layout of the block allgather).
  Blocks rowBlocks() const { return Blocks{n, size_t(P()), m}; }
  // dst (+)= rectangle r of the sum over the pairs (see kernels.h).
  void product(const Pairs& p, const Rect& r, void* dst, size_t ldd, bool accumulate) {
    rect(g.comm, in(), p, r, dst, ldd, accumulate, g.stream);
  }
  // This rank's (a, b) as a single pair.
  Pairs local() const { return Pairs{a, 0, b, 0, 1}; }
};

void allGather(Problem& pb);
void allReduce(Problem& pb);
void allReduceRing(Problem& pb);
void gRabenseifner(Problem& pb);
void allScatter(Problem& pb);
void run(Problem& pb, scDsopAlgo_t algo);

// --- shared steps -------------------------------------------------------------
// Packs this rank's [a | b] at block `rank` of a P x (n+m) scratch buffer and
// allgathers it (the communicator's allgather algorithm: ring, recdbl or native).
// Returns the buffer; pair q is (V + q(n+m), V + q(n+m) + n).
const char* gatherPairs(Problem& pb);
// Allgather of `count` elements per rank in place in buf (block `rank` filled).
void allGatherVectors(Ctx& c, void* buf, size_t count);
// Direct exchanges with every peer in grouped rounds of kScatterGroup peers:
// in a round rank r sends to r+d and receives from r-d for the d of the group,
// so each message's receive is posted in the same round. addOps(to, from, ops)
// appends this rank's sends to `to` and receives from `from` (in matching order).
void groupedExchange(Ctx& c, const std::function<void(int to, int from, std::vector<P2POp>& ops)>& addOps);
// Computes this rank's row block of G from `pairs` (whose a vectors are indexed
// by global row, or by row within this rank's block when localRows) and ring-
// allgathers the row blocks: the second half of g_rabenseifner and all_scatter.
void rowBlocksAllGather(Problem& pb, const Pairs& pairs, bool localRows);

// --- C API -------------------------------------------------------------------
// The checks shared by scDsop and scDsopSparse (comm, dtype, algo, stream,
// n, m >= 1, size overflow, G); returns the output dtype.
scDataType_t checkCall(scComm* comm, scDataType_t dt, scDsopAlgo_t algo, size_t n, size_t m, void* G, void* stream);

// --- auto ---------------------------------------------------------------------
// Predicted seconds of `algo` (not auto) under the cost model (a
// communicator's: comm.model), and what auto resolves to (auto.cpp).
double predictSeconds(const model::Model& m, scDsopAlgo_t algo, size_t n, size_t mm, scDataType_t in);
scDsopAlgo_t choose(const model::Model& m, scDsopAlgo_t requested, size_t n, size_t mm, scDataType_t in);
// Peers per grouped round of all_scatter (bounds the messages in flight).
constexpr int kScatterGroup = 8;

}  // namespace sc::dsop
