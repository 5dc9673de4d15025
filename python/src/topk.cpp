// Bindings of top-k selection with error feedback (sparcoll/topk.h): the
// stateless selection and the error-feedback state (residual owned by the
// library, fused acc = g + r / select / r := acc - sent).
#include <pybind11/stl.h>

#include "common.h"

namespace scpy {
namespace {

scTopkConfig_t makeCfg(int method, size_t k, size_t bucket, int output, int indexType, uint64_t seed, uint64_t step,
                       size_t samples) {
  scTopkConfig_t c = SC_TOPK_CONFIG_INITIALIZER;
  c.method = scTopkMethod_t(method);
  c.k = k;
  c.bucket = bucket;
  c.output = scTopkOutput_t(output);
  c.indexType = scTopkIndex_t(indexType);
  c.seed = seed;
  c.step = step;
  c.samples = samples;
  return c;
}

// Owns one scTopkState_t (a residual + a step counter).
class TopkState : public Owned<scTopkState_t, scTopkStateDestroy> {
 public:
  TopkState(size_t n, int dtype, int device) : Owned("top-k state") {
    check(scTopkStateCreate(&h_, n, scDataType_t(dtype), device), nullptr);
  }
};

}  // namespace

void bindTopk(py::module_& m) {
  m.def("topk_max_output", [](size_t n, int method, size_t k, size_t bucket, int output, int indexType, uint64_t seed,
                              uint64_t step, size_t samples) {
    scTopkConfig_t c = makeCfg(method, k, bucket, output, indexType, seed, step, samples);
    size_t cap = 0;
    check(scTopkMaxOutput(n, &c, &cap), nullptr);
    return cap;
  });
  // Returns (nnz, selected); selected > capacity means the output was too small
  // (the library's scInvalidUsage for that case): the caller retries larger.
  m.def("topk_select", [](std::uintptr_t v, size_t n, int dt, int method, size_t k, size_t bucket, int output,
                          int indexType, uint64_t seed, uint64_t step, size_t samples, std::uintptr_t indices,
                          std::uintptr_t values, size_t capacity, std::uintptr_t stream) {
    scTopkConfig_t c = makeCfg(method, k, bucket, output, indexType, seed, step, samples);
    scTopkInfo_t info{};
    scResult_t r;
    {
      py::gil_scoped_release nogil;
      r = scTopkSelect(ptr(v), n, scDataType_t(dt), &c, ptr(indices), ptr(values), capacity, &info, ptr(stream));
    }
    if (!(r == scInvalidUsage && info.selected > capacity)) check(r, nullptr);
    return py::make_tuple(info.nnz, info.selected);
  });

  py::class_<TopkState>(m, "TopkStateHandle")
      .def(py::init<size_t, int, int>(), py::arg("n"), py::arg("dtype"), py::arg("device"))
      .def("close", &TopkState::close)
      .def("residual_ptr",
           [](TopkState& s) {
             void* p = nullptr;
             check(scTopkStateResidual(s.get(), &p), nullptr);
             return reinterpret_cast<std::uintptr_t>(p);
           })
      .def("reset", [](TopkState& s, std::uintptr_t stream) { check(scTopkStateReset(s.get(), ptr(stream)), nullptr); })
      .def_property(
          "step",
          [](TopkState& s) {
            uint64_t step = 0;
            check(scTopkStateGetStep(s.get(), &step), nullptr);
            return step;
          },
          [](TopkState& s, uint64_t step) { check(scTopkStateSetStep(s.get(), step), nullptr); })
      .def("select_feedback",
           [](TopkState& s, std::uintptr_t grad, int method, size_t k, size_t bucket, int output, int indexType,
              uint64_t seed, size_t samples, std::uintptr_t indices, std::uintptr_t values, size_t capacity,
              std::uintptr_t stream) {
             scTopkConfig_t c = makeCfg(method, k, bucket, output, indexType, seed, 0, samples);
             scTopkInfo_t info{};
             scTopkState_t st = s.get();
             scResult_t r;
             {
               py::gil_scoped_release nogil;
               r = scTopkSelectFeedback(st, ptr(grad), &c, ptr(indices), ptr(values), capacity, &info, ptr(stream));
             }
             check(r, nullptr);
             return py::make_tuple(info.nnz, info.selected);
           })
      // Stream-ordered: the counts go to `counts` (a scTopkCounts_t in the
      // buffers' memory); never waits for the stream.
      .def("select_feedback_async",
           [](TopkState& s, std::uintptr_t grad, int method, size_t k, size_t bucket, int output, int indexType,
              uint64_t seed, size_t samples, std::uintptr_t indices, std::uintptr_t values, size_t capacity,
              std::uintptr_t counts, std::uintptr_t stream) {
             scTopkConfig_t c = makeCfg(method, k, bucket, output, indexType, seed, 0, samples);
             scTopkState_t st = s.get();
             scResult_t r;
             {
               py::gil_scoped_release nogil;
               r = scTopkSelectFeedbackAsync(st, ptr(grad), &c, ptr(indices), ptr(values), capacity,
                                             static_cast<scTopkCounts_t*>(ptr(counts)), ptr(stream));
             }
             check(r, nullptr);
           });
}

}  // namespace scpy
