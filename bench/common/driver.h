// The benchmark driver shared by every perf tool. A tool is a Tool (tool.h),
// usually a Collective (collective.h), and a two-line main:
//
//   int main(int argc, char** argv) { MyTool t; return scbench::run(argc, argv, t); }
//
// run() parses the command line (the shared flags the tool takes and its
// own), starts the transport (MPI ranks, NCCL ranks with one GPU each, local
// threads, or no ranks for tools without a communicator), checks that the
// host memory suffices, runs the tool on every rank and returns the exit
// status: 0, 1 when results were wrong, 2 on usage or runtime errors. An
// error is printed once, "<tool>: <message>" ("<tool>: rank r: <message>" for
// one rank of several): a rank thread's error is carried to the main thread,
// which reports it and exits; an MPI rank's ends the job (MPI_Abort).
#pragma once

#include <string>
#include <vector>

#include "common/collective.h"

namespace scbench {

int run(int argc, char** argv, Tool& tool);

// Ends the run after an unrecoverable failure, from any rank: throws
// UsageError{msg}, which the driver reports as described above (exit status 2).
[[noreturn]] void fatal(const std::string& msg);
// fatal() for a failed library call: "<what> failed: " and the library's
// message, which starts with the error's name (never repeated).
[[noreturn]] void callFailed(const RankState& rs, const std::string& what, scResult_t r);

// The sizes of the sweep: Options::sizeList when set, else min, then *factor
// (or +step) while <= max.
std::vector<size_t> sweepSizes(const Options& o);

// nccl-tests' "#  Rank ..." line describing this rank and its device.
std::string rankLine(const RankState& rs, const RunInfo& info);

}  // namespace scbench
