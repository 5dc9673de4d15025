// SSAR_Split_AllGather (thesis §3.3.3, Figure 3.10-3.11): split to the range
// owners, owners sum (split.cpp), then a sparse allgather by recursive
// doubling in which merging is concatenation — the owners' ranges are disjoint
// and ordered, so every block has a fixed place in the result (prefix sums of
// the counts from one count round) and is received straight into it. With
// K = k spread evenly each rank sends 2(P-1)/P k entries, with disjoint sets
// up to P k (Table 3.1). When a range went dense, or the union K would not stay
// sparse, the owners densify and the dense allgather finishes (DSAR's tail).
// Non-power-of-two P: the first 2r ranks fold their blocks pairwise (fold.h).
#include "algo/fold.h"
#include "sparse/schedules.h"

namespace sc::sp {
namespace {

// Recursive-doubling allgather of the owners' sparse blocks; meta[p] = count of block p.
Stream sparseAllGather(SpCtx& s, Stream mine, const std::vector<uint64_t>& meta) {
  const int P = s.size, me = s.rank;
  const Fold f(P);
  std::vector<uint64_t> off(P + 1, 0);  // first entry of block p in the result
  for (int p = 0; p < P; ++p) off[p + 1] = off[p] + meta[p];
  const uint64_t K = off[P];
  const int h = s.pick({mine.home});
  const SpCtx::Arrays r = s.buffer(h, K, K);
  char* ri = static_cast<char*>(r.idx);
  char* rv = static_cast<char*>(r.val);
  s.c.comm.backend->copy(ri + off[me] * s.isz, mine.idx, mine.n * s.isz, s.c.stream);
  s.c.copy(rv + off[me] * s.vsz, mine.val, mine.n);
  // Blocks [b0, b1) as one index message and one value message.
  auto blocks = [&](std::vector<P2POp>& v, P2POp::Kind kind, int peer, int b0, int b1) {
    const uint64_t e0 = off[b0], n = off[b1] - off[b0];
    v.push_back({kind, peer, ri + e0 * s.isz, n * s.isz});
    v.push_back({kind, peer, rv + e0 * s.vsz, n * s.vsz});
  };
  auto moveBlocks = [&](P2POp::Kind kind, int peer, int b0, int b1) {
    std::vector<P2POp> v;
    blocks(v, kind, peer, b0, b1);
    s.c.exchange(std::move(v));
  };
  // Fold: the odd rank of a pair takes the even one's block beside its own.
  f.foldBy(
      me, [&](int up) { moveBlocks(P2POp::Send, up, me, me + 1); },
      [&](int down) { moveBlocks(P2POp::Recv, down, down, me); });
  if (!f.sitsOut(me)) {
    // New rank i stands for old blocks [firstOld(i), firstOld(i + 1)).
    const int nr = f.newRank(me);
    for (int d = 1; d < f.p2; d *= 2) {
      const int partner = nr ^ d, peer = f.oldRank(partner);
      const int myLo = nr & ~(d - 1), theirLo = partner & ~(d - 1);
      std::vector<P2POp> v;
      blocks(v, P2POp::Send, peer, f.firstOld(myLo), f.firstOld(myLo + d));
      blocks(v, P2POp::Recv, peer, f.firstOld(theirLo), f.firstOld(theirLo + d));
      s.c.exchange(std::move(v));
    }
  }
  // Unfold: the whole result goes back down.
  f.unfoldBy(
      me, [&](int down) { moveBlocks(P2POp::Send, down, 0, P); }, [&](int up) { moveBlocks(P2POp::Recv, up, 0, P); });
  Stream out;
  out.lo = 0;
  out.len = s.N;
  out.n = K;
  out.idx = r.idx;
  out.val = r.val;
  out.home = h;
  out.writable = true;
  return out;
}

}  // namespace

Stream ssarSplitAllGather(SpCtx& s, const Stream& in) {
  Stream mine = splitReduce(s, in);
  const std::vector<uint64_t> meta = s.allgatherMeta(&mine);
  const Blocks B{s.N, size_t(s.size)};
  uint64_t K = 0;
  bool sparse = true;
  for (int p = 0; p < s.size; ++p) {
    if (s.denseOnWire(meta[p], B.len(p))) sparse = false;
    else K += meta[p];
  }
  // Concatenating a dense block gives a dense result (thesis 2.c/2.d).
  if (!sparse || !s.rule.sparseOk(K, s.N)) return denseAllGather(s, mine);
  return sparseAllGather(s, mine, meta);
}

}  // namespace sc::sp
