// Bracket, exact and threshold top-k on the GPU: the sampled selection of
// csrc/topk/select_plan.h, step for step as the CPU reference
// (csrc/topk/reference_select.cpp) runs it, with every decision taken on the
// device so that no call waits for the host:
//   sampleKernel   the s sampled keys (of acc = g + r with error feedback)
//                  into scratch; the cuts are two radix selects over them
//                  (topk_radix.cuh), cutsKernel turns them into (lo, hi);
//   passKernel     the one pass over the vector: 16-byte loads (and the
//                  residual's store, r := acc), count key >= hi, and a stable
//                  compaction of (index, value) of every key >= lo into the
//                  candidate list, up to its bound (decoupled look-back over
//                  tiles; a grid of one wave whose blocks take the tiles in
//                  order);
//   decideKernel   pickAfterPass from the counts: it marks which of the two
//                  selects below run (the others' passes return at once);
//   list select    the rank-th largest key among the listed candidates of
//                  the band (or above hi), and the last admitted tie;
//   fallback       the exact select over the whole vector (the list
//                  overflowed, or exact's sample cut too high);
//   finishKernel   T, lastTie and the call's counts (nnz) in device memory;
//   keep           from the list (cub::DeviceSelect over its bound) or, after
//                  a fallback, from the vector (passKernel's compaction): the
//                  kept entries in index order, the residual's sent entries 0.
// Memory traffic per element in the common path, float32 without feedback:
// one read of the vector (4n bytes) plus the sample (s random reads) and
// O(k) for the list and the output; with feedback 12n (read g and r, write r).
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>

#include "topk/dispatch.h"
#include "topk/radix_select.h"
#include "topk/select_plan.h"
#include "topk_device.cuh"
#include "topk_radix.cuh"

