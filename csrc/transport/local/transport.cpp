// In-process transport: P ranks as threads of one process, one mailbox per
// ordered pair of ranks. A send is published (buffer + size); the receiver
// copies straight out of the sender's buffer (one copy, no staging) and marks
// it done; the sender's round completes when all its sends are done. Device
// buffers: the copy is a cudaMemcpyAsync on the receiving transport's own
// stream, ordered after an event on the sender's stream (the data is there)
// and one on the receiver's stream at the post (the buffer is free); the
// receiver's stream waits for the copy in wait(), the sender's stream too
// (events pooled per rank: transport/event_pool.h). So the receiver's
// stream runs the schedule's local work between a post and its wait (the
// ring's reduction of slice k) while the copy of slice k+1 runs. The dense
// schedules on device buffers run this protocol as planned calls instead
// (local/plan_call.cpp): one thread enqueues every rank's rounds, so the
// ranks meet once per call rather than at every message.
// Each send carries its call's sequence number: a receiver meeting a message
// of another call (ranks that made different calls) reports it instead of
// taking it, so no call ever consumes another's data.
#include <algorithm>
#include <cstring>
#include <mutex>

#include "algo/ctx.h"
#include "core/env.h"
#include "transport/event_pool.h"
#include "transport/factory.h"
#include "transport/local/device.h"
#include "transport/local/direct.h"
#include "transport/local/world.h"

namespace sc {
namespace {

using local::NativeSig;
using local::SendRec;
using local::World;

class LocalTransport;

class LocalRound final : public Round {
 public:
  LocalRound(LocalTransport& t, void* stream, uint64_t seq, uint32_t sig)
      : t_(t), stream_(stream), seq_(seq), sig_(sig) {}
  ~LocalRound() override;
  void wait(const Deadline& dl) override;

  std::vector<std::shared_ptr<SendRec>> sends;
  std::vector<P2POp> recvs;
  // Device: this rank's stream at the post, which its sends' receivers and
  // its receives' copies wait for (the data is there; the buffer is free).
  void* ready = nullptr;

 private:
  LocalTransport& t_;
  void* stream_;
  const uint64_t seq_;
  const uint32_t sig_;
  bool waited_ = false;
};

class LocalTransport final : public Transport {
 public:
  // How dense schedules on device buffers run (SPARCOLL_LOCAL_PLANNED).
  enum class Plans { Off, Streams, OneStream };
  LocalTransport(std::shared_ptr<World> w, int rank, int device, Plans plans)
      : w_(std::move(w)), rank_(rank), device_(device), plans_(plans) {}
  ~LocalTransport() override { localdev::destroyStream(side_); }
  const char* name() const override { return "local"; }
  Mem mem() const override { return device_ >= 0 ? Mem::Device : Mem::Host; }
  int rank() const override { return rank_; }
  int size() const override { return w_->P; }
  World& world() { return *w_; }
  int device() const { return device_; }
  // The stream of this rank's receive copies (device buffers), made on first use.
  void* side() {
    if (!side_) side_ = localdev::createStream(device_);
    return side_;
  }
  // This rank's events (device buffers), made on first use.
  const std::shared_ptr<EventPool>& events() {
    if (!events_) events_ = std::make_shared<EventPool>(device_);
    return events_;
  }

  // The receiver reads the sender's buffer itself: on host memory, or on one
  // device, it can reduce straight out of it (a kernel on its stream reads
  // the peer's memory). Across devices the copy goes through CUDA's own path.
  bool fusesReduce(int peer) const override {
    return peer >= 0 && peer < w_->P && (device_ < 0 || w_->device[size_t(peer)] == device_);
  }

  std::unique_ptr<Round> post(const std::vector<P2POp>& ops, void* stream, const Deadline&) override {
    SC_REQUIRE(!aborted_, scInvalidUsage, "local transport was aborted");
    auto round = std::make_unique<LocalRound>(*this, stream, seq_, sig_);
    // One event marks the round's point on this rank's stream: its sends'
    // data is there and its receives' buffers are free (recorded before the
    // lock: the peers need not wait for the runtime call).
    if (device_ >= 0 && !ops.empty()) round->ready = events()->record(stream, *this);
    std::lock_guard<std::mutex> lk(w_->m);
    w_->state[size_t(rank_)].seq = seq_;
    for (const auto& op : ops) {
      SC_ARG(op.peer >= 0 && op.peer < w_->P, "peer ", op.peer, " out of range");
      if (op.kind == P2POp::Recv) {
        round->recvs.push_back(op);
        continue;
      }
      auto rec = std::make_shared<SendRec>(
          SendRec{op.buf, op.bytes, seq_, sig_, op.peer, device_, round->ready, nullptr, nullptr, false, false});
      w_->queue(rank_, op.peer).push_back(rec);
      round->sends.push_back(rec);
    }
    w_->cv.notify_all();
    return round;
  }

