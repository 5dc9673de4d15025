// A point in time after which a blocking wait gives up with scTimeout, and
// the interrupt (scCommInterrupt, the interrupt check) that ends it early.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>

#include "core/error.h"

namespace sc {

using Clock = std::chrono::steady_clock;

// The process's interrupt check (scSetInterruptCheck), run by a waiting
// thread at most every kInterruptPeriod: whether it asks to stop. Only
// deadlines with a stop flag (a communicator's) run it.
constexpr auto kInterruptPeriod = std::chrono::milliseconds(100);
bool interruptCheckSaysStop(Clock::time_point now);

// A deadline: a fixed time point (in, after), or a budget that starts at its
// first look (atFirstLook). The latter is a call's (scComm::callDeadline):
// every wait of the call shares one start, read when the first of them finds
// that it has to wait (at(), expired(), check()), so a call whose messages are
// all there reads no clock for its deadline, and the budget never ends before
// `seconds` after the call began.
class Deadline {
 public:
  // A shared start not read yet.
  static constexpr Clock::rep kNotStarted = 0;

  Deadline() = default;
  static Deadline in(double s) { return after(Clock::now(), s); }
  static Deadline after(Clock::time_point t0, double s) { return Deadline(t0 + budget(s), s, nullptr); }
  // *start: kNotStarted until the first look of any deadline made from it
  // (which sets it, once), or a time point's tick count; negative: the
  // start's owner is between calls, and a look counts from now without
  // setting it. It must outlive the deadline.
  static Deadline atFirstLook(std::atomic<Clock::rep>* start, double s) { return Deadline({}, s, start); }
  // The same deadline, passed at once when *stop is set (the communicator's
  // interrupt flag, which a wait of it may also set from the interrupt
  // check). *stop must outlive the deadline.
  Deadline stoppedBy(std::atomic<bool>* stop) const {
    Deadline d = *this;
    d.stop_ = stop;
    return d;
  }

  // Whether the deadline passed at `now`, or the wait was interrupted.
  // Waits call it (or expired(), at()) at least every kInterruptPeriod.
  bool passedAt(Clock::time_point now) const {
    if (stop_ && (stop_->load(std::memory_order_relaxed) || interruptCheckSaysStop(now))) {
      stop_->store(true, std::memory_order_relaxed);
      return true;
    }
    return now >= at();
  }
  bool interrupted() const { return stop_ && stop_->load(std::memory_order_relaxed); }

  // When the wait must end: the deadline, or the past once interrupted.
  Clock::time_point at() const {
    if (interrupted()) return Clock::time_point::min();
    if (!start_) return at_;
    Clock::rep t = start_->load(std::memory_order_acquire);
    if (t < 0) return Clock::now() + budget(seconds);  // its call has ended: a budget from now, shared by none
    if (t == kNotStarted) {
      const Clock::rep now = Clock::now().time_since_epoch().count();
      t = start_->compare_exchange_strong(t, now, std::memory_order_acq_rel) ? now : t;  // t: the winner's
    }
    return Clock::time_point(Clock::duration(t)) + budget(seconds);
  }
  bool expired() const { return passedAt(Clock::now()); }
  // Throws scTimeout naming what was being waited for.
  void check(const char* what) const {
    if (expired()) SC_THROW(scTimeout, "deadline of ", seconds, " s expired while waiting for ", what);
  }

  double seconds = 0;  // the configured budget, for messages

 private:
  Deadline(Clock::time_point at, double s, std::atomic<Clock::rep>* start) : seconds(s), at_(at), start_(start) {}
  // Clamped so that a start plus the budget cannot overflow the clock's
  // 64-bit tick count (a century is "no deadline" in practice).
  static Clock::duration budget(double s) {
    return std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(std::min(s, 100.0 * 365 * 24 * 3600)));
  }

  Clock::time_point at_{};
  std::atomic<Clock::rep>* start_ = nullptr;
  std::atomic<bool>* stop_ = nullptr;
};

}  // namespace sc
