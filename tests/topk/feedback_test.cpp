// Error feedback (thesis Algorithm 2) on host states: conservation bit for bit
// (sent + new residual == g + old residual, element by element) for every
// method, output mode and dtype over several steps; deferral of entries that
// do not fit; the step counter; NaN/Inf treatment.
#include <algorithm>
#include <limits>
#include <map>

#include "topk/params.h"
#include "topk_util.h"

using namespace tk;

namespace {

struct State {
  scTopkState_t st = nullptr;
  size_t n;
  scDataType_t dt;
  State(size_t n_, scDataType_t dt_) : n(n_), dt(dt_) {
    EXPECT_EQ(scTopkStateCreate(&st, n, dt, -1), scSuccess) << scGetLastError(nullptr);
  }
  ~State() { scTopkStateDestroy(st); }
  Buf residual() const {
    void* r = nullptr;
    EXPECT_EQ(scTopkStateResidual(st, &r), scSuccess);
    Buf b(n, dt);
    std::memcpy(b.data(), r, n * esz(dt));
    return b;
  }
  Sel step(const Buf& g, const scTopkConfig_t& cfg, size_t capacity) {
    std::vector<uint64_t> idx(capacity + 1);
    Buf val(capacity + 1, dt);
    scTopkInfo_t info{};
    const scResult_t rc = scTopkSelectFeedback(st, g.data(), &cfg, idx.data(), val.data(), capacity, &info, nullptr);
    Sel s = readBack(idx.data(), val.data(), rc == scSuccess ? info.nnz : 0, cfg.indexType, dt);
    s.rc = rc;
    s.info = info;
    return s;
  }
};

// One step checked against the independent acc = g + r_old:
// sent entries carry acc and leave +0 behind; every other entry keeps acc.
void expectConservation(const Buf& g, const Buf& rOld, const Buf& rNew, const Sel& s) {
  std::map<uint64_t, uint64_t> sent;
  for (size_t j = 0; j < s.idx.size(); ++j) sent[s.idx[j]] = s.bits[j];
  for (size_t i = 0; i < g.size(); ++i) {
    const uint64_t acc = addBits(g.bits(i), rOld.bits(i), g.dt);
    auto it = sent.find(i);
    if (it != sent.end() && (it->second != 0 || rNew.bits(i) == 0)) {
      // A sent entry (or a zero-valued pad): value + residual reproduce acc.
      if (rNew.bits(i) == 0) {
        ASSERT_EQ(it->second, acc) << "sent value != g + r at " << i;
      } else {
        ASSERT_EQ(it->second, 0u) << "pad with a value at " << i;
        ASSERT_EQ(rNew.bits(i), acc) << "padded entry lost its residual at " << i;
      }
    } else {
      ASSERT_EQ(rNew.bits(i), acc) << "residual != g + r at unsent " << i;
    }
  }
}

}  // namespace

TEST(TopkFeedback, ConservationIsBitExact) {
  const size_t n = 3001;
  for (scDataType_t dt : {scFloat32, scFloat64, scFloat16, scBfloat16}) {
    for (scTopkMethod_t m : {scTopkApprox, scTopkApproxAtMost, scTopkExact, scTopkThreshold, scTopkBracket}) {
      for (scTopkOutput_t out : {scTopkVariable, scTopkFixedPerBucket}) {
        if (out == scTopkFixedPerBucket && !sc::topk::bucketed(m)) continue;
        State st(n, dt);
        scTopkConfig_t c = config(m, 30, 256, 42);
        c.output = out;
        size_t cap = 0;
        ASSERT_EQ(scTopkMaxOutput(n, &c, &cap), scSuccess);
        for (int t = 0; t < 4; ++t) {
          const Buf g(randomVector(n, 100 + t, t == 2 ? 1e-3 : 1.0), dt);  // mixed scales
          const Buf rOld = st.residual();
          const Sel s = st.step(g, c, cap);
          ASSERT_EQ(s.rc, scSuccess) << scGetLastError(nullptr);
          expectSortedUnique(s.idx, n);
          expectConservation(g, rOld, st.residual(), s);
          if (m == scTopkExact) ASSERT_EQ(s.idx.size(), 30u);
        }
        uint64_t step = 0;
        EXPECT_EQ(scTopkStateGetStep(st.st, &step), scSuccess);
        EXPECT_EQ(step, 4u);
      }
    }
  }
}