  void barrier(void*, const Deadline& dl) override {
    countRendezvous();
    std::unique_lock<std::mutex> lk(w_->m);
    const uint64_t target = (w_->barrierArrived / w_->P + 1) * w_->P;
    ++w_->barrierArrived;
    w_->cv.notify_all();
    w_->state[size_t(rank_)].waitingFor = -2;
    const bool ok = w_->waitUntil(lk, dl, [&] { return w_->barrierArrived >= target || w_->abortedElsewhere(rank_); });
    if (w_->barrierArrived >= target) w_->state[size_t(rank_)].waitingFor = -1;
    if (w_->barrierArrived < target) w_->throwIfAbortedElsewhere(rank_);
    if (!ok) dl.check("all local ranks to reach the barrier");
  }

  void abort() noexcept override { aborted_ = true; }
  void notifyAbort(const std::string& why) noexcept override {
    try {
      std::lock_guard<std::mutex> lk(w_->m);
      if (w_->abortedBy < 0) {
        w_->abortedBy = rank_;
        w_->abortReason = why;
      }
    } catch (...) {
    }
    w_->cv.notify_all();
  }

  std::unique_ptr<Transport> shrink(const std::vector<int>& exclude, const Deadline& dl) override;

  // Device buffers: one thread enqueues every rank's schedule
  // (local/plan_call.cpp), so the ranks meet once per call.
  bool plans() const override { return device_ >= 0 && plans_ != Plans::Off; }
  void runPlan(const CallPlan& plan, const Ctx& c) override {
    SC_REQUIRE(!aborted_, scInvalidUsage, "local transport was aborted");
    countRendezvous();
    const bool one = plans_ == Plans::OneStream && w_->oneDevice();
    local::plannedCall(*w_, rank_, {&plan, &c, this, events(), one ? nullptr : side(), device_, seq_, sig_, one}, c.dl);
  }

  // Shared-memory baseline: every rank reduces its block straight from all
  // ranks' buffers, then copies the other blocks from their owners.
  void nativeAllReduce(const void* send, void* recv, size_t count, scDataType_t dt, scRedOp_t op, void* stream,
                       const Deadline& dl) override {
    const Blocks B{count, size_t(w_->P)};
    nativeDirect(send, recv, {0, count, dt, op, seq_, 0}, stream, dl,
                 [&](const std::vector<const void*>& S, const std::vector<const void*>& R) {
                   reduceBlock(S, recv, B.off(rank_), B.off(rank_), B.len(rank_), dt, op);
                   barrier(nullptr, dl);
                   const size_t esz = dtypeSize(dt);
                   for (int q = 0; q < w_->P; ++q)
                     if (q != rank_)
                       std::memcpy(static_cast<char*>(recv) + B.off(q) * esz,
                                   static_cast<const char*>(R[q]) + B.off(q) * esz, B.len(q) * esz);
                 });
  }
  void nativeReduceScatter(const void* send, void* recv, size_t recvcount, scDataType_t dt, scRedOp_t op, void* stream,
                           const Deadline& dl) override {
    nativeDirect(send, recv, {1, recvcount, dt, op, seq_, 0}, stream, dl,
                 [&](const std::vector<const void*>& S, const std::vector<const void*>&) {
                   reduceBlock(S, recv, size_t(rank_) * recvcount, 0, recvcount, dt, op);
                 });
  }
  void nativeAllGather(const void* send, void* recv, size_t sendcount, scDataType_t dt, void* stream,
                       const Deadline& dl) override {
    const size_t bytes = sendcount * dtypeSize(dt);
    nativeDirect(send, recv, {2, sendcount, dt, scSum, seq_, 0}, stream, dl,
                 [&](const std::vector<const void*>& S, const std::vector<const void*>&) {
                   for (int q = 0; q < w_->P; ++q)
                     if (S[q] != static_cast<char*>(recv) + q * bytes)
                       std::memcpy(static_cast<char*>(recv) + q * bytes, S[q], bytes);
                 });
  }
  // Every rank copies straight from root's buffer.
  void nativeBroadcast(void* buf, size_t count, scDataType_t dt, int root, void* stream, const Deadline& dl) override {
    nativeDirect(buf, buf, {3, count, dt, scSum, seq_, root}, stream, dl,
                 [&](const std::vector<const void*>&, const std::vector<const void*>& R) {
                   if (rank_ != root) std::memcpy(buf, R[size_t(root)], count * dtypeSize(dt));
                 });
  }

