// Host-side helpers over the shared reduction operators (core/reduce_op.h,
// Arith<T> and ReduceOp<T, op>, the same functions the CUDA kernels run):
// conversions of integer-valued test data and readable references.
#pragma once

#include "core/dtype.h"
#include "core/reduce_op.h"

namespace sc {

// Integer-valued test data and readable references: a T from a double.
template <typename T>
T fromDouble(double v) {
  return T(v);
}
template <>
inline Half fromDouble<Half>(double v) {
  return {floatToHalf(float(v))};
}
template <>
inline BFloat16 fromDouble<BFloat16>(double v) {
  return {floatToBf16(float(v))};
}
template <typename T>
double toDouble(T v) {
  return double(v);
}
template <>
inline double toDouble<Half>(Half v) {
  return halfToFloat(v.bits);
}
template <>
inline double toDouble<BFloat16>(BFloat16 v) {
  return bf16ToFloat(v.bits);
}

}  // namespace sc
