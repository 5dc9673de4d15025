// How the split design of the approximate top-k kernels
// (kernels/topk_approx_split.cu) cuts a vector, and the placement arithmetic
// it needs, written once for the host and the device so that the CPU tests
// (tests/topk/approx_plan_test.cpp) check the very functions the kernels run.
//
// Small buckets (at most kWarpBucket elements) go one per warp: the bucket
// sits in the warp's registers, its norms and ranks are warp shuffles, and
// no block barrier or per-bucket thread block is needed. Larger buckets are
// cut into chunks of at most kChunk elements, one thread block each, so a
// bucket as long as the whole vector still spreads over every SM; the
// bucket's norms are then combined across its chunks (integer max and sum:
// any order gives the same bits) and every chunk places its entries from
// prefix sums of the chunks' counts.
#pragma once

#include <cstdint>

#include "core/numeric.h"  // SC_HD

namespace sc {
namespace topk {

// The largest bucket one warp holds in registers (32 lanes x 16 elements).
constexpr uint64_t kWarpItems = 16;
constexpr uint64_t kWarpBucket = 32 * kWarpItems;
// Elements per chunk of a large bucket (a thread block of 128 x 8).
constexpr uint64_t kChunk = 1024;

// Buckets of `bucket` elements over [0, n) (the last may be shorter), each cut
// into chunks of at most `chunk` elements (the last chunk of a bucket may be
// shorter). Chunks are numbered over the whole vector in index order, so
// chunk order is the order of the output stream.
struct ChunkPlan {
  uint64_t n, bucket, chunk;
  uint64_t perBucket;  // chunks of a full bucket
  uint64_t buckets, chunks;

  SC_HD static ChunkPlan make(uint64_t n, uint64_t bucket, uint64_t chunkMax) {
    ChunkPlan p{};
    p.n = n;
    p.bucket = bucket;
    p.chunk = bucket < chunkMax ? bucket : chunkMax;
    p.perBucket = (bucket + p.chunk - 1) / p.chunk;
    p.buckets = (n + bucket - 1) / bucket;
    const uint64_t lastLen = n - (p.buckets - 1) * bucket;
    p.chunks = (p.buckets - 1) * p.perBucket + (lastLen + p.chunk - 1) / p.chunk;
    return p;
  }
  SC_HD uint64_t bucketOf(uint64_t c) const { return c / perBucket; }
  SC_HD uint64_t firstChunk(uint64_t b) const { return b * perBucket; }
  // One past the last chunk of bucket b (= firstChunk(b + 1) but for the last bucket).
  SC_HD uint64_t endChunk(uint64_t b) const { return b + 1 == buckets ? chunks : firstChunk(b + 1); }
  SC_HD uint64_t bucketStart(uint64_t b) const { return b * bucket; }
  SC_HD uint64_t bucketEnd(uint64_t b) const { return b + 1 == buckets ? n : (b + 1) * bucket; }
  SC_HD uint64_t start(uint64_t c) const { return bucketStart(bucketOf(c)) + (c % perBucket) * chunk; }
  SC_HD uint64_t length(uint64_t c) const {
    const uint64_t s = start(c), e = bucketEnd(bucketOf(c));
    return e - s < chunk ? e - s : chunk;
  }
};

// Fixed output (kb slots per bucket): the first kb selected entries of the
// bucket are taken, padded with its first `pad` unselected ones, pad = kb -
// min(cnt, kb) for cnt selected. An entry with selRank selected and
// unselRank unselected entries before it in its bucket is taken when
// selected ? selRank < kb : unselRank < pad, and goes to slot
// min(selRank, kb) + min(unselRank, pad) of the bucket: the number of taken
// entries before it, with no scan over the entries in between.
SC_HD bool fixedTaken(bool selected, uint64_t selRank, uint64_t unselRank, uint64_t kb, uint64_t pad) {
  return selected ? selRank < kb : unselRank < pad;
}
SC_HD uint64_t fixedSlot(uint64_t selRank, uint64_t unselRank, uint64_t kb, uint64_t pad) {
  return (selRank < kb ? selRank : kb) + (unselRank < pad ? unselRank : pad);
}

// A 64-bit status word of the warp kernel's decoupled look-back over the
// buckets' selected counts: value << 2 | flag (counts are < 2^62).
constexpr uint64_t kLookInvalid = 0, kLookAggregate = 1, kLookInclusive = 2;
SC_HD uint64_t lookWord(uint64_t value, uint64_t flag) { return value << 2 | flag; }
SC_HD uint64_t lookValue(uint64_t w) { return w >> 2; }
SC_HD uint64_t lookFlag(uint64_t w) { return w & 3; }

}  // namespace topk
}  // namespace sc