 private:
  // Every rank publishes its buffers and its call, then all check the calls
  // agree before anyone reads a peer's buffer: with different counts a rank
  // would read past a peer's buffer. Every rank sees the same table, so all
  // fail together, naming the same ranks. On one device: one kernel over
  // every rank's buffers (transport/local/direct.h), one meeting.
  template <typename F>
  void nativeDirect(const void* send, void* recv, const NativeSig& sig, void* stream, const Deadline& dl, F body) {
    if (device_ >= 0) {
      if (!w_->oneDevice()) {
        std::string devices;
        for (int d : w_->device) devices += (devices.empty() ? "" : ", ") + std::to_string(d);
        SC_THROW(scInvalidUsage,
                 "algorithm 'native' on device-local communicators is one kernel over every rank's buffers, so "
                 "it needs every rank on one device; these ranks are on devices ",
                 devices, ": use ring, rabenseifner or recdbl (broadcast: binomial or scatter_allgather)");
      }
      SC_REQUIRE(w_->P <= kDirectMaxRanks, scInvalidUsage, "algorithm 'native' on one device takes at most ",
                 kDirectMaxRanks, " ranks, not ", w_->P, ": use ring, rabenseifner or recdbl");
      local::directCall(*w_, rank_, device_, events(), {sig, send, recv, stream}, dl, *this);
      return;
    }
    {
      std::lock_guard<std::mutex> lk(w_->m);
      w_->nativeSend.resize(w_->P);
      w_->nativeRecv.resize(w_->P);
      w_->nativeSig.resize(w_->P);
      w_->nativeSend[rank_] = send;
      w_->nativeRecv[rank_] = recv;
      w_->nativeSig[rank_] = sig;
    }
    barrier(nullptr, dl);  // everyone published
    std::vector<const void*> S, R;
    std::string mismatch;
    {
      std::lock_guard<std::mutex> lk(w_->m);
      S = w_->nativeSend;
      R = w_->nativeRecv;
      mismatch = local::nativeMismatch(w_->nativeSig);
    }
    barrier(nullptr, dl);  // everyone read the table: it may be reused
    SC_REQUIRE(mismatch.empty(), scRemoteError, mismatch);
    body(S, R);
    barrier(nullptr, dl);  // nobody returns while a peer still reads its buffers
  }

  // dst[dstOff..] = op over ranks (in rank order) of S[q][srcOff..], n elements.
  void reduceBlock(const std::vector<const void*>& S, void* dst, size_t srcOff, size_t dstOff, size_t n,
                   scDataType_t dt, scRedOp_t op);

