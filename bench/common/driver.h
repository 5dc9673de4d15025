// The benchmark driver shared by every perf tool. A tool is a Collective
// (collective.h) and a two-line main:
//
//   int main(int argc, char** argv) { MyCollective c; return scbench::run(argc, argv, c); }
//
// run() parses the nccl-tests command line, starts the transport (MPI ranks,
// NCCL ranks with one GPU each, or local threads), allocates each rank's
// buffers, sweeps sizes for every (algorithm, type, op), times, checks,
// reports, and returns the exit status: 0, 1 when results were wrong, 2 on
// usage or runtime errors.
#pragma once

#include <string>

#include "common/collective.h"
#include "common/group.h"
#include "common/report.h"

namespace scbench {

int run(int argc, char** argv, Collective& coll);

// What the per-rank loop needs besides its rank.
struct SweepContext {
  const Options& o;
  Collective& coll;
  RunInfo info;
};

// The size sweep on one rank: every block, rank 0 prints. Returns the number
// of (rank, test) pairs with wrong results, identical on every rank.
long long runRank(Group& g, RankState& rs, const SweepContext& ctx);

// Ends the whole run from any rank/thread after an unrecoverable failure
// (MPI_Abort under MPI, _Exit(2) otherwise), after printing msg on stderr.
[[noreturn]] void fatal(const std::string& msg);

// The sizes of the sweep: min, then *factor (or +step) while <= max.
std::vector<size_t> sweepSizes(const Options& o);

}  // namespace scbench
