// The one place C++ exceptions become scResult_t. Every C entry point runs its
// body through scGuard(); failures record a detailed message (with file:line)
// on the communicator, or per thread when there is none. Failures that leave
// the communicator in an unknown state (timeout, transport or CUDA errors)
// abort it: later calls fail fast instead of hanging.
//
// A handle that is not a live communicator (destroyed, or never created) is
// refused before anything reads it: communicators are registered while they
// live. Collective calls enter through scCall(), which also holds the
// communicator for the call: a second thread calling into it meanwhile gets
// scInvalidUsage instead of racing on its state. Queries (scGuard with a
// communicator) hold it shared, beside such a call (entry.h), so their
// failures are the calling thread's alone (recordThreadError).
#pragma once

#include <new>
#include <string>

#include "core/comm.h"
#include "core/entry.h"

namespace sc {

// Returns the code recorded: scTimeout becomes scInterrupted when an
// interrupt ended the wait.
scResult_t recordError(scComm* comm, scResult_t code, const std::string& msg);
// Throws unless comm is usable: non-null and not aborted. (Inline: every
// call checks; the throw is out of line.)
[[noreturn]] void commUnusable(const scComm* comm);
inline void checkComm(const scComm* comm) {
  if (!comm || comm->aborted.load(std::memory_order_acquire) || comm->interrupted.load(std::memory_order_relaxed))
    commUnusable(comm);
}
// A failure recorded for this thread alone, about comm (may be null):
// scGetLastError(comm) on this thread returns it while it is the thread's
// last. A thread that does not hold comm must leave its error and state
// alone: another thread may be inside a call on it. Returns code.
scResult_t recordThreadError(const scComm* about, scResult_t code, const std::string& msg);
// The calls numbered after `before` ended with r: the flight recorder and the
// trace record them (core/trace.h).
void endCalls(scComm* comm, uint64_t before, scResult_t r) noexcept;

// Runs body; a failure becomes its code, recorded by record(code, text).
template <typename F, typename R>
scResult_t guardWith(F&& body, R&& record) {
  try {
    body();
    return scSuccess;
  } catch (const Error& e) {
    return record(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return record(scSystemError, "out of host memory");
  } catch (const std::exception& e) {
    return record(scInternalError, std::string("internal error: ") + e.what());
  } catch (...) {
    return record(scInternalError, "internal error: unknown exception");
  }
}

// scGuard for a communicator known to be live and held by this thread
// (scCall's, since enterCall), or for none.
template <typename F>
scResult_t guardLive(scComm* comm, F&& body) {
  return guardWith(std::forward<F>(body),
                   [comm](scResult_t code, const std::string& msg) { return recordError(comm, code, msg); });
}

// The guard of a query: comm held shared for the body (destroy waits).
template <typename F>
scResult_t scGuard(scComm* comm, F&& body) {
  if (!comm) return guardLive(nullptr, std::forward<F>(body));
  if (!holdQuery(comm))
    return recordThreadError(comm, scInvalidUsage, "communicator handle was destroyed or never created");
  struct Release {
    const scComm* c;
    ~Release() { releaseQuery(c); }
  } release{comm};
  return guardWith(std::forward<F>(body),
                   [comm](scResult_t code, const std::string& msg) { return recordThreadError(comm, code, msg); });
}

// The guard of a collective call (one that communicates): see above. A NULL
// comm is left to the body's checkComm, which names it. name: the C entry
// point, for the message of a thread refused meanwhile (GCC and Clang fill
// in the caller's name).
template <typename F>
scResult_t scCall(scComm* comm, F&& body, const char* name = __builtin_FUNCTION()) {
  bool nested = false;
  if (comm) {
    const scResult_t r = enterCall(comm, &nested, name);
    if (r != scSuccess) return r;
  }
  struct Leave {
    scComm* c;
    ~Leave() {
      if (c) leaveCall(c);
    }
  } leave{nested ? nullptr : comm};
  const uint64_t before = comm ? comm->seq : 0;
  const scResult_t r = guardLive(comm, std::forward<F>(body));
  if (comm && comm->seq > before) endCalls(comm, before, r);
  return r;
}

}  // namespace sc
