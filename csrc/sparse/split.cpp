// The split phase of the Split_AllGather algorithms (thesis §3.3.3 Figure
// 3.10-3.11, §4.1.4): the index space is cut into the P ranges of
// Blocks{N, P}; every rank sends each range of its stream straight to the
// range's owner and the owner sums what arrives, overlapping each merge with the
// transfers still in flight. The all-to-all runs as P-1 shift rounds (round k:
// send to rank+k, receive from rank-k) posted together and completed in order,
// a pattern every transport matches round by round. A range goes on the wire
// dense when its count would not stay sparse; both sides decide that from the
// count of the count round.
//
// The owner's sum is own range first, then the pieces in arrival order
// (rank-1, rank-2, ...): a fixed order, so it does not depend on timing, and
// two ways of computing it give the same bits (every index's values are added
// left to right either way):
//   merge — pairwise merges as the pieces arrive, overlapping the transfers
//           still in flight; each merge's count is read before the next
//           (free on the host, a host round trip per piece on a GPU);
//   sort  — after the last piece, one stable sort + in-order sum over own
//           range and pieces laid end to end (or a dense sum when any piece is
//           dense or their total would not stay sparse): no read at all, the
//           count stays on the device until the allgather's count round.
// SPARCOLL_SPARSE_OWNER_SUM=merge|sort picks one; by default host memory
// merges and device memory sorts, so a device call reads counts twice (the
// split's, the owners') instead of P + 1 times.
#include <cstdlib>
#include <cstring>

#include "algo/dense.h"
#include "core/env.h"
#include "sparse/schedules.h"

