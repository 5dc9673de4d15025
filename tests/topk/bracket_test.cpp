// The sampled selection (bracket, and exact and threshold through the same
// pass) against a full sort of the keys, on vectors long enough that the
// sample, the candidate list and the select among candidates all run; each
// branch after the pass (all candidates, a select in the band or above the
// upper cut, an overflow of the list, a sample that cut too high) reached on
// purpose; the miss rate over many seeds; conservation with error feedback.
#include <algorithm>
#include <limits>
#include <numeric>
#include <set>

#include "topk/philox.h"
#include "topk/select_plan.h"
#include "topk_util.h"

using namespace tk;

namespace {

uint64_t keyMask(scDataType_t dt) {
  return esz(dt) == 8 ? ~(uint64_t(1) << 63) : (uint64_t(1) << (8 * esz(dt) - 1)) - 1;
}

// The largest min(k, #keys >= minKey) keys of v among those >= minKey (abs bit
// patterns, NaN > Inf), ties to the smaller index, sorted by index: the oracle.
std::vector<uint64_t> oracle(const Buf& v, size_t k, uint64_t minKey) {
  const uint64_t mask = keyMask(v.dt);
  std::vector<uint64_t> order;
  for (uint64_t i = 0; i < v.size(); ++i)
    if ((v.bits(i) & mask) >= minKey) order.push_back(i);
  const size_t take = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + int64_t(take), order.end(), [&](uint64_t a, uint64_t b) {
    const uint64_t x = v.bits(a) & mask, y = v.bits(b) & mask;
    return x > y || (x == y && a < b);
  });
  order.resize(take);
  std::sort(order.begin(), order.end());
  return order;
}

// The plan a default bracket call of (n, k) runs.
sc::topk::SelectPlan bracketPlan(uint64_t n, uint64_t k) {
  sc::topk::Params p{};
  p.method = scTopkBracket;
  p.n = n;
  p.k = k;
  p.samples = sc::topk::bracketSamples(n, k);
  return sc::topk::selectPlan(p);
}

void expectOracle(const Buf& v, scTopkMethod_t m, size_t k, uint64_t seed, const char* what) {
  scTopkConfig_t c = config(m, k, 0, seed, seed % 7);
  const Sel s = select(v, c);
  ASSERT_EQ(s.rc, scSuccess) << scGetLastError(nullptr);
  const std::vector<uint64_t> want = oracle(v, k, m == scTopkBracket ? 1 : 0);
  ASSERT_EQ(s.idx, want) << what << ": " << scTopkMethodName(m) << " dtype " << v.dt << " n " << v.size() << " k " << k;
  for (size_t j = 0; j < s.idx.size(); ++j) ASSERT_EQ(s.bits[j], v.bits(s.idx[j])) << "value at " << j;
  EXPECT_EQ(s.info.nnz, want.size());
  EXPECT_EQ(s.info.selected, want.size());
  EXPECT_EQ(s.info.deferred, 0u);
}

// Element i drawn from one of several shapes.
std::vector<double> shaped(size_t n, int shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit;
  std::vector<double> x(n);
  for (auto& e : x) {
    switch (shape) {
      case 0: e = normal(rng); break;                                       // smooth
      case 1: e = std::round(normal(rng) * 4) / 4; break;                   // a few levels: ties at every cut
      case 2: e = unit(rng) < 0.01 ? normal(rng) : 0.0; break;              // 99 % zeros
      case 3: e = std::exp(8 * normal(rng)) * (rng() & 1 ? 1 : -1); break;  // huge dynamic range
    }
  }
  return x;
}

}  // namespace

TEST(TopkBracket, MatchesTheOracleWhereTheSampleRuns) {
  const size_t n = (size_t(1) << 18) + 3;  // candidateBound(k, n) < n for k <= n/8: the sampled path
  for (int shape = 0; shape < 4; ++shape) {
    for (scDataType_t dt : {scFloat32, scFloat64, scFloat16, scBfloat16}) {
      const Buf v(shaped(n, shape, 11 + uint64_t(shape)), dt);
      for (size_t k : {size_t(1), size_t(5), n / 1000, n / 100, n / 40})
        for (scTopkMethod_t m : {scTopkBracket, scTopkExact, scTopkThreshold}) {
          if (m == scTopkThreshold) continue;  // fewer than k by design: checked below
          expectOracle(v, m, k, 3 + k, "shape");
        }
    }
  }
}

