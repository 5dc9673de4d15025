// What a sparse schedule sees: the foundation's Ctx (rounds, dense reduce,
// copy, traffic counters) plus sparse streams — buffers, the count-then-payload
// exchange, and the merge with the automatic switch to dense. The schedules
// (ssar_*.cpp, dsar_*.cpp, dense_fallback.cpp) are written once over this and
// run on every transport/backend pair.
#pragma once

#include <functional>
#include <initializer_list>
#include <vector>

#include "algo/ctx.h"
#include "algo/fold.h"
#include "sparse/ops.h"
#include "sparse/stream.h"

namespace sc::sp {

constexpr int kPoolBuffers = 3;

class SpCtx {
 public:
  // c: the call's context with dt = value type. denseOut() returns the buffer of
  // N values where a dense result should end up (the caller's output).
  SpCtx(Ctx& c, SparseOps& ops, const SwitchRule& rule, uint64_t dim, std::function<void*()> denseOut);

  Ctx& c;
  SparseOps& ops;
  const SwitchRule rule;
  const uint64_t N;
  const size_t isz, vsz;
  const int rank, size;

  // --- buffers ------------------------------------------------------------
  struct Arrays {
    void* idx;
    void* val;
  };
  // The arrays of `home` with room for idxN indices and valN values. Their
  // previous content is lost (the buffer may be reallocated).
  Arrays buffer(int home, uint64_t idxN, uint64_t valN);
  // A pool buffer that none of `busy` (homes of live streams) uses.
  int pick(std::initializer_list<int> busy) const;
  // The dense result buffer (N values), home kOut.
  void* out();
  // A read by the host of `bytes` of ops memory (on a device, a wait for the
  // stream: a host round trip), counted in scStats_t.hostReads. Every read of
  // a count goes through here, so tests can hold a schedule to its reads.
  void read(void* dst, const void* src, size_t bytes) {
    ops.toHost(dst, src, bytes);
    ++c.comm.stats.hostReads;
    if (c.comm.device()) ++c.comm.stats.hostSyncs;  // toHost waits for the stream
  }
  // Words of ops memory for counts (allocated once per call: pending counts survive).
  uint64_t* meta() const { return meta_; }
  size_t metaWords() const { return metaWords_; }

  // --- streams --------------------------------------------------------------
  bool denseOnWire(uint64_t m, size_t len) const { return !rule.sparseOk(m, len); }
  // Reads a count that is still in ops memory (one device-to-host read).
  void settle(Stream& s);
  // s densified into dst (len values; a copy when s is dense already).
  Stream toDense(const Stream& s, void* dst, int home);
  // s, densified into a pool buffer when its sparse form is too big.
  Stream normalize(const Stream& s, std::initializer_list<int> busy = {});
  // Sub-stream of a sorted stream: entries [first, first + count) over [lo, lo + len).
  Stream view(const Stream& s, uint64_t first, uint64_t count, size_t lo, size_t len) const;
  // a + b over the same range. Dense + dense reduce in place when an operand is
  // writable; dense + sparse scatter-add; sparse + sparse merge, or densify when
  // n_a + n_b entries would not stay sparse (the thesis's upper-bound check).
  // The result goes to a pool buffer not in busy or used by a and b.
  Stream merge(const Stream& a, const Stream& b, std::initializer_list<int> busy = {});

  // --- communication --------------------------------------------------------
  // The point-to-point ops moving s (dense: values; sparse: indices + values).
  void addSend(std::vector<P2POp>& v, int to, const Stream& s) const { addStream(v, P2POp::Send, to, s); }
  void addRecv(std::vector<P2POp>& v, int from, const Stream& s) const { addStream(v, P2POp::Recv, from, s); }
  // Arrays in `home` for a stream over [lo, lo + len) announced by meta m.
  Stream receiving(uint64_t m, size_t lo, size_t len, int home);
  // The stream as it goes on the wire over its range: densified into the send
  // buffer when its count does not stay sparse.
  Stream onWire(const Stream& s);
  // One count round then one payload round with a peer: sends *mine to `to`
  // and receives, from `from`, a stream over [rlo, rlo + rlen) into pool buffer
  // `into`. Either peer may be -1. Settles *mine.
  Stream exchange(int to, Stream* mine, int from, size_t rlo, size_t rlen, int into);
  // The one-sided forms: only the send of *mine, or only the receive.
  void sendTo(int to, Stream* mine) { exchange(to, mine, -1, 0, 0, kPool0); }
  Stream recvFrom(int from, size_t rlo, size_t rlen, int into) { return exchange(-1, nullptr, from, rlo, rlen, into); }
  // The fold's first step (algo/fold.h) on streams: an even rank among the
  // first 2r sends its normalized input up and sits out (its return value is
  // then meaningless); the odd rank above merges it, lower rank first.
  Stream foldIn(const Fold& f, const Stream& in);
  // The unfold (algo/fold.h) on streams: the odd rank of a pair sends its
  // result down, the even rank receives it into kPool0 and returns that.
  Stream unfold(const Fold& f, const Stream& result);
  // Allgather of every rank's meta (one count round; the foundation's recursive
  // doubling). Settles *mine. Returns P metas.
  std::vector<uint64_t> allgatherMeta(Stream* mine);

 private:
  void addStream(std::vector<P2POp>& v, P2POp::Kind kind, int peer, const Stream& s) const;

  std::function<void*()> denseOut_;
  uint64_t* meta_ = nullptr;
  size_t metaWords_ = 0;
};

}  // namespace sc::sp
