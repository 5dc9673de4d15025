// The split design of the bucketed approximate top-k in expectation: the
// same selection as kernels/topk_approx.cu (select_math.h, bit for bit the CPU
// reference's), organised so that neither tiny nor huge buckets waste the GPU.
// The thread-block-per-bucket design spends most of its issue slots on
// per-bucket overhead at 512-element buckets (block barriers, block-wide
// reductions and scans over 4 elements per thread, two 64-bit divisions per
// thread, one look-back per 128 threads), and runs a bucket as long as the
// vector on a single SM. Here (csrc/topk/approx_plan.h):
//   small buckets (<= kWarpBucket = 512): one warp each, four per block; the
//     bucket sits in the warp's registers (16 elements per lane, read once),
//     norms and ranks are warp shuffles (CUB WarpReduce / WarpScan), no block
//     barrier at all; variable output finds the bucket's place in the stream
//     by a warp-level decoupled look-back over the buckets' counts (CUB's
//     TilePrefixCallbackOp assumes the block's first warp, so a small one is
//     written here);
//   large buckets: chunks of kChunk = 1024 elements, one block of 128 x 8 each,
//     over the whole GPU: pass 1 the chunks' maxima (atomicMax per bucket),
//     pass 2 their quantized sums (atomicAdd), pass 3 their selected counts,
//     one CUB exclusive scan of the counts, pass 4 placement and the residual.
//     Four reads of the data and one write, every pass spread over all SMs.
// Integer max and sums are associative, so the norms are the CPU's whatever
// the order; placement follows the CPU's rule exactly (approx_plan.h for the
// fixed output's slots). SPARCOLL_TOPK_KERNEL=split selects this design.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cuda/atomic>

#include "topk/approx_plan.h"
#include "topk/dispatch.h"
#include "topk_approx_common.cuh"
#include "topk_device.cuh"

namespace sc {
namespace topk {
namespace {

constexpr int kWarps = 4;  // small buckets per block
constexpr int kChunkThreads = 128;
constexpr int kChunkItems = int(kChunk) / kChunkThreads;
constexpr unsigned kFull = 0xffffffffu;
static_assert(kChunkItems * kChunkThreads == int(kChunk), "a chunk is one block's tile");

using Wide = unsigned long long;  // abs bit patterns of any format, for the atomic maximum

template <class F>
__device__ __forceinline__ Wide runMax(const typename F::Bits* acc, int n, int valid) {
  Wide m = 0;
  for (int j = 0; j < n; ++j) {
    const auto ab = F::absBits(acc[j]);
    if (j < valid && F::finite(ab) && Wide(ab) > m) m = ab;
  }
  return m;
}

template <class F, int ITEMS>
__device__ __forceinline__ Count quantizeRun(const typename F::Bits (&acc)[ITEMS], int valid, int eeMax,
                                             uint32_t (&q)[ITEMS]) {
  Count sum = 0;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const auto ab = F::absBits(acc[j]);
    q[j] = j < valid && F::finite(ab) ? quantize<F>(ab, eeMax) : 0u;
    sum += q[j];
  }
  return sum;
}

// ---------------------------------------------------------------------------
// Small buckets: one warp each.
// ---------------------------------------------------------------------------

// This bucket's offset in the variable stream: the sum of the counts of the
// buckets before it. Each warp publishes its count (aggregate) at once, then
// sums its predecessors' words 32 at a time, newest first, until one holds an
// inclusive prefix; then it publishes its own inclusive prefix. Value and flag
// share one 64-bit word, so relaxed atomics order them. Every lane returns it.
__device__ Count lookBack(uint64_t* look, uint64_t b, Count agg, int lane) {
  using Ref = ::cuda::atomic_ref<uint64_t, ::cuda::thread_scope_device>;
  if (lane == 0)
    Ref(look[b]).store(lookWord(agg, b == 0 ? kLookInclusive : kLookAggregate), ::cuda::memory_order_relaxed);
  if (b == 0) return 0;
  Count excl = 0;
  for (int64_t pred = int64_t(b) - 1;; pred -= 32) {
    const int64_t idx = pred - lane;
    uint64_t w = lookWord(0, kLookInclusive);  // before bucket 0: nothing
    for (;;) {
      if (idx >= 0) w = Ref(look[idx]).load(::cuda::memory_order_relaxed);
      if (!__any_sync(kFull, lookFlag(w) == kLookInvalid)) break;
    }
    const unsigned inclusive = __ballot_sync(kFull, lookFlag(w) == kLookInclusive);
    const int stop = inclusive ? __ffs(int(inclusive)) - 1 : 31;
    Count v = lane <= stop ? lookValue(w) : 0;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
    excl += v;
    if (inclusive) break;
  }
  if (lane == 0) Ref(look[b]).store(lookWord(excl + agg, kLookInclusive), ::cuda::memory_order_relaxed);
  return excl;
}

template <class F>
__global__ void __launch_bounds__(32 * kWarps) warpBucketKernel(ApproxArgs a, uint64_t* look, uint64_t buckets) {
  using Bits = typename F::Bits;
  constexpr int ITEMS = int(kWarpItems);
  using ReduceW = cub::WarpReduce<Wide>;
  using ReduceC = cub::WarpReduce<Count>;
  using Scan = cub::WarpScan<uint32_t>;
  __shared__ union {
    typename ReduceW::TempStorage w;
    typename ReduceC::TempStorage c;
    typename Scan::TempStorage s;
  } tmp[kWarps];
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const uint64_t b = uint64_t(blockIdx.x) * kWarps + uint64_t(warp);
  if (b >= buckets) return;  // the whole warp: b is warp-uniform
  const uint64_t s = b * a.bucket, e = lo<uint64_t>(s + a.bucket, a.n), len = e - s;
  const uint64_t sb = shareBefore(a.k, s, a.n), kb = shareBefore(a.k, e, a.n) - sb;
  const int p0 = lane * ITEMS, valid = int(len) - p0;  // the lane's run in the bucket

  Bits acc[ITEMS];
  uint32_t q[ITEMS], sel[ITEMS];
  loadRun<F, ITEMS>(a, s + uint64_t(p0), valid, acc);
  const Wide amax = __shfl_sync(kFull, ReduceW(tmp[warp].w).Reduce(runMax<F>(acc, ITEMS, valid), MaxOp<Wide>()), 0);
  __syncwarp();
  const int eeMax = effExp<F>(Bits(amax));
  const Count qs = quantizeRun<F, ITEMS>(acc, valid, eeMax, q);
  const Count Q = __shfl_sync(kFull, ReduceC(tmp[warp].c).Sum(qs), 0);
  __syncwarp();
  const Decision dec = makeDecision(a.atMost, kb, len, quantize<F>(Bits(amax), eeMax), Q);
  selectRun<F, ITEMS>(dec, a.seed, a.step, s + uint64_t(p0), valid, acc, q, sel);
  uint32_t mine = 0, before = 0, cnt = 0;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) mine += sel[j];
  Scan(tmp[warp].s).ExclusiveSum(mine, before, cnt);