namespace sc {
namespace topk {
namespace {

constexpr int kThreads = 256;

// The call's decisions, in device memory.
struct CallState {
  Cuts cuts;
  Count candidates, high;  // the pass's counts: keys >= lo (listed or not), keys >= hi
  Pick pick;
  uint64_t T, lastTie;  // the keep rule
  int nextTile[2];      // the tiles vectorKernel's blocks take next: pass, keep
};

template <class F>
using BitsOf = typename F::Bits;

// r = g + r (error feedback's accumulation) where no pass does it.
template <class F>
__global__ void accumulateKernel(const BitsOf<F>* g, BitsOf<F>* r, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    r[i] = F::add(g[i], r[i]);
}

template <class F>
__global__ void sampleKernel(const BitsOf<F>* g, const BitsOf<F>* r, uint64_t n, uint64_t seed, uint64_t step,
                             uint64_t samples, BitsOf<F>* keys) {
  for (uint64_t j = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; j < samples;
       j += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t i = scaleToRange(sampleBits(seed, step, j), n);
    keys[j] = F::absBits(r ? F::add(g[i], r[i]) : g[i]);
  }
}

__global__ void cutsKernel(SelectPlan plan, const SelectState* lo, const SelectState* hi, CallState* cs) {
  cs->cuts = makeCuts(plan, lo->key.prefix, hi ? hi->key.prefix : 0);
}

__global__ void decideKernel(scTopkMethod_t method, uint64_t k, uint64_t n, uint64_t bound, bool direct, CallState* cs,
                             SelectState* listed, SelectState* whole) {
  const Pick pk = direct ? Pick{kPickFallback, k, 0} : pickAfterPass(method, k, cs->candidates, cs->high, bound);
  cs->pick = pk;
  const bool selects = pk.mode == kPickBand || pk.mode == kPickHigh;
  radixInit(listed, selects ? pk.rank : 0, selects ? pk.count : 0, !selects);
  radixInit(whole, k, n, pk.mode != kPickFallback);
}

__global__ void finishKernel(uint64_t k, uint64_t n, uint64_t bound, uint64_t minKey, CallState* cs,
                             const SelectState* listed, const SelectState* whole, Counts* counts) {
  const Pick pk = cs->pick;
  uint64_t T = 0, last = n - 1, nnz = 0;
  if (pk.mode == kPickAll) {
    nnz = cs->candidates < bound ? cs->candidates : bound;
  } else if (pk.mode == kPickFallback) {
    T = whole->key.prefix;
    last = whole->lastTie;
    nnz = T >= minKey ? k : whole->key.greater;  // bracket: the nonzero keys when fewer than k
  } else {
    T = listed->key.prefix;
    last = listed->lastTie;
    nnz = k;
  }
  cs->T = T;
  cs->lastTie = last;
  *counts = Counts{nnz, nnz, 0};
}

// --- views of the radix selects ---------------------------------------------
template <class F>
struct SampleView {  // the sampled keys
  const BitsOf<F>* keys;
  __device__ __forceinline__ bool operator()(uint64_t j, const SelectState&, uint64_t& rk) const {
    rk = keys[j];
    return true;
  }
};
template <class F>
struct WholeView {  // the keys of the vector, or (tie) the indices of those equal to T
  const BitsOf<F>* src;
  uint64_t n;
  bool tie;
  __device__ __forceinline__ bool operator()(uint64_t j, const SelectState& s, uint64_t& rk) const {
    const uint64_t key = F::absBits(src[j]);
    if (!tie) return rk = key, true;
    if (key != s.key.prefix) return false;
    rk = tieKey(j, n);
    return true;
  }
};
template <class F, class Idx>
struct ListView {  // the listed candidates in the select's multiset (band or high)
  const Idx* idx;
  const BitsOf<F>* val;
  const CallState* cs;
  uint64_t bound, n;
  bool tie;
  __device__ __forceinline__ bool operator()(uint64_t j, const SelectState& s, uint64_t& rk) const {
    if (j >= cs->candidates || j >= bound) return false;
    const uint64_t key = F::absBits(val[j]);
    if (!inPick(cs->pick, key, cs->cuts.hi)) return false;
    if (!tie) return rk = key, true;
    if (key != s.key.prefix) return false;
    rk = tieKey(idx[j], n);
    return true;
  }
};

// --- the one pass, and the fallback's keep over the vector --------------------
template <class F, class Idx>
struct VecArgs {
  const BitsOf<F>* g;
  BitsOf<F>* r;  // error feedback's residual, or null
  uint64_t n, bound, minKey;
  Idx* outIdx;        // pass: the list; keep: the output indices
  BitsOf<F>* outVal;  // pass: the list; keep: the output values
  CallState* cs;
};

// A thread's run of ITEMS elements from `first` (valid of them exist): acc,
// read with 16-byte loads when whole and aligned.
template <class F, int ITEMS>
__device__ __forceinline__ void loadAcc(const BitsOf<F>* g, const BitsOf<F>* r, uint64_t first, int valid,
                                        BitsOf<F> (&acc)[ITEMS]) {
  using IO = VecIO<BitsOf<F>, ITEMS>;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) acc[j] = 0;
  if (valid >= ITEMS && IO::aligned(g + first) && (!r || IO::aligned(r + first))) {
    IO::load(g + first, acc);
    if (r) {
      BitsOf<F> x[ITEMS];
      IO::load(r + first, x);
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) acc[j] = F::add(acc[j], x[j]);
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < ITEMS; ++j)
    if (j < valid) acc[j] = r ? F::add(g[first + j], r[first + j]) : g[first + j];
}

template <class F, int ITEMS>
__device__ __forceinline__ void storeRun(BitsOf<F>* p, uint64_t first, int valid, const BitsOf<F> (&x)[ITEMS]) {
  using IO = VecIO<BitsOf<F>, ITEMS>;
  if (valid >= ITEMS && IO::aligned(p + first)) return IO::store(p + first, x);
#pragma unroll
  for (int j = 0; j < ITEMS; ++j)
    if (j < valid) p[first + j] = x[j];
}

struct TileTemp {
  union {
    typename cub::BlockScan<uint32_t, kThreads>::TempStorage scan;
    typename cub::BlockReduce<Count, kThreads>::TempStorage reduce;
  } u;
  LookBackStorage look;
  int tile;
};

// kPass: the pass (flags key >= lo, counts key >= hi, writes r := acc, lists
// into the bounded candidate list, the last tile writes the candidate count).
// Otherwise the fallback's keep over the vector (src = r after the pass, or g;
// flags by the keep rule, writes the output and zeroes the residual's sent
// entries); every block returns at once unless the call fell back.
// Blocks take tiles in order from a counter, not by their index: a tile's
// look-back then waits only for tiles that running blocks hold, whichever of
// the grid's blocks the GPU has made resident (others' kernels may hold SMs).
template <class F, class Idx, int ITEMS, bool kPass>
__global__ void __launch_bounds__(kThreads) vectorKernel(VecArgs<F, Idx> a, TileState tiles, int numTiles) {
  using Bits = BitsOf<F>;
  constexpr uint64_t kTile = uint64_t(kThreads) * ITEMS;
  __shared__ TileTemp tmp;
  CallState* cs = a.cs;
  if (!kPass && cs->pick.mode != kPickFallback) return;
  const uint64_t lo = kPass ? cs->cuts.lo : 0, hi = kPass ? cs->cuts.hi : 0;
  const uint64_t T = kPass ? 0 : cs->T, last = kPass ? 0 : cs->lastTie;
  Count high = 0;
  for (;;) {
    if (threadIdx.x == 0) tmp.tile = atomicAdd(&cs->nextTile[kPass ? 0 : 1], 1);
    __syncthreads();
    const int t = tmp.tile;
    if (t >= numTiles) break;
    const uint64_t first = uint64_t(t) * kTile + uint64_t(threadIdx.x) * ITEMS;
    const int valid = first < a.n ? int(a.n - first < uint64_t(ITEMS) ? a.n - first : ITEMS) : 0;
    Bits acc[ITEMS];
    if (kPass) {
      loadAcc<F, ITEMS>(a.g, a.r, first, valid, acc);
      if (a.r) storeRun<F, ITEMS>(a.r, first, valid, acc);
    } else {
      loadAcc<F, ITEMS>(a.r ? a.r : a.g, nullptr, first, valid, acc);
    }
    bool in[ITEMS];
    uint32_t mine = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const uint64_t key = F::absBits(acc[j]);
      if constexpr (kPass) {
        in[j] = j < valid && key >= lo;
        high += j < valid && key >= hi;
      } else {
        in[j] = j < valid && keeps(key, first + j, T, last, a.minKey);
      }
      mine += in[j];
    }
    uint32_t before = 0, count = 0;
    cub::BlockScan<uint32_t, kThreads>(tmp.u.scan).ExclusiveSum(mine, before, count);
    const Count base = tileBase(tiles, tmp.look, t, count);
    Count pos = base + before;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      if (!in[j]) continue;
      if (!kPass || pos < a.bound) {
        a.outIdx[pos] = Idx(first + j);
        a.outVal[pos] = acc[j];
        if (!kPass && a.r) a.r[first + j] = 0;
      }
      ++pos;
    }
    if (kPass && t == numTiles - 1 && threadIdx.x == 0) cs->candidates = base + count;
    __syncthreads();  // the tile number, the scan and look-back storage serve the next tile
  }
  if (!kPass) return;
  const Count sum = cub::BlockReduce<Count, kThreads>(tmp.u.reduce).Sum(high);
  if (threadIdx.x == 0 && sum) atomicAdd(&cs->high, sum);
}

