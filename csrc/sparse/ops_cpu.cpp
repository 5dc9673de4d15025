// CPU reference of the sparse stream operations: two-pointer merges, binary
// searches for the split, plain scatter loops. Values combine with the CPU
// backend's operators (backend/reduce_ops.h), so sums match the dense path bit
// for bit.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "backend/reduce_ops.h"
#include "sparse/ops.h"

namespace sc::sp {
namespace {

template <typename T>
bool nonZero(T v) { return toDouble(v) != 0.0; }  // NaN counts as non-zero

class CpuOps final : public SparseOps {
 public:
  using SparseOps::SparseOps;
  bool onDevice() const override { return false; }

  void validate(const void* idx, size_t n, uint64_t dim, bool rangeOnly, uint64_t* err) override {
    *err = kNoError;
    dispatchIndex(it, [&](auto itag) {
      using I = decltype(itag);
      const I* x = static_cast<const I*>(idx);
      for (size_t i = 0; i < n; ++i) {
        if (uint64_t(x[i]) >= dim) { *err = errWord(i, kErrRange); return; }
        if (!rangeOnly && i > 0 && x[i] <= x[i - 1]) { *err = errWord(i, x[i] == x[i - 1] ? kErrDuplicate : kErrUnsorted); return; }
      }
    });
  }

  void sortCoalesce(const void* idx, const void* val, size_t n, void* oi, void* ov, uint64_t* cnt) override {
    forTypes([&](auto itag, auto vtag) {
      using I = decltype(itag);
      using V = decltype(vtag);
      const I* x = static_cast<const I*>(idx);
      const V* v = static_cast<const V*>(val);
      std::vector<size_t> perm(n);
      std::iota(perm.begin(), perm.end(), size_t(0));
      std::stable_sort(perm.begin(), perm.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
      I* yi = static_cast<I*>(oi);
      V* yv = static_cast<V*>(ov);
      size_t m = 0;
      for (size_t j = 0; j < n; ++j) {
        const size_t p = perm[j];
        if (m > 0 && yi[m - 1] == x[p]) { yv[m - 1] = Arith<V>::sum(yv[m - 1], v[p]); continue; }
        yi[m] = x[p];
        yv[m] = v[p];
        ++m;
      }
      *cnt = m;
    });
  }

  void mergeSum(const void* ai, const void* av, size_t na, const void* bi, const void* bv, size_t nb, void* oi,
                void* ov, uint64_t* cnt) override {
    forTypes([&](auto itag, auto vtag) {
      using I = decltype(itag);
      using V = decltype(vtag);
      const I *xa = static_cast<const I*>(ai), *xb = static_cast<const I*>(bi);
      const V *va = static_cast<const V*>(av), *vb = static_cast<const V*>(bv);
      I* yi = static_cast<I*>(oi);
      V* yv = static_cast<V*>(ov);
      size_t i = 0, j = 0, m = 0;
      while (i < na && j < nb) {
        if (xa[i] < xb[j]) { yi[m] = xa[i]; yv[m++] = va[i++]; }
        else if (xb[j] < xa[i]) { yi[m] = xb[j]; yv[m++] = vb[j++]; }
        else { yi[m] = xa[i]; yv[m++] = Arith<V>::sum(va[i++], vb[j++]); }
      }
      for (; i < na; ++i, ++m) { yi[m] = xa[i]; yv[m] = va[i]; }
      for (; j < nb; ++j, ++m) { yi[m] = xb[j]; yv[m] = vb[j]; }
      *cnt = m;
    });
  }

  void scatterAdd(const void* idx, const void* val, size_t n, uint64_t lo, void* dense) override {
    forTypes([&](auto itag, auto vtag) {
      using I = decltype(itag);
      using V = decltype(vtag);
      const I* x = static_cast<const I*>(idx);
      const V* v = static_cast<const V*>(val);
      V* d = static_cast<V*>(dense);
      for (size_t i = 0; i < n; ++i) d[x[i] - lo] = Arith<V>::sum(d[x[i] - lo], v[i]);
    });
  }

  void densify(const void* idx, const void* val, size_t n, uint64_t lo, size_t len, void* dense) override {
    if (len) std::memset(dense, 0, len * vsz);
    forTypes([&](auto itag, auto vtag) {
      using I = decltype(itag);
      using V = decltype(vtag);
      const I* x = static_cast<const I*>(idx);
      const V* v = static_cast<const V*>(val);
      V* d = static_cast<V*>(dense);
      for (size_t i = 0; i < n; ++i) d[x[i] - lo] = v[i];
    });
  }

  void split(const void* idx, size_t n, const uint64_t* bounds, int parts, uint64_t* counts, uint64_t* offs) override {
    dispatchIndex(it, [&](auto itag) {
      using I = decltype(itag);
      const I* x = static_cast<const I*>(idx);
      // Sorted input: each part boundary is a binary search.
      offs[0] = 0;
      for (int p = 1; p <= parts; ++p) {
        const uint64_t b = bounds[p];
        offs[p] = p == parts ? n : size_t(std::lower_bound(x, x + n, b, [](I a, uint64_t v) { return uint64_t(a) < v; }) - x);
      }
      for (int p = 0; p < parts; ++p) counts[p] = offs[p + 1] - offs[p];
      counts[parts] = 0;
    });
  }

  void sparsify(const void* dense, size_t len, uint64_t lo, void* oi, void* ov, uint64_t* cnt) override {
    forTypes([&](auto itag, auto vtag) {
      using I = decltype(itag);
      using V = decltype(vtag);
      const V* d = static_cast<const V*>(dense);
      I* yi = static_cast<I*>(oi);
      V* yv = static_cast<V*>(ov);
      size_t m = 0;
      for (size_t i = 0; i < len; ++i)
        if (nonZero(d[i])) { yi[m] = I(lo + i); yv[m++] = d[i]; }
      *cnt = m;
    });
  }

  void toHost(void* dst, const void* src, size_t bytes) override {
    if (bytes && dst != src) std::memmove(dst, src, bytes);
  }
  void fromHost(void* dst, const void* src, size_t bytes) override {
    if (bytes && dst != src) std::memmove(dst, src, bytes);
  }

 private:
  template <typename F>
  void forTypes(F&& f) {
    dispatchIndex(it, [&](auto itag) { dispatchDtype(vt, [&](auto vtag) { f(itag, vtag); }); });
  }
};

}  // namespace

std::unique_ptr<SparseOps> makeCpuOps(scIndexType_t it, scDataType_t vt, const OpsEnv&) {
  return std::make_unique<CpuOps>(it, vt);
}

#ifndef SPARCOLL_HAVE_CUDA
std::unique_ptr<SparseOps> makeCudaOps(scIndexType_t, scDataType_t, const OpsEnv&) {
  SC_THROW(scInvalidUsage, "sparse allreduce on device buffers needs a CUDA build of sparcoll (SPARCOLL_CUDA=ON)");
}
#endif

}  // namespace sc::sp
