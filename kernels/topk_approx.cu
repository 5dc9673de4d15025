// Bucketed approximate top-k in expectation on the GPU (thesis §4.3.3), with
// error feedback fused in. One thread block per bucket:
//   load g (+ r) with a CUB block load          -> acc
//   CUB block reductions: max |acc| (bit patterns), Q = sum of quantized |acc|
//   Philox draw + exact integer test per element -> selection flags
//   CUB block scan places the selected pairs:
//     variable output: the bucket's offset in the whole stream comes from CUB's
//       decoupled look-back (ScanTileState + TilePrefixCallbackOp, the single-pass
//       machinery of DeviceScan/DeviceSelect), so compaction is one pass over the
//       data and the indices come out sorted;
//     fixed output: the bucket owns slots [floor(k s/n), floor(k e/n)) -- no global
//       scan at all (the thesis's layout).
//   CUB block store writes the new residual (acc, or 0 where sent).
// The arithmetic is select_math.h, shared with the CPU reference
// (csrc/topk/reference_approx.cpp), so both select identical elements.
//
// Tuning: a bucket of up to kTile = BLOCK x ITEMS elements stays in registers
// and the data is read once. The thesis found 128 threads x 4 items best for
// 512-element buckets on its GPU; SmallTile keeps that, LargeTile (256 x 8)
// takes buckets up to 2048 in one pass and loops over tiles for larger ones
// (then the bucket is re-read from L2). Both are template parameters: retune
// them on the H100 with bench/topk_perf (not measured here: no device).
#include <cub/agent/single_pass_scan_operators.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cuda/std/functional>
#include <cuda/std/type_traits>

#include "topk/dispatch.h"
#include "topk/select_math.h"
#include "topk_device.cuh"

