// Host-side plumbing and device helpers shared by the top-k launchers
// (kernels/topk_approx*.cu, kernels/topk_select.cu): stream-ordered scratch
// memory from sparcoll's own pool, kept across calls by a state; the counts a
// call leaves in device memory and the one bounded wait that reads them back
// when the caller asks; vector loads and stores of a thread's run of
// elements; a tile's offset by decoupled look-back. CUDA-only (nvcc).
#pragma once

#include <cub/agent/single_pass_scan_operators.cuh>
#include <cuda/std/functional>
#include <cuda/std/type_traits>
#include <cuda_runtime_api.h>
#include <sched.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "core/cuda_util.h"
#include "core/deadline.h"
#include "topk/params.h"
#include "topk_launch.cuh"

namespace sc {
namespace topk {

using Count = unsigned long long;

// What a call leaves in device memory (scTopkCounts_t's layout).
struct Counts {
  Count nnz, selected, deferred;
};
static_assert(sizeof(Counts) == sizeof(scTopkCounts_t), "Counts is scTopkCounts_t");

// sparcoll's stream-ordered pool on `device` (made on first use, kept for the
// process): memory freed to it stays reserved, so scratch after the first
// calls is a sub-allocation that never reaches the driver nor synchronizes.
// The device's default pool, which the application may tune, is not touched.
cudaMemPool_t scratchPool(int device);

// Scratch memory of one call, carved 256-byte aligned from chunks of the
// pool. With a state's arena (DeviceArena, topk/device.h) the call carves the
// arena, and a call that needed more leaves the arena grown to what it used:
// from the next call of that size on, no allocation at all (capturable into a
// CUDA graph without a memory node). Stateless calls take one chunk of the
// thread's largest earlier need from the pool. Chunks are freed on the stream
// when the launcher returns (after everything it enqueued).
class Scratch {
 public:
  Scratch(cudaStream_t s, int device, DeviceArena* arena);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  template <typename T>
  T* get(size_t count) {
    return static_cast<T*>(bytes(count ? count * sizeof(T) : 1));
  }
  template <typename T>
  T* zeroed(size_t count) {
    T* p = get<T>(count);
    SC_CUDA_CHECK(cudaMemsetAsync(p, 0, count * sizeof(T), stream_));
    return p;
  }
  cudaStream_t stream() const { return stream_; }

 private:
  void* bytes(size_t n);
  struct Chunk {
    char* base;
    size_t size, used;
  };
  cudaStream_t stream_;
  int device_;
  DeviceArena* arena_;
  std::vector<Chunk> chunks_;  // [0] is the arena's when there is one
  size_t total_ = 0;           // bytes carved, alignment included
};

// Waits (bounded) for everything enqueued on `stream` so far, then copies
// `bytes` from device memory. The wait polls an event (one per thread and
// device, made once): spin briefly, then yield, then sleep, and give up with
// scTimeout at the deadline.
void readBack(void* host, const void* dev, size_t bytes, cudaStream_t stream, double timeoutSeconds);

// The call's counts: where the caller wants them in device memory, or scratch.
inline Counts* countsOf(const DeviceCall& call, Scratch& scratch) {
  return call.counts ? static_cast<Counts*>(call.counts) : scratch.get<Counts>(1);
}
// The outcome the API returns: the counts read back when the call must wait,
// else nothing (the counts stay in device memory).
inline Outcome outcomeOf(const DeviceCall& call, const Counts* counts, cudaStream_t s) {
  Outcome o;
  if (!call.readCounts) return o;
  Counts h{};
  readBack(&h, counts, sizeof h, s, call.timeoutSeconds);
  o.nnz = h.nnz;
  o.selected = h.selected;
  o.deferred = h.deferred;
  return o;
}

inline unsigned blocksFor(uint64_t work, int threads, uint64_t cap = 65535ull * 32) {
  const uint64_t b = (work + threads - 1) / threads;
  return unsigned(b < 1 ? 1 : (b > cap ? cap : b));
}

// Multiprocessors of the current device (asked once per device).
int multiprocessors();

namespace {

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
  using V =
      ::cuda::std::conditional_t<kBytes % 16 == 0, uint4, ::cuda::std::conditional_t<kBytes % 8 == 0, uint2, Bits>>;
  static constexpr int kN = kBytes / int(sizeof(V));
  static __device__ __forceinline__ bool aligned(const void* p) {
    return reinterpret_cast<uintptr_t>(p) % sizeof(V) == 0;
  }
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

// The decoupled look-back of a stream of tiles (CUB's ScanTileState and
// TilePrefixCallbackOp): the sum of the counts of the tiles before `tile`,
// given this tile's count, in every thread of the block. The first warp
// looks back; the result goes through shared memory.
using TileState = cub::ScanTileState<Count>;
using TilePrefix = cub::TilePrefixCallbackOp<Count, ::cuda::std::plus<Count>, TileState>;
struct LookBackStorage {
  typename TilePrefix::TempStorage prefix;
  Count base;
};
__device__ __forceinline__ Count tileBase(TileState& tiles, LookBackStorage& tmp, int tile, Count count) {
  if (tile == 0) {
    if (threadIdx.x == 0) tiles.SetInclusive(0, count);
    return 0;
  }
  if (threadIdx.x < 32) {
    TilePrefix prefix(tiles, tmp.prefix, ::cuda::std::plus<Count>{}, tile);
    const Count p = prefix(count);
    if (threadIdx.x == 0) tmp.base = p;
  }
  __syncthreads();
  return tmp.base;
}

__global__ void initTilesKernel(TileState tiles, int num) { tiles.InitializeStatus(num); }

// A tile state for `num` tiles in scratch, initialised on the stream.
inline TileState makeTiles(Scratch& scratch, int num) {
  TileState tiles;
  size_t bytes = 0;
  SC_CUDA_CHECK(TileState::AllocationSize(num, bytes));
  SC_CUDA_CHECK(tiles.Init(num, scratch.get<char>(bytes), bytes));
  initTilesKernel<<<blocksFor(uint64_t(num) + 32, 128, INT32_MAX), 128, 0, scratch.stream()>>>(tiles, num);
  SC_CUDA_CHECK(cudaGetLastError());
  return tiles;
}

}  // namespace

}  // namespace topk
}  // namespace sc
