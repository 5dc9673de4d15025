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
//  - max/min select one operand unchanged (`a < b ? b : a`, `b < a ? b : a`),
//    so a NaN operand passes through intact when it is selected;
//  - div is avg's final division by the rank count (num::divideByCount:
//    integers truncate toward zero and divide in 64 bits).
// The one thing the host and the device may disagree on is the payload of a
// NaN that arithmetic creates (x86 keeps an operand's payload and has its own
// default NaN; the GPU returns its canonical NaN).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/numeric.h"
#include "sparcoll/sparcoll.h"

namespace sc {

// --- widening and narrowing of storage types ----------------------------------
// The arithmetic type of a storage type: itself, float32 for the 16-bit floats.
template <typename T>
SC_HD T widen(T v) { return v; }
SC_HD float widen(Half v) { return num::halfToFloat(v.bits); }
SC_HD float widen(BFloat16 v) { return num::bf16ToFloat(v.bits); }

// The storage type T of an arithmetic result (16-bit floats: rounded once).
template <typename T> struct Narrow { SC_HD static T from(T v) { return v; } };
template <> struct Narrow<Half> { SC_HD static Half from(float f) { return {num::floatToHalf(f)}; } };
template <> struct Narrow<BFloat16> { SC_HD static BFloat16 from(float f) { return {num::floatToBf16(f)}; } };

namespace detail {

template <typename T, bool = std::is_integral_v<T>>
struct Unsigned { using type = std::make_unsigned_t<T>; };
template <typename T>
struct Unsigned<T, false> { using type = T; };

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
template <typename F> SC_HD F add(F a, F b) { return a + b; }
template <typename F> SC_HD F mul(F a, F b) { return a * b; }
#endif

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
  SC_HD static T max(T a, T b) { return a < b ? b : a; }
  SC_HD static T min(T a, T b) { return b < a ? b : a; }
  SC_HD static T div(T a, int d) { return num::divideByCount(a, d); }
};

// float16/bfloat16: widened to float32, combined, rounded once.
template <typename T>
struct Arith16 {
  SC_HD static T sum(T a, T b) { return Narrow<T>::from(detail::add(widen(a), widen(b))); }
  SC_HD static T prod(T a, T b) { return Narrow<T>::from(detail::mul(widen(a), widen(b))); }
  SC_HD static T max(T a, T b) { return widen(a) < widen(b) ? b : a; }
  SC_HD static T min(T a, T b) { return widen(b) < widen(a) ? b : a; }
  SC_HD static T div(T a, int d) { return Narrow<T>::from(num::divideByCount(widen(a), d)); }
};
template <> struct Arith<Half> : Arith16<Half> {};
template <> struct Arith<BFloat16> : Arith16<BFloat16> {};

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
SC_HD bool nonZero(T v) { return v != T(0); }
SC_HD bool nonZero(Half v) { return (v.bits & 0x7fffu) != 0; }
SC_HD bool nonZero(BFloat16 v) { return (v.bits & 0x7fffu) != 0; }

}  // namespace sc
