// Host-side plumbing shared by the top-k launchers (kernels/topk_approx.cu,
// kernels/topk_exact.cu): stream-ordered scratch memory and the one bounded
// wait that reads counts back (the device scope: core/cuda_util.h). CUDA-only
// (nvcc).
#pragma once

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

// The pool reserves device memory in chunks of this size (measured on an H100,
// driver 580: a 64 B allocation reserves 32 MiB, a 40 MiB one 64 MiB), and a
// sync releases whole free chunks while the reserve exceeds the threshold.
constexpr uint64_t kPoolChunk = uint64_t(32) << 20;

// The current device's default pool keeps at least `bytes` across
// synchronisations. Its release threshold is 0 unless raised: every sync
// hands freed memory back to the driver, and the next call pays for fresh
// allocations again. The threshold grows to the largest call's scratch (a
// high-water mark), rounded up to whole chunks (a threshold below the chunk
// keeps nothing), and never shrinks, so a larger threshold set by the
// application stays, and sparcoll keeps what one call needs.
inline void keepInPool(size_t bytes) {
  int dev = 0;
  cudaMemPool_t pool;
  uint64_t cur = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetDefaultMemPool(&pool, dev) != cudaSuccess ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &cur) != cudaSuccess) {
    (void)cudaGetLastError();  // a tuning hint only: the pool works without it
    return;
  }
  uint64_t want = (uint64_t(bytes) + kPoolChunk - 1) / kPoolChunk * kPoolChunk;
  if (want > cur && cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &want) != cudaSuccess)
    (void)cudaGetLastError();
}

// Scratch buffers from the device's stream-ordered pool: allocated on the
// stream, released on the stream when the launcher returns (after everything it
// enqueued), so no host synchronisation is needed for their lifetime.
class Scratch {
 public:
  explicit Scratch(cudaStream_t s) : stream_(s) {}
  ~Scratch() {
    keepInPool(bytes_);
    for (void* p : blocks_) (void)cudaFreeAsync(p, stream_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  template <typename T>
  T* get(size_t count) {
    void* p = nullptr;
    const size_t bytes = count ? count * sizeof(T) : 1;
    SC_CUDA_CHECK(cudaMallocAsync(&p, bytes, stream_));
    blocks_.push_back(p);
    bytes_ += bytes;
    return static_cast<T*>(p);
  }
  template <typename T>
  T* zeroed(size_t count) {
    T* p = get<T>(count);
    SC_CUDA_CHECK(cudaMemsetAsync(p, 0, count * sizeof(T), stream_));
    return p;
  }

 private:
  cudaStream_t stream_;
  std::vector<void*> blocks_;
  size_t bytes_ = 0;
};

// Waits (bounded) for everything enqueued on `stream` so far, then copies
// `bytes` from device memory. The wait polls an event: spin briefly, then
// yield, then sleep, and give up with scTimeout at the deadline.
inline void readBack(void* host, const void* dev, size_t bytes, cudaStream_t stream, double timeoutSeconds) {
  cudaEvent_t ev;
  SC_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  cudaError_t rc = cudaEventRecord(ev, stream);
  const Deadline dl = Deadline::in(timeoutSeconds);
  for (int i = 0; rc == cudaSuccess; ++i) {
    rc = cudaEventQuery(ev);
    if (rc != cudaErrorNotReady) break;
    rc = cudaSuccess;
    if (dl.expired()) {
      (void)cudaEventDestroy(ev);
      SC_THROW(scTimeout, "deadline of ", dl.seconds, " s expired while waiting for the top-k count");
    }
    if (i < 64) continue;
    if (i < 1024)
      sched_yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  (void)cudaEventDestroy(ev);
  SC_CUDA_CHECK(rc);
  // The stream is idle: this copy runs at once.
  SC_CUDA_CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, stream));
  SC_CUDA_CHECK(cudaStreamSynchronize(stream));
}

inline unsigned blocksFor(uint64_t work, int threads, uint64_t cap = 65535ull * 32) {
  const uint64_t b = (work + threads - 1) / threads;
  return unsigned(b < 1 ? 1 : (b > cap ? cap : b));
}

}  // namespace topk
}  // namespace sc
