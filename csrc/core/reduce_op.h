// The reduction operators and element functors, written once for the host
// (the CPU backend, the sparse CPU operations, the MPI user op, the DSOP host
// loop) and the device (the reduce kernel, the sparse and DSOP kernels, top-k's
// error feedback), so CPU tests of these functions test the kernels' arithmetic.
//
// Semantics, per storage type T:
//  - integers: sum and prod are computed in the unsigned type of T, so signed
//    overflow wraps (two's complement) instead of being undefined;
//  - float16/bfloat16 (Half/BFloat16): both operands are widened to float32
//    exactly, combined, and the result is rounded once to nearest even;
//  - max/min: on the floating types IEEE 754-2019 maximum/minimum, so that the
//    result does not depend on the operand order, hence on the algorithm (ring,
//    Rabenseifner, recdbl and the MPI native path, whose floating user ops are
//    these functions, all combine in different orders): a NaN operand makes
//    the result NaN (one NaN: that operand unchanged; two: the canonical quiet
//    NaN), and -0 < +0; otherwise the selected operand unchanged. Integers
//    select with one comparison (`a < b ? b : a`), at no extra cost;
//  - div is avg's final division by the rank count (num::divideByCount:
//    integers truncate toward zero and divide in 64 bits).
// The one thing the host and the device may disagree on is the payload of a
// NaN that arithmetic creates (x86 keeps an operand's payload and has its own
// default NaN; the GPU returns its canonical NaN).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/numeric.h"
#include "sparcoll/sparcoll.h"

