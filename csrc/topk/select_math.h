// The arithmetic of the top-k selection, shared verbatim by the CPU reference
// (csrc/topk/reference_*.cpp) and the CUDA kernels (kernels/topk_*.cu).
//
// Why integers: the CPU and the GPU must select the very same elements for the
// same (seed, step, input). Floating-point norms would differ with the order
// of summation (a CUB block reduction does not add in the CPU's order) and with
// FMA contraction. So everything after the one IEEE add of error feedback is
// integer arithmetic on the IEEE bit patterns:
//  - magnitudes are compared as "abs bit patterns" (monotone in |v| for finite
//    values; NaN > Inf > finite);
//  - a bucket's magnitudes are quantized to 31-bit fixed point relative to its
//    largest finite magnitude (exact shifts of the mantissa), so L1 is an
//    integer sum (associative: any reduction order gives the same Q);
//  - p_i is a ratio of 64-bit integers and u < p_i is decided by one 128-bit
//    cross-multiplication.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/numeric.h"
#include "core/reduce_op.h"
#include "topk/philox.h"

namespace sc {
namespace topk {

using u128 = unsigned __int128;

// Bit casts and 16-bit conversions: core/numeric.h, shared with the reduce
// kernels and the CPU backend.
using num::asF32;
using num::asF64;
using num::bitsOf;
using num::f32BitsToBf16;
using num::f32BitsToHalf;
using num::halfToF32Bits;

// ---------------------------------------------------------------------------
// Floating formats by bit layout. `add` is error feedback's acc = g + r.
// ---------------------------------------------------------------------------
template <typename BitsT, int FracBits, int ExpBits>
struct FmtBase {
  using Bits = BitsT;
  static constexpr int kFrac = FracBits;
  static constexpr Bits kAbsMask = Bits(~(Bits(1) << (sizeof(Bits) * 8 - 1)));
  static constexpr Bits kFracMask = Bits((Bits(1) << FracBits) - 1);
  static constexpr Bits kInf = Bits(((Bits(1) << ExpBits) - 1) << FracBits);
  SC_HD static Bits absBits(Bits b) { return Bits(b & kAbsMask); }
  SC_HD static bool finite(Bits absb) { return absb < kInf; }
};

// The add is the reduction's sum (core/reduce_op.h): one IEEE add, never fused
// into an FMA; 16-bit formats accumulate in float32 and round once.
struct F32 : FmtBase<uint32_t, 23, 8> {
  SC_HD static Bits add(Bits a, Bits b) { return bitsOf(Arith<float>::sum(asF32(a), asF32(b))); }
};
struct F64 : FmtBase<uint64_t, 52, 11> {
  SC_HD static Bits add(Bits a, Bits b) { return bitsOf(Arith<double>::sum(asF64(a), asF64(b))); }
};
struct F16 : FmtBase<uint16_t, 10, 5> {
  SC_HD static Bits add(Bits a, Bits b) { return Arith<Half>::sum(Half{a}, Half{b}).bits; }
};
struct BF16 : FmtBase<uint16_t, 7, 8> {
  SC_HD static Bits add(Bits a, Bits b) { return Arith<BFloat16>::sum(BFloat16{a}, BFloat16{b}).bits; }
};

// ---------------------------------------------------------------------------
// Quantization: |v| as 31-bit fixed point relative to the bucket maximum.
// value = m * 2^(ee - bias - frac) with ee = max(biased exponent, 1) (subnormals);
// q = m * 2^(30 - frac - (eeMax - ee)), truncated. q(max) is in [2^30, 2^31) for a
// normal maximum, so Q = sum q over a bucket of <= 2^32 elements is < 2^63.
// ---------------------------------------------------------------------------
constexpr int kQuantBits = 31;
constexpr uint64_t kMaxBucket = uint64_t(1) << 32;

template <class F>
SC_HD int effExp(typename F::Bits absb) {
  const int be = int(absb >> F::kFrac);
  return be ? be : 1;
}

// q < 2^31 for every |v| <= the bucket maximum (the only magnitudes quantized),
// so q is 32-bit and the mantissa is shifted in its own width: the kernels pay
// 32-bit shifts, not 64-bit ones, per element (float64 needs 64 only before the
// shift, and always shifts right: kFrac = 52 > 30).
template <class F>
SC_HD uint32_t quantize(typename F::Bits absb, int eeMax) {
  using B = typename F::Bits;
  const int be = int(absb >> F::kFrac);
  const B m = B(B(absb & F::kFracMask) | (be ? B(B(1) << F::kFrac) : B(0)));
  const int s = (kQuantBits - 1) - F::kFrac - (eeMax - (be ? be : 1));
  if (F::kFrac <= kQuantBits - 1 && s >= 0) return uint32_t(m) << s;
  return -s >= int(sizeof(B) * 8) ? 0u : uint32_t(m >> -s);
}

// ---------------------------------------------------------------------------
// Selection probability p_i = (a*q_i + b) / den, exactly:
//  case 1 (k_b*qmax <= Q, or the at-most variant): p_i = k_b q_i / Q
//  case 2: with eps = (k_b qmax - Q)/(L - k_b), multiplying numerator and
//          denominator of k_b(q_i + eps)/(Q + L eps) by (L - k_b) gives
//          p_i = (q_i (L - k_b) + k_b qmax - Q) / (L qmax - Q), which is 1 at q_i = qmax
//          and sums to k_b over the bucket.
// All terms fit 64 bits (L <= 2^32, q < 2^31); a*q + b <= den in case 2.
// An all-zero bucket has Q = 0 = numerator: nothing is selected.
// ---------------------------------------------------------------------------
struct Decision {
  uint64_t a, b, den;
};

SC_HD Decision makeDecision(bool atMost, uint64_t kb, uint64_t len, uint64_t qmax, uint64_t Q) {
  if (atMost || kb * qmax <= Q) return Decision{kb, 0, Q};
  return Decision{len - kb, kb * qmax - Q, len * qmax - Q};
}

// u / 2^32 < p_i  <=>  u * den < (a q + b) * 2^32, decided without a 128-bit
// product: with den = dh 2^32 + dl, u * den = X 2^32 + (u dl mod 2^32) where
// X = u dh + floor(u dl / 2^32) < 2^64, so the test is X < a q + b. (Per
// element on the GPU: two 32x32 multiplies instead of a 64x64 -> 128.)
SC_HD uint32_t mulhi32(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return uint32_t((uint64_t(a) * b) >> 32);
#endif
}
SC_HD bool chooses(const Decision& d, uint32_t u, uint32_t q) {
  const uint64_t x = uint64_t(u) * uint32_t(d.den >> 32) + mulhi32(u, uint32_t(d.den));
  return x < d.a * q + d.b;
}

// floor(k * pos / n): the output slots before position pos; bucket [s, e) has
// share(e) - share(s) of them. Exact (128-bit) for any sizes.
SC_HD uint64_t shareBefore(uint64_t k, uint64_t pos, uint64_t n) {
  if ((k >> 32) == 0 && (pos >> 32) == 0) return k * pos / n;
  return uint64_t(u128(k) * pos / n);
}

// Threshold method: rank (1-based) of the sample that sets the threshold.
SC_HD uint64_t thresholdRank(uint64_t k, uint64_t samples, uint64_t n) {
  const uint64_t m = uint64_t((u128(k) * samples + n - 1) / n);
  return m < 1 ? 1 : (m > samples ? samples : m);
}

}  // namespace topk
}  // namespace sc
