// The arithmetic of the split design of the approximate top-k kernels
// (csrc/topk/approx_plan.h, kernels/topk_approx_split.cu), on the CPU:
//  - ChunkPlan covers [0, n) once, in order, no chunk crossing a bucket, for
//    awkward sizes and without overflow at 2^40 elements;
//  - the fixed output's closed-form slots equal the CPU reference's
//    sequential placement;
//  - the kernels' decomposition itself — norms combined over chunks, counts
//    scanned over chunks, each chunk placing its entries from that prefix —
//    replayed here with the same shared functions, gives exactly the CPU
//    reference's selection, values, counts and residual, for variable and
//    fixed output, with and without error feedback, chunks of 1024 and of odd
//    sizes, buckets from 1 to n. (The GPU test runs the kernels themselves.)
#include <algorithm>
#include <random>

#include "topk/approx_plan.h"
#include "topk/philox.h"
#include "topk/select_math.h"
#include "topk_util.h"

using namespace tk;
using namespace sc::topk;

namespace {

TEST(TopkApproxPlan, ChunksCoverTheVectorInOrder) {
  using U = std::vector<uint64_t>;
  for (uint64_t n : U{1, 7, 512, 1000, 1024, 1025, 5000, 65537})
    for (uint64_t bucket : U{1, 3, 512, 513, 1024, 3000, 65536, n})
      for (uint64_t chunkMax : U{1, 7, 1024}) {
        SCOPED_TRACE(testing::Message() << "n " << n << " bucket " << bucket << " chunk " << chunkMax);
        const ChunkPlan p = ChunkPlan::make(n, bucket, chunkMax);
        uint64_t next = 0;
        for (uint64_t c = 0; c < p.chunks; ++c) {
          const uint64_t b = p.bucketOf(c);
          ASSERT_EQ(p.start(c), next);
          ASSERT_GT(p.length(c), 0u);
          ASSERT_LE(p.length(c), p.chunk);
          ASSERT_GE(p.start(c), p.bucketStart(b));
          ASSERT_LE(p.start(c) + p.length(c), p.bucketEnd(b));
          ASSERT_TRUE(c >= p.firstChunk(b) && c < p.endChunk(b));
          next += p.length(c);
        }
        EXPECT_EQ(next, n);
        EXPECT_EQ(p.bucketOf(p.chunks - 1), p.buckets - 1);
        EXPECT_EQ(p.endChunk(p.buckets - 1), p.chunks);
      }
}

TEST(TopkApproxPlan, LargeVectorsDoNotOverflow) {
  const uint64_t n = (uint64_t(1) << 40) + 12345, bucket = (uint64_t(1) << 32) - 1;
  const ChunkPlan p = ChunkPlan::make(n, bucket, kChunk);
  const uint64_t last = p.chunks - 1;
  EXPECT_EQ(p.start(last) + p.length(last), n);
  EXPECT_EQ(p.bucketEnd(p.bucketOf(last)), n);
  EXPECT_EQ(p.start(p.firstChunk(p.buckets - 1)), (p.buckets - 1) * bucket);
}

// The reference's sequential rule (reference_approx.cpp placeFixed).
TEST(TopkApproxPlan, FixedSlotsEqualTheSequentialPlacement) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const uint64_t len = 1 + rng() % 300, kb = rng() % (len + 1);
    const double p = double(rng() % 1000) / 1000.0;
    std::vector<bool> sel(len);
    uint64_t cnt = 0;
    for (uint64_t j = 0; j < len; ++j) cnt += (sel[j] = double(rng() % 1000) / 1000.0 < p);
    const uint64_t pad = kb - std::min(cnt, kb);
    uint64_t selRank = 0, unselRank = 0, slot = 0;
    for (uint64_t j = 0; j < len; ++j) {
      const bool taken = sel[j] ? selRank < kb : unselRank < pad;
      ASSERT_EQ(fixedTaken(sel[j], selRank, unselRank, kb, pad), taken) << "trial " << trial << " j " << j;
      if (taken) ASSERT_EQ(fixedSlot(selRank, unselRank, kb, pad), slot++) << "trial " << trial << " j " << j;
      ++(sel[j] ? selRank : unselRank);
    }
    EXPECT_EQ(slot, kb);
  }
}

