// An auto's last pick, kept with the size it was made for, in one word:
// (bytes + 1) << 3 | algo. A pick that depends on the size alone (the model
// is fixed when a communicator or topology is made) is then worked out once
// per size, not on every call. The word is atomic, so a look-up beside a call
// on the same communicator (an *AlgoFor or estimate call) is no data race.
#pragma once

#include <atomic>
#include <cstdint>

namespace sc {

class KeptPick {
 public:
  static constexpr int kAlgos = 8;  // algorithm values the word holds (3 bits)

  // The pick for `bytes`: the kept one when it was made for these bytes,
  // else pick() (a value below kAlgos), then kept. Sizes of 2^60 bytes and
  // more are picked every time.
  template <class F>
  int get(uint64_t bytes, F&& pick) const {
    if (bytes >= (uint64_t(1) << 60)) return int(pick());
    const uint64_t key = (bytes + 1) << 3, last = word_.load(std::memory_order_relaxed);
    if ((last & ~uint64_t(7)) == key) return int(last & 7);
    const int a = int(pick());
    word_.store(key | uint64_t(a), std::memory_order_relaxed);
    return a;
  }

 private:
  mutable std::atomic<uint64_t> word_{0};
};

}  // namespace sc