namespace sc {
namespace topk {
namespace {

using Count = unsigned long long;
using TileState = cub::ScanTileState<Count>;
using PlusOp = ::cuda::std::plus<Count>;

template <int Threads, int Items>
struct TileCfg {
  static constexpr int kThreads = Threads, kItems = Items;
};
using SmallTile = TileCfg<128, 4>;
using LargeTile = TileCfg<256, 8>;
constexpr uint64_t kSmallTileMax = 128 * 4;

struct ApproxArgs {
  const void* grad;
  void* residual;  // null without error feedback
  void* indices;
  void* values;
  uint64_t n, k, bucket, capacity, seed, step;
  bool atMost, fixed, idx64;
  Count* counters;  // [0] selected, [1] deferred (fixed output)
};

template <typename T>
__device__ __forceinline__ T lo(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
__device__ __forceinline__ T hi(T a, T b) {
  return a < b ? b : a;
}

template <typename T>
struct MaxOp {
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};

template <class F, int BLOCK, int ITEMS>
class BucketBlock {
 public:
  using Bits = typename F::Bits;
  using Wide = ::cuda::std::conditional_t<sizeof(Bits) == 8, unsigned long long, unsigned int>;
  static constexpr int kTile = BLOCK * ITEMS;
  using Load = cub::BlockLoad<Bits, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Store = cub::BlockStore<Bits, BLOCK, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using RMax = cub::BlockReduce<Wide, BLOCK>;
  using RSum = cub::BlockReduce<Count, BLOCK>;
  using Scan = cub::BlockScan<Count, BLOCK>;
  using Prefix = cub::TilePrefixCallbackOp<Count, PlusOp, TileState>;

  struct TempStorage {
    union {
      typename Load::TempStorage load;
      typename Store::TempStorage store;
      typename RMax::TempStorage rmax;
      typename RSum::TempStorage rsum;
      typename Scan::TempStorage scan;
    } u;
    typename Prefix::TempStorage prefix;  // used during a scan: not in the union
    Wide amax;
    Decision dec;
    Count count, base;
  };

  __device__ BucketBlock(TempStorage& tmp, const ApproxArgs& a, TileState& tiles)
      : tmp_(tmp), a_(a), tiles_(tiles) {
    s_ = uint64_t(blockIdx.x) * a.bucket;
    const uint64_t e = lo<uint64_t>(s_ + a.bucket, a.n);
    len_ = e - s_;
    sb_ = shareBefore(a.k, s_, a.n);
    kb_ = shareBefore(a.k, e, a.n) - sb_;
  }

  __device__ void run() {
    Bits acc[ITEMS];
    const uint64_t tiles = (len_ + kTile - 1) / kTile;
    const bool single = tiles == 1;
    if (single) load(0, acc);

    // Norms: L-infinity as the largest finite abs bit pattern, then L1 as the
    // integer sum of magnitudes quantized relative to it.
    Wide m = 0;
    for (uint64_t t = 0; t < tiles; ++t) {
      if (!single) load(t * kTile, acc);
      m = hi<Wide>(m, localMax(acc, valid(t * kTile)));
    }
    const Wide bm = RMax(tmp_.u.rmax).Reduce(m, MaxOp<Wide>());
    if (threadIdx.x == 0) tmp_.amax = bm;
    __syncthreads();
    const Bits amax = Bits(tmp_.amax);
    eeMax_ = effExp<F>(amax);
    Count q = 0;
    for (uint64_t t = 0; t < tiles; ++t) {
      if (!single) load(t * kTile, acc);
      q += localQ(acc, valid(t * kTile));
    }
    const Count Q = RSum(tmp_.u.rsum).Sum(q);
    if (threadIdx.x == 0) tmp_.dec = makeDecision(a_.atMost, kb_, len_, quantize<F>(amax, eeMax_), Q);
    __syncthreads();
    dec_ = tmp_.dec;

    if (single)
      placeSingle(acc);
    else
      placeTiles(tiles, acc);
  }

 private:
  __device__ int valid(uint64_t off) const { return int(lo<uint64_t>(kTile, len_ - off)); }
  __device__ int pos(int j) const { return int(threadIdx.x) * ITEMS + j; }  // blocked arrangement

  // acc = g (+ r) for the tile at bucket offset off; out-of-range items are 0.
  __device__ void load(uint64_t off, Bits (&acc)[ITEMS]) {
    const int v = valid(off);
    Load(tmp_.u.load).Load(static_cast<const Bits*>(a_.grad) + s_ + off, acc, v, Bits(0));
    if (a_.residual) {
      Bits r[ITEMS];
      __syncthreads();
      Load(tmp_.u.load).Load(static_cast<const Bits*>(a_.residual) + s_ + off, r, v, Bits(0));
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) acc[j] = F::add(acc[j], r[j]);
    }
    __syncthreads();
  }

  __device__ Wide localMax(const Bits (&acc)[ITEMS], int v) const {
    Wide m = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const Bits ab = F::absBits(acc[j]);
      if (pos(j) < v && F::finite(ab) && Wide(ab) > m) m = ab;
    }
    return m;
  }

  __device__ Count localQ(const Bits (&acc)[ITEMS], int v) const {
    Count q = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const Bits ab = F::absBits(acc[j]);
      if (pos(j) < v && F::finite(ab)) q += quantize<F>(ab, eeMax_);
    }
    return q;
  }

  // Selection flags of the tile at offset off (non-finite entries always).
  // One Philox block serves four consecutive elements.
  __device__ void flags(uint64_t off, const Bits (&acc)[ITEMS], Count (&sel)[ITEMS]) const {
    const int v = valid(off);
    uint64_t group = ~uint64_t(0);
    Philox4 blk{{0, 0, 0, 0}};
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      sel[j] = 0;
      if (pos(j) >= v) continue;
      const Bits ab = F::absBits(acc[j]);
      if (!F::finite(ab)) {
        sel[j] = 1;
        continue;
      }
      const uint64_t i = s_ + off + uint64_t(pos(j));
      if ((i >> 2) != group) {
        group = i >> 2;
        blk = philoxBlock(a_.seed, a_.step, Domain::Select, group);
      }
      sel[j] = chooses(dec_, word(blk, uint32_t(i & 3)), quantize<F>(ab, eeMax_)) ? 1 : 0;
    }
  }

  __device__ void put(uint64_t slot, uint64_t index, Bits v) const {
    if (a_.idx64)
      static_cast<uint64_t*>(a_.indices)[slot] = index;
    else
      static_cast<uint32_t*>(a_.indices)[slot] = uint32_t(index);
    static_cast<Bits*>(a_.values)[slot] = v;
  }

