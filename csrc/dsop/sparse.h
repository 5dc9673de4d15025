// Sparse DSOP: the schedule (sparse.cpp) and the few steps whose
// implementation depends on the memory kind (sparse_ops.cpp on the host,
// kernels/dsop_sparse.cu on the device). Indices are uint64; a sparse vector is
// nnz strictly increasing indices plus nnz values. This is the minimal local
// format of the DSOP area: the (index, value) stream of the sparse-allreduce
// area can replace the gather step (sparse.cpp) once it lands.
#pragma once

#include <cstdint>

#include "core/comm.h"
#include "sparcoll/dsop.h"

namespace sc::dsop {

struct SparseInput {
  const uint64_t* aIdx;
  const void* aVal;
  size_t aNnz, n;
  const uint64_t* bIdx;
  const void* bVal;
  size_t bNnz, m;
  void* G;
};

// The whole sparse DSOP (arguments already validated).
void runSparse(scComm& comm, scDataType_t in, const SparseInput& s, scDsopAlgo_t algo, void* stream);

// --- memory-kind dependent steps (pointers of the communicator's kind) --------
// idx[0..nnz) strictly increasing and < limit. A host wait on device comms.
bool indicesValid(scComm& comm, const uint64_t* idx, size_t nnz, uint64_t limit, void* stream);
// out[0..k) = the distinct values of keys[0..count) in increasing order
// (out holds count elements); returns k. A host wait on device comms.
size_t sortUnique(scComm& comm, const uint64_t* keys, size_t count, uint64_t* out, void* stream);
// dense[p] = val[i] where R[p] == idx[i] (every idx[i] is in the sorted R);
// other elements of dense are left alone. Values are esz-byte elements.
void densify(scComm& comm, const uint64_t* R, size_t nR, const uint64_t* idx, const void* val, size_t nnz, void* dense,
             size_t esz, void* stream);
// G[R[i]*m + C[j]] = Gc[i*nC + j] for i < nR, j < nC; other elements alone.
void scatterCompact(scComm& comm, const void* Gc, const uint64_t* R, size_t nR, const uint64_t* C, size_t nC, void* G,
                    size_t m, size_t esz, void* stream);

}  // namespace sc::dsop
