// The one place C++ exceptions become scResult_t. Every C entry point runs its
// body through scGuard(); failures record a detailed message (with file:line)
// on the communicator, or per thread when there is none. Failures that leave
// the communicator in an unknown state (timeout, transport or CUDA errors)
// abort it: later calls fail fast instead of hanging.
#pragma once

#include <new>
#include <string>

#include "core/comm.h"

namespace sc {

void recordError(scComm* comm, scResult_t code, const std::string& msg);
// Throws unless comm is usable: non-null and not aborted.
void checkComm(const scComm* comm);

template <typename F>
scResult_t scGuard(scComm* comm, F&& body) {
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

}  // namespace sc
