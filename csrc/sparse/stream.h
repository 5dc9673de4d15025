// The sparse stream of SparCML (thesis §4.1.1-4.1.2): a vector over the index
// range [lo, lo + len) held either sparse (n sorted, unique global indices and
// their values, struct-of-arrays) or dense (len values). What goes on the wire
// is described by one 64-bit word (the "meta"): the entry count, or kDenseMark.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/sorted_index.h"
#include "sparcoll/sparse.h"

namespace sc::sp {

constexpr uint64_t kDenseMark = ~uint64_t(0);

inline size_t indexSize(scIndexType_t t) { return t == scIndexU64 ? 8 : 4; }

// When a vector over `len` indices is kept sparse. The size rule is the
// thesis's delta: sparse only while n (isize + vsize) < len vsize, i.e. while
// the sparse form is strictly smaller. `density` (> 0) lowers the threshold
// (the compute-aware setting: sparse summation is slower per entry than dense).
struct SwitchRule {
  size_t isz = 4, vsz = 4;
  double density = 0;

  bool sparseOk(uint64_t n, size_t len) const {
    if (n == kDenseMark) return false;
    // long double keeps n * 16 exact far beyond any real vector length.
    if ((long double)n * (isz + vsz) >= (long double)len * vsz) return false;
    return !(density > 0 && double(n) > density * double(len));
  }
  // The largest entry count still kept sparse over len.
  uint64_t maxSparse(size_t len) const {
    uint64_t n = uint64_t((long double)len * vsz / (isz + vsz));
    if (density > 0) n = std::min<uint64_t>(n, uint64_t(density * double(len)) + 1);
    while (n > 0 && !sparseOk(n, len)) --n;
    return n;
  }
};

// Where a stream's arrays live (so a schedule never overwrites a live operand).
enum Home : int { kUser = -1, kPool0 = 0, kPool1 = 1, kPool2 = 2, kInput = 3, kA2A = 4, kSendBuf = 5, kOut = 6 };

struct Stream {
  size_t lo = 0, len = 0;  // index range
  bool dense = false;
  uint64_t n = 0;       // sparse entries (valid on the host when nKnown)
  bool nKnown = true;   // false: n is still in device memory (meta slot 0)
  void* idx = nullptr;  // sparse: n global indices
  void* val = nullptr;  // sparse: n values; dense: len values
  int home = kUser;
  bool writable = false;  // may be updated in place

  uint64_t elems() const { return dense ? len : n; }
  uint64_t meta() const { return dense ? kDenseMark : n; }

  // The dense stream over this one's range whose len values are in v (home h).
  Stream denseIn(void* v, int h) const { return heldIn(true, true, nullptr, v, h); }
  // The sparse stream over this one's range in arrays idx/val of home h, whose
  // count an operation left in ops memory (meta word 0): not known on the host.
  Stream pendingIn(void* i, void* v, int h) const { return heldIn(false, false, i, v, h); }
  // This stream's range, written anew into arrays i/v of home h (which it may update).
  Stream heldIn(bool isDense, bool countKnown, void* i, void* v, int h) const {
    Stream s = *this;
    s.dense = isDense;
    s.n = 0;
    s.nKnown = countKnown;
    s.idx = i;
    s.val = v;
    s.home = h;
    s.writable = true;
    return s;
  }
  // The whole dense vector [0, N) held in the call's output buffer.
  static Stream denseOutput(size_t N, void* out) {
    Stream r;
    r.len = N;
    return r.denseIn(out, kOut);
  }
};

// The header every rank contributes to the first round of a call (40 bytes).
struct Header {
  uint64_t nnz;  // after sort/coalesce when requested
  uint64_t dim;
  uint64_t config;   // itype, vtype, op, algo, flags, group size (packed)
  uint64_t density;  // bits of switchDensity
  uint64_t err;      // kNoError, or (position << 4) | ErrKind
};
constexpr int kHeaderWords = 5;
static_assert(sizeof(Header) == size_t(kHeaderWords) * 8, "header layout");

constexpr uint64_t kNoError = ~uint64_t(0);
enum ErrKind : uint64_t {
  kErrRange = sorted::kRange,          // index >= dim
  kErrDuplicate = sorted::kDuplicate,  // index equal to the previous one
  kErrUnsorted = sorted::kUnsorted,    // index smaller than the previous one
  kErrArgument = 4,                    // a local argument check failed (message on that rank)
};
SC_HD uint64_t errWord(uint64_t pos, ErrKind k) { return (pos << 4) | k; }

// The input check of position i (SparseOps::validate), host and device: kNoError
// or the error word. The first failing position has the smallest word, so the
// device may take the minimum over all positions.
template <typename I>
SC_HD uint64_t checkWord(const I* x, uint64_t i, uint64_t dim, bool rangeOnly) {
  const sorted::Fault f = sorted::faultAt(x, i, dim, rangeOnly);
  return f == sorted::kOk ? kNoError : errWord(i, ErrKind(f));
}

}  // namespace sc::sp
