// Exact and threshold (DGC-style) top-k on the GPU, built from CUB device-wide
// primitives (no hand-written sort or scan). Both follow the CPU reference
// (csrc/topk/reference_exact.cpp) step for step:
//   key_i = abs bit pattern of v_i (monotone in |v_i|; NaN > Inf > finite)
//   T     = the k-th largest key:  cub::DeviceTopK when this CCCL has it (any
//           order, any tie choice -- only T and #{key > T} are used from it),
//           otherwise cub::DeviceRadixSort (keys, descending)
//   keep key > T, plus the first k - #{key > T} entries with key == T (index
//   order): two stable cub::DeviceSelect::If passes over the index sequence, so
//   the output is sorted by index and identical to the CPU's whatever the ties.
// Threshold: T' = a sampled order statistic (Philox sample positions, radix
// sort of the sample); candidates key >= T' by DeviceSelect; if more than k,
// the exact procedure above runs on the candidate list only.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#if __has_include(<cub/device/device_topk.cuh>)
#include <cub/device/device_topk.cuh>
#include <cuda/stream_ref>
#define SC_TOPK_DEVICE_TOPK 1  // CCCL >= 3.1; this CCCL (3.0) takes the radix-sort path
#endif

#include "topk/dispatch.h"
#include "topk/select_math.h"
#include "topk_device.cuh"

namespace sc {
namespace topk {
namespace {

using Count = unsigned long long;
constexpr int kThreads = 256;

template <class F>
struct KeyAt {
  const typename F::Bits* src;
  __device__ __forceinline__ typename F::Bits operator()(uint64_t i) const { return F::absBits(src[i]); }
};

// Predicates over indices, reading device-resident cut points.
template <class F>
struct KeyAtLeast {
  KeyAt<F> key;
  const typename F::Bits* t;
  __device__ __forceinline__ bool operator()(uint64_t i) const { return key(i) >= *t; }
};
template <class F>
struct KeyEquals {
  KeyAt<F> key;
  const typename F::Bits* t;
  __device__ __forceinline__ bool operator()(uint64_t i) const { return key(i) == *t; }
};
template <class F>
struct KeepTop {  // key > T, or key == T up to the last admitted tie
  KeyAt<F> key;
  const typename F::Bits* t;
  const uint64_t* lastTie;
  __device__ __forceinline__ bool operator()(uint64_t i) const {
    const typename F::Bits kk = key(i);
    return kk > *t || (kk == *t && i <= *lastTie);
  }
};
template <typename Bits>
struct Above {
  const Bits* t;
  __device__ __forceinline__ Count operator()(Bits k) const { return k > *t ? 1 : 0; }
};

// r = g + r (error feedback's accumulation; the residual becomes acc).
template <class F>
__global__ void accumulateKernel(const typename F::Bits* g, typename F::Bits* r, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    r[i] = F::add(g[i], r[i]);
}

template <class F, class List>
__global__ void gatherKeysKernel(KeyAt<F> key, List list, uint64_t count, typename F::Bits* keys) {
  for (uint64_t j = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; j < count;
       j += uint64_t(gridDim.x) * blockDim.x)
    keys[j] = key(list[j]);
}

template <class F>
__global__ void sampleKeysKernel(KeyAt<F> key, uint64_t n, uint64_t samples, uint64_t seed, uint64_t step,
                                 typename F::Bits* keys) {
  for (uint64_t j = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; j < samples;
       j += uint64_t(gridDim.x) * blockDim.x)
    keys[j] = key(scaleToRange(sampleBits(seed, step, j), n));
}

// The index of the last tie admitted: ties[k - #{key > T} - 1].
__global__ void lastTieKernel(const uint64_t* ties, const Count* greater, uint64_t k, uint64_t* lastTie) {
  *lastTie = ties[k - *greater - 1];
}

// The sparse stream: indices[j] = sel[j], values[j] = src[sel[j]]; with error
// feedback the sent entries of the residual (= src) become 0.
template <class F>
__global__ void emitKernel(const typename F::Bits* src, typename F::Bits* residual, const uint64_t* sel,
                           uint64_t count, void* indices, bool idx64, typename F::Bits* values) {
  for (uint64_t j = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; j < count;
       j += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t i = sel[j];
    if (idx64)
      static_cast<uint64_t*>(indices)[j] = i;
    else
      static_cast<uint32_t*>(indices)[j] = uint32_t(i);
    values[j] = src[i];
    if (residual) residual[i] = 0;
  }
}

// Runs a CUB device algorithm: size query, stream-ordered temp storage, run.
template <class Fn>
void cubRun(Scratch& scratch, Fn fn) {
  size_t bytes = 0;
  SC_CUDA_CHECK(fn(nullptr, bytes));
  void* temp = scratch.get<char>(bytes);
  SC_CUDA_CHECK(fn(temp, bytes));
}

template <class F>
class ExactDevice {
 public:
  using Bits = typename F::Bits;