TEST(TopkFeedback, ExactFeedbackSendsTheTopOfAccumulated) {
  // Algorithm 2: the residual carries unsent mass; after a step with g = 0 the
  // former residual is what gets selected.
  State st(8, scFloat32);
  const Buf g1(std::vector<double>{1, -5, 2, 4, 0.5, -3, 0, 6}, scFloat32);
  const scTopkConfig_t c = config(scTopkExact, 3);
  const Sel s1 = st.step(g1, c, 3);
  EXPECT_EQ(s1.idx, (std::vector<uint64_t>{1, 3, 7}));
  const Buf g2(std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0}, scFloat32);
  const Sel s2 = st.step(g2, c, 3);
  EXPECT_EQ(s2.idx, (std::vector<uint64_t>{0, 2, 5}));
  const Buf r = st.residual();
  EXPECT_EQ(r.at(4), 0.5);
  EXPECT_EQ(r.at(1), 0.0);
}

TEST(TopkFeedback, OverflowIsDeferredToTheResidual) {
  // Variable output with capacity k: whatever does not fit stays in the residual.
  const size_t n = 2048, k = 64;
  const Buf g(randomVector(n, 1), scFloat32);
  scTopkConfig_t c = config(scTopkApprox, k, 512, 1);
  bool sawOverflow = false;
  for (int t = 0; t < 30 && !sawOverflow; ++t) {
    State st(n, scFloat32);
    ASSERT_EQ(scTopkStateSetStep(st.st, uint64_t(t)), scSuccess);
    const Buf rOld = st.residual();
    const Sel s = st.step(g, c, k);
    ASSERT_EQ(s.rc, scSuccess) << scGetLastError(nullptr);
    EXPECT_EQ(s.info.nnz, std::min<size_t>(s.info.selected, k));
    EXPECT_EQ(s.info.deferred, s.info.selected - s.info.nnz);
    expectConservation(g, rOld, st.residual(), s);
    if (s.info.deferred > 0) {
      sawOverflow = true;
      // The stateless call reports the same overflow as an error.
      c.step = uint64_t(t);
      const Sel plain = select(g, c, k);
      EXPECT_EQ(plain.rc, scInvalidUsage);
      EXPECT_EQ(plain.info.deferred, s.info.deferred);
      EXPECT_EQ(plain.idx, s.idx);
    }
  }
  EXPECT_TRUE(sawOverflow) << "no step selected more than k: the test did not exercise overflow";
}

TEST(TopkFeedback, StepCounterDrivesRandomness) {
  const size_t n = 1024;
  const Buf g(randomVector(n, 3), scFloat32);
  const scTopkConfig_t c = config(scTopkApprox, 50, 512, 9);
  State a(n, scFloat32), b(n, scFloat32);
  ASSERT_EQ(scTopkStateSetStep(b.st, 6), scSuccess);
  const Sel sa = a.step(g, c, n);
  const Sel sb = b.step(g, c, n);
  // State step 0 draws like a stateless call with step 0, not like step 6.
  scTopkConfig_t c0 = c;
  c0.step = 0;
  EXPECT_EQ(sa.idx, select(g, c0).idx);
  c0.step = 6;
  EXPECT_EQ(sb.idx, select(g, c0).idx);
  EXPECT_NE(sa.idx, sb.idx);
  EXPECT_EQ(scTopkStateReset(a.st, nullptr), scSuccess);
  uint64_t step = 1;
  EXPECT_EQ(scTopkStateGetStep(a.st, &step), scSuccess);
  EXPECT_EQ(step, 0u);
  const Buf r = a.residual();
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(r.bits(i), 0u);
}

TEST(TopkFeedback, NonFiniteEntriesAreAlwaysSentNeverKept) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x = randomVector(1024, 5);
  x[10] = inf;
  x[600] = -inf;
  x[900] = nan;
  for (scDataType_t dt : {scFloat32, scFloat16}) {
    const Buf g(x, dt);
    for (scTopkMethod_t m : {scTopkApprox, scTopkApproxAtMost, scTopkExact, scTopkThreshold, scTopkBracket}) {
      for (uint64_t step = 0; step < 10; ++step) {
        State st(1024, dt);
        ASSERT_EQ(scTopkStateSetStep(st.st, step), scSuccess);
        const Sel s = st.step(g, config(m, 8, 512, 3), 1024);
        ASSERT_EQ(s.rc, scSuccess) << scGetLastError(nullptr);
        for (uint64_t i : {10, 600, 900})
          EXPECT_NE(std::find(s.idx.begin(), s.idx.end(), i), s.idx.end()) << scTopkMethodName(m) << " " << i;
        const Buf r = st.residual();
        for (size_t i = 0; i < 1024; ++i) ASSERT_TRUE(std::isfinite(r.at(i))) << "residual " << i;
        // The norms ignore the non-finite entries: the finite ones are still selected.
        if (sc::topk::bucketed(m)) EXPECT_GT(s.idx.size(), 3u);
      }
    }
  }
}
