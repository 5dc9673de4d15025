// Buffer overlap, for the argument checks of every collective: one caller's
// output must not overlap its inputs except where a collective defines an
// in-place form (dense: api_dense.cpp; sparse and DSOP reject any overlap).
#pragma once

#include <cstddef>
#include <cstdint>

namespace sc {

// Whether byte ranges [p, p+pb) and [q, q+qb) overlap (empty ranges never do).
// Compared as integers: relational operators on pointers into different
// objects are unspecified in C++.
inline bool overlaps(const void* p, size_t pb, const void* q, size_t qb) {
  const uintptr_t x = reinterpret_cast<uintptr_t>(p), y = reinterpret_cast<uintptr_t>(q);
  return pb && qb && x < y + qb && y < x + pb;
}

}  // namespace sc
