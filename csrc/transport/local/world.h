// The state the in-process ranks of one local world share: the mailboxes of
// published sends, what each rank is doing (for a timeout's culprit), the
// first abort, the native and planned calls' tables and the shrinks. Guarded by
// World::m; used by the local transport's files only (transport/local/).
#pragma once

#include <sched.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/deadline.h"
#include "core/error.h"
#include "transport/event_pool.h"

namespace sc::local {

struct SendRec {
  const void* buf;
  size_t bytes;
  uint64_t seq;                // the sender's call
  uint32_t sig;                // its signature's hash
  int peer;                    // the receiver
  int device = -1;             // device buffers: the sender's device
  void* readyEvent = nullptr;  // device: sender's stream reached the send (its round's)
  void* doneEvent = nullptr;   // device: receiver's copy finished (from the receiver's pool)
  std::shared_ptr<EventPool> donePool;
  bool taken = false, done = false;
  // Last owner gone and doneEvent not given back: the sender's stream never
  // waits for it (an error path).
  ~SendRec() {
    if (donePool) donePool->put(doneEvent);
  }
};

// What a rank's native call is: every rank publishes it, and all compare.
struct NativeSig {
  int kind = -1;  // 0 allreduce, 1 reduce-scatter, 2 allgather, 3 broadcast
  size_t count = 0;
  scDataType_t dt = scFloat32;
  scRedOp_t op = scSum;
  uint64_t seq = 0;
  int root = 0;  // broadcast
  bool operator==(const NativeSig& o) const {
    return kind == o.kind && count == o.count && dt == o.dt && op == o.op && seq == o.seq && root == o.root;
  }
};

// A meeting of every rank once per call (the direct call's, the planned
// call's): each rank publishes its part under the lock and arrives
// (World::arrive); the last to arrive runs the call for all while the others
// wait, and completes the meeting (World::complete).
struct Meeting {
  int arrived = 0;
  uint64_t gen = 0;      // meetings completed; a rank waits for the one it arrived in
  bool running = false;  // the last arriver runs the call: nobody withdraws now
  std::string error;     // the last meeting's call failed on every rank, for this reason
  // Where the last arriver ran the call on its own stream: the point after
  // it, from its pool (shared: the pool must outlive the others' waits),
  // which every other rank's stream waits for (waitDone).
  void* done = nullptr;
  std::shared_ptr<EventPool> donePool;
  int waitsLeft = 0;
};

// A rank other than the last arriver, after the meeting (lock held in lk):
// `stream` (of `device`) waits for the point after the call's work, when
// there is one; the last wait gives the event back.
inline void waitDone(Meeting& mt, std::unique_lock<std::mutex>& lk, int device, void* stream) {
  void* done = mt.done;
  if (!done) return;
  lk.unlock();
  std::exception_ptr failed;
  try {
    localdev::streamWait(device, stream, done);
  } catch (...) {
    failed = std::current_exception();
  }
  lk.lock();
  if (--mt.waitsLeft == 0) {  // the last wait on it is enqueued (or failed)
    mt.donePool->put(done);
    mt.done = nullptr;
    mt.donePool.reset();
  }
  if (failed) std::rethrow_exception(failed);
}

// A rank's part of a planned call (Transport::plans; transport/local/plan_call.cpp).
struct PlanRank {
  const CallPlan* plan = nullptr;     // null: not there (not arrived, or withdrawn)
  const Ctx* ctx = nullptr;           // the rank's backend, stream and call
  Transport* owner = nullptr;         // counts the events created
  std::shared_ptr<EventPool> events;  // the rank's events
  void* side = nullptr;               // the rank's copy stream
  int device = -1;
  uint64_t seq = 0;  // the call and its signature's hash
  uint32_t sig = 0;
  // All ranks on one device and SPARCOLL_LOCAL_PLANNED=one-stream: the last
  // arriver runs every rank's plan on its own stream, in order, with no event
  // between ranks; `ready` is this rank's stream at the call, which it waits
  // for first.
  bool oneStream = false;
  void* ready = nullptr;
};

// A one-device direct call being assembled (transport/local/direct.h): every
// rank publishes its buffers, its call and its stream's point; the last to
// arrive checks that the calls agree, enqueues the one kernel and publishes
// the point after it (or why it did not), which the others' streams wait for.
struct DirectCall {
  std::vector<const void*> send;
  std::vector<void*> recv;
  std::vector<void*> ready;  // each rank's stream at the call, from its pool
  std::vector<std::shared_ptr<EventPool>> pool;
  std::vector<NativeSig> sig;
  Meeting meet;
};

struct World {
  World(int p, std::vector<int> devices) : P(p), device(std::move(devices)) {}
  const int P;
  const std::vector<int> device;  // each rank's CUDA device, -1: host memory
  std::mutex m;
  std::condition_variable cv;
  // The mailboxes, [src * P + dst], made on first use: a full table of P²
  // queues would cost gigabytes at thousands of ranks, where schedules use
  // O(P log P) pairs.
  std::unordered_map<uint64_t, std::deque<std::shared_ptr<SendRec>>> chan;
  std::deque<std::shared_ptr<SendRec>>& queue(int src, int dst) { return chan[uint64_t(src) * P + dst]; }
  uint64_t barrierArrived = 0;  // counts arrivals over all barriers
  // What each rank is doing, for the culprit of a timeout: the last call it
  // posted a round of, and the rank it waits for (-1: none, -2: a barrier).
  struct State {
    uint64_t seq = 0;
    int waitingFor = -1;
    const Meeting* meeting = nullptr;  // the meeting it waits in (arrive)
  };
  // Whether rank q waits in a meeting of call `seq`: a rank of that call
  // waiting for its message made another kind of call.
  bool meetsIn(int q, uint64_t seq) const { return state[size_t(q)].meeting && state[size_t(q)].seq == seq; }
  // A rank other than `me` in call `seq` that waits for a round's message,
  // or in a meeting other than `mt`: it made another kind of call. -1: none.
  int strayPeer(int me, uint64_t seq, const Meeting& mt) const {
    for (int q = 0; q < P; ++q) {
      const State& s = state[size_t(q)];
      if (q != me && s.seq == seq && (s.waitingFor >= 0 || (s.meeting && s.meeting != &mt))) return q;
    }
    return -1;
  }
  std::vector<State> state = std::vector<State>(size_t(P));
  // Who holds up `me`, which waits for `peer` in call `seq`: the chain of
  // waits from peer on, to the rank at its end, which is not waiting (stopped,
  // or busy outside sparcoll) or is behind in its calls. Under the lock.
  std::string culprit(int me, int peer, uint64_t seq) const {
    std::string t;
    std::vector<bool> seen(size_t(P), false);
    seen[size_t(me)] = true;
    for (int q = peer; q >= 0 && q < P; q = state[size_t(q)].waitingFor) {
      const State& s = state[size_t(q)];
      if (s.seq < seq)
        return t + cat("; rank ", q, " has not reached call #", seq, " (its last call: #", s.seq,
                       "): it is the likely culprit (stopped, or busy outside sparcoll)");
      if (seen[size_t(q)]) return t + cat("; rank ", q, " waits in a cycle (ranks made different calls?)");
      seen[size_t(q)] = true;
      if (s.waitingFor == -1)
        return t + (q == peer ? std::string() : cat("; rank ", q, " is not waiting: it is the likely culprit"));
      if (s.waitingFor == -2) return t + cat("; rank ", q, " waits in a barrier");
      t += cat("; rank ", q, " is waiting for rank ", s.waitingFor);
    }
    return t;
  }
  // The first rank that aborted its communicator, and why: every wait of the
  // other ranks ends with scRemoteError naming it.
  int abortedBy = -1;
  std::string abortReason;
  bool abortedElsewhere(int me) const { return abortedBy >= 0 && abortedBy != me; }
  void throwIfAbortedElsewhere(int me) const {
    if (abortedElsewhere(me)) SC_THROW(scRemoteError, "rank ", abortedBy, " aborted the communicator: ", abortReason);
  }
  // Native collectives: each rank publishes its buffers and its call.
  std::vector<const void*> nativeSend, nativeRecv;
  std::vector<NativeSig> nativeSig;
  DirectCall direct;
  std::vector<PlanRank> plans = std::vector<PlanRank>(size_t(P));
  Meeting planMeet;
  // Whether every rank's buffers are on one device (the direct call's case).
  bool oneDevice() const {
    for (int d : device)
      if (d < 0 || d != device[0]) return false;
    return true;
  }
  // scCommShrink: the k-th shrink of each rank meets the k-th of the others.
  // The first to arrive makes the new world; it is complete when every rank
  // not excluded has arrived.
  struct Shrink {
    std::map<int, std::vector<int>> lists;  // rank -> the ranks it excludes
    std::shared_ptr<World> next;
    size_t left = 0;  // ranks that took `next`
  };
  std::map<uint64_t, Shrink> shrinks;

