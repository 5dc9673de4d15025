// Device pieces of the sparse stream operations (kernels/sparse_ops.cu): the
// functors CUB's algorithms are instantiated with and the kernels that are not
// CUB primitives. The element logic is the host's (core/sorted_index.h,
// core/reduce_op.h, sparse/stream.h's checkWord): the CPU reference runs the
// same functions, so only the launching and the memory live here.
#pragma once

#include <cstdint>

#include "core/reduce_op.h"
#include "core/sorted_index.h"
#include "sparse/static_block.h"
#include "sparse/stream.h"

namespace sc::sp::dev {

// Value bits, for operations that only move values (merge, sort, select).
template <size_t N>
struct Bits;
template <>
struct Bits<1> {
  using type = uint8_t;
};
template <>
struct Bits<2> {
  using type = uint16_t;
};
template <>
struct Bits<4> {
  using type = uint32_t;
};
template <>
struct Bits<8> {
  using type = unsigned long long;
};

struct Less {
  template <typename I>
  __device__ __forceinline__ bool operator()(I a, I b) const {
    return a < b;
  }
};

struct MinU64 {
  __device__ __forceinline__ uint64_t operator()(uint64_t a, uint64_t b) const { return a < b ? a : b; }
};

// The input check at position i: checkWord's error word, or kNoError.
template <typename I>
struct CheckAt {
  const I* idx;
  uint64_t dim;
  bool rangeOnly;
  __device__ __forceinline__ uint64_t operator()(uint64_t i) const { return checkWord(idx, i, dim, rangeOnly); }
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

// Densify (Add = false) or scatter-add (Add = true) of n sparse entries.
template <bool Add, typename I, typename T>
__global__ void scatterKernel(const I* idx, const T* val, uint64_t n, uint64_t lo, T* dense) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    sorted::scatterAt<Add>(idx, val, i, lo, dense);
}

// Run heads of sorted keys.
template <typename I>
struct RunHead {
  const I* keys;
  __device__ __forceinline__ bool operator()(uint64_t i) const { return sorted::runHead(keys, i); }
};

// One thread per run of equal keys, its values summed in input order (the
// stable sort kept it) as the CPU reference does. Runs are mostly short; the
// number of runs is on the device (*runs).
template <typename I, typename T>
__global__ void foldRunsKernel(const I* keys, const T* vals, const uint64_t* starts, const uint64_t* runs, uint64_t n,
                               I* outKeys, T* outVals) {
  const uint64_t m = *runs, stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t r = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < m; r += stride) {
    const uint64_t b = starts[r], e = r + 1 < m ? starts[r + 1] : n;
    outKeys[r] = keys[b];
    outVals[r] = sorted::sumRun<T>([vals](uint64_t i) { return vals[i]; }, b, e);
  }
}

// The split of sorted indices into parts ranges (SparseOps::split): thread p
// finds where part p starts and how many entries it holds, by the binary
// searches of the CPU reference. The count is n, or *nIn when given (a count
// an earlier kernel left in device memory: no host read in between).
template <typename I>
__global__ void splitKernel(const I* idx, uint64_t n, const uint64_t* nIn, const uint64_t* bounds, int parts,
                            uint64_t* counts, uint64_t* offs) {
  if (nIn) n = *nIn;
  for (int p = blockIdx.x * blockDim.x + threadIdx.x; p <= parts; p += gridDim.x * blockDim.x) {
    const uint64_t first = sorted::partStart(idx, n, bounds, parts, p);
    offs[p] = first;
    counts[p] = p < parts ? sorted::partStart(idx, n, bounds, parts, p + 1) - first : 0;
  }
}

// --- the static-size allreduce (sparse/static_block.h) -----------------------
// The status word of slot s, for the minimum over all slots.
template <typename I>
struct StaticCheckAt {
  const unsigned char* blocks;
  StaticLayout L;
  uint64_t dim;
  __device__ __forceinline__ uint64_t operator()(uint64_t s) const {
    I key;
    return staticSlot(blocks, L, dim, s, &key);
  }
};

// Slot s of the gathered blocks as a sort pair (SparseOps::staticSlots).
template <typename I, typename B>
__global__ void staticSlotsKernel(const unsigned char* blocks, StaticLayout L, uint64_t dim, uint64_t n, I* keys,
                                  B* vals) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t s = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < n; s += stride) {
    (void)staticSlot(blocks, L, dim, s, &keys[s]);
    vals[s] = uint64_t(keys[s]) < dim ? staticValue<B>(blocks, L, s) : B(0);
  }
}

// Densify of the first *cnt coalesced entries whose index is below dim
// (unique indices: no two threads write one element).
template <typename I, typename B>
__global__ void densifyCountedKernel(const I* idx, const B* val, const uint64_t* cnt, uint64_t nMax, uint64_t dim,
                                     B* dense) {
  const uint64_t n = *cnt < nMax ? *cnt : nMax, stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    if (uint64_t(idx[i]) < dim) sorted::scatterAt<false>(idx, val, i, 0, dense);
}

__global__ void keepStatusKernel(uint64_t* status, const uint64_t* err) {
  if (*err != kStaticOk && *status == 0) *status = *err;
}

// A small host array passed by value (kernel parameter) and written in stream order.
struct Chunk {
  unsigned char b[256];
};
__global__ void writeChunk(unsigned char* dst, Chunk c, unsigned n) {
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) dst[i] = c.b[i];
}

}  // namespace sc::sp::dev
