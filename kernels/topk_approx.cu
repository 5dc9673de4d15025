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
// Per element the kernel does one Philox draw (a quarter of a Philox4x32-10
// block), one 32-bit quantization (kept in registers between the L1 sum and the
// draw) and one 64-bit compare (select_math.h), so at HBM rates it sits near
// the issue-rate bound as well: integer work per element is kept minimal.
// Full, aligned tiles move data with vector loads/stores (one 16-byte access
// per thread for 4 x float32); the partial last bucket uses CUB's guarded
// warp-transposed path. No same-address atomics: the variable stream's total
// is the last bucket's inclusive prefix, fixed output reduces per-bucket
// counts with CUB only when the caller reads them.
//
// Tuning: a bucket of up to kTile = BLOCK x ITEMS elements stays in registers
// and the data is read once. The thesis found 128 threads x 4 items best for
// 512-element buckets on its GPU; that is the default up to 512, 256 x 8 above
// (buckets up to 2048 in one pass; larger ones loop over tiles and re-read the
// bucket from L2). SPARCOLL_TOPK_TILE=128x4|64x8|256x8 forces one, so
// bench/topk_perf can retune on the H100 without a rebuild.
#include <cub/agent/single_pass_scan_operators.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <cuda/std/type_traits>

#include <cstdlib>
#include <cstring>

#include "core/env.h"
#include "topk/dispatch.h"
#include "topk/select_math.h"
#include "topk_approx_common.cuh"
#include "topk_device.cuh"

namespace sc {
namespace topk {
namespace {

template <int Threads, int Items>
struct TileCfg {
  static constexpr int kThreads = Threads, kItems = Items;
};
enum class Tile { Auto, T128x4, T64x8, T256x8 };

template <class F, int BLOCK, int ITEMS>
class BucketBlock {
 public:
  using Bits = typename F::Bits;
  using Wide = ::cuda::std::conditional_t<sizeof(Bits) == 8, unsigned long long, unsigned int>;
  using IO = VecIO<Bits, ITEMS>;
  static constexpr int kTile = BLOCK * ITEMS;
  using Load = cub::BlockLoad<Bits, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Store = cub::BlockStore<Bits, BLOCK, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using RMax = cub::BlockReduce<Wide, BLOCK>;
  using RSum = cub::BlockReduce<Count, BLOCK>;
  using Scan = cub::BlockScan<Count, BLOCK>;       // ranks in a bucket of several tiles
  using Scan32 = cub::BlockScan<uint32_t, BLOCK>;  // ranks in a one-tile bucket: fewer registers

  struct TempStorage {
    union {
      typename Load::TempStorage load;
      typename Store::TempStorage store;
      typename RMax::TempStorage rmax;
      typename RSum::TempStorage rsum;
      typename Scan::TempStorage scan;
      typename Scan32::TempStorage scan32;
    } u;
    LookBackStorage look;  // used during a scan: not in the union
    Wide amax;
    Decision dec;
    Count count;
  };

  __device__ BucketBlock(TempStorage& tmp, const ApproxArgs& a, TileState& tiles) : tmp_(tmp), a_(a), tiles_(tiles) {
    s_ = uint64_t(blockIdx.x) * a.bucket;
    const uint64_t e = lo<uint64_t>(s_ + a.bucket, a.n);
    len_ = e - s_;
    sb_ = shareBefore(a.k, s_, a.n);
    kb_ = shareBefore(a.k, e, a.n) - sb_;
  }

  __device__ void run() {
    Bits acc[ITEMS];
    uint32_t q[ITEMS];
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
    Count qs = 0;
    for (uint64_t t = 0; t < tiles; ++t) {
      if (!single) load(t * kTile, acc);
      qs += quantizeTile(acc, valid(t * kTile), q);
    }
    const Count Q = RSum(tmp_.u.rsum).Sum(qs);
    if (threadIdx.x == 0) tmp_.dec = makeDecision(a_.atMost, kb_, len_, quantize<F>(amax, eeMax_), Q);
    __syncthreads();
    dec_ = tmp_.dec;

    if (single) placeSingle(acc, q);  // q still holds the one tile's magnitudes
    else placeTiles(tiles, acc, q);
  }

 private:
  __device__ int valid(uint64_t off) const { return int(lo<uint64_t>(kTile, len_ - off)); }
  __device__ int pos(int j) const { return int(threadIdx.x) * ITEMS + j; }  // blocked arrangement

