// The sampled selection behind the bracket, exact and threshold methods, written
// once for the CPU reference (csrc/topk/reference_select.cpp) and the kernels
// (kernels/topk_select.cu), so that both take the same decisions:
//
//   1. sample: s keys at Philox positions (philox.h, Domain::Sample); the cuts
//      are order statistics of that multiset: lo = its rankLo-th largest key,
//      hi = its rankHi-th largest (bracket and exact: two cuts around the
//      sample rank k*s/n of the k-th largest key; threshold: one cut at it);
//   2. one pass over the vector: count the keys >= hi, and list (index, value)
//      of every key >= lo, in index order, up to `bound` entries (the rest are
//      counted, not kept);
//   3. pick (pickAfterPass): take every candidate, or select among them (the
//      keys >= hi are in when there are fewer than k of them: only the band
//      [lo, hi) is ranked), or fall back to the exact select over the whole
//      vector when the list overflowed, or, for exact, when the sample cut
//      fewer than k keys;
//   4. keep (keeps): key >= minKey and (key > T, or key == T and index <=
//      lastTie), over the list or, after a fallback, over the vector; the
//      output comes out in index order.
//
// Keys are abs bit patterns (select_math.h): monotone in |v|, NaN > Inf. The
// cuts, T and lastTie are order statistics of multisets, so any correct
// selection algorithm finds the same ones; the CPU and the GPU both use the
// radix select of radix_select.h.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/numeric.h"
#include "topk/params.h"
#include "topk/select_math.h"  // thresholdRank