TEST(TopkApproxPlan, LookBackWordsKeepValueAndFlag) {
  for (uint64_t v : std::vector<uint64_t>{0, 1, 12345, (uint64_t(1) << 62) - 1})
    for (uint64_t f : {kLookInvalid, kLookAggregate, kLookInclusive}) {
      EXPECT_EQ(lookValue(lookWord(v, f)), v);
      EXPECT_EQ(lookFlag(lookWord(v, f)), f);
    }
}

// What the split kernels compute, chunk by chunk, on the CPU.
template <class F>
struct SplitModel {
  using Bits = typename F::Bits;
  std::vector<uint64_t> idx;
  std::vector<Bits> val, residual;
  uint64_t selected = 0, nnz = 0, deferred = 0;

  SplitModel(const std::vector<Bits>& g, const std::vector<Bits>* r, const scTopkConfig_t& cfg, uint64_t capacity,
             uint64_t chunkMax) {
    const uint64_t n = g.size(), k = cfg.k;
    const bool fixed = cfg.output == scTopkFixedPerBucket, atMost = cfg.method == scTopkApproxAtMost;
    const ChunkPlan plan = ChunkPlan::make(n, cfg.bucket, chunkMax);
    std::vector<Bits> acc(n);
    for (uint64_t i = 0; i < n; ++i) acc[i] = r ? F::add(g[i], (*r)[i]) : g[i];
    auto chunkOf = [&](uint64_t c, auto&& f) {
      for (uint64_t i = plan.start(c); i < plan.start(c) + plan.length(c); ++i) f(i);
    };
    // Passes 1 and 2: norms combined over chunks (max, then integer sum).
    std::vector<Bits> bmax(plan.buckets, 0);
    std::vector<uint64_t> bQ(plan.buckets, 0);
    for (uint64_t c = 0; c < plan.chunks; ++c) {
      Bits m = 0;
      chunkOf(c, [&](uint64_t i) {
        const Bits a = F::absBits(acc[i]);
        if (F::finite(a)) m = std::max(m, a);
      });
      bmax[plan.bucketOf(c)] = std::max(bmax[plan.bucketOf(c)], m);
    }
    for (uint64_t c = 0; c < plan.chunks; ++c) {
      const int ee = effExp<F>(bmax[plan.bucketOf(c)]);
      chunkOf(c, [&](uint64_t i) {
        const Bits a = F::absBits(acc[i]);
        bQ[plan.bucketOf(c)] += F::finite(a) ? quantize<F>(a, ee) : 0;
      });
    }
    auto share = [&](uint64_t pos) { return shareBefore(k, pos, n); };
    auto flag = [&](uint64_t i) {
      const uint64_t b = i / cfg.bucket, s = plan.bucketStart(b), e = plan.bucketEnd(b);
      const int ee = effExp<F>(bmax[b]);
      const Decision d = makeDecision(atMost, share(e) - share(s), e - s, quantize<F>(bmax[b], ee), bQ[b]);
      const Bits a = F::absBits(acc[i]);
      return !F::finite(a) || chooses(d, selectBits(cfg.seed, cfg.step, i), F::finite(a) ? quantize<F>(a, ee) : 0);
    };
    // Pass 3 and the scan: chunk counts, exclusive prefix.
    std::vector<uint64_t> prefix(plan.chunks + 1, 0);
    for (uint64_t c = 0; c < plan.chunks; ++c) {
      uint64_t cnt = 0;
      chunkOf(c, [&](uint64_t i) { cnt += flag(i); });
      prefix[c + 1] = prefix[c] + cnt;
    }
    selected = prefix[plan.chunks];
    // Pass 4: placement from the prefix alone.
    const uint64_t slots = fixed ? k : capacity;
    idx.assign(slots, ~uint64_t(0));
    val.assign(slots, Bits(0));
    residual = acc;
    for (uint64_t c = 0; c < plan.chunks; ++c) {
      const uint64_t b = plan.bucketOf(c), bs = plan.bucketStart(b), sb = share(bs);
      const uint64_t kb = share(plan.bucketEnd(b)) - sb;
      const uint64_t first = prefix[plan.firstChunk(b)], cnt = prefix[plan.endChunk(b)] - first;
      const uint64_t pad = kb - std::min(cnt, kb);
      uint64_t rank = prefix[c];
      chunkOf(c, [&](uint64_t i) {
        const bool s = flag(i);
        bool sent = false;
        if (!fixed) {
          sent = s && rank < capacity;
          if (sent) idx[rank] = i, val[rank] = acc[i];
        } else {
          const uint64_t selRank = rank - first, unselRank = (i - bs) - selRank;
          if (fixedTaken(s, selRank, unselRank, kb, pad)) {
            const uint64_t slot = sb + fixedSlot(selRank, unselRank, kb, pad);
            idx[slot] = i;
            val[slot] = s ? acc[i] : Bits(0);
            sent = s;
          }
        }
        if (sent) residual[i] = 0;
        rank += s;
      });
      if (fixed && c == plan.firstChunk(b)) deferred += cnt - std::min(cnt, kb);
    }
    nnz = fixed ? k : std::min(selected, capacity);
    if (!fixed) deferred = selected - nnz;
    idx.resize(nnz);
    val.resize(nnz);
  }
};

