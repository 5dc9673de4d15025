// Output of the Collective tools (rank 0 only): nccl-tests' header, table rows
// and footer, one block per algorithm; then a summary comparing algorithms
// (time ratio to native, bytes sent per rank) and optional JSON lines.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/rank.h"

namespace scbench {

// One timed (algorithm, type, op, size, in-place) measurement, combined over ranks.
struct Result {
  std::string algorithm;
  scDataType_t dtype;
  scRedOp_t op;
  size_t bytes = 0, count = 0;  // nccl-tests' size and count columns
  bool inPlace = false;
  double timeUs = 0, cpuTimeUs = 0;  // per call, combined over ranks with -a
  double algbw = 0, busbw = 0;       // GB/s
  int64_t wrong = -1;                // wrong elements summed over ranks; -1: not checked
  double sentAvg = 0, sentMax = 0;   // bytes sent per rank per call (mean / max over ranks)
  double msgsMax = 0;                // messages sent per rank per call (max over ranks)
  double msgsReducedMax = 0;         // ... of the messages received, those reduced as they arrived
  // Per call, max over ranks (scStats_t): rounds, host handshakes, host
  // waits for the device, CUDA events created.
  double roundsMax = 0, rendezvousMax = 0, hostSyncsMax = 0, eventsMax = 0;
};

class Report {
 public:
  Report(const Options& o, const RunInfo& info, FILE* out = stdout) : o_(o), info_(info), out_(out) {}

  // The run header and one "#  Rank ..." line per rank (already formatted).
  void header(const std::vector<std::string>& rankLines);
  void beginBlock(const std::string& algorithm);
  void row(const Result& outOfPlace, const Result& inPlace);
  // errors: rank-tests with wrong elements (nccl-tests' "Out of bounds values").
  void endBlock(int64_t errors, double avgBusBw);
  // Per (type, op, size): each algorithm's times, ratio to native, traffic.
  void summary(const std::vector<Result>& all);
  // One JSON object per line per result; returns false (with *err) when the file cannot be written.
  bool writeJson(const std::vector<Result>& all, const std::string& path, std::string* err);

  // nccl-tests' time format: %7.0f / %7.1f / %7.2f by magnitude.
  static std::string formatTime(double us);

 private:
  const Options& o_;
  RunInfo info_;
  FILE* out_;
};

}  // namespace scbench
