// A point in time after which a blocking wait gives up with scTimeout.
#pragma once

#include <chrono>

#include "core/error.h"

namespace sc {

using Clock = std::chrono::steady_clock;

struct Deadline {
  Clock::time_point at;
  double seconds = 0;  // the configured budget, for messages

  static Deadline in(double s) {
    return {Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)), s};
  }
  bool expired() const { return Clock::now() >= at; }
  // Throws scTimeout naming what was being waited for.
  void check(const char* what) const {
    if (expired()) SC_THROW(scTimeout, "deadline of ", seconds, " s expired while waiting for ", what);
  }
};

}  // namespace sc