  ExactDevice(const Params& p, const Buffers& b, const DeviceCall& call)
      : p_(p), b_(b), call_(call), s_(static_cast<cudaStream_t>(call.stream)), scratch_(s_) {}

  Outcome run() {
    Bits* r = static_cast<Bits*>(b_.residual);
    if (r) {
      accumulateKernel<F><<<blocksFor(p_.n, kThreads, 4096), kThreads, 0, s_>>>(static_cast<const Bits*>(b_.grad),
                                                                                 r, p_.n);
      SC_CUDA_CHECK(cudaGetLastError());
    }
    src_ = r ? r : static_cast<const Bits*>(b_.grad);
    key_ = KeyAt<F>{src_};
    Outcome o;
    if (p_.method == scTopkExact) {
      emit(topOfList(thrust::counting_iterator<uint64_t>(0), p_.n), p_.k);
      o.nnz = o.selected = p_.k;
      return o;
    }
    // Threshold: sample, sort the sample, take its m-th largest as the cut.
    Bits* sample = scratch_.get<Bits>(p_.samples);
    Bits* sorted = scratch_.get<Bits>(p_.samples);
    sampleKeysKernel<F><<<blocksFor(p_.samples, kThreads), kThreads, 0, s_>>>(key_, p_.n, p_.samples, p_.seed,
                                                                               p_.step, sample);
    SC_CUDA_CHECK(cudaGetLastError());
    cubRun(scratch_, [&](void* t, size_t& bytes) {
      return cub::DeviceRadixSort::SortKeysDescending(t, bytes, sample, sorted, p_.samples, 0, int(8 * sizeof(Bits)),
                                                      s_);
    });
    const Bits* cut = sorted + (thresholdRank(p_.k, p_.samples, p_.n) - 1);
    uint64_t* cand = scratch_.get<uint64_t>(p_.n);
    Count* numCand = scratch_.get<Count>(1);
    cubRun(scratch_, [&](void* t, size_t& bytes) {
      return cub::DeviceSelect::If(t, bytes, thrust::counting_iterator<uint64_t>(0), cand, numCand,
                                   int64_t(p_.n), KeyAtLeast<F>{key_, cut}, s_);
    });
    Count c = 0;
    readBack(&c, numCand, sizeof c, s_, call_.timeoutSeconds);
    if (c <= p_.k) {
      emit(cand, c);
      o.nnz = o.selected = c;
    } else {
      emit(topOfList(static_cast<const uint64_t*>(cand), c), p_.k);
      o.nnz = o.selected = p_.k;
    }
    return o;
  }

