// CPU reference of the sparse stream operations: two-pointer merges and plain
// loops over the element functions the CUDA kernels run too (the input check,
// the split's binary searches, run coalescing and scatters of
// core/sorted_index.h; the backend's sum and nonZero of core/reduce_op.h), so
// sums match the dense path and the device bit for bit.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/reduce_op.h"
#include "core/sorted_index.h"
#include "sparse/ops.h"

namespace sc::sp {
namespace {

class CpuOps final : public SparseOps {
 public:
  using SparseOps::SparseOps;
  bool onDevice() const override { return false; }

  void validate(const void* idx, size_t n, uint64_t dim, bool rangeOnly, uint64_t* err) override {
    *err = kNoError;
    dispatchIndex(it, [&](auto itag) {
      using I = decltype(itag);
      const I* x = static_cast<const I*>(idx);
      for (size_t i = 0; i < n && *err == kNoError; ++i) *err = checkWord(x, i, dim, rangeOnly);
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
      std::vector<I> keys(n);
      for (size_t j = 0; j < n; ++j) keys[j] = x[perm[j]];
      I* yi = static_cast<I*>(oi);
      V* yv = static_cast<V*>(ov);
      size_t m = 0;
      for (size_t b = 0, e; b < n; b = e, ++m) {  // one run of equal indices [b, e) per output entry
        for (e = b + 1; e < n && !sorted::runHead(keys.data(), e); ++e) {
        }
        yi[m] = keys[b];
        yv[m] = sorted::sumRun<V>([&](uint64_t j) { return v[perm[j]]; }, b, e);
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
        if (xa[i] < xb[j]) {
          yi[m] = xa[i];
          yv[m++] = va[i++];
        } else if (xb[j] < xa[i]) {
          yi[m] = xb[j];
          yv[m++] = vb[j++];
        } else {
          yi[m] = xa[i];
          yv[m++] = Arith<V>::sum(va[i++], vb[j++]);
        }
      }
      for (; i < na; ++i, ++m) {
        yi[m] = xa[i];
        yv[m] = va[i];
      }
      for (; j < nb; ++j, ++m) {
        yi[m] = xb[j];
        yv[m] = vb[j];
      }
      *cnt = m;
    });
  }

  void scatterAdd(const void* idx, const void* val, size_t n, uint64_t lo, void* dense) override {
    scatter<true>(idx, val, n, lo, dense);
  }

  void densify(const void* idx, const void* val, size_t n, uint64_t lo, size_t len, void* dense) override {
    if (len) std::memset(dense, 0, len * vsz);
    scatter<false>(idx, val, n, lo, dense);
  }

  void split(const void* idx, size_t n, const uint64_t* nIn, const uint64_t* bounds, int parts, uint64_t* counts,
             uint64_t* offs) override {
    if (nIn) n = size_t(*nIn);
    dispatchIndex(it, [&](auto itag) {
      using I = decltype(itag);
      const I* x = static_cast<const I*>(idx);
      for (int p = 0; p <= parts; ++p) offs[p] = sorted::partStart(x, n, bounds, parts, p);
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
        if (nonZero(d[i])) {
          yi[m] = I(lo + i);
          yv[m++] = d[i];
        }
      *cnt = m;
    });
  }

  void staticSlots(const void* blocks, int P, const StaticLayout& L, uint64_t dim, void* keys, void* vals,
                   uint64_t* err) override {
    *err = kStaticOk;
    const auto* b = static_cast<const unsigned char*>(blocks);
    forBits([&](auto itag, auto btag) {
      using I = decltype(itag);
      using B = decltype(btag);
      I* k = static_cast<I*>(keys);
      B* v = static_cast<B*>(vals);
      for (uint64_t s = 0; s < uint64_t(P) * L.cap; ++s) {
        *err = std::min(*err, staticSlot(b, L, dim, s, &k[s]));
        v[s] = uint64_t(k[s]) < dim ? staticValue<B>(b, L, s) : B(0);
      }
    });
  }

  void densifyCounted(const void* idx, const void* val, const uint64_t* cnt, uint64_t nMax, uint64_t dim,
                      void* dense) override {
    if (dim) std::memset(dense, 0, dim * vsz);
    forBits([&](auto itag, auto btag) {
      using I = decltype(itag);
      using B = decltype(btag);
      const I* x = static_cast<const I*>(idx);
      const B* v = static_cast<const B*>(val);
      for (uint64_t i = 0; i < std::min(*cnt, nMax); ++i)
        if (uint64_t(x[i]) < dim) sorted::scatterAt<false>(x, v, i, 0, static_cast<B*>(dense));
    });
  }

  void keepStatus(uint64_t* status, const uint64_t* err) override {
    if (*err != kStaticOk && *status == 0) *status = *err;
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

  // Index type and value bits (for operations that only move values).
  template <typename F>
  void forBits(F&& f) {
    dispatchIndex(it, [&](auto itag) {
      switch (vsz) {
        case 1: f(itag, uint8_t{}); break;
        case 2: f(itag, uint16_t{}); break;
        case 4: f(itag, uint32_t{}); break;
        default: f(itag, uint64_t{}); break;
      }
    });
  }

  template <bool Add>
  void scatter(const void* idx, const void* val, size_t n, uint64_t lo, void* dense) {
    forTypes([&](auto itag, auto vtag) {
      using I = decltype(itag);
      using V = decltype(vtag);
      const I* x = static_cast<const I*>(idx);
      const V* v = static_cast<const V*>(val);
      for (size_t i = 0; i < n; ++i) sorted::scatterAt<Add>(x, v, i, lo, static_cast<V*>(dense));
    });
  }
};

}  // namespace

std::unique_ptr<SparseOps> makeCpuOps(scIndexType_t it, scDataType_t vt, const OpsEnv&) {
  return std::make_unique<CpuOps>(it, vt);
}

namespace {
std::unique_ptr<SparseOps> noCudaOps(scIndexType_t, scDataType_t, const OpsEnv&) {
  SC_THROW(scInvalidUsage, "sparse allreduce on device buffers needs a CUDA build of sparcoll (SPARCOLL_CUDA=ON)");
}
}  // namespace

ToolkitFn<std::unique_ptr<SparseOps>(scIndexType_t, scDataType_t, const OpsEnv&)> makeCudaOps{noCudaOps};

}  // namespace sc::sp
