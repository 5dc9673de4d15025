// Device steps of sparse DSOP; semantics in dsop/sparse.h. Host-callable,
// enqueued on `stream` (a cudaStream_t) on the current device; nothing here
// waits for the device. A ToolkitFn (core/toolkit.h) hands out the table:
// kernels/dsop_sparse.cu provides it; a build without CUDA throws
// scInvalidUsage (sparse_ops.cpp), though no device communicator exists there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/toolkit.h"

namespace sc::dsop {

struct SparseDeviceSteps {
  // *flag = 0 when idx[0..nnz) is strictly increasing and < limit, else 1.
  void (*checkIndices)(const uint64_t* idx, size_t nnz, uint64_t limit, unsigned* flag, void* stream);
  // Temporary bytes sortUnique needs for `count` keys.
  size_t (*sortUniqueTempBytes)(size_t count);
  // Sorted distinct keys into out (CUB radix sort + unique); returns the device
  // address where their number (uint64) will be once the stream gets there.
  const uint64_t* (*sortUnique)(const uint64_t* keys, size_t count, uint64_t* out, void* temp, size_t tempBytes,
                                void* stream);
  void (*densify)(const uint64_t* R, size_t nR, const uint64_t* idx, const void* val, size_t nnz, void* dense,
                  size_t esz, void* stream);
  void (*scatterCompact)(const void* Gc, const uint64_t* R, size_t nR, const uint64_t* C, size_t nC, void* G, size_t m,
                         size_t esz, void* stream);
};

extern ToolkitFn<const SparseDeviceSteps&()> sparseDeviceSteps;

}  // namespace sc::dsop