TEST(TopkBracket, SmallVectorsGoStraightToTheSelect) {
  for (size_t n : {size_t(1), size_t(2), size_t(100), size_t(70000)}) {
    const Buf v(shaped(n, 1, n), scFloat32);
    for (size_t k : {size_t(1), (n + 1) / 2, n}) {
      expectOracle(v, scTopkBracket, k, 1, "small");
      expectOracle(v, scTopkExact, k, 1, "small");
    }
  }
}

TEST(TopkBracket, ThresholdKeepsTheTopOfWhatItReturns) {
  // Threshold returns the c <= k largest keys (those >= its cut): the oracle's top c.
  const size_t n = size_t(1) << 18;
  for (int shape = 0; shape < 4; ++shape) {
    const Buf v(shaped(n, shape, 5), scFloat32);
    for (size_t k : {size_t(3), n / 1000, n / 100}) {
      const Sel s = select(v, config(scTopkThreshold, k, 0, 9));
      ASSERT_EQ(s.rc, scSuccess);
      ASSERT_LE(s.idx.size(), k);
      // Every key >= the cut, or the top k of them: closed under ties either way.
      EXPECT_EQ(s.idx, oracle(v, s.idx.size(), 0)) << "shape " << shape << " k " << k;
    }
  }
}

TEST(TopkBracket, NonFiniteRankFirst) {
  const size_t n = size_t(1) << 18;
  std::vector<double> x = shaped(n, 0, 4);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (size_t i : {size_t(7), size_t(99999), n - 1}) x[i] = nan;
  for (size_t i : {size_t(0), size_t(5000), size_t(123456)}) x[i] = -inf;
  const Buf v(x, scFloat32);
  for (size_t k : {size_t(2), size_t(6), size_t(262)}) {
    expectOracle(v, scTopkBracket, k, 2, "non-finite");
    expectOracle(v, scTopkExact, k, 2, "non-finite");
  }
}

TEST(TopkBracket, ZerosAreNeverSentButExactPadsWithThem) {
  const size_t n = size_t(1) << 18;
  std::vector<double> x(n, 0.0);
  for (size_t i = 0; i < 1000; ++i) x[(i * 7919) % n] = 1.0 + double(i);
  const Buf v(x, scFloat32);
  const Sel b = select(v, config(scTopkBracket, 2621));  // k > the 1000 nonzeros
  ASSERT_EQ(b.rc, scSuccess);
  EXPECT_EQ(b.idx.size(), 1000u);
  EXPECT_EQ(b.idx, oracle(v, 2621, 1));
  const Sel e = select(v, config(scTopkExact, 2621));
  EXPECT_EQ(e.idx, oracle(v, 2621, 0));  // 1000 nonzeros and the first 1621 zeros
  const Buf zero(std::vector<double>(n, 0.0), scFloat32);
  EXPECT_EQ(select(zero, config(scTopkBracket, 100)).idx.size(), 0u);
  EXPECT_EQ(select(zero, config(scTopkExact, 100)).idx.size(), 100u);
}

TEST(TopkBracket, OverflowingListFallsBackToTheExactSelect) {
  // Every magnitude equal: all n keys pass any cut, the list overflows, and the
  // exact select over the vector keeps the first k indices.
  const size_t n = size_t(1) << 18;
  std::vector<double> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = i % 3 ? 2.5 : -2.5;
  const Buf v(x, scFloat32);
  for (scTopkMethod_t m : {scTopkBracket, scTopkExact, scTopkThreshold}) {
    const Sel s = select(v, config(m, 300));
    ASSERT_EQ(s.rc, scSuccess);
    std::vector<uint64_t> first(300);
    std::iota(first.begin(), first.end(), 0);
    EXPECT_EQ(s.idx, first) << scTopkMethodName(m);
  }
}

TEST(TopkBracket, ASampleThatCutsTooHighReturnsFewerOnlyForBracket) {
  // Large values planted at the sample's own positions put the sample's lower
  // cut above the k-th key: bracket returns the keys above the cut (every one
  // of them in the top k), exact falls back to the whole vector.
  const size_t n = size_t(1) << 20, k = 100;
  scTopkConfig_t c = config(scTopkBracket, k, 0, 77, 3);
  const sc::topk::SelectPlan plan = bracketPlan(n, k);
  ASSERT_GT(plan.samples, 0u);
  std::vector<double> x = shaped(n, 0, 8);
  std::set<uint64_t> planted;
  for (uint64_t j = 0; planted.size() < plan.rankLo + 5; ++j)
    planted.insert(sc::topk::scaleToRange(sc::topk::sampleBits(c.seed, c.step, j), n));
  for (uint64_t i : planted) x[i] = 100.0 + double(i % 97);
  const Buf v(x, scFloat32);
  const Sel b = select(v, c);
  ASSERT_EQ(b.rc, scSuccess);
  EXPECT_LT(b.idx.size(), k);
  EXPECT_GT(b.idx.size(), 0u);
  const std::vector<uint64_t> top = oracle(v, b.idx.size(), 1);
  EXPECT_EQ(b.idx, top);
  c.method = scTopkExact;
  EXPECT_EQ(select(v, c).idx, oracle(v, k, 0));
}