  bool sent[ITEMS];
  if (!a.fixed) {
    const Count base = lookBack(look, b, cnt, lane);
    Count slot = base + before;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      sent[j] = sel[j] && slot < a.capacity;
      if (sent[j]) putEntry(a, slot, s + uint64_t(p0 + j), acc[j]);
      slot += sel[j];
    }
    if (b + 1 == buckets && lane == 0) *a.total = base + cnt;
  } else {
    const uint64_t pad = kb - lo<uint64_t>(cnt, kb);
    uint64_t selRank = before;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const uint64_t unselRank = uint64_t(p0 + j) - selRank;
      const bool taken = j < valid && fixedTaken(sel[j], selRank, unselRank, kb, pad);
      if (taken)
        putEntry(a, sb + fixedSlot(selRank, unselRank, kb, pad), s + uint64_t(p0 + j), sel[j] ? acc[j] : Bits(0));
      sent[j] = taken && sel[j];
      selRank += sel[j];
    }
    if (lane == 0) a.perBucket[b] = BucketCounts{cnt, cnt - lo<Count>(cnt, kb)};
  }
  storeResidualRun<F, ITEMS>(a, s + uint64_t(p0), valid, acc, sent);
}

// ---------------------------------------------------------------------------
// Large buckets: one block per chunk, four passes.
// ---------------------------------------------------------------------------

// What every chunk pass knows of its chunk and bucket.
struct ChunkAt {
  uint64_t c, b, start, len, bucketStart, bucketLen, sb, kb;
  int p0, valid;  // this thread's run in the chunk
  __device__ ChunkAt(const ChunkPlan& plan, const ApproxArgs& a, uint64_t chunk)
      : c(chunk),
        b(plan.bucketOf(chunk)),
        start(plan.start(chunk)),
        len(plan.length(chunk)),
        bucketStart(plan.bucketStart(b)),
        bucketLen(plan.bucketEnd(b) - plan.bucketStart(b)),
        sb(shareBefore(a.k, bucketStart, a.n)),
        kb(shareBefore(a.k, bucketStart + bucketLen, a.n) - sb),
        p0(int(threadIdx.x) * kChunkItems),
        valid(int(len) - int(threadIdx.x) * kChunkItems) {}
};

