// The device side of top-k (topk/device.h) on the CUDA runtime, and the
// kernels' launchers put in their slots.
#include <cuda_runtime_api.h>

#include "core/cuda_util.h"
#include "core/error.h"
#include "core/memkind.h"
#include "topk/device.h"
#include "topk_launch.cuh"

namespace sc {
namespace topk {
namespace {

int ownerDevice(const void* p) {
  // pointerKind first: it answers host without creating a CUDA context when
  // the process has none (top-k on host arrays in a CUDA build).
  cudaPointerAttributes attr{};
  if (p == nullptr || pointerKind(p) == PtrKind::Host || cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver, or plain unregistered host memory
    return -1;
  }
  return (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) ? attr.device : -1;
}

void* allocZeroed(int device, size_t bytes) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  SC_ARG(device < count, "CUDA device ", device, " does not exist (", count, " device(s) visible)");
  DeviceScope on(device);
  void* p = nullptr;
  cudaError_t rc = cudaMalloc(&p, bytes ? bytes : 1);
  if (rc == cudaSuccess) rc = cudaMemset(p, 0, bytes);
  if (rc == cudaSuccess) rc = cudaDeviceSynchronize();  // zeroed before any stream uses it
  if (rc != cudaSuccess && p) {
    (void)cudaFree(p);
    p = nullptr;
  }
  SC_CUDA_CHECK(rc);
  return p;
}

void release(int device, void* p) noexcept {
  try {
    DeviceScope on(device);
    (void)cudaFree(p);  // synchronizes the device first
  } catch (const Error&) {
    // The device cannot be made current (no driver, or it failed): its memory
    // cannot be freed either, and a release must not throw.
  }
}

void zeroAsync(int device, void* p, size_t bytes, void* stream) {
  DeviceScope on(device);
  SC_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, static_cast<cudaStream_t>(stream)));
}

Outcome launch(const Params& p, const Buffers& b, const DeviceCall& call) {
  return bucketed(p.method) ? approxDevice(p, b, call) : selectSampledDevice(p, b, call);
}

}  // namespace

SC_PROVIDE(deviceOf, ownerDevice);
SC_PROVIDE(deviceAlloc, allocZeroed);
SC_PROVIDE(deviceFree, release);
SC_PROVIDE(deviceZero, zeroAsync);
SC_PROVIDE(selectDevice, launch);

}  // namespace topk
}  // namespace sc
