// Helpers of the cost-model tests: tuning files on disk, scoped environment
// variables, and the message of a failed parse.
#pragma once

#include <string>

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

// Environment variable set for the lifetime of the object (then restored).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, old_;
  bool had_;
};

// A config with a 60 s deadline and the given tuning file (NULL: none).
scConfig_t configWith(const char* tuningFile);

}  // namespace mtest
