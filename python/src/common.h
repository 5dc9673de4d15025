// Shared pieces of the pybind11 extension: the communicator handle owned by
// Python, and the conversion of a failed scResult_t into a Python exception
// of the sparcoll.errors hierarchy carrying the C library's message.
#pragma once

#include <pybind11/pybind11.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

#include "sparcoll/sparcoll.h"

namespace scpy {

namespace py = pybind11;

// A failed C call: code + the detailed message from scGetLastError. Thrown in
// C++, translated to sparcoll.errors.<class for code> by the registered translator.
struct Failure {
  scResult_t code;
  std::string message;
};

// The exception a Python signal handler raised while a call of this thread
// waited (interrupt.cpp: the interrupt check runs the handlers): whether one
// is kept. The exception translator raises it in place of the call's
// scInterrupted, so Ctrl-C is a KeyboardInterrupt.
bool signalPending();

// Throws Failure with the library's message (read on this thread, so it must be
// called right after the failing call, which is the case below). A call that
// succeeded while a signal handler raised still raises that exception.
inline void check(scResult_t r, scComm_t comm) {
  if (r == scSuccess && signalPending()) throw Failure{scInterrupted, "interrupted by a signal"};
  if (r != scSuccess) {
    std::string msg = scGetLastError(comm);
    if (msg.empty()) msg = scGetErrorString(r);
    throw Failure{r, msg};
  }
}

// A library handle owned by a Python object: close() (or garbage collection)
// destroys it once; any later use raises InvalidUsageError naming `what`.
template <typename H, scResult_t (*Destroy)(H)>
class Owned {
 public:
  explicit Owned(const char* what, H h = nullptr) : what_(what), h_(h) {}
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { close(); }

  H get() const {
    if (!h_) throw Failure{scInvalidUsage, std::string("the ") + what_ + " was closed"};
    return h_;
  }
  bool closed() const { return h_ == nullptr; }
  void close() {
    if (h_) {
      Destroy(h_);
      h_ = nullptr;
    }
  }

 protected:
  const char* what_;
  H h_;
};

// Calls on one communicator from several Python threads run one at a time,
// in the order they were issued (the order in which they took a ticket,
// holding the GIL): a C call refused because another thread is inside one
// would leave the ranks out of step, and two calls of the same signature
// issued in different orders on two ranks would pair up silently.
class CallQueue {
 public:
  uint64_t enqueue() {
    std::lock_guard<std::mutex> lk(m_);
    queue_.push_back(next_);
    return next_++;
  }
  // Without the GIL. Waits in slices, running the interrupt check: a signal
  // handler that raises cancels the ticket, interrupts comm and throws.
  void waitFor(uint64_t ticket, scComm_t comm);
  void done(uint64_t ticket) {
    {
      std::lock_guard<std::mutex> lk(m_);
      for (auto it = queue_.begin(); it != queue_.end(); ++it)
        if (*it == ticket) {
          queue_.erase(it);
          break;
        }
    }
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<uint64_t> queue_;
  uint64_t next_ = 0;
};

// The Python-side communicator: owns one scComm_t.
class Comm : public Owned<scComm_t, scCommDestroy> {
 public:
  explicit Comm(scComm_t c) : Owned("communicator", c) {}
  CallQueue calls;
};

// A collective call's scope in a binding: its turn on the communicator
// (CallQueue), taken with the GIL, then the GIL released for the call.
class CallTurn {
 public:
  CallTurn(CallQueue& q, scComm_t comm) : q_(q), ticket_(q.enqueue()) {
    try {
      q_.waitFor(ticket_, comm);
    } catch (...) {
      q_.done(ticket_);
      throw;
    }
  }
  explicit CallTurn(Comm& c) : CallTurn(c.calls, c.get()) {}
  ~CallTurn() { q_.done(ticket_); }  // before nogil_ takes the GIL back: the next call starts at once
  CallTurn(const CallTurn&) = delete;
  CallTurn& operator=(const CallTurn&) = delete;

 private:
  CallQueue& q_;
  uint64_t ticket_;
  py::gil_scoped_release nogil_;
};

// An scConfig_t from the Python layer's arguments; cfg.tuningFile and
// cfg.topologyFile point into tuningFile and topologyFile, which must outlive
// the call the config is passed to.
scConfig_t makeConfig(int transport, int device, double timeout, int algo, size_t pipelineBytes,
                      const std::optional<std::string>& tuningFile,
                      const std::optional<std::string>& topologyFile = std::nullopt);

// Raw addresses travel between Python and C++ as integers.
template <typename T = void>
inline T* ptr(std::uintptr_t p) {
  return reinterpret_cast<T*>(p);
}

// Binders of each area (one file each). Every area is always bound: a C
// function the bindings call must exist, or the build fails.
void bindCore(py::module_& m);
void bindEnums(py::module_& m);
void bindDlpack(py::module_& m);
void bindSparse(py::module_& m);
void bindTopk(py::module_& m);
void bindDsop(py::module_& m);
void bindNeighbor(py::module_& m);
void bindModel(py::module_& m);
void bindInterrupt(py::module_& m);
// The translator's part (interrupt.cpp): raises the kept signal exception;
// false when none is kept.
bool raisePendingSignal();

}  // namespace scpy
