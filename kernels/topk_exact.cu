// Exact and threshold (DGC-style) top-k on the GPU. Both follow the CPU
// reference (csrc/topk/reference_exact.cpp) step for step:
//   key_i   = abs bit pattern of v_i (monotone in |v_i|; NaN > Inf > finite)
//   T       = the k-th largest key, by the MSB-first radix select of
//             topk/radix_select.h (kernels/topk_radix.cuh): 11-bit digits, one
//             histogram pass over the keys per digit, state in device memory
//   lastTie = only when more keys equal T than are admitted: the index of the
//             last admitted one, by a second radix select over index digits
//   keep key > T, or key == T and i <= lastTie: one stable cub::DeviceSelect::If
//   over the index sequence, straight into the output indices, so the output
//   is sorted by index and identical to the CPU's whatever the ties.
// Nothing waits for the host; the output count is k by construction.
// cub::DeviceTopK (CCCL 3.1 and later) is not used where it exists: it writes k
// keys that would still need the tie select and this select pass, while the
// radix select yields T, #{key > T} and the ties directly, with the CPU's
// arithmetic (one path, tested against the CPU reference everywhere).
//
// Threshold: T' = the m-th largest sampled key (the same radix select over the
// Philox sample positions, no sample array); the candidates key >= T' by one
// DeviceSelect into a list bounded by candidateBound (entries past it are
// dropped, the count is not); the count is read back -- the method's one wait,
// which its count needs anyway. Then: count <= k: the candidates are the
// output; count <= the bound: the exact top-k of the list (radix select over
// the listed entries); otherwise the exact top-k of the whole vector, which is
// the same selection (every key of the top k is a candidate) without the list.
//
// Memory traffic per element, float32 keys (4 bytes), exact, without feedback:
//   3 histogram passes x 4n + the select's 4n = 16n bytes, plus O(k) output;
//   ties straddling T add up to ceil(log2 n / 11) passes of 4n (12n for n up
//   to 2^33); 16-bit keys 2 + 1 passes of 2n (6n), 64-bit 6 + 1 of 8n (56n).
// The previous version radix-sorted every gathered key: gather 4n + 4n, the
// sort's histogram 4n and 4 digit passes of 4n + 4n, the tie select 4n (+ up
// to 8n of written ties), the final select 4n: about 50n for float32.
// Scratch: a 16 KiB histogram, the state, and DeviceSelect's tile status (a few
// bytes per tile of a few thousand elements); before, about 20n bytes (keys,
// sorted keys, the sort's alternate buffer, the tie list). Threshold adds the
// candidate list: at most candidateBound(k, n) indices, O(k), where it could
// hold n before; the sample costs 3 passes of `samples` random reads.
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>

#include "topk/dispatch.h"
#include "topk/radix_select.h"
#include "topk/select_math.h"
#include "topk_device.cuh"
#include "topk_radix.cuh"

