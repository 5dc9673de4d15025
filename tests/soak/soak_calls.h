// Runs one planned call on one rank and checks it with the suites' own
// references and checkers (tests/dense, sparse, dsop, neighbor, topk).
// Wrong results are reported as gtest failures, which the soak driver
// intercepts and attributes to the call.
#pragma once

#include "soak_plan.h"

namespace soak {

// Per-rank state kept across the calls of one communicator.
struct RankCtx {
  scComm_t comm = nullptr;
  int rank = 0, P = 1;
  size_t maxCount = 0;                // the run's bound on element counts
  scSparseResult_t result = nullptr;  // reused by every sparse-output call, as an application would
};

// False when a call returned an error on this rank: its peers may be left
// waiting, so the driver aborts the communicator and starts a fresh one.
bool runCall(RankCtx& ctx, const Plan& p);

// Top-k selection with error feedback followed by the sparse allreduce of the
// selections (soak_topk.cpp).
bool runTopk(RankCtx& ctx, const Plan& p);

}  // namespace soak