  std::shared_ptr<World> w_;
  const int rank_, device_;
  const Plans plans_;
  void* side_ = nullptr;
  std::shared_ptr<EventPool> events_;
  bool aborted_ = false;
  uint64_t shrinks_ = 0;  // scCommShrink calls made so far
};

std::string rankText(const std::vector<int>& ranks) {
  std::string t;
  for (int q : ranks) t += (t.empty() ? "" : ", ") + std::to_string(q);
  return t;
}

std::unique_ptr<Transport> LocalTransport::shrink(const std::vector<int>& exclude, const Deadline& dl) {
  std::vector<int> keep;  // the new world's ranks, by old rank
  for (int q = 0; q < w_->P; ++q)
    if (!std::binary_search(exclude.begin(), exclude.end(), q)) keep.push_back(q);
  const uint64_t k = shrinks_++;
  std::unique_lock<std::mutex> lk(w_->m);
  World::Shrink& s = w_->shrinks[k];  // map nodes stay put while others are added
  s.lists[rank_] = exclude;
  if (!s.next) {
    std::vector<int> devices;
    for (int q : keep) devices.push_back(w_->device[size_t(q)]);
    s.next = std::make_shared<World>(int(keep.size()), std::move(devices));
  }
  w_->cv.notify_all();
  auto missing = [&] {
    std::vector<int> m;
    for (int q : keep)
      if (!s.lists.count(q)) m.push_back(q);
    return m;
  };
  w_->cv.wait_until(lk, dl.at(), [&] { return missing().empty(); });
  const std::vector<int> absent = missing();
  std::string differ;
  for (const auto& l : s.lists)
    if (l.second != exclude && differ.empty())
      differ = cat("rank ", l.first, " excludes [", rankText(l.second), "], rank ", rank_, " excludes [",
                   rankText(exclude), "]");
  std::shared_ptr<World> next = s.next;
  // The last of the ranks that came leaves out the light: a rank arriving
  // later (too late) finds none and waits alone, as it should.
  if (++s.left == s.lists.size()) w_->shrinks.erase(k);
  lk.unlock();
  if (!absent.empty())
    SC_THROW(scTimeout, "scCommShrink: deadline of ", dl.seconds, " s expired: rank ", rank_, " was waiting for ",
             absent.size() == 1 ? "rank " : "ranks ", rankText(absent), " to call scCommShrink too");
  SC_REQUIRE(differ.empty(), scInvalidUsage, "scCommShrink called with different exclude lists: ", differ);
  const int newRank = int(std::lower_bound(keep.begin(), keep.end(), rank_) - keep.begin());
  return std::make_unique<LocalTransport>(std::move(next), newRank, device_, plans_);
}

void LocalRound::wait(const Deadline& dl) {
  World& w = t_.world();
  const int me = t_.rank(), dev = t_.device();
  for (const auto& r : recvs) {
    t_.countRendezvous();  // the sender must have posted it
    std::shared_ptr<SendRec> rec;
    {
      std::unique_lock<std::mutex> lk(w.m);
      auto& q = w.queue(r.peer, me);
      w.state[size_t(me)].waitingFor = r.peer;
      const bool ok =
          w.waitUntil(lk, dl, [&] { return !q.empty() || w.abortedElsewhere(me) || w.meetsIn(r.peer, seq_); });
      // A rank that fails here keeps its wait on record: ranks timing out
      // at the same moment follow the chain through it.
      if (!q.empty()) w.state[size_t(me)].waitingFor = -1;
      if (q.empty()) w.throwIfAbortedElsewhere(me);
      SC_REQUIRE(!q.empty() || !w.meetsIn(r.peer, seq_), scRemoteError, "mismatched calls: rank ", me, " in call #",
                 seq_, " expected ", bytesText(r.bytes), " from rank ", r.peer,
                 ", which made another kind of call (another collective, algorithm or memory kind) as call #", seq_);
      if (!ok)
        SC_THROW(scTimeout, "deadline of ", dl.seconds, " s expired in call #", seq_, ": rank ", me,
                 " was waiting for ", bytesText(r.bytes), " from rank ", r.peer, w.culprit(me, r.peer, seq_));
      const SendRec& f = *q.front();
      SC_REQUIRE(f.seq == seq_ && f.sig == sig_, scRemoteError, "mismatched calls: rank ", me, " in call #", seq_,
                 " expected ", bytesText(r.bytes), " from rank ", r.peer, ", which sent a message of ",
                 f.seq == seq_ ? std::string("a different call (another collective, count, data type, op or algorithm)")
                               : cat("its call #", f.seq),
                 " instead");
      rec = q.front();
      q.pop_front();
      rec->taken = true;
    }
    const bool match = rec->bytes == r.bytes;
    if (match && r.bytes && r.fuse.be) {
      // Reduced straight out of the sender's buffer (Transport::fusesReduce).
      const FusedReduce& f = r.fuse;
      const void *a = f.ownFirst ? f.own : rec->buf, *b = f.ownFirst ? rec->buf : f.own;
      const size_t n = r.bytes / dtypeSize(f.dt);
      if (dev >= 0) {
        localdev::streamWait(dev, stream_, rec->readyEvent);
        f.be->reduce(r.buf, a, b, n, f.dt, f.op, stream_);
        rec->doneEvent = t_.events()->record(stream_, t_);
        rec->donePool = t_.events();
      } else {
        f.be->reduce(r.buf, a, b, n, f.dt, f.op, nullptr);
      }
    } else if (match && r.bytes) {
      if (dev >= 0) {
        void* side = t_.side();
        localdev::streamWait(dev, side, ready);
        localdev::streamWait(dev, side, rec->readyEvent);
        localdev::copyAsync(dev, r.buf, rec->buf, rec->device, r.bytes, side);
        rec->doneEvent = t_.events()->record(side, t_);
        rec->donePool = t_.events();
        localdev::streamWait(dev, stream_, rec->doneEvent);
      } else {
        std::memcpy(r.buf, rec->buf, r.bytes);
      }
    }
    {
      std::lock_guard<std::mutex> lk(w.m);
      rec->done = true;
    }
    w.cv.notify_all();
    SC_REQUIRE(match, scRemoteError, "message size mismatch in call #", seq_, ": rank ", me, " expected ", r.bytes,
               " bytes from rank ", r.peer, " but it sent ", rec->bytes,
               " (the ranks made different calls, or the same call with different counts)");
  }
  std::unique_lock<std::mutex> lk(w.m);
  for (const auto& s : sends) {
    t_.countRendezvous();  // the receiver must have taken it
    w.state[size_t(me)].waitingFor = s->peer;
    const bool ok = w.waitUntil(lk, dl, [&] { return s->done || w.abortedElsewhere(me); });
    if (s->done) w.state[size_t(me)].waitingFor = -1;
    if (!s->done) w.throwIfAbortedElsewhere(me);
    if (!ok)
      SC_THROW(scTimeout, "deadline of ", dl.seconds, " s expired in call #", seq_, ": rank ", me,
               " was waiting for rank ", s->peer, " to take ", bytesText(s->bytes), w.culprit(me, s->peer, seq_));
    if (dev >= 0 && s->doneEvent) {
      localdev::streamWait(dev, stream_, s->doneEvent);
      // Its last wait is enqueued: back to the receiver's pool at once, so a
      // receiver reuses one event per sender however many rounds follow.
      s->donePool->put(s->doneEvent);
      s->donePool.reset();
    }
  }
  waited_ = true;
}

LocalRound::~LocalRound() {
  World& w = t_.world();
  std::unique_lock<std::mutex> lk(w.m);
  if (!waited_) {
    // Withdraw sends nobody took; wait out copies already under way so the
    // caller may free its buffers once we return.
    for (const auto& s : sends) {
      auto& ch = w.queue(t_.rank(), s->peer);
      for (auto it = ch.begin(); it != ch.end(); ++it)
        if (*it == s) {
          ch.erase(it);
          break;
        }
      if (s->taken) w.cv.wait(lk, [&] { return s->done; });
    }
  }
  lk.unlock();
  // Every wait on `ready` is enqueued: the receivers' copies took their
  // messages (or were withdrawn), this rank's copies ran in wait().
  if (ready) t_.events()->put(ready);
}

void LocalTransport::reduceBlock(const std::vector<const void*>& S, void* dst, size_t srcOff, size_t dstOff, size_t n,
                                 scDataType_t dt, scRedOp_t op) {
  static const std::unique_ptr<Backend> cpu = makeCpuBackend();
  const size_t esz = dtypeSize(dt);
  char* d = static_cast<char*>(dst) + dstOff * esz;
  auto src = [&](int q) { return static_cast<const char*>(S[q]) + srcOff * esz; };
  // Start from our own block: in place, dst is exactly that block.
  if (w_->P == 1) {
    cpu->copy(d, src(0), n * esz, nullptr);
    return;
  }
  bool first = true;
  for (int q = 0; q < w_->P; ++q) {
    if (q == rank_) continue;
    cpu->reduce(d, first ? src(rank_) : d, src(q), n, dt, op, nullptr);
    first = false;
  }
}

}  // namespace

std::vector<std::unique_ptr<scComm>> makeLocalComms(int nranks, const int* devices, const Config& cfg) {
  std::vector<int> devs(size_t(nranks), -1);
  if (devices) devs.assign(devices, devices + nranks);
  const char* how = env::get(env::Var::LocalPlanned);
  const int onOff = env::onOff(env::Var::LocalPlanned);
  const bool one = how && std::strcmp(how, "one-stream") == 0;
  SC_ARG(onOff >= 0 || one, env::setting(env::Var::LocalPlanned),
         ": expected 1 or on (dense schedules on device buffers meet once per call, the default), one-stream (and "
         "ranks on one device run on one stream), 0 or off (meet at every message)");
  const auto plans = one     ? LocalTransport::Plans::OneStream
                     : onOff ? LocalTransport::Plans::Streams
                             : LocalTransport::Plans::Off;
  auto world = std::make_shared<World>(nranks, devs);
  std::vector<std::unique_ptr<scComm>> comms;
  for (int r = 0; r < nranks; ++r) {
    const int dev = devs[size_t(r)];
    SC_ARG(!devices || dev >= 0, "devices[", r, "] = ", dev, " is not a CUDA device index");
    auto backend = dev >= 0 ? makeCudaBackend(dev) : makeCpuBackend();
    Config c = cfg;
    c.device = dev;
    comms.push_back(
        std::make_unique<scComm>(std::make_unique<LocalTransport>(world, r, dev, plans), std::move(backend), c));
  }
  return comms;
}

}  // namespace sc
