// The index arithmetic of sparse vectors (sorted index arrays), written once
// for the host (csrc/sparse/ops_cpu.cpp, csrc/dsop/sparse_ops.cpp) and the
// device (kernels/sparse_kernels.cuh, kernels/dsop_sparse.cu): the input check,
// binary search, the split into index ranges and the coalescing of runs of
// equal indices. The CPU reference runs these very functions, so the CPU tests
// cover the kernels' index logic.
#pragma once

#include <cstdint>

#include "core/numeric.h"
#include "core/reduce_op.h"

namespace sc::sorted {

// What is wrong at position i of an index array that must be strictly
// increasing and below dim (rangeOnly: only the bound is checked).
enum Fault : uint64_t { kOk = 0, kRange = 1, kDuplicate = 2, kUnsorted = 3 };

template <typename I>
SC_HD Fault faultAt(const I* x, uint64_t i, uint64_t dim, bool rangeOnly) {
  if (uint64_t(x[i]) >= dim) return kRange;
  if (rangeOnly || i == 0 || x[i - 1] < x[i]) return kOk;
  return x[i] == x[i - 1] ? kDuplicate : kUnsorted;
}

// The first position of sorted x[0, n) whose index is >= key (n if none).
template <typename I>
SC_HD uint64_t lowerBound(const I* x, uint64_t n, uint64_t key) {
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (uint64_t(x[mid]) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The split of sorted x[0, n) into `parts` index ranges [bounds[p],
// bounds[p + 1]) (every index lies in [bounds[0], bounds[parts])): the first
// entry of part p, for p in [0, parts]; part p holds entries
// [partStart(p), partStart(p + 1)).
template <typename I>
SC_HD uint64_t partStart(const I* x, uint64_t n, const uint64_t* bounds, int parts, int p) {
  if (p == 0) return 0;
  if (p == parts) return n;
  return lowerBound(x, n, bounds[p]);
}

// Whether position i of sorted keys starts a run of equal keys.
template <typename I>
SC_HD bool runHead(const I* keys, uint64_t i) {
  return i == 0 || keys[i] != keys[i - 1];
}

// The values of the run [b, e) of equal keys summed left to right, in input
// order, with the backend's sum: a tree would round float16/bfloat16/float
// sums of long runs differently. value(i) gives the value at position i.
template <typename T, typename Value>
SC_HD T sumRun(Value value, uint64_t b, uint64_t e) {
  T acc = value(b);
  for (uint64_t i = b + 1; i < e; ++i) acc = Arith<T>::sum(acc, value(i));
  return acc;
}

// dense[x[i] - lo] = v[i] (Add: dense[...] + v[i]): one entry of densify or
// scatter-add. Indices are unique, so entries never touch the same element.
template <bool Add, typename I, typename T>
SC_HD void scatterAt(const I* x, const T* v, uint64_t i, uint64_t lo, T* dense) {
  const uint64_t j = uint64_t(x[i]) - lo;
  if constexpr (Add) dense[j] = Arith<T>::sum(dense[j], v[i]);
  else dense[j] = v[i];
}

}  // namespace sc::sorted