TEST(TopkBracket, NoMissOverManySeeds) {
  // The cuts sit 5 sigma from the expected rank: in 400 calls on fresh data
  // bracket must return min(k, nonzeros) every time.
  const size_t n = size_t(1) << 19;
  int misses = 0, calls = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const Buf v(shaped(n, int(seed % 3), 1000 + seed), scFloat32);
    for (size_t k : {n / 1000, n / 100}) {
      for (uint64_t step = 0; step < 2; ++step) {
        const Sel s = select(v, config(scTopkBracket, k, 0, seed, step));
        ASSERT_EQ(s.rc, scSuccess);
        misses += s.idx.size() != oracle(v, k, 1).size();
        ++calls;
      }
    }
  }
  EXPECT_EQ(misses, 0) << "of " << calls << " calls";
}

TEST(TopkBracket, FeedbackConservesAndResidualIsAcc) {
  const size_t n = (size_t(1) << 18) + 17;
  for (scDataType_t dt : {scFloat32, scFloat16}) {
    for (scTopkMethod_t m : {scTopkBracket, scTopkExact, scTopkThreshold}) {
      scTopkState_t st = nullptr;
      ASSERT_EQ(scTopkStateCreate(&st, n, dt, -1), scSuccess);
      void* res = nullptr;
      ASSERT_EQ(scTopkStateResidual(st, &res), scSuccess);
      scTopkConfig_t c = config(m, n / 500, 0, 5);
      c.indexType = scTopkIndexU64;
      for (int t = 0; t < 3; ++t) {
        const Buf g(shaped(n, t, 50 + uint64_t(t)), dt);
        Buf rOld(n, dt);
        std::memcpy(rOld.data(), res, n * esz(dt));
        std::vector<uint64_t> idx(c.k);
        Buf val(c.k, dt);
        scTopkInfo_t info{};
        ASSERT_EQ(scTopkSelectFeedback(st, g.data(), &c, idx.data(), val.data(), c.k, &info, nullptr), scSuccess);
        Buf acc(n, dt);
        for (size_t i = 0; i < n; ++i) {
          const uint64_t a = addBits(g.bits(i), rOld.bits(i), dt);
          std::memcpy(static_cast<char*>(acc.data()) + i * esz(dt), &a, esz(dt));
        }
        const std::vector<uint64_t> want = oracle(acc, c.k, m == scTopkBracket ? 1 : 0);
        if (m != scTopkThreshold) ASSERT_EQ(std::vector<uint64_t>(idx.begin(), idx.begin() + int64_t(info.nnz)), want);
        std::vector<bool> sent(n);
        for (size_t j = 0; j < info.nnz; ++j) {
          sent[idx[j]] = true;
          ASSERT_EQ(val.bits(j), acc.bits(idx[j]));
        }
        for (size_t i = 0; i < n; ++i)
          ASSERT_EQ(bitsAt(res, i, dt), sent[i] ? 0u : acc.bits(i)) << scTopkMethodName(m) << " at " << i;
      }
      scTopkStateDestroy(st);
    }
  }
}

TEST(TopkBracket, PlanBracketsTheExpectedRank) {
  for (uint64_t n : {uint64_t(1) << 17, uint64_t(1) << 22, uint64_t(1) << 26})
    for (uint64_t k : {n / 1000, n / 100, uint64_t(10)}) {
      const sc::topk::SelectPlan s = bracketPlan(n, k);
      if (s.bound >= n) {
        EXPECT_EQ(s.samples, 0u);
        continue;
      }
      ASSERT_GE(s.samples, 1024u);
      ASSERT_LE(s.samples, std::min<uint64_t>(uint64_t(1) << 18, n / 8));
      const double r = double(k) * double(s.samples) / double(n);
      EXPECT_GT(double(s.rankLo), r);
      EXPECT_LT(double(s.rankHi), r);
      EXPECT_LE(s.rankLo, s.samples);
      // The lower cut's expected candidate count fits the list with room.
      EXPECT_LT(double(s.rankLo) / double(s.samples) * double(n), 0.8 * double(s.bound));
    }
}
