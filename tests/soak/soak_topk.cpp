// The soak's top-k call: TopK SGD's communication step (thesis Algorithm 2)
// for a few steps. Every rank recomputes every rank's selections with host
// states of its own (selection is deterministic in (seed, step, input)), so
// the sparse allreduce of the selections has an exact reference: the
// gradients are small integers, every sum is exact in every float type. The
// rank's own selections are also checked against the top-k contract: sorted
// unique indices, the exact and bracket methods against an independent top-k, and bitwise
// conservation (sent + new residual == gradient + old residual); the first
// step must equal the stateless selection (scTopkSelect).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <sstream>

#include "soak_calls.h"
#include "topk/topk_util.h"

namespace soak {
namespace {

// Rank q's gradient at step t: integers in [-4, 4], about a third zero.
tk::Buf gradient(const Plan& p, int q, int t) {
  std::vector<double> g(p.count);
  Rng r{mix2(p.index * 64 + uint64_t(q) * 4 + uint64_t(t), 0x6ead)};
  for (double& x : g) x = r.chance(0.33) ? 0.0 : double(int(r.below(9)) - 4);
  return tk::Buf(g, p.dt);
}

scTopkConfig_t topkConfig(const Plan& p, int q) {
  scTopkConfig_t c = tk::config(scTopkMethod_t(p.method), p.k, p.bucket, p.index * 131 + uint64_t(q));
  c.output = p.fixedOut ? scTopkFixedPerBucket : scTopkVariable;
  c.indexType = p.it;
  return c;
}

double fromBits(uint64_t bits, scDataType_t dt) { return tk::load(&bits, 0, dt); }
bool isZero(uint64_t bits, scDataType_t dt) { return (bits << (64 - 8 * tk::esz(dt)) << 1) == 0; }

// The contract of one feedback step on this rank (see the file comment).
void checkStep(const Plan& p, const tk::Buf& g, const std::vector<uint64_t>& rOld, const void* rNew, const tk::Sel& sel,
               size_t cap) {
  const size_t n = p.count;
  tk::expectSortedUnique(sel.idx, n);
  EXPECT_LE(sel.info.nnz, cap);
  if (p.fixedOut) {
    EXPECT_EQ(sel.info.nnz, p.k) << "fixed output must write exactly k entries";
  }
  if (p.method == scTopkThreshold || p.method == scTopkBracket) {
    EXPECT_LE(sel.info.nnz, p.k);
  }
  std::vector<uint64_t> acc(n);
  for (size_t i = 0; i < n; ++i) acc[i] = tk::addBits(g.bits(i), rOld[i], p.dt);
  if (p.method == scTopkExact || p.method == scTopkBracket) {
    // Independent exact top-k: magnitude descending, ties to the smaller index
    // (bracket: of the nonzero entries).
    std::vector<uint64_t> order;
    for (uint64_t i = 0; i < n; ++i)
      if (p.method == scTopkExact || fromBits(acc[i], p.dt) != 0) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
      return std::fabs(fromBits(acc[a], p.dt)) > std::fabs(fromBits(acc[b], p.dt));
    });
    order.resize(std::min(p.k, order.size()));
    std::sort(order.begin(), order.end());
    EXPECT_TRUE(order == sel.idx) << scTopkMethodName(scTopkMethod_t(p.method))
                                  << " selected other indices than the reference";
  }
  std::vector<char> listed(n, 0);
  size_t bad = 0;
  std::ostringstream first;
  auto flag = [&](size_t i, const char* what) {
    if (bad++ == 0) first << what << " at element " << i;
  };
  for (size_t j = 0; j < sel.idx.size() && j < n; ++j) {
    const size_t i = sel.idx[j];
    listed[i] = 1;
    const uint64_t rn = tk::bitsAt(rNew, i, p.dt), v = sel.bits[j];
    const bool sent = v == acc[i] && rn == 0, pad = isZero(v, p.dt) && rn == acc[i];
    if (!sent && !pad) flag(i, "listed entry is neither sent (value = acc, residual +0) nor a zero pad");
  }
  for (size_t i = 0; i < n; ++i)
    if (!listed[i] && tk::bitsAt(rNew, i, p.dt) != acc[i]) flag(i, "unsent entry's residual differs from acc");
  EXPECT_EQ(bad, 0u) << "conservation broken: " << first.str() << " (" << bad << " entries)";
}

}  // namespace

