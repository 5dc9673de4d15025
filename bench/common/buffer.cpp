#include "common/buffer.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/options.h"

#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace scbench {

namespace {
#ifdef SPARCOLL_HAVE_CUDA
void cudaCheck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw UsageError{std::string(what) + " failed: " + cudaGetErrorString(e)};
}
#endif
[[noreturn, maybe_unused]] void noCuda(const char* what) {
  throw UsageError{std::string(what) + ": device buffers need a CUDA build of sparcoll (SPARCOLL_CUDA=ON)"};
}
}  // namespace

Buffer::Buffer(size_t bytes, int device) : bytes_(bytes), device_(device) {
  const size_t alloc = bytes ? bytes : 1;
  if (device < 0) {
    ptr_ = static_cast<char*>(std::aligned_alloc(64, (alloc + 63) / 64 * 64));
    if (!ptr_)
      throw UsageError{"cannot allocate " + std::to_string(bytes) +
                       " bytes of host memory (lower the largest size or the number of ranks)"};
    std::memset(ptr_, 0, alloc);  // touch the pages now, not inside the timed loop
    return;
  }
#ifdef SPARCOLL_HAVE_CUDA
  cudaCheck(cudaSetDevice(device), "cudaSetDevice");
  void* p = nullptr;
  if (const cudaError_t e = cudaMalloc(&p, alloc); e != cudaSuccess)
    throw UsageError{"cannot allocate " + std::to_string(bytes) + " bytes on GPU " + std::to_string(device) + ": " +
                     cudaGetErrorString(e)};
  ptr_ = static_cast<char*>(p);
  cudaCheck(cudaMemset(ptr_, 0, alloc), "cudaMemset");
#else
  noCuda("Buffer");
#endif
}

Buffer::~Buffer() {
  if (!ptr_) return;
  if (device_ < 0) {
    std::free(ptr_);
    return;
  }
#ifdef SPARCOLL_HAVE_CUDA
  cudaFree(ptr_);
#endif
}

void Buffer::swap(Buffer& o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(bytes_, o.bytes_);
  std::swap(device_, o.device_);
}

void copyToBuffer(void* dst, const void* src, size_t bytes, bool device) {
  if (!bytes) return;
  if (!device) {
    std::memcpy(dst, src, bytes);
    return;
  }
#ifdef SPARCOLL_HAVE_CUDA
  cudaCheck(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy (host to device)");
  // A pageable-source copy may still be in flight when cudaMemcpy returns, and the
  // collectives run on non-blocking streams that do not order after it.
  cudaCheck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
#else
  noCuda("copyToBuffer");
#endif
}

void copyFromBuffer(void* dst, const void* src, size_t bytes, bool device) {
  if (!bytes) return;
  if (!device) {
    std::memcpy(dst, src, bytes);
    return;
  }
#ifdef SPARCOLL_HAVE_CUDA
  cudaCheck(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy (device to host)");
#else
  noCuda("copyFromBuffer");
#endif
}

void zeroBuffer(void* dst, size_t bytes, bool device) {
  if (!bytes) return;
  if (!device) {
    std::memset(dst, 0, bytes);
    return;
  }
#ifdef SPARCOLL_HAVE_CUDA
  cudaCheck(cudaMemset(dst, 0, bytes), "cudaMemset");
  cudaCheck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
#else
  noCuda("zeroBuffer");
#endif
}

void copyWithin(void* dst, const void* src, size_t bytes, bool device, void* stream) {
  if (!device) {
    std::memcpy(dst, src, bytes);
    return;
  }
#ifdef SPARCOLL_HAVE_CUDA
  cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)),
            "cudaMemcpyAsync");
#else
  (void)stream;
  noCuda("copyWithin");
#endif
}

void setBytes(void* dst, int value, size_t bytes, bool device, void* stream) {
  if (!device) {
    std::memset(dst, value, bytes);
    return;
  }
#ifdef SPARCOLL_HAVE_CUDA
  cudaCheck(cudaMemsetAsync(dst, value, bytes, static_cast<cudaStream_t>(stream)), "cudaMemsetAsync");
#else
  (void)stream;
  noCuda("setBytes");
#endif
}

int deviceCount() {
#ifdef SPARCOLL_HAVE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
#else
  return 0;
#endif
}

void setDevice(int device) {
#ifdef SPARCOLL_HAVE_CUDA
  cudaCheck(cudaSetDevice(device), "cudaSetDevice");
#else
  (void)device;
  noCuda("setDevice");
#endif
}

void* createStream() {
#ifdef SPARCOLL_HAVE_CUDA
  cudaStream_t s = nullptr;
  cudaCheck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  return s;
#else
  noCuda("createStream");
#endif
}

void destroyStream(void* stream) {
#ifdef SPARCOLL_HAVE_CUDA
  if (stream) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
#else
  (void)stream;
#endif
}

void syncStream(void* stream) {
#ifdef SPARCOLL_HAVE_CUDA
  if (stream) cudaCheck(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
#else
  (void)stream;
#endif
}

std::string deviceName(int device, int* pciBusId) {
  *pciBusId = 0;
#ifdef SPARCOLL_HAVE_CUDA
  cudaDeviceProp prop;
  if (device >= 0 && cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
    *pciBusId = prop.pciBusID;
    return prop.name;
  }
#else
  (void)device;
#endif
  return "?";
}

}  // namespace scbench
