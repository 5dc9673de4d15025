// The memory-kind dependent steps of sparse DSOP: host loops here, device
// kernels in kernels/dsop_sparse.cu. Device read-backs (validity flag, union
// sizes) wait through the backend's deadline-bounded sync first, so the copy
// back never blocks on unfinished work.
#include <algorithm>
#include <cstring>

#include "dsop/algos.h"
#include "dsop/sparse.h"
#include "dsop/sparse_device.h"
#include "dsop/tile_math.h"

namespace sc::dsop {
namespace {

const SparseDeviceSteps& noCudaSteps() { SC_THROW(scInvalidUsage, "device buffers need a CUDA build of sparcoll"); }

// Reads `bytes` back from device memory, after the stream's work is done.
void readBack(scComm& comm, void* host, const void* dev, size_t bytes, void* stream) {
  comm.hostSync(stream, comm.deadline());
  comm.backend->copy(host, dev, bytes, stream);
  comm.hostSync(stream, comm.deadline());
  ++comm.stats.hostReads;
}

template <size_t E>
void scatterRowsHost(const char* Gc, const uint64_t* R, size_t nR, const uint64_t* C, size_t nC, char* G, size_t m) {
  for (size_t i = 0; i < nR; ++i) {
    char* row = G + R[i] * m * E;
    const char* src = Gc + i * nC * E;
    for (size_t j = 0; j < nC; ++j) std::memcpy(row + C[j] * E, src + j * E, E);
  }
}

}  // namespace

ToolkitFn<const SparseDeviceSteps&()> sparseDeviceSteps{noCudaSteps};

bool indicesValid(scComm& comm, const uint64_t* idx, size_t nnz, uint64_t limit, void* stream) {
  if (nnz == 0) return true;
  if (!comm.device()) {
    for (size_t i = 0; i < nnz; ++i)
      if (badIndex(idx, i, limit)) return false;
    return true;
  }
  auto* flag = reinterpret_cast<unsigned*>(comm.scratch(Scratch::DsopTemp, sizeof(unsigned), stream));
  sparseDeviceSteps().checkIndices(idx, nnz, limit, flag, stream);
  unsigned bad = 1;
  readBack(comm, &bad, flag, sizeof bad, stream);
  return bad == 0;
}

size_t sortUnique(scComm& comm, const uint64_t* keys, size_t count, uint64_t* out, void* stream) {
  if (count == 0) return 0;
  if (!comm.device()) {
    std::copy(keys, keys + count, out);
    std::sort(out, out + count);
    return size_t(std::unique(out, out + count) - out);
  }
  const SparseDeviceSteps& d = sparseDeviceSteps();
  const size_t bytes = d.sortUniqueTempBytes(count);
  char* temp = comm.scratch(Scratch::DsopTemp, bytes, stream);
  const uint64_t* dCount = d.sortUnique(keys, count, out, temp, bytes, stream);
  uint64_t k = 0;
  readBack(comm, &k, dCount, sizeof k, stream);
  return size_t(k);
}

void densify(scComm& comm, const uint64_t* R, size_t nR, const uint64_t* idx, const void* val, size_t nnz, void* dense,
             size_t esz, void* stream) {
  if (nnz == 0) return;
  if (!comm.device()) {
    for (size_t i = 0; i < nnz; ++i) {
      const size_t p = unionPos(R, nR, idx[i]);
      std::memcpy(static_cast<char*>(dense) + p * esz, static_cast<const char*>(val) + i * esz, esz);
    }
    return;
  }
  sparseDeviceSteps().densify(R, nR, idx, val, nnz, dense, esz, stream);
}

void scatterCompact(scComm& comm, const void* Gc, const uint64_t* R, size_t nR, const uint64_t* C, size_t nC, void* G,
                    size_t m, size_t esz, void* stream) {
  if (nR == 0 || nC == 0) return;
  if (!comm.device()) {
    auto* g = static_cast<char*>(G);
    const auto* c = static_cast<const char*>(Gc);
    if (esz == 4) scatterRowsHost<4>(c, R, nR, C, nC, g, m);
    else scatterRowsHost<8>(c, R, nR, C, nC, g, m);
    return;
  }
  sparseDeviceSteps().scatterCompact(Gc, R, nR, C, nC, G, m, esz, stream);
}

}  // namespace sc::dsop
