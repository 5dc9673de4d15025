// Device steps of sparse DSOP (kernels/dsop_sparse.cu); semantics in
// csrc/dsop/sparse.h. Host-callable, enqueued on `stream` (a cudaStream_t) on
// the current device; nothing here waits for the device.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sc::dsop {

// *flag = 0 when idx[0..nnz) is strictly increasing and < limit, else 1.
void deviceCheckIndices(const uint64_t* idx, size_t nnz, uint64_t limit, unsigned* flag, void* stream);
// Temporary bytes deviceSortUnique needs for `count` keys.
size_t deviceSortUniqueTempBytes(size_t count);
// Sorted distinct keys into out (CUB radix sort + unique); returns the device
// address where their number (uint64) will be once the stream gets there.
const uint64_t* deviceSortUnique(const uint64_t* keys, size_t count, uint64_t* out, void* temp, size_t tempBytes,
                                 void* stream);
void deviceDensify(const uint64_t* R, size_t nR, const uint64_t* idx, const void* val, size_t nnz, void* dense,
                   size_t esz, void* stream);
void deviceScatterCompact(const void* Gc, const uint64_t* R, size_t nR, const uint64_t* C, size_t nC, void* G,
                          size_t m, size_t esz, void* stream);

}  // namespace sc::dsop
