// The two modes of sparcoll-tune on one rank: tuning (sweep, fit, rules,
// tuning file) and --validate (sweep on a communicator reading a tuning file,
// auto's regret and the model's error). Every rank runs them; rank 0 fits,
// prints and writes.
#pragma once

#include <functional>
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
  bool stepBands = false;             // --step-bands: no "measured" in the bands written
};

// Both return the number of failures to report through the exit status (0).
long long runTune(scbench::Group& g, scbench::RankState& rs, const Setup& s);
long long runValidate(scbench::Group& g, scbench::RankState& rs, const Setup& s);

// Tuning from points already measured (--points): the fit, the rules and
// the tuning file of runTune, on rank 0 alone. s.src describes the run the
// points came from.
void fitAndWrite(const Setup& s, const std::vector<Point>& pts, double tSweep);
// --validate's report on points already measured: auto's picks and the
// model's predictions from `m` (a communicator's, or a CostModel of the file).
using Estimator = std::function<double(const std::string& collective, const std::string& algorithm, size_t count,
                                       double density, std::string* autoPick)>;
// --validate on recorded points (--points): the file's model for the recorded
// run (its ranks, machines, transport), no communicator.
void validatePoints(const Setup& s, const std::vector<Point>& pts);
void reportValidation(const Setup& s, const std::vector<Point>& pts, const Estimator& est, double t0);

// Shared by both modes: writes JSON lines (--raw), the first the run's
// "source" (readPoints reads it back); fatal on failure.
void writeRaw(const std::string& path, const std::vector<std::string>& lines, const Source& src);
// A JSON number, or null when v is not finite.
std::string jsonNumber(double v);
// The header lines describing the run (rank 0 prints them).
void printHeader(const Setup& s, const char* mode);

}  // namespace sctune
