// Element-wise reduction operators shared by the CPU backend and host-side
// references. Signed integers are combined in their unsigned type so overflow
// wraps (two's complement) instead of being undefined; 16-bit floats are
// combined in float32 and rounded once.
#pragma once

#include <algorithm>
#include <type_traits>

#include "core/dtype.h"

namespace sc {

template <typename T, bool = std::is_integral_v<T>>
struct Unsigned { using type = std::make_unsigned_t<T>; };
template <typename T>
struct Unsigned<T, false> { using type = T; };

template <typename T>
struct Arith {  // integer and native floating types
  using U = typename Unsigned<T>::type;
  static T sum(T a, T b) { return T(U(a) + U(b)); }
  static T prod(T a, T b) { return T(U(a) * U(b)); }
  static T max(T a, T b) { return a < b ? b : a; }
  static T min(T a, T b) { return b < a ? b : a; }
  static T div(T a, int d) { return num::divideByCount(a, d); }  // avg's division by the rank count
};

template <typename T, float (*ToF)(uint16_t), uint16_t (*FromF)(float)>
struct Arith16 {
  static T sum(T a, T b) { return {FromF(ToF(a.bits) + ToF(b.bits))}; }
  static T prod(T a, T b) { return {FromF(ToF(a.bits) * ToF(b.bits))}; }
  static T max(T a, T b) { return ToF(a.bits) < ToF(b.bits) ? b : a; }
  static T min(T a, T b) { return ToF(b.bits) < ToF(a.bits) ? b : a; }
  static T div(T a, int d) { return {FromF(ToF(a.bits) / float(d))}; }
};

template <> struct Arith<Half> : Arith16<Half, halfToFloat, floatToHalf> {};
template <> struct Arith<BFloat16> : Arith16<BFloat16, bf16ToFloat, floatToBf16> {};

// Integer-valued test data and readable references: a T from a double.
template <typename T> T fromDouble(double v) { return T(v); }
template <> inline Half fromDouble<Half>(double v) { return {floatToHalf(float(v))}; }
template <> inline BFloat16 fromDouble<BFloat16>(double v) { return {floatToBf16(float(v))}; }
template <typename T> double toDouble(T v) { return double(v); }
template <> inline double toDouble<Half>(Half v) { return halfToFloat(v.bits); }
template <> inline double toDouble<BFloat16>(BFloat16 v) { return bf16ToFloat(v.bits); }

}  // namespace sc
