// The planned call of the local transport on device buffers
// (Transport::plans): every rank records its schedule (CallPlan), the ranks
// meet once, and the last to arrive enqueues all of their plans, on the
// ranks' own streams, with the protocol of a round (transport.cpp): one
// event marks a rank's point at each post; a receive waits for the sender's
// point and, on the rank's copy stream, for its own, then copies (or reduces
// straight out of the sender's buffer on one device) and marks its end; the
// sender's stream waits for that end at its wait. A stream's wait follows
// the record enqueued before it, so the record must be enqueued first: one
// thread enqueueing everything in the plans' data-flow order guarantees it,
// where ranks enqueueing their own rounds had to meet at every message.
// Nothing spins on the device: the order is events', so ranks sharing a GPU
// cannot deadlock its queues. One-stream calls (every rank on one device,
// SPARCOLL_LOCAL_PLANNED=one-stream) run all plans on the last arriver's
// stream in that order instead, after every rank's point at the call, and
// the others' streams wait for the point after: 2(P-1) waits and P+1
// records per call in all, where each message costs about five calls.
#include <exception>
#include <unordered_map>

#include "algo/ctx.h"
#include "backend/backend.h"
#include "transport/local/device.h"
#include "transport/local/world.h"

namespace sc::local {
namespace {

using Step = CallPlan::Step;

std::string stepText(const Step& s) {
  if (!s.phase) return "the call";
  return s.steps ? cat(s.phase, " step ", s.step + 1, "/", s.steps) : std::string(s.phase);
}

// A message of some rank's plan: a send, and the receive that takes it.
struct Msg {
  int src;
  const P2POp* op;
  const Step* at;
  bool posted = false, taken = false;
  void* ready = nullptr;  // the sender's point at its post
  void* done = nullptr;   // the receiver's copy or reduction ended, from its pool
  EventPool* donePool = nullptr;
};

class Executor {
 public:
  // single: the stream every rank's work runs on, in order (one-stream
  // calls); null: each rank's own, ordered by events.
  Executor(World& w, uint64_t seq, void* single) : w_(w), seq_(seq), single_(single), run_(size_t(w.P)) {}

  ~Executor() {  // an error path leaves events behind: back to their pools
    for (size_t r = 0; r < run_.size(); ++r)
      for (void* e : run_[r].ready) w_.plans[r].events->put(e);
    for (Msg& m : msgs_)
      if (m.done) m.donePool->put(m.done);
  }

  // Why the calls cannot run together; empty when they can. Pairs every
  // receive with its send (the k-th message from q to r is q's k-th send to r).
  std::string match() {
    const int P = w_.P;
    for (int r = 1; r < P; ++r) {
      const PlanRank &a = w_.plans[0], &b = w_.plans[size_t(r)];
      if (a.seq != b.seq || a.sig != b.sig)
        return cat("mismatched calls: rank ", r, " called ", b.ctx->comm.call.text(), " as call #", b.seq,
                   ", rank 0 called ", a.ctx->comm.call.text(), " as call #", a.seq);
    }
    size_t sends = 0;
    for (const PlanRank& p : w_.plans)
      for (const P2POp& o : p.plan->ops) sends += o.kind == P2POp::Send;
    msgs_.reserve(sends);  // Msg pointers stay put
    std::unordered_map<uint64_t, Pair> pairs;
    for (int q = 0; q < P; ++q) {
      const CallPlan& pl = *w_.plans[size_t(q)].plan;
      RankRun& rr = run_[size_t(q)];
      rr.msgOf.assign(pl.ops.size(), nullptr);
      rr.got.assign(pl.ops.size(), 0);
      rr.ready.assign(pl.posts, nullptr);
      for (const Step& s : pl.steps) {
        if (s.kind == CallPlan::Post) rr.postStep.push_back(&s);
        for (size_t i = s.first; s.kind == CallPlan::Post && i < s.first + s.count; ++i)
          if (pl.ops[i].kind == P2POp::Send) {
            msgs_.push_back(Msg{q, &pl.ops[i], &s});
            pairs[key(q, pl.ops[i].peer)].sends.push_back(&msgs_.back());
            rr.msgOf[i] = &msgs_.back();
          }
      }
    }
    for (int r = 0; r < P; ++r) {
      const CallPlan& pl = *w_.plans[size_t(r)].plan;
      for (const Step& s : pl.steps)
        for (size_t i = s.first; s.kind == CallPlan::Post && i < s.first + s.count; ++i) {
          const P2POp& o = pl.ops[i];
          if (o.kind != P2POp::Recv) continue;
          Pair& p = pairs[key(o.peer, r)];
          Msg* m = p.recvs < p.sends.size() ? p.sends[p.recvs] : nullptr;
          ++p.recvs;
          if (!m)
            return cat("mismatched schedules in call #", seq_, ": rank ", r, " expects ", bytesText(o.bytes),
                       " from rank ", o.peer, " in ", stepText(s), ", which sends it no such message");
          if (m->op->bytes != o.bytes)
            return cat("message size mismatch in call #", seq_, ": rank ", r, " expects ", bytesText(o.bytes),
                       " from rank ", o.peer, " in ", stepText(s), ", which sends ", bytesText(m->op->bytes), " in ",
                       stepText(*m->at));
          run_[size_t(r)].msgOf[i] = m;
        }
    }
    for (const auto& kv : pairs)
      if (kv.second.recvs < kv.second.sends.size()) {
        const Msg& m = *kv.second.sends[kv.second.recvs];
        return cat("mismatched schedules in call #", seq_, ": rank ", m.src, " sends ", bytesText(m.op->bytes),
                   " to rank ", m.op->peer, " in ", stepText(*m.at), ", which never receives it");
      }
    return {};
  }

