#include "soak_calls.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "dense/dense_check.h"
#include "dsop/dsop_util.h"
#include "neighbor/nbr_check.h"
#include "sparse/sparse_check.h"

namespace soak {
namespace {

bool dense(RankCtx& c, const Plan& p) {
  const dtest::Call call{scAlgo_t(p.algo), p.dt, p.op, p.count, p.inPlace};
  switch (p.api) {
    case Api::AllReduce:
      return dtest::checkAllReduce(c.comm, c.rank, c.P, call, dtest::makeExpected(p.dt, p.op, c.P, 0, p.count),
                                   nullptr);
    case Api::ReduceScatter: {
      // The reference of this rank's block only: the rest is other ranks' business.
      const size_t first = size_t(c.rank) * p.count;
      return dtest::checkReduceScatter(c.comm, c.rank, c.P, call, dtest::makeExpected(p.dt, p.op, c.P, first, p.count),
                                       first);
    }
    default: return dtest::checkAllGather(c.comm, c.rank, c.P, call, p.index, nullptr);
  }
}

// Unsorted input with duplicate indices (scSparseSortInput): each value of
// magnitude >= 2 is split into v - s and s (s = its sign), both listed, and
// the pairs are shuffled; the reduced vector is unchanged.
sptest::Input scramble(const sptest::Input& in, uint64_t seed) {
  sptest::Input out;
  for (size_t j = 0; j < in.idx.size(); ++j) {
    const int v = in.val[j], s = v < 0 ? -1 : 1;
    if (v * s >= 2 && (j % 3) == 0) {
      out.idx.push_back(in.idx[j]);
      out.val.push_back(v - s);
      out.idx.push_back(in.idx[j]);
      out.val.push_back(s);
    } else {
      out.idx.push_back(in.idx[j]);
      out.val.push_back(v);
    }
  }
  Rng g{seed};
  for (size_t j = out.idx.size(); j > 1; --j) {
    const size_t r = g.below(j);
    std::swap(out.idx[j - 1], out.idx[r]);
    std::swap(out.val[j - 1], out.val[r]);
  }
  return out;
}

bool sparse(RankCtx& c, const Plan& p) {
  static const sptest::Dist kDists[] = {sptest::Dist::Uniform,   sptest::Dist::PowerLaw,      sptest::Dist::Disjoint,
                                        sptest::Dist::Identical, sptest::Dist::EvenIdentical, sptest::Dist::Elsewhere};
  scSparseOptions_t opts = SC_SPARSE_OPTIONS_INITIALIZER;
  opts.switchDensity = p.switchDensity;
  opts.earlyGroupSize = p.earlyGroup;
  if (p.shuffled) opts.flags |= scSparseSortInput;
  sptest::Call call;
  call.algo = scSparseAlgo_t(p.algo);
  call.sparseOut = p.sparseOut;
  call.it = p.it;
  call.dt = p.dt;
  call.op = p.op;
  call.N = p.count;
  call.opts = p.withOpts || p.shuffled ? &opts : nullptr;
  const auto all = sptest::makeAll(kDists[p.dist], p.count, sptest::kFor(p.count, p.density), c.P, p.index,
                                   sptest::isUnsigned(p.dt));
  const auto want = sptest::expectedDense(all, p.count, p.dt, p.op);
  const sptest::Input in = p.shuffled ? scramble(all[size_t(c.rank)], p.index + uint64_t(c.rank)) : all[size_t(c.rank)];
  // checkCall ends with a cross-rank digest exchange on every rank, so a
  // wrong result is not a reason to stop; only a failed call return is.
  // (Sparse errors are reported on every rank alike, so the ranks stay in step.)
  sptest::checkCall(c.comm, c.rank, call, in, want, c.result);
  return true;
}

bool dsopDense(RankCtx& c, const Plan& p) {
  using namespace dsoptest;
  std::vector<char> G(p.n * p.m * outSize(p.dt), char(0x7f));
  if (!p.real) {
    const auto a = encode(vecA(c.rank, p.n), p.dt), b = encode(vecB(c.rank, p.m), p.dt);
    const scResult_t r = scDsop(a.data(), p.n, b.data(), p.m, G.data(), p.dt, scDsopAlgo_t(p.algo), c.comm, nullptr);
    EXPECT_EQ(r, scSuccess) << scGetLastError(c.comm);
    if (r != scSuccess) return false;
    EXPECT_EQ(compare(decodeOut(G.data(), p.n * p.m, p.dt), reference(c.P, p.n, p.m), p.m), "");
    return true;
  }
  // Real-valued operands: K = P vectors, rank q owns vector q; every engine
  // must stay within the rounding bound, and the ranks must agree bit for bit.
  const RealOperands o = realOperands(p.dt, size_t(c.P), p.n, p.m, p.index);
  const char* a = o.a.data() + size_t(c.rank) * p.n * inSize(p.dt);
  const char* b = o.b.data() + size_t(c.rank) * p.m * inSize(p.dt);
  const scResult_t r = scDsop(a, p.n, b, p.m, G.data(), p.dt, scDsopAlgo_t(p.algo), c.comm, nullptr);
  EXPECT_EQ(r, scSuccess) << scGetLastError(c.comm);
  if (r != scSuccess) return false;
  EXPECT_EQ(withinRoundingBound(o, p.dt, {}, decodeOut(G.data(), p.n * p.m, p.dt)), "");
  EXPECT_TRUE(sptest::sameOnAllRanks(c.comm, hashBytes(G.data(), G.size()))) << "DSOP results differ across ranks";
  return true;
}

bool dsopSparse(RankCtx& c, const Plan& p) {
  using namespace dsoptest;
  // Sparse vectors from the sparse suite's generator (integer values in
  // [-8, 8]: every product and sum is exact in every supported type).
  std::vector<std::vector<double>> A, B;
  sptest::Input mineA, mineB;
  for (int q = 0; q < c.P; ++q) {
    const auto a = sptest::makeInput(sptest::Dist::Uniform, p.n, sptest::kFor(p.n, p.da), q, c.P, 2 * p.index, false);
    const auto b =
        sptest::makeInput(sptest::Dist::Uniform, p.m, sptest::kFor(p.m, p.db), q, c.P, 2 * p.index + 1, false);
    A.emplace_back(p.n, 0.0);
    B.emplace_back(p.m, 0.0);
    for (size_t j = 0; j < a.idx.size(); ++j) A.back()[a.idx[j]] = a.val[j];
    for (size_t j = 0; j < b.idx.size(); ++j) B.back()[b.idx[j]] = b.val[j];
    if (q == c.rank) mineA = a, mineB = b;
  }
  auto values = [&](const sptest::Input& in) {
    return encode(std::vector<double>(in.val.begin(), in.val.end()), p.dt);
  };
  const auto av = values(mineA), bv = values(mineB);
  std::vector<char> G(p.n * p.m * outSize(p.dt), char(0x7f));
  const scResult_t r = scDsopSparse(mineA.idx.data(), av.data(), mineA.idx.size(), p.n, mineB.idx.data(), bv.data(),
                                    mineB.idx.size(), p.m, G.data(), p.dt, scDsopAlgo_t(p.algo), c.comm, nullptr);
  EXPECT_EQ(r, scSuccess) << scGetLastError(c.comm);
  if (r != scSuccess) return false;
  EXPECT_EQ(compare(decodeOut(G.data(), p.n * p.m, p.dt), reference(A, B), p.m), "");
  return true;
}

bool neighbor(RankCtx& c, const Plan& p, size_t maxCount) {
  Rng g{p.graphSeed};
  ntest::Graph graph;
  switch (p.graphKind) {
    case 0: {
      const auto cat = ntest::catalogue(c.P);
      graph = cat[g.below(cat.size())];
      break;
    }
    case 1: graph = ntest::erdosRenyi(c.P, 0.1 + 0.8 * g.unit(), p.graphSeed); break;
    case 2: graph = ntest::multiEdges(c.P, p.graphSeed); break;
    default: graph = ntest::moore(c.P, 1 + int(g.below(3)), 1 + int(g.below(2)), g.chance(0.5));
  }
  // Every rank passes the same block size: bound the biggest recv by maxCount.
  size_t maxIn = 1;
  for (const auto& s : graph.src) maxIn = std::max(maxIn, s.size());
  scTopology_t topo = ntest::makeTopology(c.comm, graph, c.rank);
  if (!topo) return false;
  bool ok = true;
  for (int j = 0; j < p.nbrCalls && ok; ++j) {
    ntest::Case cs;
    cs.algo = g.pick(ntest::kAllAlgos);
    cs.dt = g.pick(dtest::kAllTypes);
    cs.count = std::min(maxCount / maxIn, g.chance(0.1) ? 0 : 1 + g.below(g.chance(0.2) ? 16384 : 256));
    cs.v = g.chance(0.3);
    cs.salt = p.index * 8 + uint64_t(j);
    SCOPED_TRACE(graph.name + ", " + cs.label());
    ok = ntest::checkCall(c.comm, topo, graph, c.rank, cs);
  }
  EXPECT_EQ(scTopologyDestroy(topo), scSuccess);
  return ok;
}

}  // namespace

bool runCall(RankCtx& ctx, const Plan& p) {
  switch (p.api) {
    case Api::AllReduce:
    case Api::ReduceScatter:
    case Api::AllGather: return dense(ctx, p);
    case Api::Broadcast:
      return dtest::checkBroadcast(ctx.comm, ctx.rank, dtest::Call{scAlgo_t(p.algo), p.dt, p.op, p.count, false},
                                   p.root, p.index);
    case Api::Barrier: {
      const scResult_t r = scBarrier(ctx.comm, nullptr);
      EXPECT_EQ(r, scSuccess) << scGetLastError(ctx.comm);
      return r == scSuccess;
    }
    case Api::Sparse: return sparse(ctx, p);
    case Api::Dsop: return dsopDense(ctx, p);
    case Api::DsopSparse: return dsopSparse(ctx, p);
    case Api::Topk: return runTopk(ctx, p);
    case Api::Neighbor: return neighbor(ctx, p, ctx.maxCount);
  }
  return true;
}

}  // namespace soak
