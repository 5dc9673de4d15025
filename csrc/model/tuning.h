// Tuning files (README "Cost model"): measured parameters per transport,
// memory kind and level, and rules that name an algorithm for ranges of
// ranks, bytes and density. Parsed strictly, once, when a communicator is
// created: any deviation from the schema is an scInvalidArgument naming the
// file, the JSON path of the offending key ("rules[2].bytes") and what is
// wrong, so a typo never silently turns into the built-in defaults.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"

namespace sc::model {

// An inclusive range; the defaults match everything.
template <typename T>
struct Range {
  T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
  bool contains(T v) const { return lo <= v && v <= hi; }
};

// -1 in transport / memory: any. bytes: the calls the entry prices (a band;
// default all), by the call's bytes as rules count them.
struct ModelEntry {
  int transport = -1;
  int memory = -1;  // 0 host, 1 device
  Level level = Level::Intra;
  Range<uint64_t> bytes{0, std::numeric_limits<uint64_t>::max()};
  // The sizes the entry's fit measured (default: bytes); Model::priced
  // blends neighbouring bands between their measured sizes.
  Range<uint64_t> measured{0, std::numeric_limits<uint64_t>::max()};
  Params params;
};

struct Rule {
  int coll = 0;  // scCollective_t or kCollNeighborAllGather
  int transport = -1, memory = -1;
  Range<uint64_t> ranks, bytes;
  Range<double> density;
  int algo = 0;  // in the collective's own enum; 0 (auto): the model decides
};

struct Tuning {
  std::string path;
  std::vector<ModelEntry> models;
  std::vector<Rule> rules;

  // The entries (bands) for this transport, memory and level, in file order:
  // those of the first entry that matches, and every later one with the same
  // memory key (an entry for "any memory" does not mix with one for "host").
  std::vector<const ModelEntry*> entries(scTransport_t transport, bool device, Level level) const;
  // The first rule matching the call; null when none.
  const Rule* match(int coll, scTransport_t transport, bool device, uint64_t P, uint64_t bytes, double density) const;
};

// Reads and parses the file at `path`; `origin` says where the path came from
// (e.g. "SPARCOLL_TUNING_FILE"), for the messages. Throws scInvalidArgument.
std::shared_ptr<const Tuning> loadTuning(const std::string& path, const char* origin = nullptr);
// Parses JSON text; `name` stands for the file in messages.
std::shared_ptr<const Tuning> parseTuning(const std::string& text, const std::string& name);

// The tuning file's names: collectives ("allreduce", ... "neighbor_allgather")
// and each collective's algorithms (as SPARCOLL_ALGO and Python spell them).
const char* collectiveName(int coll);
// The algorithm's value in the collective's enum, or -1 when the collective
// has no algorithm of that name (or offers none such: recdbl reduce-scatter).
int algoByName(int coll, const std::string& name);

}  // namespace sc::model
