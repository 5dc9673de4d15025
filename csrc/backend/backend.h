// The compute-backend contract: the few local operations the schedules need,
// implemented once for the CPU (cpu.cpp) and once for CUDA (cuda/backend.cpp
// over kernels/). Operations on a device backend are enqueued on `stream`.
#pragma once

#include <cstddef>

#include "core/deadline.h"
#include "core/toolkit.h"
#include "transport/transport.h"

namespace sc {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Mem mem() const = 0;
  // dst[i] = a[i] op b[i], i < n. dst may alias a or b (not partially overlap).
  // avg reduces as sum (the division happens once, in finalizeAvg).
  virtual void reduce(void* dst, const void* a, const void* b, size_t n, scDataType_t dt, scRedOp_t op,
                      void* stream) = 0;
  // buf[i] /= divisor (avg's final step; integers truncate toward zero).
  virtual void divide(void* buf, size_t n, scDataType_t dt, int divisor, void* stream) = 0;
  virtual void copy(void* dst, const void* src, size_t bytes, void* stream) = 0;
  virtual void zero(void* dst, size_t bytes, void* stream) = 0;
  virtual void* alloc(size_t bytes) = 0;  // never returns null; throws
  virtual void release(void* p) noexcept = 0;
  // Scratch for work on `stream`, and its release once the work queued on
  // `stream` so far is done. A device allocates and frees in stream order
  // from its memory pool, so growing scratch never waits for the device; the
  // defaults (host memory) wait for the stream, bounded by dl, and free.
  virtual void* allocOn(size_t bytes, void* /*stream*/) { return alloc(bytes); }
  virtual void releaseOn(void* p, void* stream, const Deadline& dl) {
    sync(stream, dl);
    release(p);
  }
  // Blocks the host until `stream`'s work is done, bounded by the deadline.
  virtual void sync(void* stream, const Deadline& dl) = 0;
  // Throws scInvalidArgument if `p` is not memory of this backend's kind.
  virtual void checkPointer(const void* p, const char* what) const = 0;
};

std::unique_ptr<Backend> makeCpuBackend();
// The CUDA backend on `device` (device < 0 is an error). A ToolkitFn
// (core/toolkit.h) that backend/cuda/backend.cpp provides; a build without
// CUDA throws scInvalidUsage (cpu.cpp).
extern ToolkitFn<std::unique_ptr<Backend>(int device)> makeCudaBackend;

}  // namespace sc