// --- the keep over the list -------------------------------------------------
template <class F, class Idx>
struct ListKeep {
  const Idx* idx;
  const BitsOf<F>* val;
  const CallState* cs;
  uint64_t bound, minKey;
  __device__ __forceinline__ bool operator()(Count j) const {
    if (cs->pick.mode == kPickFallback || j >= cs->candidates || j >= bound) return false;
    return keeps(F::absBits(val[j]), idx[j], cs->T, cs->lastTie, minKey);
  }
};
template <class F, class Idx>
struct EmitListed {
  const Idx* idx;
  const BitsOf<F>* val;
  Idx* outIdx;
  BitsOf<F>* outVal;
  BitsOf<F>* residual;
  __device__ __forceinline__ void operator()(ptrdiff_t pos, Count j) const {
    const Idx i = idx[j];
    outIdx[pos] = i;
    outVal[pos] = val[j];
    if (residual) residual[i] = 0;
  }
};

// Blocks of a one-wave grid of vectorKernel (asked once per instantiation).
template <class F, class Idx, int ITEMS, bool kPass>
unsigned waveOf(int numTiles) {
  static const int perSm = [] {
    int b = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, vectorKernel<F, Idx, ITEMS, kPass>, kThreads, 0) !=
        cudaSuccess) {
      (void)cudaGetLastError();
      b = 1;
    }
    return b < 1 ? 1 : b;
  }();
  const int64_t wave = int64_t(perSm) * multiprocessors();
  return unsigned(numTiles < wave ? numTiles : wave);
}

template <class F>
class SelectDevice {
 public:
  using Bits = BitsOf<F>;
  static constexpr int kWidth = int(8 * sizeof(Bits));
  static constexpr int kItems = int(32 / sizeof(Bits));  // two 16-byte loads per thread
  static constexpr uint64_t kTile = uint64_t(kThreads) * kItems;

  SelectDevice(const Params& p, const Buffers& b, const DeviceCall& call)
      : p_(p),
        b_(b),
        call_(call),
        s_(static_cast<cudaStream_t>(call.stream)),
        plan_(selectPlan(p)),
        scratch_(s_, call.device, call.arena),
        radix_(scratch_, s_) {}

  Outcome run() { return p_.indexType == scTopkIndexU64 ? runWith<uint64_t>() : runWith<uint32_t>(); }

