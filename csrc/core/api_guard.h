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
// scInvalidUsage instead of racing on its state.
#pragma once

#include <new>
#include <string>

#include "core/comm.h"
#include "core/entry.h"

namespace sc {

void recordError(scComm* comm, scResult_t code, const std::string& msg);
// Throws unless comm is usable: non-null and not aborted. (Inline: every
// call checks; the throw is out of line.)
[[noreturn]] void commUnusable(const scComm* comm);
inline void checkComm(const scComm* comm) {
  if (!comm || comm->aborted) commUnusable(comm);
}
// The calls numbered after `before` ended with r: the flight recorder and the
// trace record them (core/trace.h).
void endCalls(scComm* comm, uint64_t before, scResult_t r) noexcept;

// scGuard for a communicator known to be live (scCall's, held since enterCall).
template <typename F>
scResult_t guardLive(scComm* comm, F&& body) {
  try {
    body();
    return scSuccess;
  } catch (const Error& e) {
    recordError(comm, e.code(), e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    recordError(comm, scSystemError, "out of host memory");
    return scSystemError;
  } catch (const std::exception& e) {
    recordError(comm, scInternalError, std::string("internal error: ") + e.what());
    return scInternalError;
  } catch (...) {
    recordError(comm, scInternalError, "internal error: unknown exception");
    return scInternalError;
  }
}

template <typename F>
scResult_t scGuard(scComm* comm, F&& body) {
  if (comm && !commLive(comm)) {
    recordError(nullptr, scInvalidUsage, "communicator handle was destroyed or never created");
    return scInvalidUsage;
  }
  return guardLive(comm, std::forward<F>(body));
}

// The guard of a collective call (one that communicates): see above. A NULL
// comm is left to the body's checkComm, which names it.
template <typename F>
scResult_t scCall(scComm* comm, F&& body) {
  bool nested = false;
  if (comm) {
    const scResult_t r = enterCall(comm, &nested);
    if (r != scSuccess) return r;
  }
  struct Leave {
    scComm* c;
    ~Leave() { if (c) leaveCall(c); }
  } leave{nested ? nullptr : comm};
  const uint64_t before = comm ? comm->seq : 0;
  const scResult_t r = guardLive(comm, std::forward<F>(body));
  if (comm && comm->seq > before) endCalls(comm, before, r);
  return r;
}

}  // namespace sc