  // acc = g (+ r) for the tile at bucket offset off; out-of-range items are 0.
  // A full tile at aligned addresses (block-uniform) is read with vector loads
  // straight into the blocked arrangement; otherwise CUB's guarded transpose.
  __device__ void load(uint64_t off, Bits (&acc)[ITEMS]) {
    const int v = valid(off);
    const Bits* g = static_cast<const Bits*>(a_.grad) + s_ + off;
    const Bits* r = a_.residual ? static_cast<const Bits*>(a_.residual) + s_ + off : nullptr;
    if (v == kTile && IO::aligned(g) && (!r || IO::aligned(r))) {
      IO::load(g + pos(0), acc);
      if (r) {
        Bits x[ITEMS];
        IO::load(r + pos(0), x);
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) acc[j] = F::add(acc[j], x[j]);
      }
      return;
    }
    Load(tmp_.u.load).Load(g, acc, v, Bits(0));
    if (r) {
      Bits x[ITEMS];
      __syncthreads();
      Load(tmp_.u.load).Load(r, x, v, Bits(0));
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) acc[j] = F::add(acc[j], x[j]);
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

  // q = quantized |acc| (0 for non-finite and out-of-range items); returns their sum.
  __device__ Count quantizeTile(const Bits (&acc)[ITEMS], int v, uint32_t (&q)[ITEMS]) const {
    Count sum = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const Bits ab = F::absBits(acc[j]);
      q[j] = pos(j) < v && F::finite(ab) ? quantize<F>(ab, eeMax_) : 0u;
      sum += q[j];
    }
    return sum;
  }

  // Selection flags of the tile at offset off (the thread's run: selectRun).
  template <typename C>
  __device__ void flags(uint64_t off, const Bits (&acc)[ITEMS], const uint32_t (&q)[ITEMS], C (&sel)[ITEMS]) const {
    selectRun<F, ITEMS>(dec_, a_.seed, a_.step, s_ + off + uint64_t(pos(0)), valid(off) - pos(0), acc, q, sel);
  }

  __device__ void put(uint64_t slot, uint64_t index, Bits v) const { putEntry(a_, slot, index, v); }

  // New residual of the tile: acc where not sent, +0 where sent.
  __device__ void storeResidual(uint64_t off, const Bits (&acc)[ITEMS], const bool (&sent)[ITEMS]) {
    if (!a_.residual) return;
    Bits out[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) out[j] = sent[j] ? Bits(0) : acc[j];
    Bits* r = static_cast<Bits*>(a_.residual) + s_ + off;
    if (valid(off) == kTile && IO::aligned(r)) {
      IO::store(r + pos(0), out);
      return;
    }
    __syncthreads();
    Store(tmp_.u.store).Store(r, out, valid(off));
  }

  // Fixed output within a tile: the first kb selected, then pads from the first
  // unselected. selRank / prior counts are bucket-relative.
  template <typename C>
  __device__ void fixedTaken(uint64_t off, const C (&sel)[ITEMS], const C (&selRank)[ITEMS], C cnt,
                             C (&taken)[ITEMS]) const {
    const C pad = C(kb_) - lo<C>(cnt, C(kb_));
    const int v = valid(off);
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      taken[j] = 0;
      if (pos(j) >= v) continue;
      const C unselRank = C(off + uint64_t(pos(j))) - selRank[j];
      taken[j] = sel[j] ? (selRank[j] < kb_) : (unselRank < pad);
    }
  }

  // Thread 0 only. Variable output: the last bucket's inclusive prefix is the
  // stream's total. Fixed: this bucket's counts, when someone reads them.
  __device__ void report(Count cnt, Count inclusive) const {
    if (!a_.fixed) {
      if (blockIdx.x == gridDim.x - 1) *a_.total = inclusive;
    } else {
      a_.perBucket[blockIdx.x] = BucketCounts{cnt, cnt - lo<Count>(cnt, kb_)};
    }
  }

  // This bucket's offset in the variable stream, from its count: CUB's
  // decoupled look-back over the buckets' counts (topk_device.cuh).
  __device__ Count streamBase(Count cnt) { return tileBase(tiles_, tmp_.look, int(blockIdx.x), cnt); }

