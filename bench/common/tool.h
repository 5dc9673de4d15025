// What the driver runs: one benchmark tool, described by hooks. The driver
// owns the command line (the shared flags of ToolSpec::flags plus the tool's),
// the transports and ranks (mpi, nccl, local threads, or no ranks at all), the
// memory check, error reporting and the exit status. The tool owns its flags,
// buffers, calls, checks and output, built from the shared pieces: timing.h,
// table.h, json.h, verify.h and RankState's buffer helpers.
//
// Collective (collective.h) is the nccl-tests kind of tool, whose sweep and
// report the driver provides too; tools with other sweeps implement Tool.
#pragma once

#include "common/group.h"
#include "common/options.h"
#include "common/rank.h"

namespace scbench {

struct Context {
  const Options& o;
  const RunInfo& info;
};

class Tool {
 public:
  virtual ~Tool() = default;
  virtual ToolSpec spec() const = 0;

  // Before parsing: the tool's defaults for the shared options (in o) and
  // its own flags, whose setters usually write into the tool's members.
  virtual void addFlags(FlagSet& flags, Options& o) { (void)flags, (void)o; }
  // After parsing: checks across flags (throw UsageError); may derive options
  // (e.g. set o.noComm for a mode without ranks).
  virtual void validate(Options& o) { (void)o; }
  // The communicator's settings beyond transport, device and -T.
  virtual void configure(scConfig_t& cfg, const Options& o) const { (void)cfg, (void)o; }
  // Host memory (bytes) one rank allocates at most. The driver refuses runs
  // that cannot fit: overcommitted pages fail only when touched, by the OOM killer.
  virtual double hostBytesPerRank(const Options& o, int nranks) const { return (void)o, (void)nranks, 0.0; }

  // The benchmark on one rank: every rank calls it, rank 0 prints. Returns
  // the number of wrong results, the same on every rank (exit status 1 if > 0).
  virtual long long runRank(Group& g, RankState& rs, const Context& ctx) = 0;
};

}  // namespace scbench
