// A validated top-k call, as the CPU reference and the CUDA launchers see it.
// Plain data (no CUDA, no exceptions) so kernels/topk_*.cu can include it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sparcoll/topk.h"

namespace sc {
namespace topk {

struct Params {
  scTopkMethod_t method;
  scTopkOutput_t output;  // scTopkVariable for exact/threshold
  scTopkIndex_t indexType;
  scDataType_t dtype;   // float32, float64, float16, bfloat16
  uint64_t n, k;        // 1 <= k <= n
  uint64_t bucket;      // bucketed methods: 1 .. 2^32 (cfg.bucket 0 resolved); number of buckets <= INT32_MAX
  uint64_t seed, step;  // step < 2^63
  uint64_t samples;     // threshold, bracket, exact: resolved sample count, 1 .. n
  uint64_t capacity;    // output entries available, >= k
};

struct Buffers {
  const void* grad;  // n elements
  void* residual;    // n elements, or null without error feedback
  void* indices;     // capacity entries of indexType
  void* values;      // capacity entries of dtype
};

struct Outcome {
  uint64_t nnz = 0;       // entries written
  uint64_t selected = 0;  // entries the method selected
  uint64_t deferred = 0;  // selected entries not written (kept in the residual with feedback)
};

inline bool bucketed(scTopkMethod_t m) { return m == scTopkApprox || m == scTopkApproxAtMost; }
inline uint64_t numBuckets(const Params& p) { return (p.n + p.bucket - 1) / p.bucket; }

// The bucket of the bucketed methods when cfg.bucket is 0: the shortest whose
// full buckets all own at least kMinBucketSlots output slots (k_b =
// floor(k e/n) - floor(k s/n) >= floor(k L/n) >= kMinBucketSlots for L >=
// kMinBucketSlots n/k), the whole vector when k is smaller than that. Why 32:
// the quality figures of bench/topk_perf (README, "Top-k selection"): with
// fewer slots per bucket fixed output pads a large share of its k entries
// (a bucket with k_b = 1 selects nothing about a third of the time), and the
// captured energy does not grow with more.
constexpr uint64_t kMinBucketSlots = 32;
inline uint64_t defaultBucket(uint64_t n, uint64_t k) {
  const unsigned __int128 want = ((unsigned __int128)kMinBucketSlots * n + k - 1) / k;
  const uint64_t limit = n < (uint64_t(1) << 32) ? n : (uint64_t(1) << 32);
  return want >= limit ? limit : (want < 1 ? 1 : uint64_t(want));
}

// CPU reference implementations (reference_approx.cpp, reference_select.cpp).
Outcome approxHost(const Params& p, const Buffers& b);
Outcome selectSampledHost(const Params& p, const Buffers& b);  // bracket, exact, threshold
inline Outcome selectHost(const Params& p, const Buffers& b) {
  return bucketed(p.method) ? approxHost(p, b) : selectSampledHost(p, b);
}

// Writes one output index in the configured width.
inline void putIndex(void* out, uint64_t pos, uint64_t idx, scTopkIndex_t t) {
  if (t == scTopkIndexU32) static_cast<uint32_t*>(out)[pos] = uint32_t(idx);
  else static_cast<uint64_t*>(out)[pos] = idx;
}

}  // namespace topk
}  // namespace sc
