// Element-wise device reductions: the CUDA side of the compute backend.
//
// Three parts, usable from plain C++ (g++) and from CUDA (.cu) files:
//  1. SC_CUDA_CHECK: every CUDA runtime call's status becomes an sc::Error with
//     code scCudaError, cudaGetErrorString and the caller's file:line;
//     DeviceScope: a device made current for a scope, the caller's restored.
//  2. Host launchers (sc::kern::reduce / divide): enqueue a grid-stride,
//     16-byte-vectorised kernel on a stream; the caller has set the device.
//  3. (CUDA only) the device element operators, sc::dev::Op<T, op>, so that other
//     kernels (sparse, top-k) combine values with exactly the same semantics.
//
// Semantics are those of the CPU backend (backend/reduce_ops.h), bit for bit:
// signed integers wrap (combined in their unsigned type); float16/bfloat16 are
// widened to float32, combined, and rounded once to nearest even, with the
// same rounding as the host (core/numeric.h; NaN/Inf/subnormals included);
// max/min select one operand unchanged (`a < b ? b : a`). The one thing that
// may differ is the payload of a NaN result of arithmetic (x86 keeps a NaN
// operand's payload and has its own default NaN; the GPU returns its canonical
// NaN); a NaN operand of max/min passes through intact.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "sparcoll/sparcoll.h"

namespace sc {

// Throws sc::Error(scCudaError) naming the failed call; clears the (non-sticky)
// error so later calls on the thread start clean.
inline void cudaCheck(cudaError_t rc, const char* what, const char* file, int line) {
  if (rc == cudaSuccess) return;
  (void)cudaGetLastError();
  throw Error(scCudaError, cat(what, " failed: ", cudaGetErrorName(rc), ": ", cudaGetErrorString(rc)), file, line);
}

#define SC_CUDA_CHECK(expr) ::sc::cudaCheck((expr), #expr, __FILE__, __LINE__)

// Makes `device` current for the scope and restores the caller's device after:
// ranks may be threads, and a library call must not move its caller to
// another GPU as a side effect.
class DeviceScope {
 public:
  explicit DeviceScope(int device) : device_(device) {
    SC_CUDA_CHECK(cudaGetDevice(&prev_));
    if (prev_ != device_) SC_CUDA_CHECK(cudaSetDevice(device_));
  }
  ~DeviceScope() {
    if (prev_ != device_ && cudaSetDevice(prev_) != cudaSuccess) (void)cudaGetLastError();
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int device_, prev_ = -1;
};

}  // namespace sc

namespace sc::kern {

// dst[i] = a[i] op b[i], i < n, enqueued on `stream` of the current device.
// dst may alias a or b exactly (not partially). avg reduces as sum. Pointers of
// any alignment: the kernel peels a head so the body uses 16-byte accesses
// whenever dst, a and b share their alignment modulo 16. `smCount` sizes the
// grid (multiprocessors of the current device). Returns the launch status.
cudaError_t reduce(void* dst, const void* a, const void* b, size_t n, scDataType_t dt, scRedOp_t op,
                   cudaStream_t stream, int smCount);

// buf[i] = buf[i] / divisor (avg's final step; integers truncate toward zero,
// float16/bfloat16 divide in float32 and round once). Same launch rules.
cudaError_t divide(void* buf, size_t n, scDataType_t dt, int divisor, cudaStream_t stream, int smCount);

}  // namespace sc::kern

#ifdef __CUDACC__
#include "core/numeric.h"

namespace sc::dev {

// --- 16-bit float storage types (conversions: core/numeric.h) -------------
struct F16 { uint16_t bits; };
struct BF16 { uint16_t bits; };

// --- element operators ------------------------------------------------------
template <typename T> struct Unsigned { using type = T; };
template <> struct Unsigned<int8_t> { using type = uint8_t; };
template <> struct Unsigned<int32_t> { using type = uint32_t; };
template <> struct Unsigned<int64_t> { using type = uint64_t; };

// Storage type T, operator op (scAvg combines as scSum).
template <typename T, int op>
struct Op {
  using U = typename Unsigned<T>::type;
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (op == scSum || op == scAvg) return T(U(a) + U(b));
    else if constexpr (op == scProd) return T(U(a) * U(b));
    else if constexpr (op == scMax) return a < b ? b : a;
    else return b < a ? b : a;
  }
};

// Widening/rounding of the 16-bit float storage types.
template <typename T> struct Conv;
template <> struct Conv<F16> {
  static __device__ __forceinline__ float in(F16 v) { return num::halfToFloat(v.bits); }
  static __device__ __forceinline__ F16 out(float f) { return {num::floatToHalf(f)}; }
};
template <> struct Conv<BF16> {
  static __device__ __forceinline__ float in(BF16 v) { return num::bf16ToFloat(v.bits); }
  static __device__ __forceinline__ BF16 out(float f) { return {num::floatToBf16(f)}; }
};

template <typename T, int op>
struct Op16 {
  using C = Conv<T>;
  __device__ __forceinline__ T operator()(T a, T b) const {
    const float x = C::in(a), y = C::in(b);
    if constexpr (op == scSum || op == scAvg) return C::out(x + y);
    else if constexpr (op == scProd) return C::out(x * y);
    else if constexpr (op == scMax) return x < y ? b : a;
    else return y < x ? b : a;
  }
};
template <int op> struct Op<F16, op> : Op16<F16, op> {};
template <int op> struct Op<BF16, op> : Op16<BF16, op> {};

// x / d as the CPU backend computes it (Arith<T>::div): one definition.
template <typename T>
__device__ __forceinline__ T divide(T x, int d) { return num::divideByCount(x, d); }
template <>
__device__ __forceinline__ F16 divide<F16>(F16 x, int d) { return Conv<F16>::out(Conv<F16>::in(x) / float(d)); }
template <>
__device__ __forceinline__ BF16 divide<BF16>(BF16 x, int d) { return Conv<BF16>::out(Conv<BF16>::in(x) / float(d)); }

}  // namespace sc::dev
#endif  // __CUDACC__
