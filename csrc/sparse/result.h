// The library-owned sparse result (scSparseResult_t): buffers in host or
// device memory, reused and grown across calls, plus what the last call wrote.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "sparcoll/sparse.h"

struct scSparseResult {
  std::unique_ptr<sc::Backend> mem;  // allocator of the memory kind (never used for compute)
  bool device = false;
  int deviceId = -1;
  void* idx = nullptr;
  size_t idxBytes = 0;
  void* val = nullptr;
  size_t valBytes = 0;

  bool valid = false;  // a call completed
  bool dense = false;
  size_t nnz = 0, dim = 0;
  scIndexType_t itype = scIndexU32;
  scDataType_t vtype = scFloat32;
  scSparseAlgo_t algo = scSparseAuto;

  ~scSparseResult();
  // idx / val with room for `bytes` (contents lost when they grow).
  void* reserveIdx(size_t bytes);
  void* reserveVal(size_t bytes);
};
