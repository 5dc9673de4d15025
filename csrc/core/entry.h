// Which communicators are live, and how a call enters one.
//
// A handle is looked up in the live set before anything reads it, so a
// destroyed or made-up handle is scInvalidUsage, not a read of freed memory.
// A call then holds its communicator (scComm::inUse) for its duration: a
// second thread that calls meanwhile gets scInvalidUsage. A query (scGuard:
// rank, estimates, the last error...) holds it shared instead, beside a call
// of another thread: it reads only what calls leave alone. scCommDestroy
// waits for queries (they never wait) and refuses while a call is inside.
//
// The look-up of every call is lock-free: each thread remembers the
// communicator it last entered and the count of removals then (gRemoved).
// While no communicator was removed since, that one is live. A removal
// (scCommDestroy) must then not free a communicator that a thread has looked
// at but not yet held: each thread marks the communicator it is entering in
// its slot (EnterSlot) before it looks, and the removal waits until no slot
// names the communicator. The mark must be visible before the look: a store
// then a load, which takes a full fence -- or none on the caller's side where
// the removal makes every thread of the process pass one (Linux membarrier,
// the asymmetric fence of userspace RCU and folly). Each fence is a locked
// instruction: three of them (a counter's increment and decrement, and the
// hold) were a third of a 37 ns call on a rank without neighbours.
// SPARCOLL_MEMBARRIER=0 (or off) keeps the fence on the caller's side; it is read
// once, when the process makes its first communicator.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "core/comm.h"
#include "core/hot_tls.h"

namespace sc {

// Whether comm is a communicator that was created and not yet destroyed.
bool commLive(const scComm* comm);

struct KnownComm {
  const scComm* comm = nullptr;
  uint64_t removed = 0;  // gRemoved when it was last found live
};
struct EnterSlot {
  std::atomic<const scComm*> entering{nullptr};
  // The entry point of the call this thread holds a communicator for, and
  // the thread (its Linux id): what a thread refused meanwhile is told.
  std::atomic<const char*> calling{nullptr};
  std::thread::id thread;
  long tid = 0;
};
extern std::atomic<uint64_t> gRemoved;
extern std::atomic<bool> gLightEntry;  // the removal fences for the callers (membarrier)
extern thread_local KnownComm tlsKnown SC_HOT_TLS;
extern thread_local EnterSlot* tlsEnterSlot SC_HOT_TLS;  // this thread's, from its first slow entry

// An entered call's start: no signature yet, and the deadline's clock not
// started (an inner call shares its outer call's).
inline void startCall(scComm* comm, bool nested) {
  comm->call = CallSig{};
  if (!nested) comm->callStart.store(Deadline::kNotStarted, std::memory_order_relaxed);
}

// scCall's entry for the C entry point `name`: fails (recording the error
// for this thread only, since another thread may own the communicator) when
// comm is not live or is in use by another thread; else it holds comm (the
// call takes its number later, in setCall: core/call.h). *nested: this
// thread held it already (a call from inside a call), and keeps holding it
// after the inner call.
scResult_t enterCallSlow(scComm* comm, bool* nested, const char* name);
// The common case inline: this thread's last communicator, none removed
// since, held by no thread. The rest, errors included, in enterCallSlow.
inline scResult_t enterCall(scComm* comm, bool* nested, const char* name) {
  EnterSlot* slot = tlsEnterSlot;
  if (slot && tlsKnown.comm == comm) {
    slot->entering.store(comm, std::memory_order_relaxed);
    if (gLightEntry.load(std::memory_order_relaxed)) std::atomic_signal_fence(std::memory_order_seq_cst);
    else std::atomic_thread_fence(std::memory_order_seq_cst);
    bool held = false, mine = false;
    if (tlsKnown.removed == gRemoved.load(std::memory_order_relaxed)) {
      const std::thread::id me = std::this_thread::get_id();
      std::thread::id owner{};  // compare_exchange leaves the current holder here
      held = comm->inUse.compare_exchange_strong(owner, me);
      mine = !held && owner == me;  // a call from inside a call of this thread
    }
    slot->entering.store(nullptr, std::memory_order_release);
    if (held || mine) {
      if (held) slot->calling.store(name, std::memory_order_relaxed);  // a plain store: no fence
      *nested = mine;
      startCall(comm, mine);
      return scSuccess;
    }
  }
  return enterCallSlow(comm, nested, name);
}
inline void leaveCall(scComm* comm) noexcept {
  comm->callStart.store(scComm::kOutside, std::memory_order_relaxed);
  comm->inUse.store(std::thread::id{}, std::memory_order_release);
}

// SPARCOLL_MEMBARRIER's value (v: the variable's text, or null): unset or
// empty is the default, on; resolveConfig refuses Invalid at creation.
enum class Membarrier { On, Off, Invalid };
Membarrier membarrierSetting(const char* v);

// A query's shared hold (scGuard): false when comm is not live. Taken under
// the live set's lock: queries are not on a call's fast path.
bool holdQuery(const scComm* comm);
void releaseQuery(const scComm* comm) noexcept;

// scCommDestroy's part: holds comm (scInvalidUsage when another thread is
// inside a call on it, naming the call, or when it is not live), removes it
// from the live set and returns once no query holds it and no thread can
// still be about to enter it; the caller then deletes it.
void retireComm(scComm* comm);
// scCommDestroy's next step (neighbor/api_neighbor.cpp): the topologies made
// on comm refuse every call after it but scTopologyDestroy, which frees them.
void retireTopologiesOf(const scComm* comm);

}  // namespace sc
