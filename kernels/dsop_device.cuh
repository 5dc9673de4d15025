// Helpers shared by the DSOP .cu files (CUDA-only; not for host C++).
#pragma once

#include <cuda_runtime.h>

#include "core/cuda_util.h"

namespace sc::dsop {

// Makes the device that owns `p` current for the scope (local communicators
// run one thread per rank; a thread need not have selected its device yet).
class OnDeviceOf {
 public:
  explicit OnDeviceOf(const void* p) : dev_(ownerOf(p)), scope_(dev_) {}
  int device() const { return dev_; }

 private:
  // The device of p's memory (managed memory without one: the current device).
  static int ownerOf(const void* p) {
    cudaPointerAttributes attr{};
    SC_CUDA_CHECK(cudaPointerGetAttributes(&attr, p));
    SC_ARG(attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged,
           "DSOP: a buffer of a device communicator is not device memory");
    if (attr.device >= 0) return attr.device;
    int current = 0;
    SC_CUDA_CHECK(cudaGetDevice(&current));
    return current;
  }

  int dev_;
  DeviceScope scope_;
};

// Grid for a grid-stride loop over n items.
inline unsigned gridFor(size_t n, int threads) {
  const size_t blocks = (n + threads - 1) / threads;
  return unsigned(blocks < 65535 * 16 ? (blocks ? blocks : 1) : 65535 * 16);
}

}  // namespace sc::dsop
