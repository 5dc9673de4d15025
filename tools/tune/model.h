// sparcoll-tune's link to the library's cost model. The model's formulas
// live in the library only: scCostModelEstimateTime prices a call with the
// parameters of a tuning file, exactly as scEstimateTime does on a
// communicator of the same size that loaded it, so a file that sets one
// parameter to 1 and the others to 0 yields that parameter's coefficient,
// and the fit needs no second copy of the formulas (the neighbourhood probe's
// terms likewise: scCostModelNeighborTime, probe.h). The tuning file (schema
// v1, README "Cost model") is written here too.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "sparcoll/sparcoll.h"
#include "sweep.h"

namespace sctune {

struct Params {
  double alpha = 0, beta = 0, gamma = 0, betaShared = 0;  // s, s/byte, s/byte, s/byte
  double messageOverhead = NAN;                           // s; NaN: not measured (not written)
};

// One entry of "models".
struct ModelEntry {
  std::string level;  // "intra" | "inter"
  Params p;
  double r2 = 0, medianAbsRelError = 0;
  int points = 0, dropped = 0;
  bool hasPingpong = false;
  double ppAlpha = 0, ppBeta = 0, ppR2 = 0;
  bool hasBytes = false;  // a band: the calls of bytes [bytesLo, bytesHi]
  uint64_t bytesLo = 0, bytesHi = 0;
  bool hasMeasured = false;  // the band's smallest and largest measured size (blended between bands)
  uint64_t measuredLo = 0, measuredHi = 0;
  // p.messageOverhead's fit (the neighbourhood probe), for "fit": block
  // sizes used and the messages combining saved on the probe's busiest rank.
  int overheadPoints = 0;
  double overheadSaved = 0;
};

// One entry of "rules".
struct RuleEntry {
  std::string collective;
  int ranksLo = 0, ranksHi = 0;
  uint64_t bytesLo = 0, bytesHi = 0;
  bool hasDensity = false;
  double densityLo = 0, densityHi = 0;
  std::string algorithm;
};

// "source": what the file was measured on.
struct Source {
  int ranks = 0, machines = 0;
  std::string transport, memory;
  bool quick = false, denseOnly = false;
  double budget = 0;
  size_t minBytes = 0, maxBytes = 0, factor = 0;
};

// The tuning file as text (pretty-printed JSON, schema v1).
std::string tuningJson(const Source& src, const std::vector<ModelEntry>& models, const std::vector<RuleEntry>& rules);
// "2026-11-24T10:00:00Z"
std::string isoUtcNow();
// Reads a tuning file's "source" block for the messages of --validate;
// false with *err when the file is not a sparcoll-tuning v1 file.
bool readSource(const std::string& path, Source* src, std::string* err);
// The first line of a --raw file: {"source": {...}}, the run's facts.
std::string sourceLine(const Source& src);
// A --raw file back (--points): its source line and its points (ping-pong,
// collectives; the extra keys of either mode ignored). false with *err naming
// the file and line when it is not one.
bool readPoints(const std::string& path, Source* src, std::vector<Point>* pts, std::string* err);

// The model a communicator like the measured one (transport, memory, ranks,
// machines) would hold with the tuning file `json`; local to the caller.
class CostModel {
 public:
  CostModel(const std::string& json, scTransport_t transport, bool device, int ranks, int machines);
  ~CostModel() { scCostModelDestroy(m_); }
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;
  scCostModel_t get() const { return m_; }

 private:
  scCostModel_t m_ = nullptr;
};

// The model's time for one call, by the tuning file's names, from a cost
// model or (--validate) from a communicator; the auto pick's name in
// *autoPick when not null. Fatal on failure.
double estimate(const CostModel& m, const std::string& collective, const std::string& algorithm, size_t count,
                double density, std::string* autoPick = nullptr);
double estimate(scComm_t comm, const std::string& collective, const std::string& algorithm, size_t count,
                double density, std::string* autoPick = nullptr);

}  // namespace sctune