template <class F>
void checkModel(scDataType_t dt, size_t n, scTopkConfig_t cfg, uint64_t chunkMax, bool feedback) {
  using Bits = typename F::Bits;
  SCOPED_TRACE(testing::Message() << sc::dtypeName(dt) << " n " << n << " k " << cfg.k << " bucket " << cfg.bucket
                                  << (cfg.output == scTopkFixedPerBucket ? " fixed" : " variable") << " chunk "
                                  << chunkMax << (feedback ? " feedback" : ""));
  const Buf gb(randomVector(n, 11 + n), dt);
  const Buf rb(randomVector(n, 23 + n, 0.5), dt);
  std::vector<Bits> g(n), r(n);
  for (size_t i = 0; i < n; ++i) g[i] = Bits(bitsAt(gb.data(), i, dt)), r[i] = Bits(bitsAt(rb.data(), i, dt));
  const uint64_t capacity = cfg.k + cfg.k / 8 + 1;
  if (feedback) cfg.step = 0;  // a new state's counter: the step it selects with
  const SplitModel<F> m(g, feedback ? &r : nullptr, cfg, capacity, chunkMax);

  // The CPU reference, through the public API.
  std::vector<char> idx(capacity * 8), val(capacity * sizeof(Bits));
  scTopkInfo_t info{};
  std::vector<Bits> res = r;
  if (feedback) {
    scTopkState_t st = nullptr;
    ASSERT_EQ(scTopkStateCreate(&st, n, dt, -1), scSuccess);
    void* rp = nullptr;
    scTopkStateResidual(st, &rp);
    std::memcpy(rp, r.data(), n * sizeof(Bits));
    ASSERT_EQ(scTopkSelectFeedback(st, g.data(), &cfg, idx.data(), val.data(), capacity, &info, nullptr), scSuccess)
        << scGetLastError(nullptr);
    std::memcpy(res.data(), rp, n * sizeof(Bits));
    scTopkStateDestroy(st);
  } else {
    ASSERT_EQ(scTopkSelect(g.data(), n, dt, &cfg, idx.data(), val.data(), capacity, &info, nullptr), scSuccess)
        << scGetLastError(nullptr);
  }
  EXPECT_EQ(m.selected, info.selected);
  EXPECT_EQ(m.nnz, info.nnz);
  EXPECT_EQ(m.deferred, info.deferred);
  const Sel ref = readBack(idx.data(), val.data(), info.nnz, cfg.indexType, dt);
  ASSERT_EQ(m.idx, ref.idx);
  std::vector<uint64_t> bits(m.val.begin(), m.val.end());
  ASSERT_EQ(bits, ref.bits);
  if (feedback) EXPECT_EQ(m.residual, res);
}

TEST(TopkApproxPlan, ChunkedDecompositionEqualsTheReference) {
  for (scTopkOutput_t out : {scTopkVariable, scTopkFixedPerBucket})
    for (scTopkMethod_t method : {scTopkApprox, scTopkApproxAtMost})
      for (bool feedback : {false, true})
        for (uint64_t chunk : {uint64_t(7), kChunk})
          for (auto [n, bucket] : std::vector<std::pair<size_t, size_t>>{
                   {1000, 1}, {4099, 3}, {4099, 512}, {5000, 513}, {5000, 1025}, {9000, 3000}, {4099, 4099}}) {
            scTopkConfig_t cfg = config(method, std::max<size_t>(1, n / 50), bucket, 5, 3);
            cfg.output = out;
            checkModel<F32>(scFloat32, n, cfg, chunk, feedback);
            if (chunk == kChunk) {
              checkModel<F16>(scFloat16, n, cfg, chunk, feedback);
              checkModel<F64>(scFloat64, n, cfg, chunk, feedback);
            }
          }
}

}  // namespace
