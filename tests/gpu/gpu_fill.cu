// Kernels behind gpu_fill.h: grid-stride loops with 64-bit positions (the
// point of the suites that use them is vectors past 2^31 elements), counts
// accumulated with one atomic per block.
#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "gpu/gpu_fill.h"

namespace gputest {
namespace {

constexpr int kThreads = 256;

void ok(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

unsigned blocksFor(uint64_t n) {
  return unsigned(std::max<uint64_t>(1, std::min<uint64_t>((n + kThreads - 1) / kThreads, 8192)));
}

template <typename F>
void bySize(size_t esz, F&& f) {
  switch (esz) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    case 8: f((unsigned long long){}); break;
    default: throw std::invalid_argument("element size must be 1, 2, 4 or 8, got " + std::to_string(esz));
  }
}

template <typename T>
__global__ void fillKernel(T* dst, uint64_t n, T v) {
  for (uint64_t i = uint64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += uint64_t(gridDim.x) * kThreads)
    dst[i] = v;
}

template <typename T>
__global__ void iotaKernel(T* dst, uint64_t n, uint64_t start, uint64_t step) {
  for (uint64_t i = uint64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += uint64_t(gridDim.x) * kThreads)
    dst[i] = T(start + i * step);
}

template <typename T>
__global__ void scatterKernel(T* dst, const uint64_t* pos, const uint64_t* bits, uint64_t m) {
  for (uint64_t j = uint64_t(blockIdx.x) * kThreads + threadIdx.x; j < m; j += uint64_t(gridDim.x) * kThreads)
    dst[pos[j]] = T(bits[j]);
}

template <typename T>
__global__ void gatherKernel(const T* src, const uint64_t* pos, uint64_t* bits, uint64_t m) {
  for (uint64_t j = uint64_t(blockIdx.x) * kThreads + threadIdx.x; j < m; j += uint64_t(gridDim.x) * kThreads)
    bits[j] = uint64_t(src[pos[j]]);
}

struct MinOp {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a < b ? a : b; }
};

// out[0] += mismatches, out[1] = min(out[1], first mismatch); bad(i) says
// whether element i is one.
template <typename Bad>
__global__ void countKernel(uint64_t n, Bad bad, unsigned long long* out) {
  using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  unsigned long long c = 0, first = ~0ull;
  for (uint64_t i = uint64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += uint64_t(gridDim.x) * kThreads)
    if (bad(i)) {
      ++c;
      first = first < i ? first : i;
    }
  const unsigned long long total = Reduce(tmp).Sum(c);
  __syncthreads();
  const unsigned long long lowest = Reduce(tmp).Reduce(first, MinOp{});
  if (threadIdx.x == 0 && total) {
    atomicAdd(out, total);
    atomicMin(out + 1, lowest);
  }
}

template <typename T>
struct NotEqual {
  const T* src;
  T v;
  __device__ bool operator()(uint64_t i) const { return src[i] != v; }
};

template <typename T>
struct NotIota {
  const T* src;
  uint64_t start, step;
  __device__ bool operator()(uint64_t i) const { return src[i] != T(start + i * step); }
};

template <typename T>
struct NotOuterSum {
  const T *G, *A, *B;
  uint64_t K, n, m;
  __device__ bool operator()(uint64_t i) const {
    const uint64_t r = i / m, c = i % m;
    T sum = 0;
    for (uint64_t q = 0; q < K; ++q) sum += A[q * n + r] * B[q * m + c];
    return G[i] != sum;
  }
};

// Device memory for one call, freed on scope exit (cudaFree waits for the
// work that uses it); optionally a copy of a host array, ordered on s.
struct DevMem {
  void* p = nullptr;
  explicit DevMem(size_t bytes) { ok(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc"); }
  DevMem(const void* host, size_t bytes, cudaStream_t s) : DevMem(bytes) {
    if (bytes) ok(cudaMemcpyAsync(p, host, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync");
  }
  ~DevMem() { cudaFree(p); }
  DevMem(const DevMem&) = delete;
  DevMem& operator=(const DevMem&) = delete;
};

template <typename Bad>
Mismatch count(uint64_t n, Bad bad, cudaStream_t s) {
  unsigned long long init[2] = {0, ~0ull}, got[2];
  DevMem out(init, sizeof init, s);
  if (n) countKernel<<<blocksFor(n), kThreads, 0, s>>>(n, bad, static_cast<unsigned long long*>(out.p));
  ok(cudaGetLastError(), "count kernel");
  ok(cudaMemcpyAsync(got, out.p, sizeof got, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
  ok(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  return Mismatch{got[0], got[0] ? got[1] : n};
}

}  // namespace

void fillBits(void* dst, size_t n, size_t esz, uint64_t bits, cudaStream_t s) {
  if (!n) return;
  bySize(esz, [&](auto t) {
    using T = decltype(t);
    fillKernel<<<blocksFor(n), kThreads, 0, s>>>(static_cast<T*>(dst), n, T(bits));
  });
  ok(cudaGetLastError(), "fill kernel");
}

void fillIota(void* dst, size_t n, size_t esz, uint64_t start, uint64_t step, cudaStream_t s) {
  if (!n) return;
  bySize(esz, [&](auto t) {
    using T = decltype(t);
    iotaKernel<<<blocksFor(n), kThreads, 0, s>>>(static_cast<T*>(dst), n, start, step);
  });
  ok(cudaGetLastError(), "iota kernel");
}

void scatterBits(void* dst, size_t esz, const std::vector<uint64_t>& pos, const std::vector<uint64_t>& bits,
                 cudaStream_t s) {
  if (pos.size() != bits.size()) throw std::invalid_argument("scatterBits: pos and bits differ in length");
  if (pos.empty()) return;
  DevMem p(pos.data(), pos.size() * 8, s), b(bits.data(), bits.size() * 8, s);
  bySize(esz, [&](auto t) {
    using T = decltype(t);
    scatterKernel<<<blocksFor(pos.size()), kThreads, 0, s>>>(static_cast<T*>(dst), static_cast<uint64_t*>(p.p),
                                                             static_cast<uint64_t*>(b.p), pos.size());
  });
  ok(cudaGetLastError(), "scatter kernel");
  ok(cudaStreamSynchronize(s), "cudaStreamSynchronize");
}

std::vector<uint64_t> gatherBits(const void* src, size_t esz, const std::vector<uint64_t>& pos, cudaStream_t s) {
  std::vector<uint64_t> out(pos.size());
  if (pos.empty()) return out;
  DevMem p(pos.data(), pos.size() * 8, s), b(pos.size() * 8);
  bySize(esz, [&](auto t) {
    using T = decltype(t);
    gatherKernel<<<blocksFor(pos.size()), kThreads, 0, s>>>(static_cast<const T*>(src), static_cast<uint64_t*>(p.p),
                                                            static_cast<uint64_t*>(b.p), pos.size());
  });
  ok(cudaGetLastError(), "gather kernel");
  ok(cudaMemcpyAsync(out.data(), b.p, out.size() * 8, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
  ok(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  return out;
}

Mismatch countNotEqual(const void* src, size_t n, size_t esz, uint64_t bits, cudaStream_t s) {
  Mismatch m;
  bySize(esz, [&](auto t) {
    using T = decltype(t);
    m = count(n, NotEqual<T>{static_cast<const T*>(src), T(bits)}, s);
  });
  return m;
}

Mismatch countNotIota(const void* src, size_t n, size_t esz, uint64_t start, uint64_t step, cudaStream_t s) {
  Mismatch m;
  bySize(esz, [&](auto t) {
    using T = decltype(t);
    m = count(n, NotIota<T>{static_cast<const T*>(src), start, step}, s);
  });
  return m;
}

Mismatch countNotOuterSum(const void* G, bool f64, const void* A, const void* B, size_t K, size_t n, size_t m,
                          cudaStream_t s) {
  if (f64)
    return count(n * m,
                 NotOuterSum<double>{static_cast<const double*>(G), static_cast<const double*>(A),
                                     static_cast<const double*>(B), K, n, m},
                 s);
  return count(n * m,
               NotOuterSum<float>{static_cast<const float*>(G), static_cast<const float*>(A),
                                  static_cast<const float*>(B), K, n, m},
               s);
}

}  // namespace gputest
