// The radix select of csrc/topk/radix_select.h on the GPU (used by
// kernels/topk_select.cu). Per pass two kernels:
//   radixHistKernel:   every key whose bits above the digit match the prefix
//                      found so far adds 1 to its digit's bin: a per-block
//                      shared-memory histogram (32-bit counts), then its nonzero
//                      bins go to a global 64-bit histogram with atomics. Keys
//                      are computed on the fly by a view of the source (no key
//                      array is gathered); a warp whose counted keys share one
//                      digit adds them with one atomic (all keys equal, or the
//                      consecutive indices of a tie pass, would otherwise
//                      serialize 32 atomics on one bin).
//   radixChooseKernel: one block; the counts above each digit by a block scan,
//                      the digit that holds the target (radixHolds) writes the
//                      new state (radixAdvance), and the histogram is zeroed
//                      for the next pass.
// The state lives in device memory (SelectState) and no pass waits for the
// host. The tie passes launch unconditionally and return at once when the key
// passes left no tie to break (tieBreakNeeded), so the host never learns
// whether they were needed.
#pragma once

#include <cub/block/block_scan.cuh>

#include "topk/radix_select.h"
#include "topk_device.cuh"

namespace sc {
namespace topk {

// One selection's state, in device memory.
struct SelectState {
  RadixState key;    // over the keys; after the key passes key.prefix = T
  RadixState tie;    // over tieKey(i) among the keys equal to T
  uint64_t lastTie;  // the largest index admitted with key == T
  uint32_t skip;     // nonzero: a select the call does not need (every pass returns at once)
};

// The state before the key passes of a select of the rank-th largest of count keys.
__device__ __forceinline__ void radixInit(SelectState* st, uint64_t rank, uint64_t count, bool skip) {
  st->key = radixStart(rank, count);
  st->tie = radixStart(0, 0);
  st->lastTie = 0;
  st->skip = skip;
}

constexpr int kHistThreads = 512;
constexpr int kHistUnroll = 4;    // elements per thread per step
constexpr int kChooseDigits = 4;  // per thread: 512 threads, no register spills
constexpr int kChooseThreads = kRadixBins / kChooseDigits;

__global__ void radixInitKernel(SelectState* st, uint64_t rank, uint64_t count) { radixInit(st, rank, count, false); }

// view(j, state, key) -> whether element j (< count) is in the multiset, and
// its radix key.
template <bool kTie, class View>
__global__ void __launch_bounds__(kHistThreads)
    radixHistKernel(View view, uint64_t count, const SelectState* st, RadixPass ps, unsigned long long* hist) {
  const SelectState sel = *st;
  if (sel.skip || (kTie && !tieBreakNeeded(sel.key))) return;
  const RadixState& s = kTie ? sel.tie : sel.key;
  __shared__ unsigned bins[kRadixBins];
  for (int b = threadIdx.x; b < kRadixBins; b += blockDim.x) bins[b] = 0;
  __syncthreads();
  // Each warp takes kHistUnroll x 32 consecutive elements per step (coalesced
  // loads, issued together before any atomic), and its trip count is uniform,
  // so the votes below always see the full warp.
  const unsigned lane = threadIdx.x & 31u;
  const uint64_t warp = (uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const uint64_t span = 32 * kHistUnroll, stride = uint64_t(gridDim.x) * (blockDim.x / 32) * span;
  for (uint64_t base = warp * span; base < count; base += stride) {
    bool in[kHistUnroll];
    unsigned d[kHistUnroll];
#pragma unroll
    for (int u = 0; u < kHistUnroll; ++u) {
      const uint64_t j = base + 32 * u + lane;
      uint64_t rk = 0;
      in[u] = j < count && view(j, sel, rk) && radixMatches(rk, s, ps);
      d[u] = in[u] ? radixDigit(rk, ps) : 0u;
    }
#pragma unroll
    for (int u = 0; u < kHistUnroll; ++u) {
      const unsigned ballot = __ballot_sync(~0u, in[u]);
      if (ballot == 0) continue;
      const int leader = __ffs(int(ballot)) - 1;
      const unsigned d0 = __shfl_sync(~0u, d[u], leader);
      if (__all_sync(~0u, !in[u] || d[u] == d0)) {
        if (int(lane) == leader) atomicAdd(&bins[d0], unsigned(__popc(ballot)));
      } else if (in[u]) {
        atomicAdd(&bins[d[u]], 1u);
      }
    }
  }
  __syncthreads();
  for (int b = threadIdx.x; b < kRadixBins; b += blockDim.x)
    if (bins[b]) atomicAdd(hist + b, (unsigned long long)bins[b]);
}

// After the last key pass the tie select starts (lastTie = the largest index:
// every tie, unless the tie passes narrow it); after the last tie pass lastTie
// is known.
template <bool kTie>
__global__ void __launch_bounds__(kChooseThreads)
    radixChooseKernel(unsigned long long* hist, SelectState* st, RadixPass ps, bool last, uint64_t n) {
  if (st->skip || (kTie && !tieBreakNeeded(st->key))) return;
  using Scan = cub::BlockScan<uint64_t, kChooseThreads>;
  __shared__ typename Scan::TempStorage temp;
  const RadixState s = kTie ? st->tie : st->key;
  // Thread t holds digits D-1-4t .. D-4-4t: an exclusive sum in that order
  // is the count above each digit.
  unsigned digit[kChooseDigits];
  uint64_t count[kChooseDigits], above[kChooseDigits];
  for (int r = 0; r < kChooseDigits; ++r) {
    digit[r] = unsigned(kRadixBins - 1 - (kChooseDigits * int(threadIdx.x) + r));
    count[r] = hist[digit[r]];
    hist[digit[r]] = 0;
  }
  Scan(temp).ExclusiveSum(count, above);
  __syncthreads();  // every thread has read the state before one writes it
  for (int r = 0; r < kChooseDigits; ++r) {
    if (!radixHolds(s, above[r], count[r])) continue;
    const RadixState next = radixAdvance(s, ps, digit[r], above[r], count[r]);
    if (!kTie) {
      st->key = next;
      if (last) {
        st->tie = tieStart(next);
        st->lastTie = ~uint64_t(0);
      }
    } else {
      st->tie = next;
      if (last) st->lastTie = lastTie(next, n);
    }
  }
}

// Launches the passes on a stream; one zeroed histogram serves every select
// run through it (each choose kernel zeroes what it read).
class RadixRunner {
 public:
  RadixRunner(Scratch& scratch, cudaStream_t s)
      : s_(s), hist_(scratch.zeroed<unsigned long long>(kRadixBins)), sms_(multiprocessors()) {}

  // st->key = the rank-th largest of the `count` keys view(j) (width bits).
  template <class View>
  void keys(View view, uint64_t count, int width, uint64_t rank, SelectState* st) {
    radixInitKernel<<<1, 1, 0, s_>>>(st, rank, count);
    SC_CUDA_CHECK(cudaGetLastError());
    passes<false>(view, count, width, st, 0);
  }
  // The same for a state a kernel initialised (radixInit): its rank and count
  // are in device memory, and it may be skipped. View(j) is called for j <
  // `span`, which covers every key the state counts.
  template <class View>
  void keysFromState(View view, uint64_t span, int width, SelectState* st) {
    passes<false>(view, span, width, st, 0);
  }

  // After keys(): st->lastTie, over the tie view of the same elements; n is
  // the vector's length (indices below n).
  template <class View>
  void ties(View view, uint64_t count, uint64_t n, SelectState* st) {
    passes<true>(view, count, indexWidth(n), st, n);
  }

 private:
  template <bool kTie, class View>
  void passes(View view, uint64_t count, int width, SelectState* st, uint64_t n) {
    // Enough blocks to fill the GPU (4 of 512 threads per SM), and enough that
    // no block counts 2^32 keys in its 32-bit shared bins.
    const uint64_t perBlock = uint64_t(kHistThreads) * kHistUnroll;
    uint64_t blocks = (count + perBlock - 1) / perBlock;
    const uint64_t fill = uint64_t(sms_ > 0 ? sms_ : 1) * 4;
    if (blocks > fill) blocks = fill;
    const uint64_t floor32 = (count >> 31) + 1;
    if (blocks < floor32) blocks = floor32;
    const int np = radixPasses(width);
    for (int p = 0; p < np; ++p) {
      const RadixPass ps = radixPass(width, p);
      radixHistKernel<kTie><<<unsigned(blocks), kHistThreads, 0, s_>>>(view, count, st, ps, hist_);
      SC_CUDA_CHECK(cudaGetLastError());
      radixChooseKernel<kTie><<<1, kChooseThreads, 0, s_>>>(hist_, st, ps, p == np - 1, n);
      SC_CUDA_CHECK(cudaGetLastError());
    }
  }

  cudaStream_t s_;
  unsigned long long* hist_;
  int sms_ = 0;
};

}  // namespace topk
}  // namespace sc
