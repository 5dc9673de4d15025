// Small CUDA helpers for the GPU suites: device buffers and streams with RAII,
// host<->device transfers, a wrapper that turns exceptions inside a rank's
// body into test failures (an exception escaping a rank thread would abort),
// device-local runs, and the skips for too few GPUs or too little memory.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/harness.h"
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

// flags = cudaStreamNonBlocking: a stream that does not synchronise with the
// legacy default stream (torch's side streams are of this kind).
class Stream {
 public:
  explicit Stream(int device = 0, unsigned flags = cudaStreamDefault) {
    GPU_CHECK(cudaSetDevice(device));
    GPU_CHECK(cudaStreamCreateWithFlags(&s_, flags));
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

// Grow-only device buffers by slot number, standing in for a communicator's
// scratch when the sparse operations are driven directly.
struct Slots {
  std::map<int, std::pair<void*, size_t>> s;
  Slots() = default;
  Slots(const Slots&) = delete;
  Slots& operator=(const Slots&) = delete;
  ~Slots() {
    for (auto& kv : s) cudaFree(kv.second.first);
  }
  char* get(int slot, size_t bytes) {
    auto& e = s[slot];
    if (e.second < bytes) {
      cudaDeviceSynchronize();
      cudaFree(e.first);
      e.first = nullptr;
      EXPECT_EQ(cudaMalloc(&e.first, bytes), cudaSuccess);
      e.second = bytes;
    }
    return static_cast<char*>(e.first);
  }
};

// Runs body(comm, rank, stream) on P device-local ranks, rank r on devices[r]
// (default: all on GPU 0), each with its own stream created with streamFlags.
inline void runOnDevices(int P, const scConfig_t& cfg, const std::function<void(scComm_t, int, cudaStream_t)>& body,
                         std::vector<int> devices = {}, unsigned streamFlags = cudaStreamDefault) {
  if (devices.empty()) devices.assign(size_t(P), 0);
  sctest::run(P, guarded([&](scComm_t comm, int rank) {
                int isDev = 0;
                ASSERT_EQ(scCommIsDevice(comm, &isDev), scSuccess);
                ASSERT_EQ(isDev, 1);
                Stream s(devices[size_t(rank)], streamFlags);
                body(comm, rank, s.get());
              }),
              &cfg, devices.data());
}

inline int currentDevice() {
  int d = -1;
  GPU_CHECK(cudaGetDevice(&d));
  return d;
}

inline std::string gib(size_t bytes) {
  std::ostringstream os;
  os.precision(1);
  os << std::fixed << double(bytes) / double(size_t(1) << 30) << " GiB";
  return os.str();
}

// Empty when `device` has `bytes` of free memory, else why not (the numbers).
// The stream-ordered pool keeps what earlier calls freed (top-k raises its
// release threshold), so it is trimmed first: that memory is free to use.
inline std::string memoryShortfall(int device, size_t bytes, const char* what) {
  GPU_CHECK(cudaSetDevice(device));
  GPU_CHECK(cudaDeviceSynchronize());
  cudaMemPool_t pool;
  if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess) GPU_CHECK(cudaMemPoolTrimTo(pool, 0));
  size_t freeB = 0, total = 0;
  GPU_CHECK(cudaMemGetInfo(&freeB, &total));
  if (freeB >= bytes) return {};
  return std::string(what) + " needs " + gib(bytes) + " of free memory on GPU " + std::to_string(device) + ", " +
         gib(freeB) + " free of " + gib(total);
}

}  // namespace gputest

// Skips the current test unless at least n CUDA devices are present.
#define SC_REQUIRE_GPUS(n)                                                                \
  do {                                                                                    \
    if (::sctest::gpuCount() < (n))                                                       \
      GTEST_SKIP() << "needs " << (n) << " GPUs, " << ::sctest::gpuCount() << " present"; \
  } while (0)

// Skips the current test (with the numbers) unless `device` has `bytes` free.
#define SC_REQUIRE_DEVICE_MEMORY(device, bytes, what)                               \
  do {                                                                              \
    const std::string why_ = ::gputest::memoryShortfall((device), (bytes), (what)); \
    if (!why_.empty()) GTEST_SKIP() << why_;                                        \
  } while (0)
