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

// A transport's own non-blocking stream on one device, for the transfers of
// its rounds. A round posted on it first waits for the point the caller's
// stream has reached (so it sees every earlier write and may overwrite every
// buffer read before), and the caller's stream waits for the round only when
// the schedule waits for it. Between the two, the caller's stream is free to
// run other work: the ring's reduction of slice k while slice k+1 moves. One
// stream per transport keeps its rounds in posting order, as the transport
// contract requires. Created on first use, so a communicator that never
// posts a round never makes one.
class SideStream {
 public:
  explicit SideStream(int device) : device_(device) {}
  ~SideStream() {
    if (follow_ && cudaEventDestroy(follow_) != cudaSuccess) (void)cudaGetLastError();
    if (s_ && cudaStreamDestroy(s_) != cudaSuccess) (void)cudaGetLastError();
  }
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;

  // The stream, made to follow `caller` from here on. Call with device_ current.
  // One event serves every call: the wait is enqueued before the next record.
  cudaStream_t after(cudaStream_t caller) {
    if (!s_) SC_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
    if (!follow_) SC_CUDA_CHECK(cudaEventCreateWithFlags(&follow_, cudaEventDisableTiming));
    SC_CUDA_CHECK(cudaEventRecord(follow_, caller));
    SC_CUDA_CHECK(cudaStreamWaitEvent(s_, follow_, 0));
    return s_;
  }
  int device() const { return device_; }

 private:
  const int device_;
  cudaStream_t s_ = nullptr;
  cudaEvent_t follow_ = nullptr;
};

}  // namespace sc