namespace sc::sp {

bool ownerSumBySort(bool onDevice) {
  const char* e = env::get(env::Var::SparseOwnerSum);
  if (!e) return onDevice;
  if (!std::strcmp(e, "sort")) return true;
  SC_ARG(!std::strcmp(e, "merge"), env::setting(env::Var::SparseOwnerSum), " is not merge or sort");
  return false;
}

namespace {

// The owner's sum the sort way (see the top of the file), once every piece
// has arrived. own: this rank's slice of its input; pieces: in arrival order,
// the sparse ones laid end to end in `a2a` right after room for own's entries.
Stream sumBySort(SpCtx& s, const Stream& own, const std::vector<Stream>& pieces, const SpCtx::Arrays& a2a,
                 std::initializer_list<int> busy) {
  uint64_t total = own.dense ? 0 : own.n;
  bool dense = own.dense;
  int nonEmpty = own.elems() ? 1 : 0;
  const Stream* only = &own;
  for (const Stream& p : pieces) {
    dense = dense || p.dense;
    total += p.dense ? 0 : p.n;
    if (p.elems()) {
      ++nonEmpty;
      only = &p;
    }
  }
  // One operand with entries is the sum already (as merge returns it).
  if (nonEmpty <= 1) return *only;
  const int h = s.pick(busy);
  if (dense || !s.rule.sparseOk(total, own.len)) {
    Stream acc = s.toDense(own, s.buffer(h, 0, own.len).val, h);
    for (const Stream& p : pieces) {
      if (p.dense) s.c.reduce(acc.val, acc.val, p.val, own.len);
      else s.ops.scatterAdd(p.idx, p.val, p.n, p.lo, acc.val);
    }
    return acc;
  }
  // Here at least two sparse operands have entries: total > 0.
  s.c.comm.backend->copy(a2a.idx, own.idx, own.n * s.isz, s.c.stream);
  s.c.copy(a2a.val, own.val, own.n);
  const SpCtx::Arrays o = s.buffer(h, total, total);
  s.ops.sortCoalesce(a2a.idx, a2a.val, total, o.idx, o.val, s.meta());
  return own.pendingIn(o.idx, o.val, h);
}

}  // namespace

Stream splitReduce(SpCtx& s, const Stream& in) {
  const int P = s.size, me = s.rank;
  const Blocks B{s.N, size_t(P)};
  SC_REQUIRE(s.metaWords() >= 3 * size_t(P) + 2, scInternalError, "meta area too small");
  uint64_t* counts = s.meta();      // [0, P]: entries per range (P + 1 words)
  uint64_t* offs = counts + P + 1;  // [0, P]: first entry of each range
  uint64_t* got = offs + P + 1;     // [0, P): the counts each peer sends us
  if (in.dense) {
    const std::vector<uint64_t> mark(P + 1, kDenseMark);
    s.ops.fromHost(counts, mark.data(), mark.size() * 8);
  } else {
    std::vector<uint64_t> bounds(P + 1);
    for (int p = 0; p < P; ++p) bounds[p] = B.off(p);
    bounds[P] = s.N;
    s.ops.split(in.idx, in.n, nullptr, bounds.data(), P, counts, offs);
  }
  // Count round, straight from the split's output; then one read of everything.
  std::vector<P2POp> cv;
  for (int k = 1; k < P; ++k) {
    const int to = (me + k) % P, from = (me - k + P) % P;
    cv.push_back({P2POp::Send, to, counts + to, 8});
    cv.push_back({P2POp::Recv, from, got + from, 8});
  }
  s.c.exchange(std::move(cv));
  std::vector<uint64_t> h(3 * size_t(P) + 2);
  s.read(h.data(), counts, h.size() * 8);
  const uint64_t* hc = h.data();
  const uint64_t* ho = hc + P + 1;
  const uint64_t* hg = ho + P + 1;

  auto slice = [&](int p) { return s.view(in, in.dense ? 0 : ho[p], in.dense ? 0 : hc[p], B.off(p), B.len(p)); };
  // Ranges that go dense are densified into the send buffer, one after another.
  uint64_t sendVals = 0;
  for (int p = 0; p < P; ++p)
    if (p != me && !in.dense && s.denseOnWire(hc[p], B.len(p))) sendVals += B.len(p);
  char* sendBuf = sendVals ? static_cast<char*>(s.buffer(kSendBuf, 0, sendVals).val) : nullptr;
  // Received ranges land one after another in the all-to-all buffer; summing
  // by sort keeps room in front of them for this rank's own range.
  const bool bySort = ownerSumBySort(s.ops.onDevice());
  const size_t myLen = B.len(me);
  const uint64_t front = bySort && !in.dense ? hc[me] : 0;
  uint64_t recvIdx = front, recvVal = front;
  for (int q = 0; q < P; ++q) {
    if (q == me) continue;
    const bool d = s.denseOnWire(hg[q], myLen);
    recvIdx += d ? 0 : hg[q];
    recvVal += d ? myLen : hg[q];
  }
  const SpCtx::Arrays ra = s.buffer(kA2A, recvIdx, recvVal);

  std::vector<Stream> pieces(P);
  std::vector<std::unique_ptr<Round>> rounds;
  uint64_t sendOff = 0, ri = front, rv = front;
  for (int k = 1; k < P; ++k) {
    const int to = (me + k) % P, from = (me - k + P) % P;
    Stream out = slice(to);
    if (!out.dense && s.denseOnWire(out.n, out.len)) {
      out = s.toDense(out, sendBuf + sendOff * s.vsz, kSendBuf);
      sendOff += out.len;
    }
    Stream& r = pieces[from];
    r.lo = B.off(me);
    r.len = myLen;
    r.dense = s.denseOnWire(hg[from], myLen);
    r.n = r.dense ? 0 : hg[from];
    r.idx = r.dense ? nullptr : static_cast<char*>(ra.idx) + ri * s.isz;
    r.val = static_cast<char*>(ra.val) + rv * s.vsz;
    r.home = kA2A;
    r.writable = true;
    ri += r.dense ? 0 : r.n;
    rv += r.dense ? myLen : r.n;
    std::vector<P2POp> v;
    s.addSend(v, to, out);
    s.addRecv(v, from, r);
    rounds.push_back(s.c.post(std::move(v)));
  }
  // Own range first, then the pieces in arrival order. `in` stays busy until
  // every round is done: its ranges are still being sent.
  if (bySort) {
    std::vector<Stream> arrived;
    for (int k = 1; k < P; ++k) {
      rounds[k - 1]->wait(s.c.dl);
      arrived.push_back(pieces[(me - k + P) % P]);
    }
    return sumBySort(s, slice(me), arrived, ra, {in.home});
  }
  Stream acc = s.normalize(slice(me), {in.home});
  for (int k = 1; k < P; ++k) {
    rounds[k - 1]->wait(s.c.dl);
    acc = s.merge(acc, pieces[(me - k + P) % P], {in.home});
    s.settle(acc);
  }
  return acc;
}

Stream denseAllGather(SpCtx& s, const Stream& mine) {
  const Blocks B{s.N, size_t(s.size)};
  char* out = static_cast<char*>(s.out());
  s.toDense(mine, out + B.off(s.rank) * s.vsz, kOut);
  ringAllGather(s.c, out, B);
  return Stream::denseOutput(s.N, out);
}

}  // namespace sc::sp