namespace sc {

// --- widening and narrowing of storage types ----------------------------------
// The arithmetic type of a storage type: itself, float32 for the 16-bit floats.
template <typename T>
SC_HD T widen(T v) {
  return v;
}
SC_HD float widen(Half v) { return num::halfToFloat(v.bits); }
SC_HD float widen(BFloat16 v) { return num::bf16ToFloat(v.bits); }

// The storage type T of an arithmetic result (16-bit floats: rounded once).
template <typename T>
struct Narrow {
  SC_HD static T from(T v) { return v; }
};
template <>
struct Narrow<Half> {
  SC_HD static Half from(float f) { return {num::floatToHalf(f)}; }
};
template <>
struct Narrow<BFloat16> {
  SC_HD static BFloat16 from(float f) { return {num::floatToBf16(f)}; }
};

namespace detail {

template <typename T, bool = std::is_integral_v<T>>
struct Unsigned {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
struct Unsigned<T, false> {
  using type = T;
};

// One IEEE operation rounded to nearest. On the device the _rn intrinsics keep
// the compiler from fusing it with a multiply of the caller into an FMA (one
// rounding instead of two) once the operator is inlined there; the host
// compiles without FMA contraction of separate statements.
#if defined(__CUDA_ARCH__)
SC_HD float add(float a, float b) { return __fadd_rn(a, b); }
SC_HD double add(double a, double b) { return __dadd_rn(a, b); }
SC_HD float mul(float a, float b) { return __fmul_rn(a, b); }
SC_HD double mul(double a, double b) { return __dmul_rn(a, b); }
#else
template <typename F>
SC_HD F add(F a, F b) {
  return a + b;
}
template <typename F>
SC_HD F mul(F a, F b) {
  return a * b;
}
#endif

// The positive quiet NaN with an empty payload, per storage type: what
// maximum/minimum return for two NaN operands (ieeeSelect, ieeeSelect16).
SC_HD float quietNan(float) { return num::asF32(0x7fc00000u); }
SC_HD double quietNan(double) { return num::asF64(0x7ff8000000000000ull); }
SC_HD Half quietNan(Half) { return Half{0x7e00}; }
SC_HD BFloat16 quietNan(BFloat16) { return BFloat16{0x7fc0}; }

// The sign bit of x. On the host copysign is a bitwise and, which the loop
// vectoriser handles for double too (std::signbit of a double reads the bits
// through a 64-bit integer, and the loop is then left scalar).
template <typename F>
SC_HD bool negative(F x) {
#if defined(__CUDA_ARCH__)
  return signbit(x);
#else
  return std::copysign(F(1), x) < F(0);
#endif
}

// IEEE 754-2019 maximum (Max) / minimum of float32/float64 a and b.
// Commutative and associative down to the bits, so every reduction order gives
// the same result: `a < b ? b : a` kept a NaN in a but dropped one in b, and
// chose between -0 and +0 by the order.
//  - one NaN operand: that NaN, payload and all;
//  - two NaN operands: quietNan (keeping either payload would depend on the
//    order; 754 only recommends keeping one);
//  - -0 < +0: equal values differ in bits only as zeros of opposite signs.
// Written as selects on booleans combined with & and |, without branches, so
// the CPU loops vectorise (measured with g++ -O3, SSE2, 16 MiB operands: float
// max ~10 % and double max ~30 % slower than `a < b ? b : a`; written with
// branches they were 2-3x slower).
template <bool Max, typename F>
SC_HD F ieeeSelect(F a, F b) {
  const bool na = a != a, nb = b != b, negA = negative(a);
  const bool takeB = (Max ? a < b : b < a) | ((a == b) & (Max ? negA : !negA)) | (nb & !na);
  const F r = takeB ? b : a;
  return (na & nb) ? quietNan(a) : r;
}

// ieeeSelect for float16/bfloat16, on the bit patterns alone: widening both
// operands (a software conversion on the host) cost more than the choice.
// Flipping the magnitude bits of negative patterns gives IEEE totalOrder as
// int16 order on non-NaN values: -0 < +0, and equal keys are equal patterns.
// Integer selects vectorise (measured: ~10x the widening version's speed).
SC_HD uint16_t infBits(Half) { return 0x7c00; }
SC_HD uint16_t infBits(BFloat16) { return 0x7f80; }
template <bool Max, typename T>
SC_HD T ieeeSelect16(T a, T b) {
  const uint16_t inf = infBits(a);
  const bool nx = (a.bits & 0x7fffu) > inf, ny = (b.bits & 0x7fffu) > inf;
  const int16_t ka = int16_t(a.bits ^ ((a.bits & 0x8000u) ? 0x7fffu : 0u));
  const int16_t kb = int16_t(b.bits ^ ((b.bits & 0x8000u) ? 0x7fffu : 0u));
  const bool takeB = (!nx & !ny & (Max ? ka < kb : kb < ka)) | (ny & !nx);
  const T r = takeB ? b : a;
  return (nx & ny) ? quietNan(a) : r;
}

}  // namespace detail

// --- the operators -------------------------------------------------------------
template <typename T>
struct Arith {  // integer and native floating types
  using U = typename detail::Unsigned<T>::type;
  SC_HD static T sum(T a, T b) {
    if constexpr (std::is_integral_v<T>) return T(U(a) + U(b));
    else return detail::add(a, b);
  }
  SC_HD static T prod(T a, T b) {
    if constexpr (std::is_integral_v<T>) return T(U(a) * U(b));
    else return detail::mul(a, b);
  }
  SC_HD static T max(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return detail::ieeeSelect<true>(a, b);
    else return a < b ? b : a;
  }
  SC_HD static T min(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return detail::ieeeSelect<false>(a, b);
    else return b < a ? b : a;
  }
  SC_HD static T div(T a, int d) { return num::divideByCount(a, d); }
};

// float16/bfloat16: widened to float32, combined, rounded once; max/min
// select on the patterns (ieeeSelect16), which is the same choice.
template <typename T>
struct Arith16 {
  SC_HD static T sum(T a, T b) { return Narrow<T>::from(detail::add(widen(a), widen(b))); }
  SC_HD static T prod(T a, T b) { return Narrow<T>::from(detail::mul(widen(a), widen(b))); }
  SC_HD static T max(T a, T b) { return detail::ieeeSelect16<true>(a, b); }
  SC_HD static T min(T a, T b) { return detail::ieeeSelect16<false>(a, b); }
  SC_HD static T div(T a, int d) { return Narrow<T>::from(num::divideByCount(widen(a), d)); }
};
template <>
struct Arith<Half> : Arith16<Half> {};
template <>
struct Arith<BFloat16> : Arith16<BFloat16> {};

// --- element functors (what the kernels and the CPU loops are instantiated with)
// a op b for storage type T; scAvg combines as scSum (the division comes once, at the end).
template <typename T, int Op>
struct ReduceOp {
  SC_HD T operator()(T a, T b) const {
    if constexpr (Op == scSum || Op == scAvg) return Arith<T>::sum(a, b);
    else if constexpr (Op == scProd) return Arith<T>::prod(a, b);
    else if constexpr (Op == scMax) return Arith<T>::max(a, b);
    else return Arith<T>::min(a, b);
  }
};
template <typename T>
using Sum = ReduceOp<T, scSum>;

// x / d, avg's final step.
template <typename T>
struct DivideBy {
  int d;
  SC_HD T operator()(T x) const { return Arith<T>::div(x, d); }
};

// Calls f(ReduceOp<T, op>{}) for a run-time op: the one switch from the C
// API's scRedOp_t to a compiled operator. `op` must be valid (checkOp).
template <typename T, typename F>
decltype(auto) withReduceOp(scRedOp_t op, F&& f) {
  switch (op) {
    case scProd: return f(ReduceOp<T, scProd>{});
    case scMax: return f(ReduceOp<T, scMax>{});
    case scMin: return f(ReduceOp<T, scMin>{});
    default: return f(ReduceOp<T, scSum>{});  // scSum, scAvg
  }
}

// v != 0, NaN included (a NaN is kept by sparsify); -0 counts as zero.
template <typename T>
SC_HD bool nonZero(T v) {
  return v != T(0);
}
SC_HD bool nonZero(Half v) { return (v.bits & 0x7fffu) != 0; }
SC_HD bool nonZero(BFloat16 v) { return (v.bits & 0x7fffu) != 0; }

}  // namespace sc
