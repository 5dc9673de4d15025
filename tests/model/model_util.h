// Helpers of the cost-model tests: tuning files on disk, scoped environment
// variables, and the message of a failed parse.
#pragma once

#include <string>
#include <vector>

#include "common/harness.h"
#include "sparcoll/neighbor.h"
#include "sparcoll/sparcoll.h"

namespace mtest {

// Writes text to a new file under the test's temporary directory (unique per
// process and call) and returns its path; the file is removed at exit.
std::string writeTuning(const std::string& text);

// A minimal valid file: the header plus the given "models" and "rules" arrays (JSON text).
std::string tuningJson(const std::string& models, const std::string& rules = "[]");

// The message parseTuning(text, "t.json") fails with, without the trailing
// " (csrc/...:line)"; "" when it parses.
std::string parseError(const std::string& text);

using sctest::ScopedEnv;  // common/harness.h

// A config with a 60 s deadline and the given tuning file (NULL: none).
scConfig_t configWith(const char* tuningFile);

// Every rank of 0..P-1 but `rank`, ascending.
std::vector<int> othersThan(int rank, int P);
// The complete graph on comm's P ranks (collective); NULL, with a failure
// recorded, when scTopologyCreate fails.
scTopology_t completeTopology(scComm_t comm, int rank, int P);

}  // namespace mtest
