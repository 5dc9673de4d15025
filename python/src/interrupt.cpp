// Ctrl-C and other signals during a blocking call. CPython runs a signal's
// Python handler only on the main thread, between bytecodes; a call blocked
// in the library would run it only when the call ends (at its deadline). The
// library's interrupt check (scSetInterruptCheck) runs on the waiting thread
// about every 100 ms: on the main thread it takes the GIL and runs the
// pending handlers (PyErr_CheckSignals). A handler that raises
// (KeyboardInterrupt, SystemExit from a SIGTERM handler) stops the call: the
// exception is kept, the library aborts the communicator (its peers get
// RemoteError naming this rank) and the binding raises the kept exception.
// A handler that returns lets the call go on, as in time.sleep.
#include <Python.h>
#include <pythread.h>

#include <chrono>

#include "common.h"

namespace scpy {
namespace {

unsigned long gMainThread = 0;  // PyThread_get_thread_ident() of the main thread
// The exception a handler raised, kept for the binding (main thread only).
PyObject* gType = nullptr;
PyObject* gValue = nullptr;
PyObject* gTrace = nullptr;

// Needs the GIL. Runs the pending handlers; keeps what one raised.
bool runHandlers() {
  if (PyErr_CheckSignals() == 0) return false;
  if (!gType) PyErr_Fetch(&gType, &gValue, &gTrace);
  else PyErr_Clear();  // one kept exception: the first
  return true;
}

// Without the GIL, on the waiting thread.
bool handlersRaise() {
  if (PyThread_get_thread_ident() != gMainThread || !Py_IsInitialized() || _Py_IsFinalizing()) return false;
  const PyGILState_STATE g = PyGILState_Ensure();
  const bool raised = runHandlers();
  PyGILState_Release(g);
  return raised;
}

int interruptCheck(void*) { return handlersRaise() ? 1 : 0; }

}  // namespace

bool signalPending() { return gType != nullptr && PyThread_get_thread_ident() == gMainThread; }

bool raisePendingSignal() {
  if (!signalPending()) return false;
  PyErr_Restore(gType, gValue, gTrace);
  gType = gValue = gTrace = nullptr;
  return true;
}

void CallQueue::waitFor(uint64_t ticket, scComm_t comm) {
  std::unique_lock<std::mutex> lk(m_);
  while (queue_.front() != ticket) {
    if (cv_.wait_for(lk, std::chrono::milliseconds(100), [&] { return queue_.front() == ticket; })) return;
    lk.unlock();
    const bool stop = handlersRaise();
    lk.lock();
    if (stop) {
      // Ends the call in flight too: Ctrl-C ends the communicator's use.
      scCommInterrupt(comm);
      throw Failure{scInterrupted, "interrupted by a signal while waiting for another thread's call"};
    }
  }
}

void bindInterrupt(py::module_& m) {
  gMainThread = py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  scSetInterruptCheck(&interruptCheck, nullptr);
  m.def("interrupt", [](Comm& c) { check(scCommInterrupt(c.get()), nullptr); });
}

}  // namespace scpy