 private:
  template <class Idx>
  Outcome runWith() {
    const Bits* g = static_cast<const Bits*>(b_.grad);
    Bits* r = static_cast<Bits*>(b_.residual);
    CallState* cs = scratch_.zeroed<CallState>(1);
    SelectState* st = scratch_.get<SelectState>(4);  // lower cut, upper cut, list select, whole select
    const bool sampled = plan_.samples > 0;
    Idx* listIdx = nullptr;
    Bits* listVal = nullptr;
    if (sampled) {
      Bits* keys = scratch_.get<Bits>(plan_.samples);
      sampleKernel<F><<<blocksFor(plan_.samples, kThreads, 4096), kThreads, 0, s_>>>(g, r, p_.n, p_.seed, p_.step,
                                                                                     plan_.samples, keys);
      SC_CUDA_CHECK(cudaGetLastError());
      radix_.keys(SampleView<F>{keys}, plan_.samples, kWidth, plan_.rankLo, &st[0]);
      if (plan_.rankHi) radix_.keys(SampleView<F>{keys}, plan_.samples, kWidth, plan_.rankHi, &st[1]);
      cutsKernel<<<1, 1, 0, s_>>>(plan_, &st[0], plan_.rankHi ? &st[1] : nullptr, cs);
      SC_CUDA_CHECK(cudaGetLastError());
      listIdx = scratch_.get<Idx>(plan_.bound);
      listVal = scratch_.get<Bits>(plan_.bound);
      vector<Idx, true>(VecArgs<F, Idx>{g, r, p_.n, plan_.bound, plan_.minKey, listIdx, listVal, cs});
    } else if (r) {
      accumulateKernel<F><<<blocksFor(p_.n, kThreads, 4096), kThreads, 0, s_>>>(g, r, p_.n);
      SC_CUDA_CHECK(cudaGetLastError());
    }
    decideKernel<<<1, 1, 0, s_>>>(p_.method, p_.k, p_.n, plan_.bound, !sampled, cs, &st[2], &st[3]);
    SC_CUDA_CHECK(cudaGetLastError());
    if (sampled) {
      const ListView<F, Idx> lv{listIdx, listVal, cs, plan_.bound, p_.n, false};
      radix_.keysFromState(lv, plan_.bound, kWidth, &st[2]);
      radix_.ties(ListView<F, Idx>{listIdx, listVal, cs, plan_.bound, p_.n, true}, plan_.bound, p_.n, &st[2]);
    }
    const Bits* src = r ? r : g;
    radix_.keysFromState(WholeView<F>{src, p_.n, false}, p_.n, kWidth, &st[3]);
    radix_.ties(WholeView<F>{src, p_.n, true}, p_.n, p_.n, &st[3]);
    Counts* counts = countsOf(call_, scratch_);
    finishKernel<<<1, 1, 0, s_>>>(p_.k, p_.n, plan_.bound, plan_.minKey, cs, &st[2], &st[3], counts);
    SC_CUDA_CHECK(cudaGetLastError());
    Idx* outIdx = static_cast<Idx*>(b_.indices);
    Bits* outVal = static_cast<Bits*>(b_.values);
    if (sampled) {
      Count* numOut = scratch_.get<Count>(1);
      const ListKeep<F, Idx> keep{listIdx, listVal, cs, plan_.bound, plan_.minKey};
      const EmitListed<F, Idx> emit{listIdx, listVal, outIdx, outVal, r};
      size_t bytes = 0;
      auto select = [&](void* t) {
        return cub::DeviceSelect::If(t, bytes, thrust::counting_iterator<Count>(0),
                                     thrust::tabulate_output_iterator<EmitListed<F, Idx>>(emit), numOut,
                                     int64_t(plan_.bound), keep, s_);
      };
      SC_CUDA_CHECK(select(nullptr));
      SC_CUDA_CHECK(select(scratch_.get<char>(bytes)));
    }
    vector<Idx, false>(VecArgs<F, Idx>{g, r, p_.n, p_.n, plan_.minKey, outIdx, outVal, cs});
    return outcomeOf(call_, counts, s_);
  }

  template <class Idx, bool kPass>
  void vector(const VecArgs<F, Idx>& a) {
    const uint64_t tiles = (p_.n + kTile - 1) / kTile;
    SC_ARG(tiles <= uint64_t(INT32_MAX), "n = ", p_.n, " is beyond the device top-k's 2^31 tiles");
    const TileState ts = makeTiles(scratch_, int(tiles));
    vectorKernel<F, Idx, kItems, kPass>
        <<<waveOf<F, Idx, kItems, kPass>(int(tiles)), kThreads, 0, s_>>>(a, ts, int(tiles));
    SC_CUDA_CHECK(cudaGetLastError());
  }

  const Params& p_;
  const Buffers& b_;
  const DeviceCall& call_;
  cudaStream_t s_;
  const SelectPlan plan_;
  Scratch scratch_;
  RadixRunner radix_;
};

}  // namespace

Outcome selectSampledDevice(const Params& p, const Buffers& b, const DeviceCall& call) {
  DeviceScope scope(call.device);
  return dispatchFmt(p.dtype, [&](auto f) { return SelectDevice<decltype(f)>(p, b, call).run(); });
}

}  // namespace topk
}  // namespace sc
