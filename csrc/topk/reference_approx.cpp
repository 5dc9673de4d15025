// CPU reference of the bucketed approximate top-k in expectation (thesis §2.4.1),
// with error feedback fused in (Algorithm 2). The kernels in
// kernels/topk_approx.cu implement the same steps per thread block; the tests
// require both to select identical elements.
//
// Per bucket [s, e), length L, share k_b:
//   acc_i = g_i (+ r_i)                    one IEEE add in the dtype
//   amax  = max finite |acc_i|             on abs bit patterns
//   q_i   = quantize(|acc_i|, amax)        31-bit fixed point; Q = sum q_i
//   sel_i = !finite_i || u_i < p_i         select_math.h: makeDecision/chooses
//   place the selected entries (variable: compacted; fixed: k_b slots)
//   r_i   = sent_i ? 0 : acc_i
#include <algorithm>
#include <vector>

#include "topk/dispatch.h"
#include "topk/host_io.h"
#include "topk/params.h"

namespace sc {
namespace topk {
namespace {

template <class F>
class ApproxHost : HostIO<F> {
  using Base = HostIO<F>;
  using Base::p_, Base::g_, Base::r_, Base::put;
  using typename Base::Bits;

 public:
  ApproxHost(const Params& p, const Buffers& b) : Base(p, b) {}

  Outcome run() {
    const uint64_t len0 = std::min<uint64_t>(p_.bucket, p_.n);
    acc_.resize(len0);
    q_.resize(len0);
    sel_.resize(len0);
    const uint64_t nb = numBuckets(p_);
    for (uint64_t b = 0; b < nb; ++b) bucket(b * p_.bucket, std::min(p_.n, (b + 1) * p_.bucket));
    return out_;
  }

 private:
  void bucket(uint64_t s, uint64_t e) {
    const uint64_t len = e - s;
    const uint64_t sb = shareBefore(p_.k, s, p_.n);
    const uint64_t kb = shareBefore(p_.k, e, p_.n) - sb;

    Bits amax = 0;
    for (uint64_t j = 0; j < len; ++j) {
      acc_[j] = r_ ? F::add(g_[s + j], r_[s + j]) : g_[s + j];
      const Bits a = F::absBits(acc_[j]);
      if (F::finite(a)) amax = std::max(amax, a);
    }
    const int eeMax = effExp<F>(amax);
    uint64_t Q = 0;
    for (uint64_t j = 0; j < len; ++j) {
      const Bits a = F::absBits(acc_[j]);
      q_[j] = F::finite(a) ? quantize<F>(a, eeMax) : 0;
      Q += q_[j];
    }
    const Decision d = makeDecision(p_.method == scTopkApproxAtMost, kb, len, quantize<F>(amax, eeMax), Q);

    uint64_t cnt = 0, group = ~uint64_t(0);
    Philox4 blk{};
    // A bucket without a slot (k_b = 0: p_i = 0) selects only non-finite
    // values, and draws no random number (as the kernels do).
    const bool none = d.a == 0 && d.b == 0;
    for (uint64_t j = 0; j < len; ++j) {
      const uint64_t i = s + j;
      if (none) {
        cnt += sel_[j] = !F::finite(F::absBits(acc_[j]));
        continue;
      }
      if ((i >> 2) != group) {  // one Philox block serves four elements (= selectBits(seed, step, i))
        group = i >> 2;
        blk = philoxBlock(p_.seed, p_.step, Domain::Select, group);
      }
      const bool nonFinite = !F::finite(F::absBits(acc_[j]));
      sel_[j] = nonFinite || chooses(d, word(blk, uint32_t(i & 3)), q_[j]);
      cnt += sel_[j];
    }
    out_.selected += cnt;
    if (p_.output == scTopkFixedPerBucket) placeFixed(s, len, sb, kb, cnt);
    else placeVariable(s, len);
  }

  // Variable output: the selected entries in index order, up to capacity.
  void placeVariable(uint64_t s, uint64_t len) {
    for (uint64_t j = 0; j < len; ++j) {
      bool sent = false;
      if (sel_[j]) {
        if (out_.nnz < p_.capacity) {
          put(out_.nnz++, s + j, acc_[j]);
          sent = true;
        } else {
          ++out_.deferred;
        }
      }
      if (r_) r_[s + j] = sent ? Bits(0) : acc_[j];
    }
  }

  // Fixed output: exactly kb slots from sb on; the first kb selected entries,
  // padded with the first unselected indices (value 0).
  void placeFixed(uint64_t s, uint64_t len, uint64_t sb, uint64_t kb, uint64_t cnt) {
    const uint64_t pad = kb - std::min(cnt, kb);
    uint64_t selRank = 0, unselRank = 0, slot = 0;
    for (uint64_t j = 0; j < len; ++j) {
      const bool taken = sel_[j] ? selRank++ < kb : unselRank++ < pad;
      if (taken) put(sb + slot++, s + j, sel_[j] ? acc_[j] : Bits(0));
      if (r_) r_[s + j] = (taken && sel_[j]) ? Bits(0) : acc_[j];
    }
    out_.nnz += slot;
    out_.deferred += cnt - std::min(cnt, kb);
  }

  std::vector<Bits> acc_;
  std::vector<uint32_t> q_;
  std::vector<uint8_t> sel_;
  Outcome out_;
};

}  // namespace

Outcome approxHost(const Params& p, const Buffers& b) {
  return dispatchFmt(p.dtype, [&](auto f) { return ApproxHost<decltype(f)>(p, b).run(); });
}

}  // namespace topk
}  // namespace sc