bool runTopk(RankCtx& c, const Plan& p) {
  const size_t n = p.count;
  std::vector<scTopkState_t> st(size_t(c.P), nullptr);
  for (auto& s : st) EXPECT_EQ(scTopkStateCreate(&s, n, p.dt, -1), scSuccess) << scGetLastError(nullptr);
  size_t cap = 0;
  const scTopkConfig_t cfg0 = topkConfig(p, 0);
  EXPECT_EQ(scTopkMaxOutput(n, &cfg0, &cap), scSuccess) << scGetLastError(nullptr);
  bool ok = true;
  for (int t = 0; t < p.steps && ok; ++t) {
    std::vector<double> sum(n, 0.0);  // the reference: what every rank sent this step
    std::vector<uint64_t> myIdx(cap + 1);
    tk::Buf myVal(cap + 1, p.dt);
    size_t myNnz = 0;
    for (int q = 0; q < c.P; ++q) {
      if (!st[size_t(q)]) continue;
      const tk::Buf g = gradient(p, q, t);
      void* res = nullptr;
      scTopkStateResidual(st[size_t(q)], &res);
      std::vector<uint64_t> rOld(n);
      for (size_t i = 0; i < n; ++i) rOld[i] = tk::bitsAt(res, i, p.dt);
      std::vector<uint64_t> idx(cap + 1);
      tk::Buf val(cap + 1, p.dt);
      const scTopkConfig_t cfg = topkConfig(p, q);
      scTopkInfo_t info{};
      const scResult_t r =
          scTopkSelectFeedback(st[size_t(q)], g.data(), &cfg, idx.data(), val.data(), cap, &info, nullptr);
      EXPECT_EQ(r, scSuccess) << "select feedback for rank " << q << " step " << t << ": " << scGetLastError(nullptr);
      if (r != scSuccess) info.nnz = 0;
      tk::Sel sel = tk::readBack(idx.data(), val.data(), info.nnz, p.it, p.dt);
      sel.info = info;
      for (size_t j = 0; j < info.nnz; ++j) sum[sel.idx[j]] += val.at(j);
      if (q != c.rank) continue;
      checkStep(p, g, rOld, res, sel, cap);
      if (t == 0) {
        // A fresh state's first step is the stateless selection of the
        // gradient itself (residual 0, step 0): same entries, same bits.
        scTopkConfig_t stateless = cfg;
        stateless.step = 0;
        const tk::Sel ref = tk::select(g, stateless, cap);
        EXPECT_EQ(ref.rc, scSuccess) << scGetLastError(nullptr);
        EXPECT_TRUE(ref.idx == sel.idx && ref.bits == sel.bits)
            << "the first feedback step differs from the stateless selection (" << ref.idx.size() << " vs "
            << sel.idx.size() << " entries)";
      }
      myIdx = idx;
      myVal = val;
      myNnz = info.nnz;
    }
    tk::Buf out(n, p.dt);
    const scResult_t r = scSparseAllReduce(myIdx.data(), myVal.data(), myNnz, n, p.it, p.dt, scSum,
                                           scSparseAlgo_t(p.algo), out.data(), c.comm, nullptr);
    EXPECT_EQ(r, scSuccess) << "sparse allreduce of the step " << t << " selections: " << scGetLastError(c.comm);
    if (r != scSuccess) ok = false;
    for (size_t i = 0; ok && i < n; ++i)
      if (out.at(i) != sum[i]) {
        ADD_FAILURE() << "step " << t << ": allreduced selections differ at element " << i << ": " << out.at(i)
                      << ", reference " << sum[i];
        break;
      }
  }
  for (auto s : st) scTopkStateDestroy(s);
  return ok;
}

}  // namespace soak
