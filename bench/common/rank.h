// One rank's view of a run (its communicator, stream and kind of memory) and
// the facts about the run that headers and JSON print. The buffer helpers let
// a tool write inputs and read results without branching on host vs device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/buffer.h"
#include "common/options.h"
#include "common/verify.h"
#include "sparcoll/sparcoll.h"

namespace scbench {

struct Case;  // collective.h: one configuration of the dense sweep

// Facts about the run printed in headers and JSON.
struct RunInfo {
  std::string tool;        // "all_reduce_perf"
  std::string collective;  // "AllReduce"
  scTransport_t transport;
  int nranks = 1, nthreads = 1;
  bool device = false;
  bool hasOp = true;
  std::string baseline = "native";  // algorithm the ratios are relative to
  int root = -1;                    // the root column: -r for rooted tools, else -1 (nccl-tests)

  bool oneDevice = false;  // local device ranks: all on one GPU
  // Device-local communicators (the local transport on GPU buffers) have a
  // native collective (the direct kernel) only when all ranks share a GPU.
  bool hasNative() const { return !(device && transport == scTransportLocal) || oneDevice; }
};

struct RankState {
  int rank = 0, nranks = 1;
  scComm_t comm = nullptr;  // null when the tool runs without ranks (Options::noComm)
  void* stream = nullptr;   // cudaStream_t for device ranks, NULL for host ranks
  bool device = false;      // buffers are device memory
  int cudaDevice = -1;
  Buffer send, recv;          // the dense sweep's buffers: capacity of the largest Layout
  std::vector<char> staging;  // host copy for device buffers

  // The pointers of a dense call, nccl-tests' convention for in-place (collective.h).
  void* sendPtr(const Case& c) const;
  void* recvPtr(const Case& c) const;

  // A buffer in this rank's memory: host, or its GPU.
  Buffer alloc(size_t bytes) const { return Buffer(bytes, device ? cudaDevice : -1); }
  // dst[i] = value(i) as `dt` for i < n; dst is one of this rank's buffers.
  template <typename F>
  void write(void* dst, size_t n, scDataType_t dt, F value) {
    const size_t bytes = n * sc::dtypeSize(dt);
    char* host = device ? hostScratch(bytes) : static_cast<char*>(dst);
    fillValues(host, n, dt, value);
    if (device) copyToBuffer(dst, host, bytes, true);
  }
  // Elements i < n of src (one of this rank's buffers) that differ from want(i).
  template <typename F>
  uint64_t countWrong(const void* src, size_t n, scDataType_t dt, F want, Match m = Match::Bits) {
    const size_t bytes = n * sc::dtypeSize(dt);
    if (!device) return scbench::countWrong(src, n, dt, want, m);
    char* host = hostScratch(bytes);
    copyFromBuffer(host, src, bytes, true);
    return scbench::countWrong(host, n, dt, want, m);
  }
  void zero(void* dst, size_t bytes) { zeroBuffer(dst, bytes, device); }
  // A host copy of `bytes` at src, one of this rank's buffers (or memory the library returned).
  std::vector<char> toHost(const void* src, size_t bytes) const {
    std::vector<char> h(bytes);
    copyFromBuffer(h.data(), src, bytes, device);
    return h;
  }
  // Waits for the work enqueued on this rank's stream (no-op on host ranks).
  void sync() const { syncStream(stream); }

 private:
  char* hostScratch(size_t bytes) {
    if (staging.size() < bytes) staging.resize(bytes);
    return staging.data();
  }
};

}  // namespace scbench