namespace sc {
namespace topk {
namespace {

using Count = unsigned long long;
constexpr int kThreads = 256;

// The threshold's candidate list holds at most this many indices: twice the
// expected count (the sampled cut puts about k keys above it, within a few
// percent for the default sample), plus 64 Ki for small k, whose cut comes from
// the few top samples and scatters more. Past it the whole vector is rescanned
// (exact), which only ties piled up at the cut make likely.
uint64_t candidateBound(uint64_t k, uint64_t n) {
  const uint64_t slack = uint64_t(1) << 16;
  return k >= n / 2 ? n : (2 * k + slack < n ? 2 * k + slack : n);
}

// Sources of keys: element j of the multiset, its key and its vector index.
template <class F>
struct Whole {
  const typename F::Bits* src;
  __device__ __forceinline__ uint64_t key(uint64_t j) const { return F::absBits(src[j]); }
  __device__ __forceinline__ uint64_t index(uint64_t j) const { return j; }
};
template <class F, class Idx>
struct Listed {
  const typename F::Bits* src;
  const Idx* list;
  __device__ __forceinline__ uint64_t key(uint64_t j) const { return F::absBits(src[list[j]]); }
  __device__ __forceinline__ uint64_t index(uint64_t j) const { return list[j]; }
};
template <class F>
struct Sampled {  // the threshold's sample: keys at Philox positions (repeats possible)
  const typename F::Bits* src;
  uint64_t n, seed, step;
  __device__ __forceinline__ uint64_t key(uint64_t j) const {
    return F::absBits(src[scaleToRange(sampleBits(seed, step, j), n)]);
  }
};

// Views for radixHistKernel: the keys themselves, or tieKey of the keys equal to T.
template <class Src>
struct KeyView {
  Src src;
  __device__ __forceinline__ bool operator()(uint64_t j, const SelectState&, uint64_t& rk) const {
    rk = src.key(j);
    return true;
  }
};
template <class Src>
struct TieView {
  Src src;
  uint64_t n;
  __device__ __forceinline__ bool operator()(uint64_t j, const SelectState& s, uint64_t& rk) const {
    if (src.key(j) != s.key.prefix) return false;
    rk = tieKey(src.index(j), n);
    return true;
  }
};

// Predicates over indices, reading the device-resident state.
template <class F, class Idx>
struct KeyAtLeast {  // key >= the cut
  const typename F::Bits* src;
  const SelectState* cut;
  __device__ __forceinline__ bool operator()(Idx i) const { return F::absBits(src[i]) >= cut->key.prefix; }
};
template <class F, class Idx>
struct KeepTop {  // key > T, or key == T up to the last admitted tie
  const typename F::Bits* src;
  const SelectState* st;
  __device__ __forceinline__ bool operator()(Idx i) const {
    const uint64_t k = F::absBits(src[i]), t = st->key.prefix;
    return k > t || (k == t && i <= st->lastTie);
  }
};

// Stores selected candidates up to the bound and drops the rest (the select
// still counts them).
template <class Idx>
struct BoundedStore {
  Idx* list;
  uint64_t bound;
  __device__ __forceinline__ void operator()(ptrdiff_t pos, Idx i) const {
    if (uint64_t(pos) < bound) list[pos] = i;
  }
};

// r = g + r (error feedback's accumulation; the residual becomes acc).
template <class F>
__global__ void accumulateKernel(const typename F::Bits* g, typename F::Bits* r, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    r[i] = F::add(g[i], r[i]);
}

// The sparse stream: values[j] = src[indices[j]] (indices[j] = list[j] first
// when a list is given); with error feedback the sent entries of the residual
// (= src) become 0.
template <class F, class Idx>
__global__ void emitKernel(const typename F::Bits* src, typename F::Bits* residual, const Idx* list, Idx* indices,
                           uint64_t count, typename F::Bits* values) {
  for (uint64_t j = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; j < count;
       j += uint64_t(gridDim.x) * blockDim.x) {
    Idx i;
    if (list) {
      i = list[j];
      indices[j] = i;
    } else {
      i = indices[j];
    }
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
  static constexpr int kWidth = int(8 * sizeof(Bits));

  ExactDevice(const Params& p, const Buffers& b, const DeviceCall& call)
      : p_(p), b_(b), call_(call), s_(static_cast<cudaStream_t>(call.stream)), scratch_(s_), radix_(scratch_, s_) {}

  Outcome run() {
    Bits* r = static_cast<Bits*>(b_.residual);
    if (r) {
      accumulateKernel<F><<<blocksFor(p_.n, kThreads, 4096), kThreads, 0, s_>>>(static_cast<const Bits*>(b_.grad),
                                                                                 r, p_.n);
      SC_CUDA_CHECK(cudaGetLastError());
    }
    src_ = r ? r : static_cast<const Bits*>(b_.grad);
    // uint32 indices only for n <= 2^32 (checked by the API): every index fits.
    return p_.indexType == scTopkIndexU64 ? runWith<uint64_t>() : runWith<uint32_t>();
  }

 private:
  template <class Idx>
  Outcome runWith() {
    Outcome o;
    if (p_.method == scTopkExact) {
      topOfWhole<Idx>();
      o.nnz = o.selected = p_.k;
      return o;
    }
    // Threshold: the cut is the m-th largest sampled key.
    SelectState* cut = scratch_.get<SelectState>(1);
    radix_.keys(KeyView<Sampled<F>>{{src_, p_.n, p_.seed, p_.step}}, p_.samples, kWidth,
                thresholdRank(p_.k, p_.samples, p_.n), cut);
    const uint64_t bound = candidateBound(p_.k, p_.n);
    Idx* cand = scratch_.get<Idx>(bound);
    Count* numCand = scratch_.get<Count>(1);
    cubRun(scratch_, [&](void* t, size_t& bytes) {
      return cub::DeviceSelect::If(t, bytes, thrust::counting_iterator<Idx>(0),
                                   thrust::tabulate_output_iterator<BoundedStore<Idx>>(BoundedStore<Idx>{cand, bound}),
                                   numCand, int64_t(p_.n), KeyAtLeast<F, Idx>{src_, cut}, s_);
    });
    Count c = 0;
    readBack(&c, numCand, sizeof c, s_, call_.timeoutSeconds);
    if (c <= p_.k) {
      emit<Idx>(cand, c);
      o.nnz = o.selected = c;
      return o;
    }
    if (c <= bound)
      topOfList<Idx>(cand, c);
    else
      topOfWhole<Idx>();
    o.nnz = o.selected = p_.k;
    return o;
  }

  // The exact top-k of the whole vector, into the output.
  template <class Idx>
  void topOfWhole() {
    SelectState* st = scratch_.get<SelectState>(1);
    const Whole<F> whole{src_};
    radix_.keys(KeyView<Whole<F>>{whole}, p_.n, kWidth, p_.k, st);
    radix_.ties(TieView<Whole<F>>{whole, p_.n}, p_.n, p_.n, st);
    keepTop<Idx>(thrust::counting_iterator<Idx>(0), p_.n, st);
  }

  // The exact top-k of the `count` listed entries (ascending indices, all the
  // keys >= some cut, count > k), into the output.
  template <class Idx>
  void topOfList(const Idx* list, uint64_t count) {
    SelectState* st = scratch_.get<SelectState>(1);
    const Listed<F, Idx> listed{src_, list};
    radix_.keys(KeyView<Listed<F, Idx>>{listed}, count, kWidth, p_.k, st);
    radix_.ties(TieView<Listed<F, Idx>>{listed, p_.n}, count, p_.n, st);
    keepTop<Idx>(list, count, st);
  }

  // The k entries of `in` (ascending indices) that KeepTop admits, written to
  // the output indices in order, then their values.
  template <class Idx, class In>
  void keepTop(In in, uint64_t count, const SelectState* st) {
    Idx* out = static_cast<Idx*>(b_.indices);
    Count* numOut = scratch_.get<Count>(1);
    cubRun(scratch_, [&](void* t, size_t& bytes) {
      return cub::DeviceSelect::If(t, bytes, in, out, numOut, int64_t(count), KeepTop<F, Idx>{src_, st}, s_);
    });
    emit<Idx>(nullptr, p_.k);
  }

  template <class Idx>
  void emit(const Idx* list, uint64_t count) {
    if (count == 0) return;
    emitKernel<F, Idx><<<blocksFor(count, kThreads), kThreads, 0, s_>>>(
        src_, static_cast<Bits*>(b_.residual), list, static_cast<Idx*>(b_.indices), count,
        static_cast<Bits*>(b_.values));
    SC_CUDA_CHECK(cudaGetLastError());
  }

  const Params& p_;
  const Buffers& b_;
  const DeviceCall& call_;
  cudaStream_t s_;
  Scratch scratch_;
  RadixRunner radix_;
  const Bits* src_ = nullptr;
};

}  // namespace

Outcome exactDevice(const Params& p, const Buffers& b, const DeviceCall& call) {
  DeviceScope scope(call.device);
  return dispatchFmt(p.dtype, [&](auto f) { return ExactDevice<decltype(f)>(p, b, call).run(); });
}

}  // namespace topk
}  // namespace sc
