#include "topk/memory.h"

#include "core/error.h"

#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "reduce.cuh"  // SC_CUDA_CHECK
#endif

namespace sc {
namespace topk {

#ifdef SPARCOLL_HAVE_CUDA

int deviceOf(const void* p) {
  cudaPointerAttributes attr{};
  if (p == nullptr || cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver, or plain unregistered host memory
    return -1;
  }
  return (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) ? attr.device : -1;
}

void* deviceAlloc(int device, size_t bytes) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  SC_ARG(device < count, "CUDA device ", device, " does not exist (", count, " device(s) visible)");
  int prev = 0;
  SC_CUDA_CHECK(cudaGetDevice(&prev));
  SC_CUDA_CHECK(cudaSetDevice(device));
  void* p = nullptr;
  cudaError_t rc = cudaMalloc(&p, bytes ? bytes : 1);
  if (rc == cudaSuccess) rc = cudaMemset(p, 0, bytes);
  if (rc == cudaSuccess) rc = cudaDeviceSynchronize();  // zeroed before any stream uses it
  if (rc != cudaSuccess && p) {
    (void)cudaFree(p);
    p = nullptr;
  }
  (void)cudaSetDevice(prev);
  SC_CUDA_CHECK(rc);
  return p;
}

void deviceFree(int device, void* p) noexcept {
  int prev = 0;
  if (cudaGetDevice(&prev) != cudaSuccess) return;
  (void)cudaSetDevice(device);
  (void)cudaFree(p);  // synchronizes the device first
  (void)cudaSetDevice(prev);
}

void deviceZero(int device, void* p, size_t bytes, void* stream) {
  int prev = 0;
  SC_CUDA_CHECK(cudaGetDevice(&prev));
  SC_CUDA_CHECK(cudaSetDevice(device));
  const cudaError_t rc = cudaMemsetAsync(p, 0, bytes, static_cast<cudaStream_t>(stream));
  (void)cudaSetDevice(prev);
  SC_CUDA_CHECK(rc);
}

#else

int deviceOf(const void*) { return -1; }
void* deviceAlloc(int device, size_t) {
  SC_THROW(scInvalidUsage, "device ", device, " requested but sparcoll was built without CUDA");
}
void deviceFree(int, void*) noexcept {}
void deviceZero(int, void*, size_t, void*) {
  SC_THROW(scInvalidUsage, "sparcoll was built without CUDA");
}

#endif

}  // namespace topk
}  // namespace sc
