// Bindings of the comm-free cost model (scCostModel*): sparcoll.model and
// the simulator predict what a communicator of any size would, with the
// library's own parser and formulas.
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>

#include "common.h"

namespace scpy {
namespace {

// Failures without a communicator leave their message on this thread.
class CostModel : public Owned<scCostModel_t, scCostModelDestroy> {
 public:
  CostModel(std::optional<std::string> tuningFile, int transport, bool device, int nranks, int machines, int algo)
      : Owned("cost model") {
    const scConfig_t cfg = makeConfig(transport, -1, 0.0, algo, 0, tuningFile);
    check(scCostModelCreate(&h_, &cfg, nranks, machines, device ? 1 : 0), nullptr);
  }
  py::tuple estimate(int coll, int algo, size_t count, int dt, double density) {
    double s = 0;
    int pick = 0;
    check(scCostModelEstimateTime(get(), scCollective_t(coll), algo, count, scDataType_t(dt), density, &s, &pick),
          nullptr);
    return py::make_tuple(s, pick);
  }
  // terms: ((rounds), (extra messages), (blocks), (shared blocks)), each
  // (intra, inter), as TopologyHandle.cost_terms gives them.
  double neighborTime(const std::array<std::array<double, 2>, 4>& terms, size_t bytes) {
    scNbrCostTerms_t c{};
    double* fields[] = {c.rounds, c.extraMessages, c.blocks, c.sharedBlocks};
    for (size_t k = 0; k < 4; ++k) std::copy(terms[k].begin(), terms[k].end(), fields[k]);
    double s = 0;
    check(scCostModelNeighborTime(get(), &c, bytes, &s), nullptr);
    return s;
  }
};

}  // namespace

void bindModel(py::module_& m) {
  py::class_<CostModel>(m, "CostModel")
      .def(py::init<std::optional<std::string>, int, bool, int, int, int>(), py::arg("tuning_file"),
           py::arg("transport"), py::arg("device"), py::arg("nranks"), py::arg("machines"), py::arg("algo"))
      .def("estimate", &CostModel::estimate, py::arg("collective"), py::arg("algo"), py::arg("count"), py::arg("dtype"),
           py::arg("density"))
      .def("neighbor_time", &CostModel::neighborTime, py::arg("terms"), py::arg("bytes"))
      .def("close", &CostModel::close);
}

}  // namespace scpy