  // Waits under lk until pred() holds or the deadline passes; returns pred().
  // It first hands the core over a bounded number of times (sched_yield,
  // re-checking in between), then sleeps on the condition variable. Ranks are
  // threads, often more than cores: the peer that must act next usually
  // needs this core, and a yield gives it at once, where a futex sleep and
  // wake-up costs tens to hundreds of microseconds per step under
  // oversubscription. When nothing else is runnable the yields return at once
  // and the wait soon sleeps.
  template <class Pred>
  bool waitUntil(std::unique_lock<std::mutex>& lk, const Deadline& dl, Pred pred) {
    for (int i = 0; i < kYields && !pred() && !dl.expired(); ++i) {
      lk.unlock();
      sched_yield();
      lk.lock();
    }
    if (pred()) return true;  // a call's deadline: no clock read when it need not wait
    // Slept in slices, so that an interrupt (scCommInterrupt, the interrupt
    // check) ends the wait within kInterruptPeriod.
    for (;;) {
      const Clock::time_point now = Clock::now();
      if (dl.passedAt(now)) return pred();
      if (cv.wait_until(lk, std::min(dl.at(), now + kInterruptPeriod), pred)) return true;
    }
  }
  static constexpr int kYields = 2000;

  // Arrives at `mt` as `rank` in call `seq`, under lk, having published its
  // part. The last to arrive gets true, lock held and mt.running set: it runs
  // the call (unlocked if it likes), then calls complete(). The others get
  // false once it has, lock held, or throw mt.error as scRemoteError; at
  // their deadline or an abort elsewhere before the last arrived they call
  // withdraw() (the call must not run over their buffers: their callers may
  // free them once they return) and throw scTimeout naming the ranks that
  // never came, or scRemoteError. `what` names the call ("a native call").
  template <class Withdraw>
  bool arrive(Meeting& mt, std::unique_lock<std::mutex>& lk, int rank, uint64_t seq, const Deadline& dl,
              const char* what, Withdraw withdraw) {
    State& me = state[size_t(rank)];
    me.seq = seq;
    const uint64_t gen = mt.gen;
    if (++mt.arrived == P) {
      mt.running = true;
      return true;
    }
    cv.notify_all();
    me.waitingFor = -2;
    me.meeting = &mt;
    int stray = -1;
    const bool ok = waitUntil(lk, dl, [&] {
      return mt.gen != gen || mt.running || abortedElsewhere(rank) || (stray = strayPeer(rank, seq, mt)) >= 0;
    });
    // The last arriver only enqueues work: wait for it past any deadline.
    if (mt.gen == gen && mt.running) cv.wait(lk, [&] { return mt.gen != gen; });
    me.meeting = nullptr;
    if (mt.gen == gen) {
      --mt.arrived;
      withdraw();
      cv.notify_all();  // a rank waiting for this one's message sees it left
      throwIfAbortedElsewhere(rank);
      if (stray >= 0)
        SC_THROW(scRemoteError, "mismatched calls: rank ", rank, " in call #", seq, " waits in ", what, ", rank ",
                 stray, " made another kind of call (another collective, algorithm or memory kind) as call #", seq);
      if (!ok) {
        std::string missing;
        for (int r = 0; r < P; ++r)
          if (r != rank && state[size_t(r)].seq < seq)  // a rank that came and gave up is no culprit
            missing += cat(missing.empty() ? "" : ", ", r, " (its last call: #", state[size_t(r)].seq, ")");
        SC_THROW(scTimeout, "deadline of ", dl.seconds, " s expired in call #", seq, ": rank ", rank,
                 " was waiting in ", what, " for ranks that have not reached it: ", missing,
                 "; they are the likely culprits (stopped, or busy outside sparcoll)");
      }
    }
    me.waitingFor = -1;
    SC_REQUIRE(mt.error.empty(), scRemoteError, mt.error);
    return false;
  }
  // The last arriver's end of the meeting, under the lock: the call ran (error
  // empty) or failed on every rank for `error`; `done` (from `pool`): the
  // point after the work on its stream that the others must wait for, or null.
  void complete(Meeting& mt, std::string error, void* done = nullptr, std::shared_ptr<EventPool> pool = nullptr) {
    mt.done = done;
    mt.donePool = std::move(pool);
    mt.waitsLeft = P - 1;
    mt.error = std::move(error);
    mt.arrived = 0;
    mt.running = false;
    ++mt.gen;
    cv.notify_all();
  }
};

// The direct call of rank `rank` (on `device`, whose events are `pool`) on
// the world's one device: publishes, meets the others once (deadline `dl`),
// and orders `stream` after the kernel. Counts one rendezvous on `owner`.
// Throws scRemoteError with the same text on every rank when the calls differ.
struct DirectArgs {
  NativeSig sig;
  const void* send;
  void* recv;
  void* stream;
};
void directCall(World& w, int rank, int device, const std::shared_ptr<EventPool>& pool, const DirectArgs& a,
                const Deadline& dl, Transport& owner);
// Rank `me`'s part of a planned call (Transport::runPlan): publishes it,
// meets the others once (deadline `dl`); the last to arrive enqueues every
// rank's plan on the ranks' streams. Throws the same error on every rank
// when the calls differ.
void plannedCall(World& w, int rank, const PlanRank& me, const Deadline& dl);
// "mismatched native calls: rank q called ..., rank 0 called ..." for the
// first rank whose call differs from rank 0's; empty when all agree.
std::string nativeMismatch(const std::vector<NativeSig>& sig);

}  // namespace sc::local
