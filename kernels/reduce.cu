// Element-wise reduce/divide kernels. Memory-bound, so the aim is HBM
// bandwidth: grid-stride loops over 16-byte packs (one 128-bit load per operand
// and one store per pack), a scalar head that brings dst to 16-byte alignment
// and a scalar tail. When the operands' alignments differ modulo 16 the whole
// range takes the scalar path (still coalesced).
#include <algorithm>

#include "core/reduce_op.h"
#include "reduce.cuh"

namespace sc::kern {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;  // enough warps in flight to cover HBM latency

// Splits [0, n) into a scalar head, `packs` 16-byte packs and a scalar tail.
struct Split {
  size_t head, packs;
};

template <typename S>
Split split(const void* d, const void* a, const void* b, size_t n) {
  constexpr size_t V = 16 / sizeof(S);
  const uintptr_t pd = reinterpret_cast<uintptr_t>(d);
  const bool same = (pd - reinterpret_cast<uintptr_t>(a)) % 16 == 0 && (pd - reinterpret_cast<uintptr_t>(b)) % 16 == 0;
  if (!same || pd % sizeof(S) != 0) return {n, 0};
  const size_t head = std::min(n, ((16 - pd % 16) % 16) / sizeof(S));
  return {head, (n - head) / V};
}

template <typename S>
union Pack {
  uint4 u;
  S s[16 / sizeof(S)];
};

// dst_i = f(a_i, b_i) over all elements; Binary = false never reads b (f gets a_i twice).
template <typename S, typename F, bool Binary>
__global__ void __launch_bounds__(kThreads)
    mapKernel(S* d, const S* a, const S* b, size_t n, size_t head, size_t packs, F f) {
  constexpr size_t V = 16 / sizeof(S);
  const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const uint4* pa = reinterpret_cast<const uint4*>(a + head);
  const uint4* pb = reinterpret_cast<const uint4*>(b + head);
  uint4* pd = reinterpret_cast<uint4*>(d + head);
  for (size_t i = tid; i < packs; i += stride) {
    Pack<S> x, y, z;
    x.u = pa[i];
    y.u = Binary ? pb[i] : x.u;
#pragma unroll
    for (int k = 0; k < int(V); ++k) z.s[k] = f(x.s[k], y.s[k]);
    pd[i] = z.u;
  }
  // Head [0, head) and tail [head + packs*V, n): scalar.
  const size_t tail = head + packs * V;
  for (size_t i = tid; i < head + (n - tail); i += stride) {
    const size_t j = i < head ? i : tail + (i - head);
    const S x = a[j];
    d[j] = f(x, Binary ? b[j] : x);
  }
}

template <bool Binary = true, typename S, typename F>
cudaError_t launch(S* d, const S* a, const S* b, size_t n, F f, cudaStream_t stream, int smCount) {
  if (n == 0) return cudaSuccess;
  const Split sp = split<S>(d, a, b, n);
  const size_t work = std::max<size_t>(sp.packs, n - sp.packs * (16 / sizeof(S)));
  const size_t want = (work + kThreads - 1) / kThreads;
  const unsigned blocks =
      unsigned(std::max<size_t>(1, std::min<size_t>(want, size_t(std::max(smCount, 1)) * kBlocksPerSm)));
  mapKernel<S, F, Binary><<<blocks, kThreads, 0, stream>>>(d, a, b, n, sp.head, sp.packs, f);
  return cudaGetLastError();
}

// Device storage type of each scDataType_t.
template <typename G>
cudaError_t byType(scDataType_t dt, G&& g) {
  switch (dt) {
    case scInt8: return g(int8_t{});
    case scUint8: return g(uint8_t{});
    case scInt32: return g(int32_t{});
    case scUint32: return g(uint32_t{});
    case scInt64: return g(int64_t{});
    case scUint64: return g(uint64_t{});
    case scFloat16: return g(Half{});
    case scFloat32: return g(float{});
    case scFloat64: return g(double{});
    case scBfloat16: return g(BFloat16{});
    default: return cudaErrorInvalidValue;
  }
}

// The map kernel's binary form for divide (the second operand is never read).
template <typename S>
struct DivideFirst {
  DivideBy<S> f;
  __device__ __forceinline__ S operator()(S x, S) const { return f(x); }
};

}  // namespace

cudaError_t reduce(void* dst, const void* a, const void* b, size_t n, scDataType_t dt, scRedOp_t op,
                   cudaStream_t stream, int smCount) {
  return byType(dt, [&](auto tag) -> cudaError_t {
    using S = decltype(tag);
    S* d = static_cast<S*>(dst);
    const S* x = static_cast<const S*>(a);
    const S* y = static_cast<const S*>(b);
    if (op < 0 || op >= scNumOps) return cudaErrorInvalidValue;
    return withReduceOp<S>(op, [&](auto f) { return launch(d, x, y, n, f, stream, smCount); });
  });
}

cudaError_t divide(void* buf, size_t n, scDataType_t dt, int divisor, cudaStream_t stream, int smCount) {
  return byType(dt, [&](auto tag) -> cudaError_t {
    using S = decltype(tag);
    S* p = static_cast<S*>(buf);
    return launch<false>(p, p, p, n, DivideFirst<S>{{divisor}}, stream, smCount);
  });
}

}  // namespace sc::kern
