// The live communicators and the entry of a call (entry.h): the lock-free
// look-up's slow side, each thread's slot, and the removal that waits for
// the slots.
#include "core/entry.h"
#include "core/env.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/membarrier.h>
#endif

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/api_guard.h"
#include "core/error.h"

namespace sc {

std::atomic<uint64_t> gRemoved{0};
std::atomic<bool> gLightEntry{false};
thread_local KnownComm tlsKnown SC_HOT_TLS;
thread_local EnterSlot* tlsEnterSlot SC_HOT_TLS = nullptr;

namespace {

// Guards the live set and the slots' list. Statics that outlive static
// destructors: a thread may end (and give back its slot) after them.
std::mutex& liveMutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::unordered_set<const scComm*>& live() {
  static auto* s = new std::unordered_set<const scComm*>;
  return *s;
}
std::vector<EnterSlot*>& slots() {
  static auto* v = new std::vector<EnterSlot*>;
  return *v;
}
// Queries in flight, by communicator, and their end (retireComm waits).
std::unordered_map<const scComm*, int>& queries() {
  static auto* m = new std::unordered_map<const scComm*, int>;
  return *m;
}
std::condition_variable& queriesEnded() {
  static auto* c = new std::condition_variable;
  return *c;
}

// A thread's slot goes back when the thread ends (this object's destructor;
// the slot pointer itself is trivially destructible, so that reading it on a
// call's path needs no guard).
struct SlotOwner {
  bool armed = false;
  ~SlotOwner() {
    if (!armed) return;
    std::lock_guard<std::mutex> lk(liveMutex());
    auto& v = slots();
    v.erase(std::remove(v.begin(), v.end(), tlsEnterSlot), v.end());
    delete tlsEnterSlot;
    tlsEnterSlot = nullptr;
  }
};
thread_local SlotOwner tlsSlotOwner;

// Registers this process for the expedited membarrier, once; whether it can
// fence for every thread (Linux 4.14 and later, where no seccomp filter
// refuses the call), unless SPARCOLL_MEMBARRIER=0.
bool lightEntryAvailable() {
#if defined(__linux__) && defined(SYS_membarrier)
  if (membarrierSetting(env::get(env::Var::Membarrier)) == Membarrier::Off) return false;
  const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
  return false;
#endif
}

// A full fence on every thread of the process, or on this one where the
// callers fence themselves.
void heavyFence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
#if defined(__linux__) && defined(SYS_membarrier)
  if (!gLightEntry.load(std::memory_order_relaxed)) return;
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
  // A process forked after the registration may not inherit it: once more.
  const bool again = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
                     syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
  SC_REQUIRE(again, scSystemError, "membarrier failed after its registration: ", std::strerror(errno),
             " (the communicator is left undestroyed)");
#endif
}

// The call the thread `owner` holds a communicator for, and that thread, in
// words (under the lock: the slots stay put).
std::string heldBy(std::thread::id owner) {
  for (const EnterSlot* s : slots())
    if (s->thread == owner) {
      const char* name = s->calling.load(std::memory_order_relaxed);
      return cat(name ? name : "a call", " of thread ", s->tid);
    }
  return "a call";
}

[[noreturn]] void inUseElsewhere(const scComm* comm, const char* name, std::thread::id owner) {
  SC_THROW(scInvalidUsage, name, ": rank ", comm->rank(), ": the communicator is in use by another thread (inside ",
           heldBy(owner), "; this is thread ", long(syscall(SYS_gettid)),
           "): calls on one communicator must not overlap; give each thread its own communicator");
}

}  // namespace

Membarrier membarrierSetting(const char* v) {
  if (!v || !*v || std::strcmp(v, "1") == 0 || std::strcmp(v, "on") == 0) return Membarrier::On;
  if (std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0) return Membarrier::Off;
  return Membarrier::Invalid;
}

void registerComm(const scComm* comm) {
  // Decided before the first communicator exists, so before any thread can
  // enter one without the lock (its first entry takes it).
  static const bool light = [] {
    gLightEntry.store(lightEntryAvailable(), std::memory_order_relaxed);
    return true;
  }();
  (void)light;
  std::lock_guard<std::mutex> lk(liveMutex());
  live().insert(comm);
}

void unregisterComm(const scComm* comm) noexcept {
  std::lock_guard<std::mutex> lk(liveMutex());
  if (live().erase(comm)) gRemoved.fetch_add(1, std::memory_order_seq_cst);
}

bool commLive(const scComm* comm) {
  std::lock_guard<std::mutex> lk(liveMutex());
  return live().count(comm) != 0;
}

scResult_t enterCallSlow(scComm* comm, bool* nested, const char* name) {
  const std::thread::id me = std::this_thread::get_id();
  try {
    std::lock_guard<std::mutex> lk(liveMutex());
    SC_REQUIRE(live().count(comm), scInvalidUsage, name, ": communicator handle was destroyed or never created");
    std::thread::id owner{};
    if (!comm->inUse.compare_exchange_strong(owner, me)) {
      *nested = owner == me;
      if (!*nested) inUseElsewhere(comm, name, owner);
    }
    if (!tlsEnterSlot) {  // this thread's first entry: its slot, given back when it ends
      slots().push_back(new EnterSlot);
      tlsEnterSlot = slots().back();
      tlsEnterSlot->thread = me;
      tlsEnterSlot->tid = long(syscall(SYS_gettid));
      tlsSlotOwner.armed = true;
    }
    if (!*nested) tlsEnterSlot->calling.store(name, std::memory_order_relaxed);
    tlsKnown = {comm, gRemoved.load(std::memory_order_relaxed)};
  } catch (const Error& e) {
    // This thread's alone: another thread may own the communicator.
    return recordThreadError(comm, e.code(), e.what());
  }
  startCall(comm, *nested);
  return scSuccess;
}

bool holdQuery(const scComm* comm) {
  std::lock_guard<std::mutex> lk(liveMutex());
  if (!live().count(comm)) return false;
  ++queries()[comm];
  return true;
}

void releaseQuery(const scComm* comm) noexcept {
  std::lock_guard<std::mutex> lk(liveMutex());
  auto it = queries().find(comm);
  if (--it->second) return;
  queries().erase(it);
  queriesEnded().notify_all();
}

void retireComm(scComm* comm) {
  std::unique_lock<std::mutex> lk(liveMutex());
  // Held and removed under the lock, so that of two racing removals only
  // one proceeds, and a call that entered first keeps it (this fails).
  SC_REQUIRE(live().count(comm), scInvalidUsage, "communicator handle was destroyed already or never created");
  std::thread::id owner{};
  if (!comm->inUse.compare_exchange_strong(owner, std::this_thread::get_id()))
    SC_THROW(scInvalidUsage, "rank ", comm->rank(), ": scCommDestroy while another thread is inside a call on the ",
             "communicator (", heldBy(owner), "): destroy it once the call has returned");
  live().erase(comm);
  gRemoved.fetch_add(1, std::memory_order_seq_cst);
  // Queries that held it before the removal end soon (they never wait);
  // later ones find it gone.
  queriesEnded().wait(lk, [&] { return !queries().count(comm); });
  // A thread that looked before the count moved may still be about to try to
  // hold it (a few instructions): its slot names it until then. The fence
  // makes every slot marked before that look visible here, and every look
  // after it see the count. The slots' list stays put under the lock, and a
  // thread in its entry takes no lock.
  heavyFence();
  for (EnterSlot* s : slots())
    while (s->entering.load(std::memory_order_acquire) == comm) sched_yield();
}

}  // namespace sc
