// The CUDA runtime plumbing every CUDA source shares: SC_CUDA_CHECK turns a
// runtime call's status into an sc::Error with code scCudaError, the call's
// text, cudaGetErrorString and the caller's file:line; DeviceScope makes a
// device current for a scope and gives the caller's back.
//
// Needs the CUDA toolkit: include it only from sources the build compiles with
// CUDA on (kernels/, csrc/<area>/cuda/). Plain C++, usable from g++ and nvcc.
#pragma once

#include <cuda_runtime_api.h>

#include "core/error.h"

namespace sc {

// Throws sc::Error(scCudaError) naming the failed call; clears the (non-sticky)
// error so later calls on the thread start clean.
inline void cudaCheck(cudaError_t rc, const char* what, const char* file, int line) {
  if (rc == cudaSuccess) return;
  (void)cudaGetLastError();
  throw Error(scCudaError, cat(what, " failed: ", cudaGetErrorName(rc), ": ", cudaGetErrorString(rc)), file, line);
}

#define SC_CUDA_CHECK(expr) ::sc::cudaCheck((expr), #expr, __FILE__, __LINE__)

// Makes `device` current for the scope and restores the caller's device after:
// ranks may be threads, and a library call must not move its caller to
// another GPU as a side effect. Switches only when the device differs, and a
// failed restore (a destructor cannot throw) leaves no error behind for the
// caller's next CUDA call.
class DeviceScope {
 public:
  explicit DeviceScope(int device) : device_(device) {
    SC_CUDA_CHECK(cudaGetDevice(&prev_));
    if (prev_ != device_) SC_CUDA_CHECK(cudaSetDevice(device_));
  }
  ~DeviceScope() {
    if (prev_ != device_ && cudaSetDevice(prev_) != cudaSuccess) (void)cudaGetLastError();
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int device_, prev_ = -1;
};

}  // namespace sc