 private:
  // The exact top-k of the entries listed (ascending indices), as ascending indices.
  template <class List>
  const uint64_t* topOfList(List list, uint64_t count) {
    const uint64_t k = p_.k;
    Bits* keys = scratch_.get<Bits>(count);
    gatherKeysKernel<F><<<blocksFor(count, kThreads), kThreads, 0, s_>>>(key_, list, count, keys);
    SC_CUDA_CHECK(cudaGetLastError());
    const Bits* top = largestKeys(keys, count);  // k keys, any order
    Bits* t = scratch_.get<Bits>(1);
    Count* greater = scratch_.get<Count>(1);
    cubRun(scratch_, [&](void* tmp, size_t& bytes) { return cub::DeviceReduce::Min(tmp, bytes, top, t, k, s_); });
    cubRun(scratch_, [&](void* tmp, size_t& bytes) {
      return cub::DeviceReduce::Sum(tmp, bytes, thrust::make_transform_iterator(top, Above<Bits>{t}), greater, k,
                                    s_);
    });
    uint64_t* ties = scratch_.get<uint64_t>(count);
    Count* numTies = scratch_.get<Count>(1);
    cubRun(scratch_, [&](void* tmp, size_t& bytes) {
      return cub::DeviceSelect::If(tmp, bytes, list, ties, numTies, int64_t(count), KeyEquals<F>{key_, t}, s_);
    });
    uint64_t* lastTie = scratch_.get<uint64_t>(1);
    lastTieKernel<<<1, 1, 0, s_>>>(ties, greater, k, lastTie);
    SC_CUDA_CHECK(cudaGetLastError());
    uint64_t* out = scratch_.get<uint64_t>(k);
    Count* numOut = scratch_.get<Count>(1);
    cubRun(scratch_, [&](void* tmp, size_t& bytes) {
      return cub::DeviceSelect::If(tmp, bytes, list, out, numOut, int64_t(count), KeepTop<F>{key_, t, lastTie}, s_);
    });
    return out;
  }

  // k of the largest keys (a multiset equal to the top k), in any order.
  const Bits* largestKeys(const Bits* keys, uint64_t count) {
#ifdef SC_TOPK_DEVICE_TOPK
    // Untested here (CCCL 3.0 has no DeviceTopK): only T = min and #{> T} are
    // taken from this multiset, so its tie choice and order do not matter.
    Bits* top = scratch_.get<Bits>(p_.k);
    const auto env = ::cuda::std::execution::env{
        ::cuda::stream_ref{s_}, ::cuda::execution::require(::cuda::execution::determinism::not_guaranteed,
                                                           ::cuda::execution::output_ordering::unsorted)};
    cubRun(scratch_, [&](void* t, size_t& bytes) {
      return cub::DeviceTopK::MaxKeys(t, bytes, keys, top, int64_t(count), int64_t(p_.k), env);
    });
    return top;
#else
    Bits* sorted = scratch_.get<Bits>(count);
    cubRun(scratch_, [&](void* t, size_t& bytes) {
      return cub::DeviceRadixSort::SortKeysDescending(t, bytes, keys, sorted, count, 0, int(8 * sizeof(Bits)), s_);
    });
    return sorted;  // the first k
#endif
  }

  void emit(const uint64_t* sel, uint64_t count) {
    if (count == 0) return;
    emitKernel<F><<<blocksFor(count, kThreads), kThreads, 0, s_>>>(
        src_, static_cast<Bits*>(b_.residual), sel, count, b_.indices, p_.indexType == scTopkIndexU64,
        static_cast<Bits*>(b_.values));
    SC_CUDA_CHECK(cudaGetLastError());
  }

  const Params& p_;
  const Buffers& b_;
  const DeviceCall& call_;
  cudaStream_t s_;
  Scratch scratch_;
  const Bits* src_ = nullptr;
  KeyAt<F> key_{nullptr};
};

}  // namespace

Outcome exactDevice(const Params& p, const Buffers& b, const DeviceCall& call) {
  DeviceScope scope(call.device);
  return dispatchFmt(p.dtype, [&](auto f) { return ExactDevice<decltype(f)>(p, b, call).run(); });
}

}  // namespace topk
}  // namespace sc
