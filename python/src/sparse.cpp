// Bindings of the sparse allreduce (sparcoll/sparse.h): dense result, sparse
// (library-owned) result, the static-size path, and what the cost model picks.
#include <pybind11/stl.h>

#include <vector>

#include "common.h"

namespace scpy {
namespace {

scSparseOptions_t makeOpts(unsigned flags, double switchDensity, int earlyGroupSize) {
  scSparseOptions_t o = SC_SPARSE_OPTIONS_INITIALIZER;
  o.flags = flags;
  o.switchDensity = switchDensity;
  o.earlyGroupSize = earlyGroupSize;
  return o;
}

// Owns one scSparseResult_t (library-owned buffers reused across calls).
class SparseResult : public Owned<scSparseResult_t, scSparseResultDestroy> {
 public:
  explicit SparseResult(Comm& c) : Owned("sparse result") { check(scSparseResultCreate(c.get(), &h_), nullptr); }

  // (is_dense, nnz, dim, indices address (0 when dense), values address, algo).
  py::tuple describe() const {
    int dense = 0;
    size_t nnz = 0, dim = 0;
    const void* idx = nullptr;
    const void* val = nullptr;
    scSparseAlgo_t algo = scSparseAuto;
    check(scSparseResultIsDense(h_, &dense), nullptr);
    check(scSparseResultNnz(h_, &nnz), nullptr);
    check(scSparseResultDim(h_, &dim), nullptr);
    check(scSparseResultIndices(h_, &idx), nullptr);
    check(scSparseResultValues(h_, &val), nullptr);
    check(scSparseResultAlgo(h_, &algo), nullptr);
    return py::make_tuple(dense != 0, nnz, dim, reinterpret_cast<std::uintptr_t>(idx),
                          reinterpret_cast<std::uintptr_t>(val), int(algo));
  }
};

}  // namespace

void bindSparse(py::module_& m) {
  m.def("sparse_allreduce",
        [](Comm& c, std::uintptr_t idx, std::uintptr_t val, size_t nnz, size_t dim, int itype, int vtype, int op,
           int algo, unsigned flags, double switchDensity, int earlyGroup, std::uintptr_t out, std::uintptr_t stream) {
          scComm_t comm = c.get();
          scSparseOptions_t o = makeOpts(flags, switchDensity, earlyGroup);
          scResult_t r;
          {
            CallTurn turn(c);
            r = scSparseAllReduceEx(ptr(idx), ptr(val), nnz, dim, scIndexType_t(itype), scDataType_t(vtype),
                                    scRedOp_t(op), scSparseAlgo_t(algo), &o, ptr(out), comm, ptr(stream));
          }
          check(r, comm);
        });

  py::class_<SparseResult>(m, "SparseResultHandle")
      .def(py::init<Comm&>())
      .def("close", &SparseResult::close)
      .def("describe", [](SparseResult& s) {
        s.get();
        return s.describe();
      });

  m.def("sparse_allreduce_to_sparse",
        [](Comm& c, std::uintptr_t idx, std::uintptr_t val, size_t nnz, size_t dim, int itype, int vtype, int op,
           int algo, unsigned flags, double switchDensity, int earlyGroup, SparseResult& res, std::uintptr_t stream) {
          scComm_t comm = c.get();
          scSparseResult_t rh = res.get();
          scSparseOptions_t o = makeOpts(flags, switchDensity, earlyGroup);
          scResult_t r;
          {
            CallTurn turn(c);
            r = scSparseAllReduceToSparse(ptr(idx), ptr(val), nnz, dim, scIndexType_t(itype), scDataType_t(vtype),
                                          scRedOp_t(op), scSparseAlgo_t(algo), &o, rh, comm, ptr(stream));
          }
          check(r, comm);
          return res.describe();
        });

  // The static-size path: nnzPtr / status are addresses in the communicator's memory (0: none).
  m.def("sparse_allreduce_static",
        [](Comm& c, std::uintptr_t idx, std::uintptr_t val, size_t nnz, std::uintptr_t nnzPtr, size_t capacity,
           size_t dim, int itype, int vtype, int op, std::uintptr_t out, std::uintptr_t status, std::uintptr_t stream) {
          scComm_t comm = c.get();
          scResult_t r;
          {
            CallTurn turn(c);
            r = scSparseAllReduceStatic(ptr(idx), ptr(val), nnz, ptr<const uint64_t>(nnzPtr), capacity, dim,
                                        scIndexType_t(itype), scDataType_t(vtype), scRedOp_t(op), ptr(out),
                                        ptr<uint64_t>(status), comm, ptr(stream));
          }
          check(r, comm);
        });

  m.def("sparse_static_advised", [](Comm& c, size_t capacity, size_t dim, int itype, int vtype) {
    scComm_t comm = c.get();
    int use = 0;
    check(scSparseStaticAdvised(comm, capacity, dim, scIndexType_t(itype), scDataType_t(vtype), &use), comm);
    return use != 0;
  });

  m.def("sparse_algo_for", [](Comm& c, std::vector<size_t> nnzPerRank, size_t dim, int itype, int vtype, unsigned flags,
                              double switchDensity, int earlyGroup, bool denseOutput) {
    scComm_t comm = c.get();
    scSparseOptions_t o = makeOpts(flags, switchDensity, earlyGroup);
    scSparseAlgo_t a = scSparseAuto;
    check(scSparseAlgoFor(comm, nnzPerRank.data(), dim, scIndexType_t(itype), scDataType_t(vtype), &o,
                          denseOutput ? 1 : 0, &a),
          comm);
    return int(a);
  });
}

}  // namespace scpy
