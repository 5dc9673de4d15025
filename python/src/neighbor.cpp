// Bindings of the neighbourhood collectives (sparcoll/neighbor.h): the
// topology handle and the neighbour allgather(v). Creation and the
// collectives release the GIL: they are collective, and the ranks of a local
// group are threads of this process.
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "common.h"

namespace scpy {
namespace {

// Owns one scTopology_t of a communicator. The Python Topology closes it
// before its communicator closes (sparcoll/_neighbor.py); a handle whose
// communicator was closed refuses every use.
class Topology : public Owned<scTopology_t, scTopologyDestroy> {
 public:
  Topology(Comm& c, std::vector<int> sources, std::vector<int> destinations) : Owned("topology"), comm_(c) {
    scComm_t comm = c.get();
    scResult_t r;
    {
      CallTurn turn(c);
      r = scTopologyCreate(&h_, comm, int(sources.size()), sources.data(), int(destinations.size()),
                           destinations.data());
    }
    check(r, comm);
  }
  scTopology_t get() const {
    const scTopology_t t = Owned::get();
    if (comm_.closed()) throw Failure{scInvalidUsage, "the topology's communicator was closed"};
    return t;
  }
  scComm_t comm() const { return comm_.get(); }
  CallQueue& calls() const { return comm_.calls; }  // its communicator's: neighbour calls are its calls

 private:
  Comm& comm_;  // kept alive by the handle (py::keep_alive below)
};

}  // namespace

void bindNeighbor(py::module_& m) {
  py::class_<Topology>(m, "TopologyHandle")
      .def(py::init<Comm&, std::vector<int>, std::vector<int>>(), py::keep_alive<1, 2>(), py::arg("comm"),
           py::arg("sources"), py::arg("destinations"))
      .def("close", &Topology::close)
      .def_property_readonly("closed", &Topology::closed)
      .def("degrees",
           [](Topology& t) {
             int in = 0, out = 0;
             check(scTopologyDegrees(t.get(), &in, &out), t.comm());
             return py::make_tuple(in, out);
           })
      // (k, theta, members of this rank's group in the group's order).
      .def("friend_group",
           [](Topology& t) {
             int k = 0, theta = 0, size = 0;
             check(scTopologyFriendGroup(t.get(), &k, &theta, &size, nullptr), t.comm());
             std::vector<int> members(size_t(k > size ? k : size), 0);
             check(scTopologyFriendGroup(t.get(), nullptr, nullptr, nullptr, members.data()), t.comm());
             members.resize(size_t(size));
             return py::make_tuple(k, theta, members);
           })
      // ((rounds), (extra messages), (blocks), (shared blocks)), each (intra, inter): scTopologyCostTerms.
      .def(
          "cost_terms",
          [](Topology& t, int algo) {
            scNbrCostTerms_t c{};
            check(scTopologyCostTerms(t.get(), scNbrAlgo_t(algo), &c), t.comm());
            auto pair = [](const double* v) { return py::make_tuple(v[0], v[1]); };
            return py::make_tuple(pair(c.rounds), pair(c.extraMessages), pair(c.blocks), pair(c.sharedBlocks));
          },
          py::arg("algo"))
      .def("algo_for",
           [](Topology& t, size_t bytes) {
             scNbrAlgo_t a = scNbrAuto;
             check(scNeighborAlgoFor(t.get(), bytes, &a), t.comm());
             return int(a);
           })
      .def(
          "estimate",
          [](Topology& t, size_t bytes, int algo) {
            double s = 0;
            scNbrAlgo_t pick = scNbrAuto;
            check(scTopologyEstimateTime(t.get(), bytes, scNbrAlgo_t(algo), &s, &pick), t.comm());
            return py::make_tuple(s, int(pick));
          },
          py::arg("bytes"), py::arg("algo"));

  m.def("neighbor_allgather", [](Topology& t, std::uintptr_t send, size_t sendcount, std::uintptr_t recv, int dt,
                                 int algo, std::uintptr_t stream) {
    scTopology_t topo = t.get();
    scResult_t r;
    {
      CallTurn turn(t.calls(), t.comm());
      r = scNeighborAllGather(ptr(send), sendcount, ptr(recv), scDataType_t(dt), scNbrAlgo_t(algo), topo, ptr(stream));
    }
    check(r, t.comm());
  });
  m.def("neighbor_allgatherv",
        [](Topology& t, std::uintptr_t send, size_t sendcount, std::uintptr_t recv, std::vector<size_t> recvcounts,
           std::vector<size_t> displs, int dt, int algo, std::uintptr_t stream) {
          scTopology_t topo = t.get();
          int in = 0, out = 0;
          check(scTopologyDegrees(topo, &in, &out), t.comm());
          if (recvcounts.size() != size_t(in) || displs.size() != size_t(in))  // the C call reads indegree of each
            throw Failure{scInvalidArgument, "neighbor_allgatherv: recvcounts and displs need " + std::to_string(in) +
                                                 " entries (the in-degree), got " + std::to_string(recvcounts.size()) +
                                                 " and " + std::to_string(displs.size())};
          scResult_t r;
          {
            CallTurn turn(t.calls(), t.comm());
            r = scNeighborAllGatherV(ptr(send), sendcount, ptr(recv), recvcounts.data(), displs.data(),
                                     scDataType_t(dt), scNbrAlgo_t(algo), topo, ptr(stream));
          }
          check(r, t.comm());
        });
}

}  // namespace scpy
