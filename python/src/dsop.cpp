// Bindings of DSOP (sparcoll/dsop.h): G = sum over ranks of a_i b_i^T, dense
// and sparse inputs. The GIL is released around the collectives.
#include "common.h"

namespace scpy {

void bindDsop(py::module_& m) {
  m.def("dsop", [](Comm& c, std::uintptr_t a, size_t n, std::uintptr_t b, size_t mm, std::uintptr_t G, int dt, int algo,
                   std::uintptr_t stream) {
    scComm_t comm = c.get();
    scResult_t r;
    {
      CallTurn turn(c);
      r = scDsop(ptr(a), n, ptr(b), mm, ptr(G), scDataType_t(dt), scDsopAlgo_t(algo), comm, ptr(stream));
    }
    check(r, comm);
  });
  m.def("dsop_sparse",
        [](Comm& c, std::uintptr_t aIdx, std::uintptr_t aVal, size_t aNnz, size_t n, std::uintptr_t bIdx,
           std::uintptr_t bVal, size_t bNnz, size_t mm, std::uintptr_t G, int dt, int algo, std::uintptr_t stream) {
          scComm_t comm = c.get();
          scResult_t r;
          {
            CallTurn turn(c);
            r = scDsopSparse(ptr<const uint64_t>(aIdx), ptr(aVal), aNnz, n, ptr<const uint64_t>(bIdx), ptr(bVal), bNnz,
                             mm, ptr(G), scDataType_t(dt), scDsopAlgo_t(algo), comm, ptr(stream));
          }
          check(r, comm);
        });
  m.def("dsop_output_type", [](int dt) {
    scDataType_t out = scFloat32;
    check(scDsopOutputType(scDataType_t(dt), &out), nullptr);
    return int(out);
  });
  m.def("dsop_algo_for", [](Comm& c, size_t n, size_t mm, int dt) {
    scDsopAlgo_t a = scDsopAuto;
    check(scDsopAlgoFor(c.get(), n, mm, scDataType_t(dt), &a), c.get());
    return int(a);
  });
}

}  // namespace scpy
