// Helpers shared by the DSOP .cu files (CUDA-only; not for host C++).
#pragma once

#include <cuda_runtime.h>

#include "reduce.cuh"  // SC_CUDA_CHECK

namespace sc::dsop {

// Makes the device that owns `p` current for the scope (local communicators
// run one thread per rank; a thread need not have selected its device yet).
class OnDeviceOf {
 public:
  explicit OnDeviceOf(const void* p) {
    cudaPointerAttributes attr{};
    SC_CUDA_CHECK(cudaPointerGetAttributes(&attr, p));
    SC_ARG(attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged,
           "DSOP: a buffer of a device communicator is not device memory");
    SC_CUDA_CHECK(cudaGetDevice(&prev_));
    dev_ = attr.device >= 0 ? attr.device : prev_;
    if (dev_ != prev_) SC_CUDA_CHECK(cudaSetDevice(dev_));
  }
  ~OnDeviceOf() {
    if (dev_ != prev_) (void)cudaSetDevice(prev_);
  }
  OnDeviceOf(const OnDeviceOf&) = delete;
  OnDeviceOf& operator=(const OnDeviceOf&) = delete;
  int device() const { return dev_; }

 private:
  int prev_ = 0, dev_ = 0;
};

// Grid for a grid-stride loop over n items.
inline unsigned gridFor(size_t n, int threads) {
  const size_t blocks = (n + threads - 1) / threads;
  return unsigned(blocks < 65535 * 16 ? (blocks ? blocks : 1) : 65535 * 16);
}

}  // namespace sc::dsop