// Runs body(chunk) for this block's chunks (grid-stride), with a barrier
// after each: the bodies reuse their block primitives' shared storage.
template <class Body>
__device__ __forceinline__ void forChunks(const ChunkPlan& plan, const ApproxArgs& a, Body body) {
  for (uint64_t c = blockIdx.x; c < plan.chunks; c += gridDim.x) {
    body(ChunkAt(plan, a, c));
    __syncthreads();
  }
}

// Pass 1: the maximum finite magnitude of every bucket.
template <class F>
__global__ void __launch_bounds__(kChunkThreads) chunkMaxKernel(ApproxArgs a, ChunkPlan plan, Wide* bucketMax) {
  using Reduce = cub::BlockReduce<Wide, kChunkThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  forChunks(plan, a, [&](const ChunkAt& at) {
    typename F::Bits acc[kChunkItems];
    loadRun<F, kChunkItems>(a, at.start + uint64_t(at.p0), at.valid, acc);
    const Wide m = Reduce(tmp).Reduce(runMax<F>(acc, kChunkItems, at.valid), MaxOp<Wide>());
    if (threadIdx.x == 0 && m) atomicMax(&bucketMax[at.b], m);
  });
}

// Pass 2: every bucket's sum of quantized magnitudes, Q.
template <class F>
__global__ void __launch_bounds__(kChunkThreads)
    chunkSumKernel(ApproxArgs a, ChunkPlan plan, const Wide* bucketMax, Count* bucketQ) {
  using Reduce = cub::BlockReduce<Count, kChunkThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  forChunks(plan, a, [&](const ChunkAt& at) {
    typename F::Bits acc[kChunkItems];
    uint32_t q[kChunkItems];
    loadRun<F, kChunkItems>(a, at.start + uint64_t(at.p0), at.valid, acc);
    const int eeMax = effExp<F>(typename F::Bits(bucketMax[at.b]));
    const Count sum = Reduce(tmp).Sum(quantizeRun<F, kChunkItems>(acc, at.valid, eeMax, q));
    if (threadIdx.x == 0 && sum) atomicAdd(&bucketQ[at.b], sum);
  });
}

// The selection flags of this thread's run (passes 3 and 4 draw the same).
template <class F>
__device__ uint32_t chunkFlags(const ApproxArgs& a, const ChunkAt& at, const Wide* bucketMax, const Count* bucketQ,
                               typename F::Bits (&acc)[kChunkItems], uint32_t (&sel)[kChunkItems]) {
  using Bits = typename F::Bits;
  uint32_t q[kChunkItems];
  loadRun<F, kChunkItems>(a, at.start + uint64_t(at.p0), at.valid, acc);
  const Bits amax = Bits(bucketMax[at.b]);
  const int eeMax = effExp<F>(amax);
  quantizeRun<F, kChunkItems>(acc, at.valid, eeMax, q);
  const Decision dec = makeDecision(a.atMost, at.kb, at.bucketLen, quantize<F>(amax, eeMax), bucketQ[at.b]);
  selectRun<F, kChunkItems>(dec, a.seed, a.step, at.start + uint64_t(at.p0), at.valid, acc, q, sel);
  uint32_t mine = 0;
#pragma unroll
  for (int j = 0; j < kChunkItems; ++j) mine += sel[j];
  return mine;
}

// Pass 3: every chunk's selected count.
template <class F>
__global__ void __launch_bounds__(kChunkThreads)
    chunkCountKernel(ApproxArgs a, ChunkPlan plan, const Wide* bucketMax, const Count* bucketQ, Count* counts) {
  using Reduce = cub::BlockReduce<uint32_t, kChunkThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  forChunks(plan, a, [&](const ChunkAt& at) {
    typename F::Bits acc[kChunkItems];
    uint32_t sel[kChunkItems];
    const uint32_t cnt = Reduce(tmp).Sum(chunkFlags<F>(a, at, bucketMax, bucketQ, acc, sel));
    if (threadIdx.x == 0) counts[at.c] = cnt;
  });
}

