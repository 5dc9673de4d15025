// The device side of top-k as the toolkit-free code (api.cpp) sees it: where
// buffers live, the device memory of a state's residual, and the CUDA
// selection. ToolkitFns (core/toolkit.h) that topk/cuda/device.cpp provides;
// in a build without CUDA every pointer is host memory and the device
// functions throw scInvalidUsage (device.cpp).
#pragma once

#include <cstddef>

#include "core/toolkit.h"
#include "topk/params.h"

namespace sc {
namespace topk {

// Device scratch a state keeps across its calls (kernels/topk_device.cuh's
// Scratch carves it and grows it to the largest call's need), freed with the
// state by deviceFree.
struct DeviceArena {
  void* base = nullptr;
  size_t bytes = 0;
};

// How a device call reports back.
struct DeviceCall {
  int device;             // the CUDA device owning the buffers
  void* stream;           // cudaStream_t on that device
  bool readCounts;        // read selected/deferred/nnz back (waits for the stream)
  double timeoutSeconds;  // bound on that wait (scTimeout after it)
  void* counts;           // device memory for the call's scTopkCounts_t, or null
  DeviceArena* arena;     // the state's scratch, or null (stateless)
};

// The CUDA device owning p (device or managed memory), or -1 for host memory.
extern ToolkitFn<int(const void* p)> deviceOf;
// n bytes of zeroed device memory on `device`. Throws on failure.
extern ToolkitFn<void*(int device, size_t bytes)> deviceAlloc;
extern ToolkitFn<void(int device, void* p)> deviceFree;  // never throws
// p[0..bytes) = 0, enqueued on stream (a cudaStream_t) of `device`.
extern ToolkitFn<void(int device, void* p, size_t bytes, void* stream)> deviceZero;
// The selection on device buffers (kernels/topk_launch.cuh).
extern ToolkitFn<Outcome(const Params& p, const Buffers& b, const DeviceCall& call)> selectDevice;

}  // namespace topk
}  // namespace sc
