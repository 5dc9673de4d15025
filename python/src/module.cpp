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
      raiseFailure(f);
    }
  });

  int major = 0, minor = 0, patch = 0;
  scGetVersion(&major, &minor, &patch);
  m.attr("version") = py::make_tuple(major, minor, patch);

  // What this build of the library contains (the Python layer checks these
  // before offering a transport or an area function).
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
#ifdef SPARCOLL_PY_HAVE_SPARSE
  features["sparse"] = true;
#else
  features["sparse"] = false;
#endif
#ifdef SPARCOLL_PY_HAVE_TOPK
  features["topk"] = true;
#else
  features["topk"] = false;
#endif
#ifdef SPARCOLL_PY_HAVE_DSOP
  features["dsop"] = true;
#else
  features["dsop"] = false;
#endif
#ifdef SPARCOLL_PY_HAVE_DSOP_SPARSE
  features["dsop_sparse"] = true;
#else
  features["dsop_sparse"] = false;
#endif
  m.attr("features") = features;

  bindCore(m);
  bindDlpack(m);
#ifdef SPARCOLL_PY_HAVE_SPARSE
  bindSparse(m);
#endif
#ifdef SPARCOLL_PY_HAVE_TOPK
  bindTopk(m);
#endif
#ifdef SPARCOLL_PY_HAVE_DSOP
  bindDsop(m);
#endif
#ifdef SPARCOLL_PY_HAVE_DSOP_SPARSE
  bindDsopSparse(m);
#endif
}
