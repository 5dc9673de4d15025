// CPU reference of the bracket, exact and threshold (DGC-style) top-k: the
// sampled selection of topk/select_plan.h, step for step as the kernels
// (kernels/topk_select.cu) run it, so both agree element for element and the
// CPU tests check the kernels' decisions.
//
//   sample  the s keys at the Philox sample positions (of acc = g + r with
//           error feedback); the cuts are their rankLo-th and rankHi-th
//           largest;
//   pass    one read of the vector (with feedback: r := acc, written in the
//           same pass): count key >= hi, list (index, value) of key >= lo;
//   pick    pickAfterPass: all candidates, a select among them (only the band
//           below hi is ranked when fewer than k keys reach hi), or the
//           fallback: the exact select over the whole vector;
//   keep    key >= minKey and (key > T, or key == T and index <= lastTie), in
//           index order; sent entries of the residual become +0.
// T and lastTie come from radixSelectHost (the kernels' passes): T = the
// rank-th largest key, and when more keys equal T than are admitted, lastTie =
// the index of the last admitted one (ties go to the smaller index). Cuts, T
// and lastTie are order statistics: whichever algorithm finds them, they are
// the kernels'.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "topk/dispatch.h"
#include "topk/host_io.h"
#include "topk/params.h"
#include "topk/radix_select.h"
#include "topk/select_plan.h"

namespace sc {
namespace topk {
namespace {

template <class F>
class SelectHost : HostIO<F> {
  using Base = HostIO<F>;
  using Base::p_, Base::g_, Base::r_, Base::put;
  using typename Base::Bits;
  static constexpr int kWidth = int(8 * sizeof(Bits));

 public:
  SelectHost(const Params& p, const Buffers& b) : Base(p, b), plan_(selectPlan(p)) {}

  Outcome run() {
    if (plan_.samples == 0) {  // every key would be listed: select over the vector itself
      if (r_)
        for (uint64_t i = 0; i < p_.n; ++i) r_[i] = F::add(g_[i], r_[i]);
      return fallback();
    }
    const Cuts cuts = sampleCuts();
    const uint64_t high = pass(cuts);
    const Pick pk = pickAfterPass(p_.method, p_.k, candidates_, high, plan_.bound);
    if (pk.mode == kPickFallback) return fallback();
    if (pk.mode == kPickAll) return keep(listed(), 0, p_.n - 1);
    return top(listed([&](uint64_t key) { return inPick(pk, key, cuts.hi); }), pk.rank, pk.count, listed());
  }

 private:
  // acc_i: the selection's source (g + r with error feedback, before the pass
  // writes it to r).
  Bits acc(uint64_t i) const { return r_ ? F::add(g_[i], r_[i]) : g_[i]; }

  // The cuts: the sample's rankLo-th and rankHi-th largest keys. (The kernels
  // find them by the radix select; order statistics are the same whatever
  // finds them, and two nth_element calls cost the host less than six radix
  // passes over the sample.)
  Cuts sampleCuts() const {
    // Positions first, then the reads: apart, the reads overlap each other
    // (one random read after each draw waits for its miss: 4x slower).
    std::vector<Bits> sample(plan_.samples);
    constexpr uint64_t kGroup = 4096;
    uint64_t pos[kGroup];
    for (uint64_t j0 = 0; j0 < plan_.samples; j0 += kGroup) {
      const uint64_t len = std::min(kGroup, plan_.samples - j0);
      for (uint64_t j = 0; j < len; ++j) pos[j] = scaleToRange(sampleBits(p_.seed, p_.step, j0 + j), p_.n);
      for (uint64_t j = 0; j < len; ++j) sample[j0 + j] = F::absBits(acc(pos[j]));
    }
    const auto larger = [](Bits a, Bits b) { return a > b; };
    const auto lo = sample.begin() + int64_t(plan_.rankLo - 1);
    std::nth_element(sample.begin(), lo, sample.end(), larger);
    const uint64_t cutLo = *lo;
    uint64_t cutHi = 0;
    if (plan_.rankHi) {  // rankHi < rankLo: among the keys before lo
      const auto hi = sample.begin() + int64_t(plan_.rankHi - 1);
      std::nth_element(sample.begin(), hi, lo, larger);
      cutHi = *hi;
    }
    return makeCuts(plan_, cutLo, cutHi);
  }

