// The element arithmetic of DSOP, written once for the host loops
// (dsop/kernels_cpu.cpp, dsop/sparse_ops.cpp) and the CUDA kernels
// (kernels/dsop.cu, kernels/dsop_sparse.cu), so the CPU tests cover the
// kernels' arithmetic: the type products are summed in, the exact widening of
// the inputs (core/reduce_op.h), and sparse DSOP's index steps
// (core/sorted_index.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/reduce_op.h"
#include "core/sorted_index.h"

namespace sc::dsop {

// Products of In are formed and summed in Acc<In>: float32 for float16/bfloat16
// (widen() is exact), the input type otherwise.
template <typename In>
using Acc = decltype(widen(In{}));

// Sparse DSOP's input check: idx[i] is not strictly above idx[i - 1], or not below limit.
SC_HD bool badIndex(const uint64_t* idx, size_t i, uint64_t limit) {
  return sorted::faultAt(idx, i, limit, false) != sorted::kOk;
}

// The position of index x in the sorted union R[0, nR) of every rank's
// indices (x is in R): where its value goes in the compressed dense vector.
SC_HD size_t unionPos(const uint64_t* R, size_t nR, uint64_t x) { return size_t(sorted::lowerBound(R, nR, x)); }

}  // namespace sc::dsop
