// Where top-k buffers live, and the few device-memory operations the host side
// needs (the residual of a device state). Without CUDA every pointer is host
// memory and the device functions throw scInvalidUsage.
#pragma once

#include <cstddef>

namespace sc {
namespace topk {

// The CUDA device owning p (device or managed memory), or -1 for host memory.
int deviceOf(const void* p);
// n bytes of zeroed device memory on `device`. Throws on failure.
void* deviceAlloc(int device, size_t bytes);
void deviceFree(int device, void* p) noexcept;
// p[0..bytes) = 0, enqueued on stream (a cudaStream_t) of `device`.
void deviceZero(int device, void* p, size_t bytes, void* stream);

}  // namespace topk
}  // namespace sc