  // Enqueues every plan, advancing whichever rank can; each pass moves at
  // least one rank on, or the plans wait on each other and the call fails.
  std::string enqueue() {
    for (bool moved = true; moved;) {
      moved = false;
      for (int r = 0; r < w_.P; ++r)
        while (advance(r)) moved = true;
    }
    for (int r = 0; r < w_.P; ++r) {
      const CallPlan& pl = *w_.plans[size_t(r)].plan;
      if (run_[size_t(r)].pc < pl.steps.size())
        return cat("the ranks' schedules of call #", seq_, " wait on each other: rank ", r, " cannot pass ",
                   stepText(pl.steps[run_[size_t(r)].pc]));
    }
    return {};
  }

 private:
  struct Pair {
    std::vector<Msg*> sends;
    size_t recvs = 0;
  };
  struct RankRun {
    size_t pc = 0, posts = 0;
    std::vector<void*> ready;           // per post: the rank's point (null once every wait on it is enqueued)
    std::vector<Msg*> msgOf;            // per op: its message (a send's own, the one a receive takes)
    std::vector<char> got;              // per op: the receive was enqueued
    std::vector<const Step*> postStep;  // per post: its step (a wait names its post by number)
  };
  uint64_t key(int src, int dst) const { return uint64_t(src) * uint64_t(w_.P) + uint64_t(dst); }

  // One step of rank r's plan if it can be enqueued now; a wait may also
  // enqueue only some of its receives. Whether anything was enqueued.
  bool advance(int r) {
    const PlanRank& me = w_.plans[size_t(r)];
    const CallPlan& pl = *me.plan;
    RankRun& rr = run_[size_t(r)];
    if (rr.pc == pl.steps.size()) return false;
    const Step& s = pl.steps[rr.pc];
    void* stream = single_ ? single_ : me.ctx->stream;
    Backend& be = *me.ctx->comm.backend;
    switch (s.kind) {
      case CallPlan::Post: {
        void* ready = single_ ? nullptr : me.events->record(stream, *me.owner);
        rr.ready[rr.posts++] = ready;
        for (size_t i = s.first; i < s.first + s.count; ++i)
          if (pl.ops[i].kind == P2POp::Send) rr.msgOf[i]->posted = true, rr.msgOf[i]->ready = ready;
        break;
      }
      case CallPlan::Wait: {
        const Step& post = *rr.postStep[s.first];
        bool progress = false, complete = true;
        for (size_t i = post.first; i < post.first + post.count; ++i) {
          Msg& m = *rr.msgOf[i];
          if (pl.ops[i].kind == P2POp::Send) {
            complete = complete && m.taken;
          } else if (!rr.got[i]) {
            if (!m.posted) {
              complete = false;
              continue;
            }
            receive(me, pl.ops[i], m, rr.ready[s.first]);
            rr.got[i] = 1;
            progress = true;
          }
        }
        if (!complete) return progress;
        for (size_t i = post.first; i < post.first + post.count; ++i) {
          Msg& m = *rr.msgOf[i];
          if (pl.ops[i].kind != P2POp::Send || single_) continue;
          localdev::streamWait(me.device, stream, m.done);
          m.donePool->put(m.done);  // its last wait is enqueued
          m.done = nullptr;
        }
        me.events->put(rr.ready[s.first]);  // every wait on this point is enqueued
        rr.ready[s.first] = nullptr;
        break;
      }
      case CallPlan::Reduce: be.reduce(s.dst, s.a, s.b, s.count, s.dt, s.op, stream); break;
      case CallPlan::Copy: be.copy(s.dst, s.a, s.count, stream); break;
      case CallPlan::Divide: be.divide(s.dst, s.count, s.dt, s.divisor, stream); break;
    }
    ++rr.pc;
    return true;
  }

