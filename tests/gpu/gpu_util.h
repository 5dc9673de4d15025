// Small CUDA helpers for the GPU suites: device buffers and streams with RAII,
// host<->device transfers, and a wrapper that turns exceptions inside a rank's
// body into test failures (an exception escaping a rank thread would abort).
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sparcoll/sparcoll.h"

namespace gputest {

inline void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}
#define GPU_CHECK(expr) ::gputest::check((expr), #expr)

class DevBuf {
 public:
  explicit DevBuf(size_t bytes, int device = 0) : bytes_(bytes) {
    GPU_CHECK(cudaSetDevice(device));
    GPU_CHECK(cudaMalloc(&p_, bytes ? bytes : 1));
  }
  ~DevBuf() { cudaFree(p_); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  char* get() const { return static_cast<char*>(p_); }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_;
};

class Stream {
 public:
  explicit Stream(int device = 0) {
    GPU_CHECK(cudaSetDevice(device));
    GPU_CHECK(cudaStreamCreate(&s_));
  }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  operator void*() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// Copies ordered on `s`; both wait for the stream so the host data is final.
inline void upload(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  if (!bytes) return;
  GPU_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
  GPU_CHECK(cudaStreamSynchronize(s));
}
inline std::vector<uint8_t> download(const void* src, size_t bytes, cudaStream_t s) {
  std::vector<uint8_t> out(bytes);
  if (bytes) {
    GPU_CHECK(cudaMemcpyAsync(out.data(), src, bytes, cudaMemcpyDeviceToHost, s));
    GPU_CHECK(cudaStreamSynchronize(s));
  }
  return out;
}
// Fills with a byte pattern so stale results cannot pass for fresh ones.
inline void poison(void* dst, size_t bytes, cudaStream_t s, int byte = 0xA5) {
  if (bytes) GPU_CHECK(cudaMemsetAsync(dst, byte, bytes, s));
}

// A rank body that reports exceptions as failures instead of terminating.
inline std::function<void(scComm_t, int)> guarded(std::function<void(scComm_t, int)> body) {
  return [body](scComm_t comm, int rank) {
    try {
      body(comm, rank);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << rank << ": exception: " << e.what();
    }
  };
}

}  // namespace gputest