  // The bucket fits one tile: everything from registers, one pass; ranks are
  // 32-bit (a tile has at most 2048 elements).
  __device__ void placeSingle(const Bits (&acc)[ITEMS], const uint32_t (&q)[ITEMS]) {
    uint32_t sel[ITEMS], rank[ITEMS], cnt;
    bool sent[ITEMS];
    flags(0, acc, q, sel);
    Scan32(tmp_.u.scan32).ExclusiveSum(sel, rank, cnt);
    if (!a_.fixed) {
      const Count base = streamBase(cnt);
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        sent[j] = sel[j] && base + rank[j] < a_.capacity;
        if (sent[j]) put(base + rank[j], s_ + uint64_t(pos(j)), acc[j]);
      }
      if (threadIdx.x == 0) report(cnt, base + cnt);
    } else {
      uint32_t taken[ITEMS];
      fixedTaken(0, sel, rank, cnt, taken);
      __syncthreads();
      Scan32(tmp_.u.scan32).ExclusiveSum(taken, rank);
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        sent[j] = taken[j] && sel[j];
        if (taken[j]) put(sb_ + rank[j], s_ + uint64_t(pos(j)), sel[j] ? acc[j] : Bits(0));
      }
      if (threadIdx.x == 0) report(cnt, 0);
    }
    storeResidual(0, acc, sent);
  }

  // A bucket larger than a tile: count first (to get the bucket's offset in the
  // stream, or its padding), then place tile by tile with running ranks.
  __device__ void placeTiles(uint64_t tiles, Bits (&acc)[ITEMS], uint32_t (&q)[ITEMS]) {
    Count sel[ITEMS], rank[ITEMS], c = 0;
    for (uint64_t t = 0; t < tiles; ++t) {
      load(t * kTile, acc);
      quantizeTile(acc, valid(t * kTile), q);
      flags(t * kTile, acc, q, sel);
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) c += sel[j];
    }
    const Count total = RSum(tmp_.u.rsum).Sum(c);
    if (threadIdx.x == 0) tmp_.count = total;
    __syncthreads();
    const Count cnt = tmp_.count;
    const Count base = a_.fixed ? 0 : streamBase(cnt);
    Count runSel = 0, runTaken = 0;
    for (uint64_t t = 0; t < tiles; ++t) {
      const uint64_t off = t * kTile;
      bool sent[ITEMS];
      load(off, acc);
      quantizeTile(acc, valid(off), q);
      flags(off, acc, q, sel);
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
    if (threadIdx.x == 0) report(cnt, base + cnt);
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

template <class F, class Cfg>
void launch(const ApproxArgs& a, int buckets, TileState tiles, cudaStream_t s) {
  approxKernel<F, Cfg::kThreads, Cfg::kItems><<<unsigned(buckets), Cfg::kThreads, 0, s>>>(a, tiles);
  SC_CUDA_CHECK(cudaGetLastError());
}

// SPARCOLL_TOPK_TILE: a tuning override (see the top of this file).
Tile tileSetting() {
  const char* e = env::get(env::Var::TopkTile);
  if (!e || std::strcmp(e, "auto") == 0) return Tile::Auto;
  if (std::strcmp(e, "128x4") == 0) return Tile::T128x4;
  if (std::strcmp(e, "64x8") == 0) return Tile::T64x8;
  if (std::strcmp(e, "256x8") == 0) return Tile::T256x8;
  SC_THROW(scInvalidArgument, "SPARCOLL_TOPK_TILE='", e, "' is not one of auto, 128x4, 64x8, 256x8");
}

// SPARCOLL_TOPK_KERNEL: the split design (topk_approx_split.cu; the default:
// on an H100 it ran 1.27x / 1.38x faster than this file's design at N = 2^26,
// k = N/1000, variable / fixed output, and 176x faster with one bucket of N)
// or the thread-block-per-bucket design ("block", this file).
bool splitDesign() {
  const char* e = env::get(env::Var::TopkKernel);
  if (!e || std::strcmp(e, "split") == 0) return true;
  if (std::strcmp(e, "block") == 0) return false;
  SC_THROW(scInvalidArgument, "SPARCOLL_TOPK_KERNEL='", e, "' is not one of block, split");
}

}  // namespace

Outcome approxDevice(const Params& p, const Buffers& b, const DeviceCall& call) {
  if (splitDesign()) return approxDeviceSplit(p, b, call);
  Tile tile = tileSetting();
  if (tile == Tile::Auto) tile = p.bucket <= 512 ? Tile::T128x4 : Tile::T256x8;
  DeviceScope scope(call.device);
  const cudaStream_t s = static_cast<cudaStream_t>(call.stream);
  Scratch scratch(s, call.device, call.arena);
  const int buckets = int(numBuckets(p));
  const bool fixed = p.output == scTopkFixedPerBucket;
  TileState tiles;
  Count* total = nullptr;
  BucketCounts* perBucket = nullptr;
  if (!fixed) {
    total = scratch.zeroed<Count>(1);
    tiles = makeTiles(scratch, buckets);
  } else {
    perBucket = scratch.get<BucketCounts>(size_t(buckets));
  }
  const ApproxArgs a = approxArgs(p, b, fixed, total, perBucket);
  dispatchFmt(p.dtype, [&](auto f) {
    using F = decltype(f);
    switch (tile) {
      case Tile::T64x8: launch<F, TileCfg<64, 8>>(a, buckets, tiles, s); break;
      case Tile::T256x8: launch<F, TileCfg<256, 8>>(a, buckets, tiles, s); break;
      default: launch<F, TileCfg<128, 4>>(a, buckets, tiles, s); break;
    }
  });
  return approxOutcome(p, call, scratch, s, total, perBucket, uint64_t(buckets));
}

}  // namespace topk
}  // namespace sc