namespace sc {
namespace topk {

// A cut no key reaches (keys are at most 64 bits and a NaN's abs pattern is
// below 2^63 for float64).
constexpr uint64_t kNoCut = ~uint64_t(0);

// The candidate list holds at most this many entries: twice k plus 64 Ki, so
// the bracket's lower cut (about 1.3 k candidates for the default sample of a
// large k, a wider bracket for a small one) fits with room; all of n when that
// is not much more.
SC_HD uint64_t candidateBound(uint64_t k, uint64_t n) {
  const uint64_t slack = uint64_t(1) << 16;
  return k >= n / 2 ? n : (2 * k + slack < n ? 2 * k + slack : n);
}

// The bracket's sample: about r sampled keys are expected above the k-th
// largest key, and the cuts sit kBracketZ standard deviations (plus one)
// either side of that rank, so each misses with probability about Phi(-5) =
// 3e-7 (a little more for the smallest r, where the count is Poisson; the
// tests measure the miss rate). r is what keeps the lower cut's candidates
// within the list: 256 when the list is about 2k (k >= 64 Ki: 1.3 k expected),
// down to 64 for smaller k, whose list's 64 Ki of slack holds the wider
// bracket, so a small k does not pay for a large sample. s = r n/k is kept
// between kSampleMin and kSampleMax (and n/8): at most 2^18 random reads,
// 0.4 % of the keys of 2^26 elements.
constexpr double kBracketZ = 5;
constexpr uint64_t kSampleMin = 1024;
constexpr uint64_t kSampleMax = uint64_t(1) << 18;
inline double bracketTarget(uint64_t k) {
  const double r = double(k) / 256;
  return r > 256 ? 256 : (r < 64 ? 64 : r);
}

struct SelectPlan {
  uint64_t samples;  // s; 0: no sample and no list, the exact select over the
                     // vector (bracket and exact when every key fits the list)
  uint64_t rankLo;   // 1-based rank of the lower cut in the sample (samples > 0)
  uint64_t rankHi;   // 1-based rank of the upper cut; 0: no upper cut
  uint64_t bound;    // candidate list capacity
  uint64_t minKey;   // bracket: 1 (a zero is never selected); exact, threshold: 0
};

// Host only (floating point): both sides compute the plan on the host, from
// the same validated Params, so they run the same one.
inline SelectPlan selectPlan(const Params& p) {
  SelectPlan s{};
  s.bound = candidateBound(p.k, p.n);
  s.minKey = p.method == scTopkBracket ? 1 : 0;
  if (p.method == scTopkThreshold) {  // DGC: one cut at the expected rank
    s.samples = p.samples;
    s.rankLo = thresholdRank(p.k, p.samples, p.n);
    return s;
  }
  // Every key fits the list: nothing to bracket, and a list would copy the vector.
  if (s.bound >= p.n) return s;
  s.samples = p.samples;
  const double r = double(p.k) * double(s.samples) / double(p.n), w = kBracketZ * std::sqrt(r) + 1;
  const double lo = std::ceil(r + w), hi = std::floor(r - w);
  s.rankLo = lo >= double(s.samples) ? s.samples : (lo < 1 ? 1 : uint64_t(lo));
  s.rankHi = hi < 1 ? 0 : uint64_t(hi);
  return s;
}

// The sample size of the bracket and exact methods when cfg.samples is 0: at
// most an eighth of the vector (a larger sample would cost as much as the
// pass; the list's 64 Ki of slack holds the wider bracket of the smaller one).
inline uint64_t bracketSamples(uint64_t n, uint64_t k) {
  const double want = std::ceil(bracketTarget(k) * double(n) / double(k));
  uint64_t s = want >= double(kSampleMax) ? kSampleMax : (want < double(kSampleMin) ? kSampleMin : uint64_t(want));
  if (s > n / 8) s = n / 8;
  return s < 1 ? 1 : s;
}

// The cuts from the sample's order statistics (lo = the rankLo-th largest
// sampled key, hi = the rankHi-th, kNoCut without one): hi >= lo >= minKey, so
// the keys >= hi are candidates too.
struct Cuts {
  uint64_t lo, hi;
};
SC_HD Cuts makeCuts(const SelectPlan& s, uint64_t sampleLo, uint64_t sampleHi) {
  const uint64_t lo = sampleLo < s.minKey ? s.minKey : sampleLo;
  const uint64_t hi = s.rankHi == 0 ? kNoCut : (sampleHi < lo ? lo : sampleHi);
  return Cuts{lo, hi};
}

// What happens after the pass, from the counts alone (on the GPU the pass's
// last block decides it, in device memory).
enum PickMode : uint32_t {
  kPickAll = 0,       // every candidate is kept (no select)
  kPickBand = 1,      // select rank among the band: candidates with key < hi
  kPickHigh = 2,      // select rank among the keys >= hi
  kPickFallback = 3,  // the exact select over the whole vector
};
struct Pick {
  uint32_t mode;
  uint64_t rank, count;  // the select: the rank-th largest of count keys
};

// candidates = keys >= lo (all counted, at most `bound` listed), high = keys >= hi.
SC_HD Pick pickAfterPass(scTopkMethod_t method, uint64_t k, uint64_t candidates, uint64_t high, uint64_t bound) {
  if (candidates > bound) return Pick{kPickFallback, k, 0};
  if (candidates <= k) {
    // Fewer than k: the exact method needs the k-th key, which the lower cut
    // left out; bracket and threshold return what they have (the largest keys
    // of the vector, every one of them).
    if (method == scTopkExact && candidates < k) return Pick{kPickFallback, k, 0};
    return Pick{kPickAll, 0, candidates};
  }
  if (high >= k) return Pick{kPickHigh, k, high};
  return Pick{kPickBand, k - high, candidates - high};
}

// Whether a key is in the select's multiset.
SC_HD bool inPick(const Pick& pk, uint64_t key, uint64_t hi) {
  return pk.mode == kPickHigh ? key >= hi : (pk.mode == kPickBand ? key < hi : true);
}

// The keep rule: T and lastTie from the select (kPickAll: T = 0, lastTie = the
// last index, which keeps every candidate).
SC_HD bool keeps(uint64_t key, uint64_t index, uint64_t T, uint64_t lastTie, uint64_t minKey) {
  return key >= minKey && (key > T || (key == T && index <= lastTie));
}

}  // namespace topk
}  // namespace sc
