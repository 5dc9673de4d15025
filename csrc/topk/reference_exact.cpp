// CPU reference of the exact and the threshold (DGC-style) top-k.
//
// Both reduce to "keep key > T, plus the first `need` entries (by index) with
// key == T", where key is the abs bit pattern (monotone in |v|, NaN > Inf) and T
// the k-th largest key. That rule is the exact top-k with ties broken toward the
// smaller index, and it produces the indices already sorted. The GPU path
// (kernels/topk_exact.cu) finds T with a CUB radix sort (or DeviceTopK) and
// applies the same rule with CUB selects, so both agree element for element.
#include <algorithm>
#include <functional>
#include <vector>

#include "topk/dispatch.h"
#include "topk/host_io.h"
#include "topk/params.h"

namespace sc {
namespace topk {
namespace {

template <class F>
class ExactHost : HostIO<F> {
  using Base = HostIO<F>;
  using typename Base::Bits;
  using Base::p_, Base::g_, Base::r_, Base::put;

 public:
  ExactHost(const Params& p, const Buffers& b) : Base(p, b) {}

  Outcome run() {
    // With error feedback the residual becomes acc = g + r first; it is both
    // the selection source and (minus the sent entries) the new residual.
    if (r_)
      for (uint64_t i = 0; i < p_.n; ++i) r_[i] = F::add(g_[i], r_[i]);
    src_ = r_ ? r_ : g_;
    return p_.method == scTopkThreshold ? threshold() : exact();
  }

 private:
  Bits key(uint64_t i) const { return F::absBits(src_[i]); }

  // The k-th largest of keys (destroys their order).
  static Bits kthLargest(std::vector<Bits>& keys, uint64_t k) {
    std::nth_element(keys.begin(), keys.begin() + (k - 1), keys.end(), std::greater<Bits>());
    return keys[k - 1];
  }

  Outcome exact() {
    std::vector<Bits> keys(p_.n);
    for (uint64_t i = 0; i < p_.n; ++i) keys[i] = key(i);
    return keepTop(kthLargest(keys, p_.k), p_.k);
  }

  Outcome threshold() {
    std::vector<Bits> sample(p_.samples);
    for (uint64_t j = 0; j < p_.samples; ++j)
      sample[j] = key(scaleToRange(sampleBits(p_.seed, p_.step, j), p_.n));
    const Bits t = kthLargest(sample, thresholdRank(p_.k, p_.samples, p_.n));
    std::vector<Bits> cand;
    for (uint64_t i = 0; i < p_.n; ++i)
      if (key(i) >= t) cand.push_back(key(i));
    if (cand.size() <= p_.k) return keepTop(t, cand.size());
    // Too many candidates: the exact top-k among them (= of the whole vector,
    // since every key above the k-th largest is a candidate).
    return keepTop(kthLargest(cand, p_.k), p_.k);
  }

  // Keeps every key > T and the first (total - #{key > T}) keys == T, in index order.
  Outcome keepTop(Bits T, uint64_t total) {
    uint64_t greater = 0;
    for (uint64_t i = 0; i < p_.n; ++i) greater += key(i) > T;
    uint64_t ties = total - greater, nnz = 0;
    for (uint64_t i = 0; i < p_.n; ++i) {
      const Bits kk = key(i);
      if (kk > T || (kk == T && ties > 0 && ties--)) {
        put(nnz++, i, src_[i]);
        if (r_) r_[i] = 0;
      }
    }
    Outcome o;
    o.nnz = o.selected = nnz;
    return o;
  }

  const Bits* src_ = nullptr;
};

}  // namespace

Outcome exactHost(const Params& p, const Buffers& b) {
  return dispatchFmt(p.dtype, [&](auto f) { return ExactHost<decltype(f)>(p, b).run(); });
}

}  // namespace topk
}  // namespace sc
