// The two modes of sparcoll-tune on one rank: tuning (sweep, fit, rules,
// tuning file) and --validate (sweep on a communicator reading a tuning file,
// auto's regret and the model's error). Every rank runs them; rank 0 fits,
// prints and writes.
#pragma once

#include <string>
#include <vector>

#include "common/group.h"
#include "common/rank.h"
#include "model.h"
#include "sweep.h"

namespace sctune {

struct Setup {
  Plan plan;
  Source src;                 // ranks, machines, transport, memory, ... of this run
  std::vector<int> machines;  // machine id per rank (machinesOf)
  scTransport_t transport = scTransportLocal;
  std::string output, raw, validate;  // --output, --raw, --validate
};

// Both return the number of failures to report through the exit status (0).
long long runTune(scbench::Group& g, scbench::RankState& rs, const Setup& s);
long long runValidate(scbench::Group& g, scbench::RankState& rs, const Setup& s);

// Shared by both modes: writes JSON lines (--raw); fatal on failure.
void writeRaw(const std::string& path, const std::vector<std::string>& lines);
// A JSON number, or null when v is not finite.
std::string jsonNumber(double v);
// The header lines describing the run (rank 0 prints them).
void printHeader(const Setup& s, const char* mode);

}  // namespace sctune
