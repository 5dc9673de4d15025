// The extension module sparcoll._sparcoll: a thin, GIL-releasing layer over the
// C API. Array handling (numpy, torch, cupy, DLPack) lives in Python
// (sparcoll/_arrays.py); the extension receives raw addresses, counts and
// dtype codes, so one binding serves every array library.
#include <pybind11/pybind11.h>

#include "common.h"

namespace scpy {
namespace {

// Builds sparcoll.errors.<class>(message, code) and raises it. The hierarchy
// lives in Python so users can catch SparcollError / ValueError / TimeoutError.
void raiseFailure(const Failure& f) {
  py::object make = py::module_::import("sparcoll.errors").attr("_from_code");
  py::object exc = make(int(f.code), f.message);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
}

}  // namespace
}  // namespace scpy

PYBIND11_MODULE(_sparcoll, m) {
  using namespace scpy;
  m.doc() = "sparcoll C API bindings (internal; use the sparcoll package)";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Failure& f) {
      if (f.code == scInterrupted && raisePendingSignal()) return;  // a signal handler's KeyboardInterrupt...
      raiseFailure(f);
    }
  });

  int major = 0, minor = 0, patch = 0;
  scGetVersion(&major, &minor, &patch);
  m.attr("version") = py::make_tuple(major, minor, patch);

  // The build options of the library (the Python layer checks them before
  // offering a transport); the API areas are always bound.
  py::dict features;
#ifdef SPARCOLL_HAVE_CUDA
  features["cuda"] = true;
#else
  features["cuda"] = false;
#endif
#ifdef SPARCOLL_HAVE_MPI
  features["mpi"] = true;
#else
  features["mpi"] = false;
#endif
#ifdef SPARCOLL_HAVE_NCCL
  features["nccl"] = true;
#else
  features["nccl"] = false;
#endif
  m.attr("features") = features;

  bindEnums(m);
  bindCore(m);
  bindDlpack(m);
  bindSparse(m);
  bindTopk(m);
  bindDsop(m);
  bindNeighbor(m);
  bindModel(m);
  bindInterrupt(m);
}
