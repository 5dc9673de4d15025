// Shared pieces of the pybind11 extension: the communicator handle owned by
// Python, and the conversion of a failed scResult_t into a Python exception
// of the sparcoll.errors hierarchy carrying the C library's message.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
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

// Throws Failure with the library's message (read on this thread, so it must be
// called right after the failing call, which is the case below).
inline void check(scResult_t r, scComm_t comm) {
  if (r != scSuccess) {
    std::string msg = scGetLastError(comm);
    if (msg.empty()) msg = scGetErrorString(r);
    throw Failure{r, msg};
  }
}

// The Python-side communicator: owns one scComm_t. close() (or garbage
// collection) destroys it; any later call raises InvalidUsageError.
class Comm {
 public:
  explicit Comm(scComm_t c) : c_(c) {}
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm() { close(); }

  scComm_t get() const {
    if (!c_) throw Failure{scInvalidUsage, "the communicator was closed"};
    return c_;
  }
  bool closed() const { return c_ == nullptr; }
  void close() {
    if (c_) {
      scCommDestroy(c_);
      c_ = nullptr;
    }
  }

 private:
  scComm_t c_;
};

// Raw addresses travel between Python and C++ as integers.
template <typename T = void>
inline T* ptr(std::uintptr_t p) { return reinterpret_cast<T*>(p); }

// Binders of each area (one file each). Every area is always bound: a C
// function the bindings call must exist, or the build fails.
void bindCore(py::module_& m);
void bindEnums(py::module_& m);
void bindDlpack(py::module_& m);
void bindSparse(py::module_& m);
void bindTopk(py::module_& m);
void bindDsop(py::module_& m);
void bindNeighbor(py::module_& m);

}  // namespace scpy
