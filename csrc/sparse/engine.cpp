#include "sparse/engine.h"

#include <algorithm>

#include "algo/dense.h"

namespace sc::sp {

namespace {
// The scratch slots of a home's index and value arrays (homes kPool0 .. kSendBuf).
static_assert(int(Scratch::SparseOut) - int(Scratch::SparseArrays) == 2 * kOut, "a slot pair per home");
Scratch indexSlot(int home) { return Scratch::SparseArrays + 2 * home; }
Scratch valueSlot(int home) { return Scratch::SparseArrays + (2 * home + 1); }
}  // namespace

SpCtx::SpCtx(Ctx& c, SparseOps& ops, const SwitchRule& rule, uint64_t dim, std::function<void*()> denseOut)
    : c(c),
      ops(ops),
      rule(rule),
      N(dim),
      isz(ops.isz),
      vsz(ops.vsz),
      rank(c.rank),
      size(c.size),
      denseOut_(std::move(denseOut)) {
  // Room for the split's counts, offsets and received counts (3P + 2) and the
  // allgathered metas (P + 1); allocated once so a pending count survives.
  metaWords_ = 4 * size_t(size) + 8;
  meta_ = reinterpret_cast<uint64_t*>(c.comm.scratch(Scratch::SparseMeta, metaWords_ * 8, c.stream));
}

SpCtx::Arrays SpCtx::buffer(int home, uint64_t idxN, uint64_t valN) {
  SC_REQUIRE(home >= 0 && home < kOut, scInternalError, "no scratch buffer for home ", home);
  auto bytes = [](uint64_t n, size_t sz) { return std::max<size_t>(size_t(n) * sz, 1); };
  return {c.comm.scratch(indexSlot(home), bytes(idxN, isz), c.stream),
          c.comm.scratch(valueSlot(home), bytes(valN, vsz), c.stream)};
}

int SpCtx::pick(std::initializer_list<int> busy) const {
  for (int h = kPool0; h < kPool0 + kPoolBuffers; ++h)
    if (std::find(busy.begin(), busy.end(), h) == busy.end()) return h;
  SC_THROW(scInternalError, "sparse schedule holds more live streams than pool buffers");
}

void* SpCtx::out() { return denseOut_(); }

void SpCtx::settle(Stream& s) {
  if (s.nKnown) return;
  read(&s.n, meta_, 8);
  s.nKnown = true;
}

Stream SpCtx::toDense(const Stream& s0, void* dst, int home) {
  Stream s = s0;
  settle(s);
  if (s.dense) c.copy(dst, s.val, s.len);
  else ops.densify(s.idx, s.val, s.n, s.lo, s.len, dst);
  return s.denseIn(dst, home);
}

Stream SpCtx::normalize(const Stream& s0, std::initializer_list<int> busy) {
  Stream s = s0;
  settle(s);
  if (s.dense || rule.sparseOk(s.n, s.len)) return s;
  std::vector<int> b(busy);
  b.push_back(s.home);
  int h = kPool0;
  while (std::find(b.begin(), b.end(), h) != b.end()) ++h;
  SC_REQUIRE(h < kPool0 + kPoolBuffers, scInternalError, "no free pool buffer");
  return toDense(s, buffer(h, 0, s.len).val, h);
}

Stream SpCtx::view(const Stream& s, uint64_t first, uint64_t count, size_t lo, size_t len) const {
  SC_REQUIRE(s.dense || s.nKnown, scInternalError, "view of a stream whose count is not settled");
  Stream v = s;
  v.lo = lo;
  v.len = len;
  if (s.dense) {
    v.val = static_cast<char*>(s.val) + (lo - s.lo) * vsz;
  } else {
    v.n = count;
    v.idx = static_cast<char*>(s.idx) + first * isz;
    v.val = static_cast<char*>(s.val) + first * vsz;
  }
  return v;
}

Stream SpCtx::merge(const Stream& a0, const Stream& b0, std::initializer_list<int> busy) {
  Stream a = a0, b = b0;
  settle(a);
  settle(b);
  SC_REQUIRE(a.lo == b.lo && a.len == b.len, scInternalError, "merge of streams over different ranges");
  std::vector<int> used(busy);
  used.push_back(a.home);
  used.push_back(b.home);
  auto fresh = [&](uint64_t idxN, uint64_t valN, Arrays* arr) {
    int h = kPool0;
    while (std::find(used.begin(), used.end(), h) != used.end()) ++h;
    SC_REQUIRE(h < kPool0 + kPoolBuffers, scInternalError, "no free pool buffer for a merge");
    *arr = buffer(h, idxN, valN);
    return h;
  };
  const size_t len = a.len;
  if (a.dense && b.dense) {  // thesis 1.b: dense sum, in place when possible
    if (a.writable) {
      c.reduce(a.val, a.val, b.val, len);
      return a;
    }
    if (b.writable) {
      c.reduce(b.val, a.val, b.val, len);
      return b;
    }
    Arrays o;
    const int h = fresh(0, len, &o);
    c.reduce(o.val, a.val, b.val, len);
    return a.denseIn(o.val, h);
  }
  if (a.dense || b.dense) {  // thesis 1.c/1.d: scatter the sparse one into the dense one
    const Stream& d = a.dense ? a : b;
    const Stream& s = a.dense ? b : a;
    Stream r = d;
    if (!d.writable) {
      Arrays o;
      const int h = fresh(0, len, &o);
      c.copy(o.val, d.val, len);
      r = a.denseIn(o.val, h);
    }
    ops.scatterAdd(s.idx, s.val, s.n, s.lo, r.val);
    return r;
  }
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  Arrays o;
  if (!rule.sparseOk(a.n + b.n, len)) {  // thesis 1.a: the union may not stay sparse
    const int h = fresh(0, len, &o);
    ops.densify(a.idx, a.val, a.n, a.lo, len, o.val);
    ops.scatterAdd(b.idx, b.val, b.n, b.lo, o.val);
    return a.denseIn(o.val, h);
  }
  const int h = fresh(a.n + b.n, a.n + b.n, &o);
  ops.mergeSum(a.idx, a.val, a.n, b.idx, b.val, b.n, o.idx, o.val, meta_);
  return a.pendingIn(o.idx, o.val, h);
}

void SpCtx::addStream(std::vector<P2POp>& v, P2POp::Kind kind, int peer, const Stream& s) const {
  if (peer < 0) return;
  if (s.dense) {
    v.push_back({kind, peer, s.val, s.len * vsz});
  } else {
    v.push_back({kind, peer, s.idx, size_t(s.n) * isz});
    v.push_back({kind, peer, s.val, size_t(s.n) * vsz});
  }
}

Stream SpCtx::receiving(uint64_t m, size_t lo, size_t len, int home) {
  Stream r;
  r.lo = lo;
  r.len = len;
  r.dense = denseOnWire(m, len);
  r.n = r.dense ? 0 : m;
  const Arrays a = buffer(home, r.dense ? 0 : m, r.dense ? len : m);
  r.idx = r.dense ? nullptr : a.idx;
  r.val = a.val;
  r.home = home;
  r.writable = true;
  return r;
}

Stream SpCtx::onWire(const Stream& s0) {
  Stream s = s0;
  settle(s);
  if (s.dense || rule.sparseOk(s.n, s.len)) return s;
  return toDense(s, buffer(kSendBuf, 0, s.len).val, kSendBuf);
}

Stream SpCtx::exchange(int to, Stream* mine, int from, size_t rlo, size_t rlen, int into) {
  // Count round: 8 bytes each way. A count still in ops memory is sent from
  // there and read back together with the peer's (one read per step).
  const bool pending = to >= 0 && !mine->nKnown;
  if (to >= 0 && !pending) {
    const uint64_t w = mine->meta();
    ops.fromHost(meta_, &w, 8);
  }
  c.exchange({P2POp{P2POp::Send, to, meta_, to >= 0 ? size_t(8) : 0},
              P2POp{P2POp::Recv, from, meta_ + 1, from >= 0 ? size_t(8) : 0}});
  uint64_t host[2] = {0, 0};
  if (pending || from >= 0) read(host, meta_, 16);
  if (pending) {
    mine->n = host[0];
    mine->nKnown = true;
  }
  // Payload round.
  Stream theirs;
  if (from >= 0) theirs = receiving(host[1], rlo, rlen, into);
  std::vector<P2POp> v;
  if (to >= 0) addSend(v, to, onWire(*mine));
  if (from >= 0) addRecv(v, from, theirs);
  c.exchange(std::move(v));
  return theirs;
}

std::vector<uint64_t> SpCtx::allgatherMeta(Stream* mine) {
  const bool pending = !mine->nKnown;
  if (!pending) {
    const uint64_t w = mine->meta();
    ops.fromHost(meta_, &w, 8);
  }
  Ctx cu(c.comm, scUint64, scSum, c.stream);
  doublingAllGather(cu, meta_, meta_ + 1, 1);
  std::vector<uint64_t> host(size_t(size) + 1);
  read(host.data(), meta_, host.size() * 8);
  if (pending) {
    mine->n = host[0];
    mine->nKnown = true;
  }
  return std::vector<uint64_t>(host.begin() + 1, host.end());
}

Stream SpCtx::foldIn(const Fold& f, const Stream& in) {
  Stream cur = normalize(in);
  f.foldBy(
      rank, [&](int up) { sendTo(up, &cur); },
      [&](int down) {
        const Stream low = recvFrom(down, 0, N, pick({cur.home}));
        cur = merge(low, cur);
      });
  return cur;
}

Stream SpCtx::unfold(const Fold& f, const Stream& result) {
  Stream cur = result;
  f.unfoldBy(
      rank, [&](int down) { sendTo(down, &cur); }, [&](int up) { cur = recvFrom(up, 0, N, kPool0); });
  return cur;
}

}  // namespace sc::sp