  // Receiver `me` takes message m into op.buf: the round's protocol.
  void receive(const PlanRank& me, const P2POp& op, Msg& m, void* myReady) {
    const PlanRank& from = w_.plans[size_t(m.src)];
    m.taken = true;
    if (single_) {  // in order on one stream: nothing to wait for
      if (op.fuse.be) {
        const FusedReduce& f = op.fuse;
        f.be->reduce(op.buf, f.ownFirst ? f.own : m.op->buf, f.ownFirst ? m.op->buf : f.own, op.bytes / dtypeSize(f.dt),
                     f.dt, f.op, single_);
      } else {
        localdev::copyAsync(me.device, op.buf, m.op->buf, from.device, op.bytes, single_);
      }
      return;
    }
    void* stream = me.ctx->stream;
    if (op.fuse.be) {
      const FusedReduce& f = op.fuse;
      const void *a = f.ownFirst ? f.own : m.op->buf, *b = f.ownFirst ? m.op->buf : f.own;
      localdev::streamWait(me.device, stream, m.ready);
      f.be->reduce(op.buf, a, b, op.bytes / dtypeSize(f.dt), f.dt, f.op, stream);
      m.done = me.events->record(stream, *me.owner);
    } else {
      localdev::streamWait(me.device, me.side, myReady);
      localdev::streamWait(me.device, me.side, m.ready);
      localdev::copyAsync(me.device, op.buf, m.op->buf, from.device, op.bytes, me.side);
      m.done = me.events->record(me.side, *me.owner);
      localdev::streamWait(me.device, stream, m.done);
    }
    m.donePool = me.events.get();
  }

  World& w_;
  const uint64_t seq_;
  void* const single_;
  std::vector<RankRun> run_;
  std::vector<Msg> msgs_;
};

}  // namespace

void plannedCall(World& w, int rank, const PlanRank& me, const Deadline& dl) {
  PlanRank mine = me;
  if (mine.oneStream) mine.ready = mine.events->record(mine.ctx->stream, *mine.owner);
  std::unique_lock<std::mutex> lk(w.m);
  if (w.abortedElsewhere(rank)) {
    mine.events->put(mine.ready);
    w.throwIfAbortedElsewhere(rank);
  }
  w.plans[size_t(rank)] = mine;
  if (!w.arrive(w.planMeet, lk, rank, me.seq, dl, "a collective call", [&] {
        mine.events->put(mine.ready);
        w.plans[size_t(rank)] = PlanRank{};
      })) {
    waitDone(w.planMeet, lk, me.device, me.ctx->stream);
    return;
  }
  // The last to arrive: the others wait until the meeting completes, so
  // their plans, streams and buffers stay put while it enqueues unlocked.
  lk.unlock();
  void* const stream = me.ctx->stream;
  std::string error;
  std::exception_ptr failed;
  void* done = nullptr;
  try {
    Executor x(w, me.seq, me.oneStream ? stream : nullptr);
    error = x.match();
    if (error.empty() && me.oneStream)
      for (int r = 0; r < w.P; ++r)
        if (r != rank) localdev::streamWait(me.device, stream, w.plans[size_t(r)].ready);
    if (error.empty()) error = x.enqueue();
    if (error.empty() && me.oneStream) done = me.events->record(stream, *me.owner);
  } catch (const std::exception& e) {
    failed = std::current_exception();
    error = cat("rank ", rank, " could not enqueue the ranks' schedules of call #", me.seq, ": ", e.what());
  }
  lk.lock();
  for (PlanRank& p : w.plans) {
    if (p.events) p.events->put(p.ready);  // every wait on the ranks' points is enqueued
    p = PlanRank{};
  }
  w.complete(w.planMeet, error, done, done ? me.events : nullptr);
  lk.unlock();
  if (failed) std::rethrow_exception(failed);
  SC_REQUIRE(error.empty(), scRemoteError, error);
}

}  // namespace sc::local
