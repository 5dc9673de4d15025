// CUDA compute backend: the Backend contract on one device, work enqueued on
// the caller's stream (kernels in kernels/reduce.cu). Ranks of a local
// communicator are threads, and a thread's current device is whatever it last
// set, so every entry point makes this backend's device current (DeviceScope,
// which restores the caller's device on return).
#include <cuda_runtime_api.h>
#include <sched.h>

#include <chrono>
#include <memory>
#include <thread>

#include "backend/backend.h"
#include "core/cuda_util.h"
#include "core/dtype.h"
#include "reduce.cuh"

namespace sc {
namespace {

cudaStream_t asStream(void* s) { return static_cast<cudaStream_t>(s); }

// Polls `ready` until it returns cudaSuccess, failing on any other status or
// when the deadline expires. Spins briefly (device work is often nearly done),
// then yields, then sleeps, so oversubscribed rank threads let each other run.
template <typename Query>
void pollUntilDone(Query ready, const Deadline& dl, const char* what) {
  for (int i = 0;; ++i) {
    const cudaError_t rc = ready();
    if (rc == cudaSuccess) return;
    if (rc != cudaErrorNotReady) cudaCheck(rc, what, __FILE__, __LINE__);
    if (dl.expired())
      SC_THROW(scTimeout, "deadline of ", dl.seconds, " s expired while waiting for ", what,
               " (device work still pending)");
    if (i < 64) continue;
    if (i < 1024) sched_yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device) : device_(device) {
    SC_ARG(device >= 0, "CUDA device index must be >= 0, got ", device);
    int n = 0;
    const cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess) {
      (void)cudaGetLastError();
      SC_THROW(scCudaError, "no usable CUDA device for device ", device,
               ": cudaGetDeviceCount failed: ", cudaGetErrorString(rc));
    }
    SC_ARG(device < n, "CUDA device ", device, " does not exist (", n, " device(s) visible)");
    SC_CUDA_CHECK(cudaDeviceGetAttribute(&smCount_, cudaDevAttrMultiProcessorCount, device_));
    SC_CUDA_CHECK(cudaDeviceGetAttribute(&pools_, cudaDevAttrMemoryPoolsSupported, device_));
  }

  Mem mem() const override { return Mem::Device; }

  void reduce(void* dst, const void* a, const void* b, size_t n, scDataType_t dt, scRedOp_t op, void* stream) override {
    checkDtype(dt);
    checkOp(op);
    if (n == 0) return;
    DeviceScope on(device_);
    SC_CUDA_CHECK(kern::reduce(dst, a, b, n, dt, op, asStream(stream), smCount_));
  }

  void divide(void* buf, size_t n, scDataType_t dt, int divisor, void* stream) override {
    checkDtype(dt);
    SC_ARG(divisor != 0, "division by zero");
    if (n == 0) return;
    DeviceScope on(device_);
    SC_CUDA_CHECK(kern::divide(buf, n, dt, divisor, asStream(stream), smCount_));
  }

  void copy(void* dst, const void* src, size_t bytes, void* stream) override {
    if (dst == src || bytes == 0) return;
    DeviceScope on(device_);
    SC_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, asStream(stream)));
  }

  void zero(void* dst, size_t bytes, void* stream) override {
    if (bytes == 0) return;
    DeviceScope on(device_);
    SC_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, asStream(stream)));
  }

  void* alloc(size_t bytes) override {
    DeviceScope on(device_);
    void* p = nullptr;
    const cudaError_t rc = cudaMalloc(&p, bytes ? bytes : 1);
    if (rc != cudaSuccess) {
      (void)cudaGetLastError();
      SC_THROW(scCudaError, "cudaMalloc of ", bytes, " bytes on device ", device_, " failed: ", cudaGetErrorString(rc));
    }
    return p;
  }

  // From the device's default pool in the stream's order (devices without
  // memory pools: cudaMalloc, and the waiting release of the base class).
  void* allocOn(size_t bytes, void* stream) override {
    if (!pools_) return alloc(bytes);
    DeviceScope on(device_);
    void* p = nullptr;
    const cudaError_t rc = cudaMallocAsync(&p, bytes ? bytes : 1, asStream(stream));
    if (rc != cudaSuccess) {
      (void)cudaGetLastError();
      SC_THROW(scCudaError, "cudaMallocAsync of ", bytes, " bytes on device ", device_,
               " failed: ", cudaGetErrorString(rc));
    }
    return p;
  }
  void releaseOn(void* p, void* stream, const Deadline& dl) override {
    if (!pools_) return Backend::releaseOn(p, stream, dl);
    DeviceScope on(device_);
    SC_CUDA_CHECK(cudaFreeAsync(p, asStream(stream)));
  }

  // cudaFree waits for the device's outstanding work that may still use p
  // (memory from allocOn included).
  void release(void* p) noexcept override {
    if (!p) return;
    try {
      DeviceScope on(device_);
      if (cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
    } catch (...) {  // the device is gone: nothing left to free
    }
  }

  // stream == nullptr: all work of the device that the legacy default stream
  // orders after (every blocking stream). An event on cudaStreamLegacy makes
  // that pollable, so the wait stays bounded by the deadline.
  void sync(void* stream, const Deadline& dl) override {
    DeviceScope on(device_);
    if (stream) {
      pollUntilDone([&] { return cudaStreamQuery(asStream(stream)); }, dl, "a CUDA stream");
      return;
    }
    cudaEvent_t ev;
    SC_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    std::unique_ptr<CUevent_st, void (*)(cudaEvent_t)> guard(ev, [](cudaEvent_t e) { cudaEventDestroy(e); });
    SC_CUDA_CHECK(cudaEventRecord(ev, cudaStreamLegacy));
    pollUntilDone([&] { return cudaEventQuery(ev); }, dl, "the CUDA device");
  }

  // One query per buffer per call: the kind and the device together (this
  // communicator's context exists, so pointerKind's care not to create one
  // has nothing to save here).
  void checkPointer(const void* p, const char* what) const override {
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
      (void)cudaGetLastError();
      attr.type = cudaMemoryTypeUnregistered;
    }
    SC_ARG(attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged, what,
           " is host memory but the communicator works on device buffers (device ", device_, ")");
    if (attr.type == cudaMemoryTypeManaged) return;  // accessible from every device
    SC_ARG(attr.device == device_, what, " is memory of CUDA device ", attr.device,
           " but the communicator's device is ", device_);
  }

 private:
  const int device_;
  int smCount_ = 1;
  int pools_ = 0;  // stream-ordered allocation (cudaMallocAsync) supported
};

std::unique_ptr<Backend> makeCuda(int device) { return std::make_unique<CudaBackend>(device); }

}  // namespace

SC_PROVIDE(makeCudaBackend, makeCuda);

}  // namespace sc
