// Device pieces of the sparse stream operations (kernels/sparse_ops.cu): the
// element types, the functors CUB's algorithms are instantiated with, and the
// two scatter kernels (scatters are neither scans nor sorts; everything else
// is a CUB primitive).
#pragma once

#include <cstdint>

#include "reduce.cuh"

namespace sc::sp::dev {

using sc::dev::BF16;
using sc::dev::F16;

// The sum of the CPU backend, bit for bit (signed integers wrap as unsigned).
template <typename T>
using Sum = sc::dev::Op<T, scSum>;

// Value bits, for operations that only move values (merge, sort, select).
template <size_t N> struct Bits;
template <> struct Bits<1> { using type = uint8_t; };
template <> struct Bits<2> { using type = uint16_t; };
template <> struct Bits<4> { using type = uint32_t; };
template <> struct Bits<8> { using type = unsigned long long; };

template <typename T>
__device__ __forceinline__ bool nonZero(T v) { return v != T(0); }  // NaN counts as non-zero
template <>
__device__ __forceinline__ bool nonZero<F16>(F16 v) { return (v.bits & 0x7fffu) != 0; }
template <>
__device__ __forceinline__ bool nonZero<BF16>(BF16 v) { return (v.bits & 0x7fffu) != 0; }

struct Less {
  template <typename I>
  __device__ __forceinline__ bool operator()(I a, I b) const { return a < b; }
};

struct MinU64 {
  __device__ __forceinline__ uint64_t operator()(uint64_t a, uint64_t b) const { return a < b ? a : b; }
};

// The input check at position i: (i << 4) | kind for the first failed check, else ~0.
template <typename I>
struct CheckAt {
  const I* idx;
  uint64_t dim;
  bool rangeOnly;
  __device__ __forceinline__ uint64_t operator()(uint64_t i) const {
    const I x = idx[i];
    if (uint64_t(x) >= dim) return (i << 4) | 1;
    if (!rangeOnly && i > 0) {
      const I p = idx[i - 1];
      if (x == p) return (i << 4) | 2;
      if (x < p) return (i << 4) | 3;
    }
    return ~uint64_t(0);
  }
};

template <typename I>
struct Widen {
  __device__ __forceinline__ unsigned long long operator()(I x) const { return (unsigned long long)x; }
};

// Position i of a dense range starting at global index lo, as an index.
template <typename I>
struct IndexAt {
  uint64_t lo;
  __device__ __forceinline__ I operator()(uint64_t i) const { return I(lo + i); }
};

// Selects index x when dense[x - lo] != 0.
template <typename I, typename T>
struct NonZeroAt {
  const T* dense;
  uint64_t lo;
  __device__ __forceinline__ bool operator()(I x) const { return nonZero(dense[uint64_t(x) - lo]); }
};

template <typename T>
struct NonZero {
  __device__ __forceinline__ bool operator()(T v) const { return nonZero(v); }
};

// dense[idx[i] - lo] = val[i]  (Add: dense[...] = dense[...] + val[i]). Indices are
// unique, so no two threads touch one element.
template <bool Add, typename I, typename T>
__global__ void scatterKernel(const I* idx, const T* val, uint64_t n, uint64_t lo, T* dense) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint64_t j = uint64_t(idx[i]) - lo;
    if constexpr (Add) dense[j] = Sum<T>()(dense[j], val[i]);
    else dense[j] = val[i];
  }
}

// Run heads of sorted keys: position i starts a run when it differs from i - 1.
template <typename I>
struct RunHead {
  const I* keys;
  __device__ __forceinline__ bool operator()(uint64_t i) const { return i == 0 || keys[i] != keys[i - 1]; }
};

// One thread per run of equal keys: the run's values summed left to right, in
// input order (the stable sort kept it), as the CPU reference does -- a tree
// (CUB's ReduceByKey) rounds float16/bfloat16/float differently. Runs are
// mostly short; the number of runs is on the device (*runs).
template <typename I, typename T>
__global__ void foldRunsKernel(const I* keys, const T* vals, const uint64_t* starts, const uint64_t* runs, uint64_t n,
                               I* outKeys, T* outVals) {
  const uint64_t m = *runs, stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t r = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < m; r += stride) {
    const uint64_t b = starts[r], e = r + 1 < m ? starts[r + 1] : n;
    T acc = vals[b];
    for (uint64_t i = b + 1; i < e; ++i) acc = Sum<T>()(acc, vals[i]);
    outKeys[r] = keys[b];
    outVals[r] = acc;
  }
}

// A small host array passed by value (kernel parameter) and written in stream order.
struct Chunk {
  unsigned char b[256];
};
__global__ void writeChunk(unsigned char* dst, Chunk c, unsigned n) {
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) dst[i] = c.b[i];
}

}  // namespace sc::sp::dev
