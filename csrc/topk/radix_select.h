// MSB-first radix select: the rank-th largest of a multiset of unsigned keys of
// `width` bits, found one kRadixBits-bit digit at a time from the top. A pass
// counts the digit of every key whose higher bits equal the prefix decided so
// far (a histogram of kRadixBins counts); the digit whose counts from the top
// first reach the rank holds the target (radixHolds), and the state narrows to
// it (radixAdvance). ceil(width / kRadixBits) passes leave the target itself
// in the prefix, the number of keys greater than it and the number equal to it.
//
// Written once for both sides: the CPU reference (reference_select.cpp, through
// radixSelectHost below) and the kernels (kernels/topk_radix.cuh) run the same
// passes over these functions, so the CPU tests check the kernels' decisions.
// Only the histogram's summation order differs, and integer counts do not
// depend on it.
//
// The exact top-k uses it twice (csrc/topk/reference_select.cpp):
//   1. T = the k-th largest key (key = abs bit pattern of the value); the state
//      ends with #{key > T} = greater and the ties admitted = rank.
//   2. Only when more keys equal T than are admitted (tieBreakNeeded): the last
//      admitted tie, the rank-th smallest index among the keys equal to T, as the
//      rank-th largest of u = n-1-i (tieKey) over ceil(log2 n) bits.
// The selection is then "key > T, or key == T and i <= lastTie": exactly k
// entries, ties to the smaller index, whatever order the keys are visited in.
#pragma once

#include <cstdint>
#include <vector>

#include "core/numeric.h"

namespace sc {
namespace topk {

// 11-bit digits: 3 passes for 32-bit keys, 2 for 16-bit, 6 for 64-bit, with a
// 2048-bin histogram that fits a thread block's shared memory in 32-bit counts
// (8 KiB). 8-bit digits would need 4 passes over float32 data, 16-bit digits a
// histogram too large for shared memory.
constexpr int kRadixBits = 11;
constexpr int kRadixBins = 1 << kRadixBits;

// Where the target stands after the passes so far. The keys "matching" are those
// whose decided bits equal prefix; the target is among them.
struct RadixState {
  uint64_t prefix;    // the target's decided bits, in place (undecided bits 0)
  uint64_t rank;      // the target is the rank-th largest (1-based) of the matching keys
  uint64_t greater;   // keys whose decided bits exceed prefix: all greater than the target
  uint64_t matching;  // after the last pass: the keys equal to the target
};

// The rank-th largest (1 <= rank <= count) of `count` keys, before any pass.
SC_HD RadixState radixStart(uint64_t rank, uint64_t count) { return RadixState{0, rank, 0, count}; }

// One pass's digit: bits [shift, shift + bits) of the key.
struct RadixPass {
  int shift, bits;
};

SC_HD int radixPasses(int width) { return (width + kRadixBits - 1) / kRadixBits; }

// Pass p, 0 = the most significant digit. The first pass takes the leftover
// bits (width % kRadixBits when it is not 0), so the last one ends at bit 0.
SC_HD RadixPass radixPass(int width, int p) {
  const int shift = (radixPasses(width) - 1 - p) * kRadixBits;
  const int bits = width - shift < kRadixBits ? width - shift : kRadixBits;
  return RadixPass{shift, bits};
}

// x >> from, 0 when from >= 64 (a shift by the full width is undefined).
SC_HD uint64_t radixHigh(uint64_t x, int from) { return from >= 64 ? 0 : x >> from; }

// Whether the key counts in this pass: its bits above the digit equal the prefix's.
SC_HD bool radixMatches(uint64_t key, const RadixState& s, RadixPass ps) {
  return radixHigh(key, ps.shift + ps.bits) == radixHigh(s.prefix, ps.shift + ps.bits);
}

SC_HD unsigned radixDigit(uint64_t key, RadixPass ps) { return unsigned(key >> ps.shift) & ((1u << ps.bits) - 1u); }

// Whether a digit holds the target, given `above` matching keys in higher
// digits and `count` in this one: above < rank <= above + count. The intervals
// (above, above + count] of the digits partition (0, matching], so exactly one
// digit holds the target when 1 <= rank <= matching -- the kernels let every
// thread test its own digits and the one that holds it writes the new state.
SC_HD bool radixHolds(const RadixState& s, uint64_t above, uint64_t count) {
  return above < s.rank && s.rank - above <= count;
}

// The state after choosing `digit` (radixHolds was true for it).
SC_HD RadixState radixAdvance(const RadixState& s, RadixPass ps, unsigned digit, uint64_t above, uint64_t count) {
  return RadixState{s.prefix | (uint64_t(digit) << ps.shift), s.rank - above, s.greater + above, count};
}

// The step in one loop: hist[d] = matching keys with digit d (1 << ps.bits
// entries). The kernels compute the same sums `above` with a block scan.
SC_HD RadixState radixStep(const RadixState& s, RadixPass ps, const uint64_t* hist) {
  uint64_t above = 0;
  for (int d = (1 << ps.bits) - 1; d >= 0; --d) {
    if (radixHolds(s, above, hist[d])) return radixAdvance(s, ps, unsigned(d), above, hist[d]);
    above += hist[d];
  }
  return s;  // rank outside 1..matching: no digit holds it (a caller's bug)
}

// --- ties --------------------------------------------------------------------
// Bits of an index below n (at least 1, so a pass always exists).
SC_HD int indexWidth(uint64_t n) {
  int w = 1;
  while (w < 64 && (n - 1) >> w) ++w;
  return w;
}
// The smaller index ranks higher: the rank-th smallest index is the rank-th largest u.
SC_HD uint64_t tieKey(uint64_t i, uint64_t n) { return n - 1 - i; }
// After the key passes: some keys equal to T must be left out.
SC_HD bool tieBreakNeeded(const RadixState& keys) { return keys.matching > keys.rank; }
// The tie select over tieKey starts from the key select's final state.
SC_HD RadixState tieStart(const RadixState& keys) { return radixStart(keys.rank, keys.matching); }
// The largest index admitted among the keys equal to T (after the tie passes).
SC_HD uint64_t lastTie(const RadixState& ties, uint64_t n) { return n - 1 - ties.prefix; }

// --- the passes on the host --------------------------------------------------
// forEach(visit) calls visit(key) once for every key of the multiset, in any
// order. The passes and their histograms are the kernels'; only what a pass
// reads differs: the second pass keeps the keys it counts (those matching
// the prefix so far) when they are at most an eighth of the multiset, and
// the later passes read that list instead of every key (a host can afford
// the list; the kernels rescan instead and need no memory). Keys that do not
// match never count, so the histograms, and every decision, are the same.
template <class ForEach>
RadixState radixSelectHost(int width, RadixState s, ForEach&& forEach) {
  std::vector<uint64_t> hist(kRadixBins), kept;
  const uint64_t total = s.matching;
  bool narrowed = false;
  for (int p = 0; p < radixPasses(width); ++p) {
    const RadixPass ps = radixPass(width, p);
    hist.assign(kRadixBins, 0);
    const bool keep = !narrowed && p > 0 && p + 1 < radixPasses(width) && s.matching <= total / 8;
    auto count = [&](uint64_t key) {
      if (!radixMatches(key, s, ps)) return;
      ++hist[radixDigit(key, ps)];
      if (keep) kept.push_back(key);
    };
    if (narrowed)
      for (uint64_t key : kept) count(key);
    else forEach(count);
    narrowed = narrowed || keep;
    s = radixStep(s, ps, hist.data());
  }
  return s;
}

}  // namespace topk
}  // namespace sc