  // New residual of the tile: acc where not sent, +0 where sent.
  __device__ void storeResidual(uint64_t off, const Bits (&acc)[ITEMS], const bool (&sent)[ITEMS]) {
    if (!a_.residual) return;
    Bits out[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) out[j] = sent[j] ? Bits(0) : acc[j];
    __syncthreads();
    Store(tmp_.u.store).Store(static_cast<Bits*>(a_.residual) + s_ + off, out, valid(off));
  }

  // Fixed output within a tile: the first kb selected, then pads from the first
  // unselected. selRank / prior counts are bucket-relative.
  __device__ void fixedTaken(uint64_t off, const Count (&sel)[ITEMS], const Count (&selRank)[ITEMS], Count cnt,
                             Count (&taken)[ITEMS]) const {
    const Count pad = kb_ - lo<Count>(cnt, kb_);
    const int v = valid(off);
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      taken[j] = 0;
      if (pos(j) >= v) continue;
      const Count unselRank = off + uint64_t(pos(j)) - selRank[j];
      taken[j] = sel[j] ? (selRank[j] < kb_) : (unselRank < pad);
    }
  }

  __device__ void addCounts(Count cnt) const {
    atomicAdd(&a_.counters[0], cnt);
    if (a_.fixed) atomicAdd(&a_.counters[1], cnt - lo<Count>(cnt, kb_));
  }

  // The bucket fits one tile: everything from registers, one pass.
  __device__ void placeSingle(const Bits (&acc)[ITEMS]) {
    Count sel[ITEMS], rank[ITEMS];
    bool sent[ITEMS];
    flags(0, acc, sel);
    if (!a_.fixed) {
      Count cnt;
      if (blockIdx.x == 0) {
        Scan(tmp_.u.scan).ExclusiveSum(sel, rank, cnt);
        if (threadIdx.x == 0) tiles_.SetInclusive(0, cnt);
      } else {
        Prefix prefix(tiles_, tmp_.prefix, PlusOp{}, int(blockIdx.x));
        Scan(tmp_.u.scan).ExclusiveSum(sel, rank, prefix);  // rank includes the stream offset
        cnt = prefix.GetBlockAggregate();                  // valid in thread 0, which set it
      }
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        sent[j] = sel[j] && rank[j] < a_.capacity;
        if (sent[j]) put(rank[j], s_ + uint64_t(pos(j)), acc[j]);
      }
      if (threadIdx.x == 0) addCounts(cnt);
    } else {
      Count cnt, taken[ITEMS];
      Scan(tmp_.u.scan).ExclusiveSum(sel, rank, cnt);
      fixedTaken(0, sel, rank, cnt, taken);
      __syncthreads();
      Scan(tmp_.u.scan).ExclusiveSum(taken, rank);
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        sent[j] = taken[j] && sel[j];
        if (taken[j]) put(sb_ + rank[j], s_ + uint64_t(pos(j)), sel[j] ? acc[j] : Bits(0));
      }
      if (threadIdx.x == 0) addCounts(cnt);
    }
    storeResidual(0, acc, sent);
  }

  // A bucket larger than a tile: count first (to get the bucket's offset in the
  // stream, or its padding), then place tile by tile with running ranks.
  __device__ void placeTiles(uint64_t tiles, Bits (&acc)[ITEMS]) {
    Count sel[ITEMS], rank[ITEMS], c = 0;
    for (uint64_t t = 0; t < tiles; ++t) {
      load(t * kTile, acc);
      flags(t * kTile, acc, sel);
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) c += sel[j];
    }
    const Count total = RSum(tmp_.u.rsum).Sum(c);
    if (threadIdx.x == 0) tmp_.count = total;
    __syncthreads();
    const Count cnt = tmp_.count;
    Count base = 0;
    if (!a_.fixed) {
      if (blockIdx.x == 0) {
        if (threadIdx.x == 0) tiles_.SetInclusive(0, cnt);
      } else {
        if (threadIdx.x < 32) {  // the look-back is one warp's job; lane 0 holds the result
          Prefix prefix(tiles_, tmp_.prefix, PlusOp{}, int(blockIdx.x));
          const Count p = prefix(cnt);
          if (threadIdx.x == 0) tmp_.base = p;
        }
        __syncthreads();
        base = tmp_.base;
      }
    }
    Count runSel = 0, runTaken = 0;
    for (uint64_t t = 0; t < tiles; ++t) {
      const uint64_t off = t * kTile;
      bool sent[ITEMS];
      load(off, acc);
      flags(off, acc, sel);
      Count tileSel;
      Scan(tmp_.u.scan).ExclusiveSum(sel, rank, tileSel);
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) rank[j] += runSel;
      if (!a_.fixed) {
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
          sent[j] = sel[j] && base + rank[j] < a_.capacity;
          if (sent[j]) put(base + rank[j], s_ + off + uint64_t(pos(j)), acc[j]);
        }
      } else {
        Count taken[ITEMS], slot[ITEMS], tileTaken;
        fixedTaken(off, sel, rank, cnt, taken);
        __syncthreads();
        Scan(tmp_.u.scan).ExclusiveSum(taken, slot, tileTaken);
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
          sent[j] = taken[j] && sel[j];
          if (taken[j]) put(sb_ + runTaken + slot[j], s_ + off + uint64_t(pos(j)), sel[j] ? acc[j] : Bits(0));
        }
        runTaken += tileTaken;
      }
      runSel += tileSel;
      storeResidual(off, acc, sent);
      __syncthreads();
    }
    if (threadIdx.x == 0) addCounts(cnt);
  }

  TempStorage& tmp_;
  const ApproxArgs& a_;
  TileState& tiles_;
  uint64_t s_, len_, sb_, kb_;
  int eeMax_ = 1;
  Decision dec_{};
};

