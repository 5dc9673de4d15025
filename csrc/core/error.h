// Internal error handling: C++ exceptions inside the library, converted once
// to scResult_t at the C boundary (api_guard.h). Every throw records file:line.
#pragma once

#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sparcoll/sparcoll.h"

namespace sc {

class Error : public std::runtime_error {
 public:
  Error(scResult_t code, const std::string& msg, const char* file, int line)
      : std::runtime_error(format(msg, file, line)), code_(code) {}
  scResult_t code() const { return code_; }
  // The same error with `where` put in front of its message ("ring
  // reduce-scatter step 2/3 of scAllReduce(...): ...").
  Error within(const std::string& where) const { return Error(code_, where + ": " + what()); }

 private:
  Error(scResult_t code, const std::string& full) : std::runtime_error(full), code_(code) {}
  static std::string format(const std::string& msg, const char* file, int line);
  scResult_t code_;
};

// Builds a message from stream-able parts: SC_THROW(scInvalidArgument, "count ", n, " too big").
template <typename... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// "512 B", "1.5 KiB", "1.0 MiB": sizes in messages.
inline std::string bytesText(size_t b) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (b < 1024) return std::to_string(b) + " B";
  double v = double(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << v << ' ' << units[u];
  return os.str();
}

}  // namespace sc

#define SC_THROW(code, ...) throw ::sc::Error((code), ::sc::cat(__VA_ARGS__), __FILE__, __LINE__)
#define SC_REQUIRE(cond, code, ...)             \
  do {                                          \
    if (!(cond)) SC_THROW((code), __VA_ARGS__); \
  } while (0)
#define SC_ARG(cond, ...) SC_REQUIRE(cond, scInvalidArgument, __VA_ARGS__)