// Pass 4: placement from prefix[c] (the selected entries of the chunks
// before c, an exclusive scan of the counts), and the new residual.
template <class F>
__global__ void __launch_bounds__(kChunkThreads)
    chunkPlaceKernel(ApproxArgs a, ChunkPlan plan, const Wide* bucketMax, const Count* bucketQ, const Count* prefix) {
  using Bits = typename F::Bits;
  using Scan = cub::BlockScan<uint32_t, kChunkThreads>;
  __shared__ typename Scan::TempStorage tmp;
  forChunks(plan, a, [&](const ChunkAt& at) {
    const uint64_t c = at.c;
    Bits acc[kChunkItems];
    uint32_t sel[kChunkItems], before = 0;
    Scan(tmp).ExclusiveSum(chunkFlags<F>(a, at, bucketMax, bucketQ, acc, sel), before);
    bool sent[kChunkItems];
    if (!a.fixed) {
      Count slot = prefix[c] + before;
#pragma unroll
      for (int j = 0; j < kChunkItems; ++j) {
        sent[j] = sel[j] && slot < a.capacity;
        if (sent[j]) putEntry(a, slot, at.start + uint64_t(at.p0 + j), acc[j]);
        slot += sel[j];
      }
    } else {
      const Count first = prefix[plan.firstChunk(at.b)];
      const Count cnt = prefix[plan.endChunk(at.b)] - first;
      const uint64_t pad = at.kb - lo<uint64_t>(cnt, at.kb);
      uint64_t selRank = prefix[c] - first + before;
      const uint64_t pos0 = at.start - at.bucketStart + uint64_t(at.p0);  // bucket offset of the run
#pragma unroll
      for (int j = 0; j < kChunkItems; ++j) {
        const uint64_t unselRank = pos0 + uint64_t(j) - selRank;
        const bool taken = j < at.valid && fixedTaken(sel[j], selRank, unselRank, at.kb, pad);
        if (taken)
          putEntry(a, at.sb + fixedSlot(selRank, unselRank, at.kb, pad), at.start + uint64_t(at.p0 + j),
                   sel[j] ? acc[j] : Bits(0));
        sent[j] = taken && sel[j];
        selRank += sel[j];
      }
      if (threadIdx.x == 0 && c == plan.firstChunk(at.b))
        a.perBucket[at.b] = BucketCounts{cnt, cnt - lo<Count>(cnt, at.kb)};
    }
    storeResidualRun<F, kChunkItems>(a, at.start + uint64_t(at.p0), at.valid, acc, sent);
  });
}

template <class F>
void launchChunks(const ApproxArgs& a, const ChunkPlan& plan, Scratch& scratch, cudaStream_t s, Count** total) {
  Wide* bucketMax = scratch.zeroed<Wide>(plan.buckets);
  Count* bucketQ = scratch.zeroed<Count>(plan.buckets);
  Count* counts = scratch.zeroed<Count>(plan.chunks + 1);  // counts[chunks] = 0: prefix[chunks] = the total
  Count* prefix = scratch.get<Count>(plan.chunks + 1);
  const unsigned grid = blocksFor(plan.chunks, 1, 65535ull * 32);
  chunkMaxKernel<F><<<grid, kChunkThreads, 0, s>>>(a, plan, bucketMax);
  SC_CUDA_CHECK(cudaGetLastError());
  chunkSumKernel<F><<<grid, kChunkThreads, 0, s>>>(a, plan, bucketMax, bucketQ);
  SC_CUDA_CHECK(cudaGetLastError());
  chunkCountKernel<F><<<grid, kChunkThreads, 0, s>>>(a, plan, bucketMax, bucketQ, counts);
  SC_CUDA_CHECK(cudaGetLastError());
  size_t bytes = 0;
  SC_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, counts, prefix, int64_t(plan.chunks + 1), s));
  SC_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(scratch.get<char>(bytes), bytes, counts, prefix, int64_t(plan.chunks + 1), s));
  chunkPlaceKernel<F><<<grid, kChunkThreads, 0, s>>>(a, plan, bucketMax, bucketQ, prefix);
  SC_CUDA_CHECK(cudaGetLastError());
  *total = prefix + plan.chunks;
}

}  // namespace

Outcome approxDeviceSplit(const Params& p, const Buffers& b, const DeviceCall& call) {
  DeviceScope scope(call.device);
  const cudaStream_t s = static_cast<cudaStream_t>(call.stream);
  Scratch scratch(s, call.device, call.arena);
  const uint64_t buckets = numBuckets(p);
  const bool fixed = p.output == scTopkFixedPerBucket;
  BucketCounts* perBucket = fixed ? scratch.get<BucketCounts>(buckets) : nullptr;
  Count* total = nullptr;
  ApproxArgs a = approxArgs(p, b, fixed, nullptr, perBucket);
  dispatchFmt(p.dtype, [&](auto f) {
    using F = decltype(f);
    if (p.bucket <= kWarpBucket) {
      uint64_t* look = fixed ? nullptr : scratch.zeroed<uint64_t>(buckets);
      if (!fixed) a.total = total = scratch.zeroed<Count>(1);
      const uint64_t grid = (buckets + kWarps - 1) / kWarps;
      warpBucketKernel<F><<<unsigned(grid), 32 * kWarps, 0, s>>>(a, look, buckets);
      SC_CUDA_CHECK(cudaGetLastError());
    } else {
      launchChunks<F>(a, ChunkPlan::make(p.n, p.bucket, kChunk), scratch, s, &total);
    }
  });
  return approxOutcome(p, call, scratch, s, fixed ? nullptr : total, perBucket, buckets);
}

}  // namespace topk
}  // namespace sc
