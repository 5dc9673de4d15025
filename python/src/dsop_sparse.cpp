// Binding of DSOP with sparse inputs (scDsopSparse in sparcoll/dsop.h).
#include "common.h"

namespace scpy {

void bindDsopSparse(py::module_& m) {
  m.def("dsop_sparse", [](Comm& c, std::uintptr_t aIdx, std::uintptr_t aVal, size_t aNnz, size_t n,
                          std::uintptr_t bIdx, std::uintptr_t bVal, size_t bNnz, size_t mm, std::uintptr_t G, int dt,
                          int algo, std::uintptr_t stream) {
    scComm_t comm = c.get();
    scResult_t r;
    {
      py::gil_scoped_release nogil;
      r = scDsopSparse(ptr<const uint64_t>(aIdx), ptr(aVal), aNnz, n, ptr<const uint64_t>(bIdx), ptr(bVal), bNnz,
                       mm, ptr(G), scDataType_t(dt), scDsopAlgo_t(algo), comm, ptr(stream));
    }
    check(r, comm);
  });
}

}  // namespace scpy
