// CPU reference of the exact and the threshold (DGC-style) top-k.
//
// Both reduce to "keep key > T, plus the keys == T up to index lastTie", where
// key is the abs bit pattern (monotone in |v|, NaN > Inf) and T the k-th largest
// key. With lastTie the index of the (k - #{key > T})-th key equal to T, that
// rule is the exact top-k with ties broken toward the smaller index, and it
// produces the indices already sorted. T and lastTie come from the radix
// select of topk/radix_select.h, pass for pass as the GPU path
// (kernels/topk_exact.cu) computes them, so both agree element for element and
// the CPU tests check the kernels' arithmetic.
#include <vector>

#include "topk/dispatch.h"
#include "topk/host_io.h"
#include "topk/params.h"
#include "topk/radix_select.h"

namespace sc {
namespace topk {
namespace {

template <class F>
class ExactHost : HostIO<F> {
  using Base = HostIO<F>;
  using typename Base::Bits;
  using Base::p_, Base::g_, Base::r_, Base::put;
  static constexpr int kWidth = int(8 * sizeof(Bits));

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

  // Visits every index of the vector, or of a list (ascending either way).
  struct All {
    uint64_t n;
    template <class Fn>
    void operator()(Fn&& fn) const {
      for (uint64_t i = 0; i < n; ++i) fn(i);
    }
  };
  struct Listed {
    const std::vector<uint64_t>* list;
    template <class Fn>
    void operator()(Fn&& fn) const {
      for (uint64_t i : *list) fn(i);
    }
  };

  Outcome exact() { return top(All{p_.n}, p_.n); }

  Outcome threshold() {
    // The cut T' = the m-th largest sampled key (same select, over the sample;
    // gathered once here, where the kernels recompute the positions per pass).
    std::vector<Bits> sample(p_.samples);
    for (uint64_t j = 0; j < p_.samples; ++j) sample[j] = key(scaleToRange(sampleBits(p_.seed, p_.step, j), p_.n));
    const uint64_t m = thresholdRank(p_.k, p_.samples, p_.n);
    const Bits cut = Bits(radixSelectHost(kWidth, radixStart(m, p_.samples), [&](auto visit) {
                            for (Bits b : sample) visit(b);
                          }).prefix);
    std::vector<uint64_t> cand;
    for (uint64_t i = 0; i < p_.n; ++i)
      if (key(i) >= cut) cand.push_back(i);
    // Few enough candidates: all of them (every key >= cut, no tie left out).
    if (cand.size() <= p_.k) return keep(Listed{&cand}, cut, p_.n - 1);
    // Too many: the exact top-k among them. It is the exact top-k of the whole
    // vector (the k-th largest key is >= cut, so every key of the top k is a
    // candidate), and the GPU, which rescans the whole vector when its bounded
    // candidate list overflows, gets the same T and lastTie either way.
    return top(Listed{&cand}, cand.size());
  }

  // The exact top-k of the `count` entries `each` visits.
  template <class Each>
  Outcome top(const Each& each, uint64_t count) {
    const RadixState s = radixSelectHost(kWidth, radixStart(p_.k, count), [&](auto visit) {
      each([&](uint64_t i) { visit(key(i)); });
    });
    // T = s.prefix; s.rank of the s.matching keys equal to T are admitted, the
    // smallest indices first.
    const Bits T = Bits(s.prefix);
    uint64_t last = p_.n - 1;
    if (tieBreakNeeded(s))
      last = lastTie(radixSelectHost(indexWidth(p_.n), tieStart(s),
                                     [&](auto visit) {
                                       each([&](uint64_t i) {
                                         if (key(i) == T) visit(tieKey(i, p_.n));
                                       });
                                     }),
                     p_.n);
    return keep(each, T, last);
  }

  // Keeps every key > T and the keys == T with index <= last, in index order.
  template <class Each>
  Outcome keep(const Each& each, Bits T, uint64_t last) {
    uint64_t nnz = 0;
    each([&](uint64_t i) {
      const Bits kk = key(i);
      if (kk > T || (kk == T && i <= last)) {
        put(nnz++, i, src_[i]);
        if (r_) r_[i] = 0;
      }
    });
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
