// What both designs of the approximate top-k kernels share
// (kernels/topk_approx.cu: a thread block per bucket; kernels/topk_approx_split.cu:
// a warp per small bucket, blocks per chunk of a large one): the launch
// arguments, vector loads and stores of a thread's run of elements, and the
// selection flags of such a run. CUDA-only (nvcc), included once per file
// (internal linkage).
#pragma once

#include <cub/device/device_reduce.cuh>
#include <cuda/std/type_traits>

#include <cstdint>

#include "topk/select_math.h"
#include "topk_device.cuh"

namespace sc {
namespace topk {
namespace {

using Count = unsigned long long;

// Per-bucket counts of fixed output (the caller may read their sums).
struct BucketCounts {
  Count selected, deferred;
};
struct CountsPlus {
  __host__ __device__ BucketCounts operator()(const BucketCounts& a, const BucketCounts& b) const {
    return BucketCounts{a.selected + b.selected, a.deferred + b.deferred};
  }
};

struct ApproxArgs {
  const void* grad;
  void* residual;  // null without error feedback
  void* indices;
  void* values;
  uint64_t n, k, bucket, capacity, seed, step;
  bool atMost, fixed, idx64;
  Count* total;             // variable output: the stream's selected count (the last bucket writes it)
  BucketCounts* perBucket;  // fixed output: per-bucket counts, or null when nobody reads them
};

template <typename T>
__device__ __forceinline__ T lo(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
__device__ __forceinline__ T hi(T a, T b) {
  return a < b ? b : a;
}

template <typename T>
struct MaxOp {
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};

// One thread's ITEMS consecutive elements (blocked arrangement) moved with the
// widest aligned vector accesses: 16 bytes when the run is a multiple of 16.
template <typename Bits, int ITEMS>
struct VecIO {
  static constexpr int kBytes = ITEMS * int(sizeof(Bits));
  using V = ::cuda::std::conditional_t<kBytes % 16 == 0, uint4, ::cuda::std::conditional_t<kBytes % 8 == 0, uint2, Bits>>;
  static constexpr int kN = kBytes / int(sizeof(V));
  static __device__ __forceinline__ bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % sizeof(V) == 0; }
  static __device__ __forceinline__ void load(const Bits* p, Bits (&x)[ITEMS]) {
    V v[kN];
#pragma unroll
    for (int i = 0; i < kN; ++i) v[i] = reinterpret_cast<const V*>(p)[i];
    ::memcpy(x, v, kBytes);
  }
  static __device__ __forceinline__ void store(Bits* p, const Bits (&x)[ITEMS]) {
    V v[kN];
    ::memcpy(v, x, kBytes);
#pragma unroll
    for (int i = 0; i < kN; ++i) reinterpret_cast<V*>(p)[i] = v[i];
  }
};

// Selection flags of a thread's run of ITEMS consecutive elements whose first
// global index is `first`, of which the first `valid` exist (valid may be <= 0).
// Element i draws word i % 4 of Philox block i / 4 (philox.h): when the run
// starts at a multiple of 4, each block is drawn once and its words used in
// order; otherwise blocks are drawn per group of four. Non-finite values are
// always selected (sent, never kept).
template <class F, int ITEMS, typename C>
__device__ __forceinline__ void selectRun(const Decision& dec, uint64_t seed, uint64_t step, uint64_t first, int valid,
                                          const typename F::Bits (&acc)[ITEMS], const uint32_t (&q)[ITEMS],
                                          C (&sel)[ITEMS]) {
  auto pick = [&](int j, uint32_t u) -> C {
    if (j >= valid) return C(0);
    if (!F::finite(F::absBits(acc[j]))) return C(1);
    return C(chooses(dec, u, q[j]));
  };
  if (ITEMS % 4 == 0 && (first & 3) == 0) {
#pragma unroll
    for (int g = 0; g < ITEMS; g += 4) {
      const Philox4 blk = philoxBlock(seed, step, Domain::Select, (first >> 2) + uint64_t(g / 4));
#pragma unroll
      for (int w = 0; w < 4; ++w) sel[g + w] = pick(g + w, blk.v[w]);
    }
    return;
  }
  uint64_t group = ~uint64_t(0);
  Philox4 blk{{0, 0, 0, 0}};
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const uint64_t i = first + uint64_t(j);
    if (j < valid && (i >> 2) != group) {
      group = i >> 2;
      blk = philoxBlock(seed, step, Domain::Select, group);
    }
    sel[j] = pick(j, word(blk, uint32_t(i & 3)));
  }
}

// Writes output slot `slot`: the index in the configured width, and the value.
template <typename Bits>
__device__ __forceinline__ void putEntry(const ApproxArgs& a, uint64_t slot, uint64_t index, Bits v) {
  if (a.idx64)
    static_cast<uint64_t*>(a.indices)[slot] = index;
  else
    static_cast<uint32_t*>(a.indices)[slot] = uint32_t(index);
  static_cast<Bits*>(a.values)[slot] = v;
}

// acc = g (+ r) for a thread's run of ITEMS elements from global index `first`,
// of which the first `valid` exist (the rest read as 0): vector loads when the
// run is whole and aligned, else element by element.
template <class F, int ITEMS>
__device__ __forceinline__ void loadRun(const ApproxArgs& a, uint64_t first, int valid,
                                        typename F::Bits (&acc)[ITEMS]) {
  using Bits = typename F::Bits;
  using IO = VecIO<Bits, ITEMS>;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) acc[j] = Bits(0);
  if (valid <= 0) return;
  const Bits* g = static_cast<const Bits*>(a.grad) + first;
  const Bits* r = a.residual ? static_cast<const Bits*>(a.residual) + first : nullptr;
  if (valid >= ITEMS && IO::aligned(g) && (!r || IO::aligned(r))) {
    IO::load(g, acc);
    if (r) {
      Bits x[ITEMS];
      IO::load(r, x);
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) acc[j] = F::add(acc[j], x[j]);
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < ITEMS; ++j)
    if (j < valid) acc[j] = r ? F::add(g[j], r[j]) : g[j];
}

// The new residual of the run (with error feedback): acc where not sent, +0 where sent.
template <class F, int ITEMS>
__device__ __forceinline__ void storeResidualRun(const ApproxArgs& a, uint64_t first, int valid,
                                                 const typename F::Bits (&acc)[ITEMS], const bool (&sent)[ITEMS]) {
  using Bits = typename F::Bits;
  using IO = VecIO<Bits, ITEMS>;
  if (!a.residual || valid <= 0) return;
  Bits out[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) out[j] = sent[j] ? Bits(0) : acc[j];
  Bits* r = static_cast<Bits*>(a.residual) + first;
  if (valid >= ITEMS && IO::aligned(r)) {
    IO::store(r, out);
    return;
  }
#pragma unroll
  for (int j = 0; j < ITEMS; ++j)
    if (j < valid) r[j] = out[j];
}

// The call's outcome once the kernels are enqueued. Variable output reads the
// stream's selected count back (it decides nnz); fixed output knows nnz = k
// and reads the per-bucket counts' sums only when the caller asked for them.
inline Outcome approxOutcome(const Params& p, const DeviceCall& call, Scratch& scratch, cudaStream_t s,
                             const Count* total, const BucketCounts* perBucket, uint64_t buckets) {
  Outcome o;
  o.nnz = p.k;
  if (total) {
    Count h = 0;
    readBack(&h, total, sizeof h, s, call.timeoutSeconds);
    o.selected = h;
    o.nnz = h < p.capacity ? h : p.capacity;
    o.deferred = h - o.nnz;
  } else if (perBucket) {
    BucketCounts* sum = scratch.get<BucketCounts>(1);
    size_t bytes = 0;
    SC_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, perBucket, sum, int64_t(buckets), CountsPlus{},
                                            BucketCounts{0, 0}, s));
    SC_CUDA_CHECK(cub::DeviceReduce::Reduce(scratch.get<char>(bytes), bytes, perBucket, sum, int64_t(buckets),
                                            CountsPlus{}, BucketCounts{0, 0}, s));
    BucketCounts h{0, 0};
    readBack(&h, sum, sizeof h, s, call.timeoutSeconds);
    o.selected = h.selected;
    o.deferred = h.deferred;
  }
  return o;
}

}  // namespace
}  // namespace topk
}  // namespace sc
