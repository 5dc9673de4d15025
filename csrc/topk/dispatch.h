// Maps a floating scDataType_t to its bit-layout format (select_math.h).
#pragma once

#include "core/error.h"
#include "topk/select_math.h"

namespace sc {
namespace topk {

inline bool supportedDtype(scDataType_t t) {
  return t == scFloat32 || t == scFloat64 || t == scFloat16 || t == scBfloat16;
}

// Calls f(Fmt{}) for the format of t.
template <typename Fn>
decltype(auto) dispatchFmt(scDataType_t t, Fn&& f) {
  switch (t) {
    case scFloat32: return f(F32{});
    case scFloat64: return f(F64{});
    case scFloat16: return f(F16{});
    case scBfloat16: return f(BF16{});
    default: SC_THROW(scInvalidArgument, "top-k: unsupported dtype ", int(t));
  }
}

}  // namespace topk
}  // namespace sc
