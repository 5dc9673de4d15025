// Benchmark memory: one class for host and device buffers so the driver and
// the tools never branch on where a rank's data lives. Device support needs a
// CUDA build; without one, asking for device memory throws UsageError.
#pragma once

#include <cstddef>
#include <string>

namespace scbench {

class Buffer {
 public:
  Buffer() = default;
  // device < 0: host memory (64-byte aligned, pages touched); else cudaMalloc on `device`.
  Buffer(size_t bytes, int device);
  ~Buffer();
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    swap(o);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  char* data() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  bool onDevice() const { return device_ >= 0; }

 private:
  void swap(Buffer& o) noexcept;
  char* ptr_ = nullptr;
  size_t bytes_ = 0;
  int device_ = -1;
};

// Copies between host memory and a host-or-device pointer (synchronous).
void copyToBuffer(void* dst, const void* hostSrc, size_t bytes, bool device);
void copyFromBuffer(void* hostDst, const void* src, size_t bytes, bool device);
void zeroBuffer(void* dst, size_t bytes, bool device);
// Within one kind of memory, enqueued on `stream` for device memory (nullptr:
// the default stream) so that event timing sees the copy alone; plain memcpy
// and memset on the host.
void copyWithin(void* dst, const void* src, size_t bytes, bool device, void* stream);
void setBytes(void* dst, int value, size_t bytes, bool device, void* stream);

// CUDA helpers; no-ops / zero without a CUDA build.
int deviceCount();
void setDevice(int device);
void* createStream();  // non-blocking stream on the current device
void destroyStream(void* stream);
void syncStream(void* stream);  // throws UsageError with the CUDA message on failure
// "NVIDIA H100 80GB HBM3" and its PCI bus id.
std::string deviceName(int device, int* pciBusId);

}  // namespace scbench