template <class F, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) approxKernel(ApproxArgs a, TileState tiles) {
  using Block = BucketBlock<F, BLOCK, ITEMS>;
  __shared__ typename Block::TempStorage tmp;
  Block(tmp, a, tiles).run();
}

__global__ void initTilesKernel(TileState tiles, int num) { tiles.InitializeStatus(num); }

template <class F, class Cfg>
void launch(const ApproxArgs& a, int buckets, TileState tiles, cudaStream_t s) {
  approxKernel<F, Cfg::kThreads, Cfg::kItems><<<unsigned(buckets), Cfg::kThreads, 0, s>>>(a, tiles);
  SC_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

Outcome approxDevice(const Params& p, const Buffers& b, const DeviceCall& call) {
  DeviceScope scope(call.device);
  const cudaStream_t s = static_cast<cudaStream_t>(call.stream);
  Scratch scratch(s);
  const int buckets = int(numBuckets(p));
  const bool fixed = p.output == scTopkFixedPerBucket;
  Count* counters = scratch.zeroed<Count>(2);
  TileState tiles;
  if (!fixed) {
    size_t bytes = 0;
    SC_CUDA_CHECK(TileState::AllocationSize(buckets, bytes));
    SC_CUDA_CHECK(tiles.Init(buckets, scratch.get<char>(bytes), bytes));
    initTilesKernel<<<blocksFor(uint64_t(buckets), 128, INT32_MAX), 128, 0, s>>>(tiles, buckets);
    SC_CUDA_CHECK(cudaGetLastError());
  }
  const ApproxArgs a{b.grad, b.residual, b.indices, b.values, p.n, p.k, p.bucket, p.capacity, p.seed, p.step,
                     p.method == scTopkApproxAtMost, fixed, p.indexType == scTopkIndexU64, counters};
  dispatchFmt(p.dtype, [&](auto f) {
    using F = decltype(f);
    if (p.bucket <= kSmallTileMax)
      launch<F, SmallTile>(a, buckets, tiles, s);
    else
      launch<F, LargeTile>(a, buckets, tiles, s);
  });
  Outcome o;
  o.nnz = p.k;
  if (!fixed || call.readCounts) {
    Count h[2] = {0, 0};
    readBack(h, counters, sizeof h, s, call.timeoutSeconds);
    o.selected = h[0];
    if (fixed) {
      o.deferred = h[1];
    } else {
      o.nnz = h[0] < p.capacity ? h[0] : p.capacity;
      o.deferred = h[0] - o.nnz;
    }
  }
  return o;
}

}  // namespace topk
}  // namespace sc
