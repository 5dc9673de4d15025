// What both designs of the approximate top-k kernels share
// (kernels/topk_approx.cu: a thread block per bucket; kernels/topk_approx_split.cu:
// a warp per small bucket, blocks per chunk of a large one): the launch
// arguments, loads and stores of a thread's run of elements, the selection
// flags of such a run, and the call's counts. CUDA-only (nvcc), included once per file
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
  BucketCounts* perBucket;  // fixed output: per-bucket counts
};

// A call's launch arguments, for either design.
inline ApproxArgs approxArgs(const Params& p, const Buffers& b, bool fixed, Count* total, BucketCounts* perBucket) {
  return {b.grad,
          b.residual,
          b.indices,
          b.values,
          p.n,
          p.k,
          p.bucket,
          p.capacity,
          p.seed,
          p.step,
          p.method == scTopkApproxAtMost,
          fixed,
          p.indexType == scTopkIndexU64,
          total,
          perBucket};
}

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
  // A bucket that owns no slot (k_b = 0: a = b = 0, p_i = 0) selects only its
  // non-finite values: no random number is drawn (the draws could not change
  // anything), which is most of the work of such a bucket.
  if (dec.a == 0 && dec.b == 0) {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) sel[j] = C(j < valid && !F::finite(F::absBits(acc[j])));
    return;
  }
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
  if (a.idx64) static_cast<uint64_t*>(a.indices)[slot] = index;
  else static_cast<uint32_t*>(a.indices)[slot] = uint32_t(index);
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

// The call's counts in device memory once the kernels are enqueued: variable
// output from the stream's selected count (nnz = min(count, capacity), the
// rest deferred), fixed output from the sums of the per-bucket counts (nnz =
// k). Then the outcome, read back only when the caller waits for it.
__global__ void variableCountsKernel(const Count* total, uint64_t capacity, Counts* out) {
  const Count h = *total, nnz = h < capacity ? h : capacity;
  *out = Counts{nnz, h, h - nnz};
}
__global__ void fixedCountsKernel(const BucketCounts* sum, uint64_t k, Counts* out) {
  *out = Counts{k, sum->selected, sum->deferred};
}

inline Outcome approxOutcome(const Params& p, const DeviceCall& call, Scratch& scratch, cudaStream_t s,
                             const Count* total, const BucketCounts* perBucket, uint64_t buckets) {
  Counts* counts = countsOf(call, scratch);
  if (total) {
    variableCountsKernel<<<1, 1, 0, s>>>(total, p.capacity, counts);
  } else {
    BucketCounts* sum = scratch.get<BucketCounts>(1);
    size_t bytes = 0;
    SC_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, perBucket, sum, int64_t(buckets), CountsPlus{},
                                            BucketCounts{0, 0}, s));
    SC_CUDA_CHECK(cub::DeviceReduce::Reduce(scratch.get<char>(bytes), bytes, perBucket, sum, int64_t(buckets),
                                            CountsPlus{}, BucketCounts{0, 0}, s));
    fixedCountsKernel<<<1, 1, 0, s>>>(sum, p.k, counts);
  }
  SC_CUDA_CHECK(cudaGetLastError());
  return outcomeOf(call, counts, s);
}

}  // namespace
}  // namespace topk
}  // namespace sc
