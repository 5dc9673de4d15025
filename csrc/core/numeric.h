// The element arithmetic that runs on both sides: bit casts, the 16-bit float
// storage types and conversions, and avg's division, written once for the host (the CPU backend,
// the top-k reference, dtype.h) and the device (the reduce, sparse and top-k
// kernels).
// CPU tests of these functions therefore test the kernels' arithmetic too.
//
// Conversions round to nearest even and are integer-only, so no rounding mode,
// flush-to-zero setting or contraction can make the host and the device
// disagree. NaNs stay NaNs with their sign, quieted, and keep as much of their
// payload as the narrower format holds (float16: the top 10 payload bits;
// bfloat16: the top 7). Infinities and subnormals convert exactly where
// representable.
//
// On the device, halfToFloat/floatToHalf use the converter instructions for
// non-NaN values (one instruction instead of a dozen: the float16 reduce
// kernel was compute-bound with the integer version); the instructions round
// to nearest even as the integer code does, and NaNs take the integer path,
// so both give the same bits on every input (the GPU backend test checks
// this against the CPU backend on random bit patterns).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#define SC_HD __host__ __device__ __forceinline__
#else
#define SC_HD inline
#endif

namespace sc {

// Storage of the 16-bit float types (computed in float32: core/reduce_op.h).
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

}  // namespace sc

namespace sc::num {

// --- bit casts ---------------------------------------------------------------
// memcpy, not a union or a pointer cast (both undefined behaviour in C++); on
// the device it compiles to a register move like the __float_as_uint family.
template <typename To, typename From>
SC_HD To bitCast(From x) {
  static_assert(sizeof(To) == sizeof(From), "a bit cast keeps the size");
  To y;
  std::memcpy(&y, &x, sizeof y);
  return y;
}
SC_HD float asF32(uint32_t b) { return bitCast<float>(b); }
SC_HD uint32_t bitsOf(float f) { return bitCast<uint32_t>(f); }
SC_HD double asF64(uint64_t b) { return bitCast<double>(b); }
SC_HD uint64_t bitsOf(double f) { return bitCast<uint64_t>(f); }

// --- float16 ---------------------------------------------------------------------
// Exact widening (every float16 is a float32).
SC_HD uint32_t halfToF32Bits(uint16_t h) {
  const uint32_t s = uint32_t(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  if (e == 31) return s | 0x7f800000u | (m << 13);
  if (e != 0) return s | ((e + 112) << 23) | (m << 13);
  if (m == 0) return s;
  e = 113;  // subnormal: normalise the mantissa
  while (!(m & 0x400u)) {
    m <<= 1;
    --e;
  }
  return s | (e << 23) | ((m & 0x3ffu) << 13);
}

// Round to nearest even; >= 65520 in magnitude becomes Inf, below 2^-25 zero.
SC_HD uint16_t f32BitsToHalf(uint32_t x) {
  const uint16_t s = uint16_t((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return uint16_t(s | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN, quieted
  if (a >= 0x477ff000u) return uint16_t(s | 0x7c00u);                        // Inf, or rounds to it
  if (a < 0x38800000u) {                                                     // below 2^-14: subnormal or 0
    if (a < 0x33000000u) return s;                                           // below 2^-25
    const uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // value / 2^-24 = m * 2^(e - 126)
    const uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    return uint16_t(s | (q + (rem > half || (rem == half && (q & 1)))));
  }
  const uint32_t r = a - 0x38000000u;  // rebias the exponent (127 -> 15)
  const uint32_t q = r >> 13, rem = r & 0x1fffu;
  return uint16_t(s | (q + (rem > 0x1000u || (rem == 0x1000u && (q & 1)))));
}

SC_HD float halfToFloat(uint16_t h) {
#if defined(__CUDA_ARCH__)
  if ((h & 0x7fffu) <= 0x7c00u) return __half2float(__ushort_as_half(h));
#endif
  return asF32(halfToF32Bits(h));
}

SC_HD uint16_t floatToHalf(float f) {
#if defined(__CUDA_ARCH__)
  if ((__float_as_uint(f) & 0x7fffffffu) <= 0x7f800000u) return __half_as_ushort(__float2half_rn(f));
#endif
  return f32BitsToHalf(bitsOf(f));
}

// --- bfloat16 --------------------------------------------------------------------
SC_HD uint32_t bf16ToF32Bits(uint16_t b) { return uint32_t(b) << 16; }

SC_HD uint16_t f32BitsToBf16(uint32_t x) {
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // NaN, quieted
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

SC_HD float bf16ToFloat(uint16_t b) { return asF32(bf16ToF32Bits(b)); }
SC_HD uint16_t floatToBf16(float f) { return f32BitsToBf16(bitsOf(f)); }

// --- avg ---------------------------------------------------------------------------
// x / d, d >= 1 the rank count, for integer and native floating types (16-bit
// floats divide in float32 where their storage type is known). Integers
// truncate toward zero and divide in 64 bits: T(d) would wrap for 8-bit types
// (int8(128) is negative, uint8(256) is zero).
template <typename T>
SC_HD T divideByCount(T x, int d) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return T(int64_t(x) / int64_t(d));
  else if constexpr (std::is_integral_v<T>) return T(uint64_t(x) / uint64_t(d));
  else return T(x / T(d));
}

}  // namespace sc::num
