// Element-wise reduce/divide kernels. Memory-bound, so the aim is HBM
// bandwidth: grid-stride loops over 16-byte packs (one 128-bit load per operand
// and one store per pack), a scalar head that brings dst to 16-byte alignment
// and a scalar tail. When the operands' alignments differ modulo 16 the whole
// range takes the scalar path (still coalesced).
#include <algorithm>

#include "core/dtype.h"
#include "core/reduce_op.h"
#include "transport/local/direct.h"
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

// The direct collective (transport/local/direct.h): job blockIdx.y of the
// spec, grid-stride over its elements. Each element is read from every input
// and written to every output by one thread, so outputs may be the inputs (in
// place). Bit `b` of `packed`: job b's addresses are all 16-byte aligned.
template <typename S, typename F>
__global__ void __launch_bounds__(kThreads) directKernel(DirectSpec s, uint64_t packed, F f) {
  constexpr size_t V = 16 / sizeof(S);
  const int b = int(blockIdx.y);
  const size_t n = s.len[b], off = s.srcOff[b];
  const S* first = static_cast<const S*>(s.in[s.reduce ? b : s.src[b]]) + off;
  const size_t packs = (packed >> b) & 1 ? n / V : 0;
  const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const int r0 = s.allOut ? 0 : b, r1 = s.allOut ? s.P : b + 1;
  for (size_t i = tid; i < packs; i += stride) {
    Pack<S> x;
    x.u = reinterpret_cast<const uint4*>(first)[i];
    if (s.reduce)
      for (int q = 0; q < s.P; ++q) {
        if (q == b) continue;
        Pack<S> y;
        y.u = reinterpret_cast<const uint4*>(static_cast<const S*>(s.in[q]) + off)[i];
#pragma unroll
        for (int k = 0; k < int(V); ++k) x.s[k] = f(x.s[k], y.s[k]);
      }
    for (int r = r0; r < r1; ++r) {
      S* to = static_cast<S*>(s.out[r]) + s.dstOff[b];
      if (s.reduce || to != first) reinterpret_cast<uint4*>(to)[i] = x.u;
    }
  }
  for (size_t i = packs * V + tid; i < n; i += stride) {
    S x = first[i];
    if (s.reduce)
      for (int q = 0; q < s.P; ++q)
        if (q != b) x = f(x, (static_cast<const S*>(s.in[q]) + off)[i]);
    for (int r = r0; r < r1; ++r) {
      S* to = static_cast<S*>(s.out[r]) + s.dstOff[b];
      if (s.reduce || to != first) to[i] = x;
    }
  }
}

template <typename S, typename F>
cudaError_t launchDirect(const DirectSpec& s, F f, cudaStream_t stream, int smCount) {
  constexpr size_t V = 16 / sizeof(S);
  uint64_t packed = 0;
  size_t work = 0;
  auto aligned = [](const void* p, size_t off) { return (reinterpret_cast<uintptr_t>(p) + off * sizeof(S)) % 16 == 0; };
  for (int b = 0; b < s.blocks; ++b) {
    bool ok = true;
    for (int q = 0; q < s.P; ++q) {
      if (s.reduce || q == s.src[b]) ok = ok && aligned(s.in[q], s.srcOff[b]);
      if (s.allOut || q == b) ok = ok && aligned(s.out[q], s.dstOff[b]);
    }
    if (ok) packed |= uint64_t(1) << b;
    work = std::max(work, ok ? s.len[b] / V + s.len[b] % V : s.len[b]);
  }
  if (work == 0) return cudaSuccess;
  // The jobs run side by side (grid y): together about the grid one reduce gets.
  const size_t cap = std::max<size_t>(1, size_t(std::max(smCount, 1)) * kBlocksPerSm / size_t(s.blocks));
  const unsigned x = unsigned(std::min<size_t>((work + kThreads - 1) / kThreads, cap));
  directKernel<S, F><<<dim3(x, unsigned(s.blocks)), kThreads, 0, stream>>>(s, packed, f);
  return cudaGetLastError();
}

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

cudaError_t direct(const DirectSpec& spec, cudaStream_t stream, int smCount) {
  if (spec.blocks < 1 || spec.blocks > spec.P || spec.P > kDirectMaxRanks) return cudaErrorInvalidValue;
  if (!spec.reduce) {
    // A copy is bytes whatever the type: one instantiation serves them all.
    DirectSpec s = spec;
    const size_t esz = dtypeSize(spec.dt);
    for (int b = 0; b < s.blocks; ++b) {
      s.srcOff[b] *= esz;
      s.dstOff[b] *= esz;
      s.len[b] *= esz;
    }
    return launchDirect<uint8_t>(s, ReduceOp<uint8_t, scSum>{}, stream, smCount);
  }
  if (spec.op < 0 || spec.op >= scNumOps) return cudaErrorInvalidValue;
  return byType(spec.dt, [&](auto tag) -> cudaError_t {
    using S = decltype(tag);
    return withReduceOp<S>(spec.op, [&](auto f) { return launchDirect<S>(spec, f, stream, smCount); });
  });
}

}  // namespace sc::kern
