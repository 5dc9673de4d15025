// scCommInterrupt and the process's interrupt check (sparcoll.h). The
// interrupt is a flag that every deadline of the communicator watches
// (core/deadline.h): setting it is one relaxed store, which is all a signal
// handler may do; the waiting thread turns it into scInterrupted and aborts
// the communicator (api_comm.cpp: recordError), telling its peers.
#include <atomic>

#include "core/comm.h"
#include "core/deadline.h"

namespace sc {
namespace {

std::atomic<scInterruptCheck_t> gCheck{nullptr};
std::atomic<void*> gCheckArg{nullptr};
// When this thread next runs the check: a wait's first look only starts the
// period, so a call that waits less than it never runs the check (the Python
// layer's takes the GIL).
thread_local Clock::time_point tlsNextCheck{};

}  // namespace

bool interruptCheckSaysStop(Clock::time_point now) {
  const scInterruptCheck_t check = gCheck.load(std::memory_order_acquire);
  if (!check) return false;
  if (now < tlsNextCheck) return false;
  const bool first = tlsNextCheck == Clock::time_point{};
  tlsNextCheck = now + kInterruptPeriod;
  return !first && check(gCheckArg.load(std::memory_order_acquire)) != 0;
}

}  // namespace sc

// No message is recorded for a NULL comm: the call may run in a signal
// handler, where building a string is not allowed.
extern "C" scResult_t scCommInterrupt(scComm_t comm) {
  if (!comm) return scInvalidArgument;
  comm->interrupted.store(true, std::memory_order_relaxed);
  return scSuccess;
}

extern "C" scResult_t scSetInterruptCheck(scInterruptCheck_t check, void* arg) {
  sc::gCheckArg.store(arg, std::memory_order_release);
  sc::gCheck.store(check, std::memory_order_release);
  return scSuccess;
}
