// A point in time after which a blocking wait gives up with scTimeout.
#pragma once

#include <algorithm>
#include <chrono>

#include "core/error.h"

namespace sc {

using Clock = std::chrono::steady_clock;

struct Deadline {
  Clock::time_point at;
  double seconds = 0;  // the configured budget, for messages

  static Deadline in(double s) { return after(Clock::now(), s); }
  static Deadline after(Clock::time_point t0, double s) {
    // Clamp so that t0 + s cannot overflow the clock's 64-bit tick count
    // (a century is "no deadline" in practice).
    const double capped = std::min(s, 100.0 * 365 * 24 * 3600);
    return {t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(capped)), s};
  }
  bool expired() const { return Clock::now() >= at; }
  // Throws scTimeout naming what was being waited for.
  void check(const char* what) const {
    if (expired()) SC_THROW(scTimeout, "deadline of ", seconds, " s expired while waiting for ", what);
  }
};

}  // namespace sc
