// The packed block of the static-size sparse allreduce (sparse.h,
// scSparseAllReduceStatic) and the check of one of its slots, written once for
// the host (ops_cpu.cpp) and the device (kernels/sparse_kernels.cuh): both sum
// the same slots in the same order, so they agree bit for bit.
//
// Block of one rank: [count word | capacity indices | capacity values], each
// array rounded up to 8 bytes so every block (and value array) stays 8-byte
// aligned in the gathered buffer. Slot s = r * capacity + j is entry j of rank r.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/numeric.h"
#include "sparcoll/sparse.h"

namespace sc::sp {

// The count word of a rank whose own argument checks failed (its payload is
// not filled): every other rank reports it instead of reading the payload.
constexpr uint64_t kStaticBadArgMark = ~uint64_t(0);
// "No error" in the device's min-reduction over slots; status words are never this.
constexpr uint64_t kStaticOk = ~uint64_t(0);
// Bounds that keep a status word's fields apart (sparse.h SC_STATIC_STATUS).
constexpr uint64_t kStaticMaxCapacity = uint64_t(1) << 40;
constexpr int kStaticMaxRanks = 1 << 21;

struct StaticLayout {
  uint64_t cap = 0;
  size_t isz = 4, vsz = 4;

  SC_HD static uint64_t round8(uint64_t b) { return (b + 7) / 8 * 8; }
  SC_HD uint64_t idxOff() const { return 8; }
  SC_HD uint64_t valOff() const { return 8 + round8(cap * isz); }
  SC_HD uint64_t bytes() const { return valOff() + round8(cap * vsz); }
};

// Slot s of the gathered blocks: its status word (kStaticOk when it is valid
// or unused) and its sort key — the index when the slot takes part, else
// ~I(0), which sorts after every index below dim (the call requires dim <=
// the largest I). A rank whose count is bad reports at its slot 0 only, so
// the minimum over all slots is the first bad slot in rank order.
template <typename I>
SC_HD uint64_t staticSlot(const unsigned char* blocks, const StaticLayout& L, uint64_t dim, uint64_t s, I* key) {
  const uint64_t r = s / L.cap, j = s % L.cap;
  const unsigned char* b = blocks + r * L.bytes();
  const uint64_t count = *reinterpret_cast<const uint64_t*>(b);
  *key = I(~I(0));
  if (count == kStaticBadArgMark) return j == 0 ? SC_STATIC_STATUS(r, 0, scStaticBadArgument) : kStaticOk;
  if (count > L.cap) return j == 0 ? SC_STATIC_STATUS(r, 0, scStaticCountOverCapacity) : kStaticOk;
  if (j >= count) return kStaticOk;
  const I x = reinterpret_cast<const I*>(b + L.idxOff())[j];
  if (uint64_t(x) >= dim) return SC_STATIC_STATUS(r, j, scStaticIndexOutOfRange);
  *key = x;
  return kStaticOk;
}

// The value bits of slot s (any value type of vsz bytes: T is its bit type).
template <typename T>
SC_HD T staticValue(const unsigned char* blocks, const StaticLayout& L, uint64_t s) {
  const uint64_t r = s / L.cap, j = s % L.cap;
  return reinterpret_cast<const T*>(blocks + r * L.bytes() + L.valOff())[j];
}

}  // namespace sc::sp
