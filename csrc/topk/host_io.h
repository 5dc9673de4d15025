// The buffers of a CPU reference selection (reference_approx.cpp,
// reference_select.cpp), typed by the format: what both references read and
// how they write one output entry.
#pragma once

#include "topk/params.h"

namespace sc {
namespace topk {

template <class F>
class HostIO {
 protected:
  using Bits = typename F::Bits;

  HostIO(const Params& p, const Buffers& b)
      : p_(p),
        g_(static_cast<const Bits*>(b.grad)),
        r_(static_cast<Bits*>(b.residual)),
        idx_(b.indices),
        val_(static_cast<Bits*>(b.values)) {}

  // Output entry `slot` = (index, v), index in the configured width.
  void put(uint64_t slot, uint64_t index, Bits v) {
    putIndex(idx_, slot, index, p_.indexType);
    val_[slot] = v;
  }

  const Params& p_;
  const Bits* g_;  // the gradient
  Bits* r_;        // the residual (error feedback), or null
  void* idx_;
  Bits* val_;
};

}  // namespace topk
}  // namespace sc
