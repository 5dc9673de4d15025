// scSparseResult_t: creation, growth, accessors.
#include "sparse/result.h"

#include <algorithm>

#include "core/api_guard.h"

using namespace sc;

scSparseResult::~scSparseResult() {
  if (mem) {
    mem->release(idx);
    mem->release(val);
  }
}

namespace {

void* reserve(sc::Backend& mem, void*& p, size_t& cap, size_t bytes) {
  if (cap >= bytes && p) return p;
  mem.release(p);  // cudaFree waits for queued work that may still use it
  p = nullptr;
  cap = 0;
  p = mem.alloc(std::max<size_t>(bytes, 1));
  cap = std::max<size_t>(bytes, 1);
  return p;
}

scSparseResult* checked(scSparseResult_t r) {
  SC_ARG(r != nullptr, "sparse result handle is NULL");
  SC_REQUIRE(r->valid, scInvalidUsage, "the sparse result holds nothing yet (no successful scSparseAllReduceToSparse)");
  return r;
}

template <typename T>
T* out(T* p, const char* what) {
  SC_ARG(p != nullptr, what, " output pointer is NULL");
  return p;
}

}  // namespace

void* scSparseResult::reserveIdx(size_t bytes) { return reserve(*mem, idx, idxBytes, bytes); }
void* scSparseResult::reserveVal(size_t bytes) { return reserve(*mem, val, valBytes, bytes); }

extern "C" scResult_t scSparseResultCreate(scComm_t comm, scSparseResult_t* result) {
  return scGuard(comm, [&] {
    checkComm(comm);
    out(result, "result");
    *result = nullptr;
    auto r = std::make_unique<scSparseResult>();
    r->device = comm->device();
    r->deviceId = comm->device() ? comm->cfg.device : -1;
    r->mem = r->device ? makeCudaBackend(r->deviceId) : makeCpuBackend();
    *result = r.release();
  });
}

extern "C" scResult_t scSparseResultDestroy(scSparseResult_t result) {
  return scGuard(nullptr, [&] { delete result; });
}

extern "C" scResult_t scSparseResultIsDense(scSparseResult_t result, int* isDense) {
  return scGuard(nullptr, [&] { *out(isDense, "isDense") = checked(result)->dense ? 1 : 0; });
}

extern "C" scResult_t scSparseResultNnz(scSparseResult_t result, size_t* nnz) {
  return scGuard(nullptr, [&] { *out(nnz, "nnz") = checked(result)->nnz; });
}

extern "C" scResult_t scSparseResultDim(scSparseResult_t result, size_t* dim) {
  return scGuard(nullptr, [&] { *out(dim, "dim") = checked(result)->dim; });
}

extern "C" scResult_t scSparseResultIndices(scSparseResult_t result, const void** indices) {
  return scGuard(nullptr, [&] {
    const scSparseResult* r = checked(result);
    *out(indices, "indices") = r->dense ? nullptr : r->idx;
  });
}

extern "C" scResult_t scSparseResultValues(scSparseResult_t result, const void** values) {
  return scGuard(nullptr, [&] { *out(values, "values") = checked(result)->val; });
}

extern "C" scResult_t scSparseResultAlgo(scSparseResult_t result, scSparseAlgo_t* algo) {
  return scGuard(nullptr, [&] { *out(algo, "algo") = checked(result)->algo; });
}
