// Shared pieces of the pybind11 extension: the communicator handle owned by
// Python, and the conversion of a failed scResult_t into a Python exception
// of the sparcoll.errors hierarchy carrying the C library's message.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
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

// Throws Failure with the library's message (read on this thread, so it must be
// called right after the failing call, which is the case below).
inline void check(scResult_t r, scComm_t comm) {
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

// The Python-side communicator: owns one scComm_t.
class Comm : public Owned<scComm_t, scCommDestroy> {
 public:
  explicit Comm(scComm_t c) : Owned("communicator", c) {}
};

// An scConfig_t from the Python layer's arguments; cfg.tuningFile points into
// tuningFile, which must outlive the call the config is passed to.
scConfig_t makeConfig(int transport, int device, double timeout, int algo, size_t pipelineBytes,
                      const std::optional<std::string>& tuningFile);

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
void bindModel(py::module_& m);

}  // namespace scpy