  // The one pass: lists the candidates (key >= lo) up to the bound, counts
  // them all and the keys >= hi; with feedback writes r := acc. Returns the
  // count >= hi. Candidates are rare (about 1.3 k of n), so the pass tests a
  // block of keys with a loop the compiler vectorizes (keys are below 2^(w-1):
  // signed compares against cut - 1, which SSE2 has) and looks at single
  // elements only in blocks that hold a candidate.
  uint64_t pass(const Cuts& cuts) {
    using S = std::make_signed_t<Bits>;
    constexpr uint64_t kBlock = 64, kTop = uint64_t(std::numeric_limits<S>::max());
    // key >= cut  <=>  key > cut - 1; a cut above every key becomes the largest S.
    const S loM1 = cuts.lo == 0 ? S(-1) : S(cuts.lo > kTop ? kTop : cuts.lo - 1);
    const S hiM1 = S(cuts.hi > kTop ? kTop : cuts.hi - 1);
    uint64_t high = 0;
    // Room for a block's stores past its last candidate; left uninitialised
    // (zeroing a list of 2k + 64 Ki entries would cost small vectors more
    // than their pass).
    list_.reset(new Entry[plan_.bound + kBlock]);
    Bits a[kBlock];
    for (uint64_t s = 0; s < p_.n; s += kBlock) {
      const uint64_t len = p_.n - s < kBlock ? p_.n - s : kBlock;
      if (r_) {
        for (uint64_t j = 0; j < len; ++j) a[j] = r_[s + j] = F::add(g_[s + j], r_[s + j]);
      } else {
        std::memcpy(a, g_ + s, len * sizeof(Bits));
      }
      S in = 0, hiCount = 0;  // at most kBlock: no overflow in any width
      for (uint64_t j = 0; j < len; ++j) {
        const S key = S(F::absBits(a[j]));
        in += key > loM1;
        hiCount += key > hiM1;
      }
      high += uint64_t(hiCount);
      if (in == 0) continue;
      const uint64_t listed = candidates_ < plan_.bound ? candidates_ : plan_.bound;
      candidates_ += uint64_t(in);
      if (listed + uint64_t(in) > plan_.bound) continue;  // the list is full: count only (a fallback follows)
      // Written without a branch per element (at k = n/100 most blocks hold a
      // candidate, and a branch on each would mispredict): every element is
      // stored at the next slot, which advances only past candidates.
      Entry* out = list_.get() + listed;
      for (uint64_t j = 0; j < len; ++j) {
        *out = Entry{s + j, a[j]};
        out += S(F::absBits(a[j])) > loM1;
      }
    }
    listed_ = candidates_ < plan_.bound ? candidates_ : plan_.bound;
    return high;
  }

  struct Entry {
    uint64_t index;
    Bits value;
  };

  // Visits (index, key) of every listed candidate the filter admits, in index order.
  template <class Filter>
  struct Listed {
    const Entry* list;
    uint64_t count;
    Filter filter;
    template <class Fn>
    void operator()(Fn&& fn) const {
      for (const Entry* e = list; e != list + count; ++e) {
        const uint64_t key = F::absBits(e->value);
        if (filter(key)) fn(e->index, key, e->value);
      }
    }
  };
  template <class Filter>
  Listed<Filter> listed(Filter f) const {
    return Listed<Filter>{list_.get(), listed_, f};
  }
  auto listed() const {
    return listed([](uint64_t) { return true; });
  }

  // Every element of the vector (after the pass: src is acc).
  struct All {
    const Bits* src;
    uint64_t n;
    template <class Fn>
    void operator()(Fn&& fn) const {
      for (uint64_t i = 0; i < n; ++i) fn(i, uint64_t(F::absBits(src[i])), src[i]);
    }
  };

  // The exact select over the whole vector, kept under the method's minKey
  // (bracket: the k largest of the nonzero keys).
  Outcome fallback() {
    const All all{r_ ? r_ : g_, p_.n};
    return top(all, p_.k, p_.n, all);
  }

  // Keeps, from `out`, the rank largest keys of the `count` that `each` visits
  // (ties to the smaller index).
  template <class Each, class Out>
  Outcome top(const Each& each, uint64_t rank, uint64_t count, const Out& out) {
    const RadixState s = radixSelectHost(kWidth, radixStart(rank, count),
                                         [&](auto visit) { each([&](uint64_t, uint64_t key, Bits) { visit(key); }); });
    const uint64_t T = s.prefix;
    uint64_t last = p_.n - 1;
    if (tieBreakNeeded(s))
      last = lastTie(radixSelectHost(indexWidth(p_.n), tieStart(s),
                                     [&](auto visit) {
                                       each([&](uint64_t i, uint64_t key, Bits) {
                                         if (key == T) visit(tieKey(i, p_.n));
                                       });
                                     }),
                     p_.n);
    return keep(out, T, last);
  }

  template <class Each>
  Outcome keep(const Each& each, uint64_t T, uint64_t last) {
    uint64_t nnz = 0;
    each([&](uint64_t i, uint64_t key, Bits v) {
      if (!keeps(key, i, T, last, plan_.minKey)) return;
      put(nnz++, i, v);
      if (r_) r_[i] = 0;
    });
    Outcome o;
    o.nnz = o.selected = nnz;
    return o;
  }

  const SelectPlan plan_;
  std::unique_ptr<Entry[]> list_;
  uint64_t listed_ = 0;
  uint64_t candidates_ = 0;
};

}  // namespace

Outcome selectSampledHost(const Params& p, const Buffers& b) {
  return dispatchFmt(p.dtype, [&](auto f) { return SelectHost<decltype(f)>(p, b).run(); });
}

}  // namespace topk
}  // namespace sc
