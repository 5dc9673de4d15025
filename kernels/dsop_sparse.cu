// Device steps of sparse DSOP: the index unions with CUB (radix sort + unique),
// plus three element-wise kernels (validity check, densify by binary search in
// the sorted union, scatter of the compressed matrix); the check and the search
// are the host's functions (dsop/tile_math.h).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>

#include "dsop/tile_math.h"
#include "dsop_device.cuh"
#include "dsop/sparse_device.h"

namespace sc::dsop {
namespace {

constexpr int kThreads = 256;

__global__ void checkKernel(const uint64_t* idx, size_t nnz, uint64_t limit, unsigned* flag) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < nnz; i += size_t(gridDim.x) * blockDim.x)
    if (badIndex(idx, i, limit)) atomicOr(flag, 1u);
}

template <typename E>
__global__ void densifyKernel(const uint64_t* R, size_t nR, const uint64_t* idx, const E* val, size_t nnz, E* dense) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < nnz; i += size_t(gridDim.x) * blockDim.x)
    dense[unionPos(R, nR, idx[i])] = val[i];
}

// One block row per (row i, column chunk): reads of Gc are coalesced, writes go
// to the scattered columns C[j] of row R[i].
template <typename E>
__global__ void scatterKernel(const E* Gc, const uint64_t* R, size_t nR, const uint64_t* C, size_t nC, E* G, size_t m) {
  for (size_t i = blockIdx.y; i < nR; i += gridDim.y) {
    E* row = G + R[i] * m;
    const E* src = Gc + i * nC;
    for (size_t j = blockIdx.x * size_t(blockDim.x) + threadIdx.x; j < nC; j += size_t(gridDim.x) * blockDim.x)
      row[C[j]] = src[j];
  }
}

template <typename F>
void bySize(size_t esz, F&& f) {
  switch (esz) {
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: SC_THROW(scInternalError, "unexpected element size ", esz);
  }
}

size_t align256(size_t b) { return (b + 255) / 256 * 256; }

size_t cubBytes(size_t count) {
  size_t sortBytes = 0, uniqueBytes = 0;
  SC_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, sortBytes, static_cast<const uint64_t*>(nullptr),
                                               static_cast<uint64_t*>(nullptr), int64_t(count)));
  SC_CUDA_CHECK(cub::DeviceSelect::Unique(nullptr, uniqueBytes, static_cast<const uint64_t*>(nullptr),
                                          static_cast<uint64_t*>(nullptr), static_cast<uint64_t*>(nullptr),
                                          int64_t(count)));
  return std::max(sortBytes, uniqueBytes);
}

void deviceCheckIndices(const uint64_t* idx, size_t nnz, uint64_t limit, unsigned* flag, void* stream) {
  OnDeviceOf on(flag);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  SC_CUDA_CHECK(cudaMemsetAsync(flag, 0, sizeof(unsigned), s));
  checkKernel<<<gridFor(nnz, kThreads), kThreads, 0, s>>>(idx, nnz, limit, flag);
  SC_CUDA_CHECK(cudaGetLastError());
}

// Layout of temp: [count word | sorted keys | CUB temporary storage].
size_t deviceSortUniqueTempBytes(size_t count) { return 256 + align256(count * 8) + cubBytes(count); }

const uint64_t* deviceSortUnique(const uint64_t* keys, size_t count, uint64_t* out, void* temp, size_t tempBytes,
                                 void* stream) {
  OnDeviceOf on(out);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  char* base = static_cast<char*>(temp);
  auto* num = reinterpret_cast<uint64_t*>(base);
  auto* sorted = reinterpret_cast<uint64_t*>(base + 256);
  void* cubTemp = base + 256 + align256(count * 8);
  size_t cubAvail = tempBytes - 256 - align256(count * 8);
  SC_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(cubTemp, cubAvail, keys, sorted, int64_t(count), 0, 64, s));
  cubAvail = tempBytes - 256 - align256(count * 8);
  SC_CUDA_CHECK(cub::DeviceSelect::Unique(cubTemp, cubAvail, sorted, out, num, int64_t(count), s));
  return num;
}

void deviceDensify(const uint64_t* R, size_t nR, const uint64_t* idx, const void* val, size_t nnz, void* dense,
                   size_t esz, void* stream) {
  OnDeviceOf on(dense);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  bySize(esz, [&](auto tag) {
    using E = decltype(tag);
    densifyKernel<E><<<gridFor(nnz, kThreads), kThreads, 0, s>>>(R, nR, idx, static_cast<const E*>(val), nnz,
                                                                 static_cast<E*>(dense));
  });
  SC_CUDA_CHECK(cudaGetLastError());
}

void deviceScatterCompact(const void* Gc, const uint64_t* R, size_t nR, const uint64_t* C, size_t nC, void* G, size_t m,
                          size_t esz, void* stream) {
  OnDeviceOf on(G);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  const dim3 grid(unsigned(std::min<size_t>((nC + kThreads - 1) / kThreads, 1024)),
                  unsigned(std::min<size_t>(nR, 65535)));
  bySize(esz, [&](auto tag) {
    using E = decltype(tag);
    scatterKernel<E><<<grid, kThreads, 0, s>>>(static_cast<const E*>(Gc), R, nR, C, nC, static_cast<E*>(G), m);
  });
  SC_CUDA_CHECK(cudaGetLastError());
}

const SparseDeviceSteps& steps() {
  static const SparseDeviceSteps table{deviceCheckIndices, deviceSortUniqueTempBytes, deviceSortUnique, deviceDensify,
                                       deviceScatterCompact};
  return table;
}

}  // namespace

SC_PROVIDE(sparseDeviceSteps, steps);

}  // namespace sc::dsop
