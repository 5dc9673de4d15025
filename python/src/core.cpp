// Bindings of the foundation: communicator creation and queries, statistics,
// dense collectives. Every collective releases the GIL so that the threads of
// a local group (one communicator each) run their ranks concurrently.
#include <pybind11/stl.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common.h"

namespace scpy {
namespace {}  // namespace

// tuningFile: the caller keeps the string alive until the creation returns
// (the file is read once, there).
scConfig_t makeConfig(int transport, int device, double timeout, int algo, size_t pipelineBytes,
                      const std::optional<std::string>& tuningFile, const std::optional<std::string>& topologyFile) {
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.transport = scTransport_t(transport);
  cfg.device = device;
  cfg.timeoutSeconds = timeout;
  cfg.algo = scAlgo_t(algo);
  cfg.pipelineBytes = pipelineBytes;
  cfg.tuningFile = tuningFile ? tuningFile->c_str() : nullptr;
  cfg.topologyFile = topologyFile ? topologyFile->c_str() : nullptr;
  return cfg;
}

namespace {

// mpiCommAddr: address of an MPI_Comm handle (mpi4py: MPI._addressof(comm)), 0 = MPI_COMM_WORLD.
Comm* initMpi(std::uintptr_t mpiCommAddr, int transport, int device, double timeout, int algo, size_t pipelineBytes,
              std::optional<std::string> tuningFile, std::optional<std::string> topologyFile) {
  scConfig_t cfg = makeConfig(transport, device, timeout, algo, pipelineBytes, tuningFile, topologyFile);
  scComm_t c = nullptr;
  scResult_t r;
  {
    py::gil_scoped_release nogil;  // NCCL bootstrap is collective over the MPI communicator
    r = scCommInitMpi(&c, ptr<const void>(mpiCommAddr), &cfg);
  }
  check(r, nullptr);
  return new Comm(c);
}

// scGetUniqueId as 128 bytes (the id travels through Python: pickling,
// torch.distributed, sockets).
py::bytes uniqueId() {
  scUniqueId id;
  check(scGetUniqueId(&id), nullptr);
  return py::bytes(id.internal, sizeof id.internal);
}

Comm* initRank(int nranks, const py::bytes& id, int rank, int device, double timeout, int algo, size_t pipelineBytes,
               std::optional<std::string> tuningFile, std::optional<std::string> topologyFile) {
  const std::string raw = id;
  if (raw.size() != sizeof(scUniqueId))
    throw Failure{scInvalidArgument, "unique id must be " + std::to_string(sizeof(scUniqueId)) +
                                         " bytes (from get_unique_id), got " + std::to_string(raw.size())};
  scUniqueId uid;
  std::memcpy(uid.internal, raw.data(), sizeof uid.internal);
  scConfig_t cfg = makeConfig(scTransportNccl, device, timeout, algo, pipelineBytes, tuningFile, topologyFile);
  scComm_t c = nullptr;
  scResult_t r;
  {
    py::gil_scoped_release nogil;  // collective: the other ranks may be threads of this process
    r = scCommInitRank(&c, nranks, uid, rank, &cfg);
  }
  check(r, nullptr);
  return new Comm(c);
}

std::vector<Comm*> initLocal(int n, std::optional<std::vector<int>> devices, double timeout, int algo,
                             size_t pipelineBytes, std::optional<std::string> tuningFile,
                             std::optional<std::string> topologyFile) {
  if (n < 1) throw Failure{scInvalidArgument, "local_group: n must be >= 1, got " + std::to_string(n)};
  if (devices && int(devices->size()) != n)
    throw Failure{scInvalidArgument, "local_group: devices has " + std::to_string(devices->size()) +
                                         " entries for n = " + std::to_string(n)};
  scConfig_t cfg = makeConfig(scTransportLocal, -1, timeout, algo, pipelineBytes, tuningFile, topologyFile);
  std::vector<scComm_t> raw(size_t(n), nullptr);
  check(scCommInitLocal(raw.data(), n, devices ? devices->data() : nullptr, &cfg), nullptr);
  std::vector<Comm*> out;
  for (scComm_t c : raw) out.push_back(new Comm(c));
  return out;
}

py::dict stats(Comm& c) {
  scStats_t s{};
  check(scCommGetStats(c.get(), &s), c.get());
  py::dict d;
  d["bytes_sent"] = s.bytesSent;
  d["bytes_recv"] = s.bytesRecv;
  d["msgs_sent"] = s.msgsSent;
  d["msgs_recv"] = s.msgsRecv;
  d["inter_node_bytes_sent"] = s.interNodeBytesSent;
  d["inter_node_msgs_sent"] = s.interNodeMsgsSent;
  d["host_reads"] = s.hostReads;
  d["rounds"] = s.rounds;
  d["rendezvous"] = s.rendezvous;
  d["host_syncs"] = s.hostSyncs;
  d["events_created"] = s.eventsCreated;
  d["scratch_allocs"] = s.scratchAllocs;
  d["max_link_bytes"] = s.maxLinkBytes;
  d["msgs_reduced"] = s.msgsReduced;
  return d;
}

}  // namespace

void bindCore(py::module_& m) {
  py::class_<Comm>(m, "Comm")
      .def_property_readonly("rank",
                             [](Comm& c) {
                               int r = 0;
                               check(scCommRank(c.get(), &r), c.get());
                               return r;
                             })
      .def_property_readonly("size",
                             [](Comm& c) {
                               int s = 0;
                               check(scCommSize(c.get(), &s), c.get());
                               return s;
                             })
      .def_property_readonly("is_device",
                             [](Comm& c) {
                               int d = 0;
                               check(scCommIsDevice(c.get(), &d), c.get());
                               return d != 0;
                             })
      .def_property_readonly("device",
                             [](Comm& c) {
                               int d = -1;
                               check(scCommDevice(c.get(), &d), c.get());
                               return d;
                             })
      .def_property_readonly("closed", &Comm::closed)
      .def("close", &Comm::close)
      .def("last_error", [](Comm& c) { return std::string(scGetLastError(c.get())); })
      .def("stats", &stats)
      .def("reset_stats", [](Comm& c) { check(scCommResetStats(c.get()), c.get()); })
      .def("algo_for",
           [](Comm& c, size_t bytes) {
             scAlgo_t a = scAlgoAuto;
             check(scAllReduceAlgoFor(c.get(), bytes, &a), c.get());
             return int(a);
           })
      .def(
          "estimate",
          [](Comm& c, int coll, int algo, size_t count, int dt, double density) {
            double s = 0;
            int pick = 0;
            check(scEstimateTime(c.get(), scCollective_t(coll), algo, count, scDataType_t(dt), density, &s, &pick),
                  c.get());
            return py::make_tuple(s, pick);
          },
          py::arg("collective"), py::arg("algo"), py::arg("count"), py::arg("dtype"), py::arg("density"));

  m.def("init_mpi", &initMpi, py::return_value_policy::take_ownership, py::arg("mpi_comm_addr"), py::arg("transport"),
        py::arg("device"), py::arg("timeout"), py::arg("algo"), py::arg("pipeline_bytes"),
        py::arg("tuning_file") = py::none(), py::arg("topology_file") = py::none());
  m.def("get_unique_id", &uniqueId);
  m.def("init_rank", &initRank, py::return_value_policy::take_ownership, py::arg("nranks"), py::arg("unique_id"),
        py::arg("rank"), py::arg("device"), py::arg("timeout"), py::arg("algo"), py::arg("pipeline_bytes"),
        py::arg("tuning_file") = py::none(), py::arg("topology_file") = py::none());
  m.def("init_local", &initLocal, py::return_value_policy::take_ownership, py::arg("n"), py::arg("devices"),
        py::arg("timeout"), py::arg("algo"), py::arg("pipeline_bytes"), py::arg("tuning_file") = py::none(),
        py::arg("topology_file") = py::none());

  m.def("allreduce", [](Comm& c, std::uintptr_t send, std::uintptr_t recv, size_t count, int dt, int op, int algo,
                        std::uintptr_t stream) {
    scComm_t comm = c.get();
    scResult_t r;
    {
      CallTurn turn(c);
      r = scAllReduce(ptr(send), ptr(recv), count, scDataType_t(dt), scRedOp_t(op), scAlgo_t(algo), comm, ptr(stream));
    }
    check(r, comm);
  });
  m.def("reduce_scatter", [](Comm& c, std::uintptr_t send, std::uintptr_t recv, size_t recvcount, int dt, int op,
                             int algo, std::uintptr_t stream) {
    scComm_t comm = c.get();
    scResult_t r;
    {
      CallTurn turn(c);
      r = scReduceScatter(ptr(send), ptr(recv), recvcount, scDataType_t(dt), scRedOp_t(op), scAlgo_t(algo), comm,
                          ptr(stream));
    }
    check(r, comm);
  });
  m.def("allgather", [](Comm& c, std::uintptr_t send, std::uintptr_t recv, size_t sendcount, int dt, int algo,
                        std::uintptr_t stream) {
    scComm_t comm = c.get();
    scResult_t r;
    {
      CallTurn turn(c);
      r = scAllGather(ptr(send), ptr(recv), sendcount, scDataType_t(dt), scAlgo_t(algo), comm, ptr(stream));
    }
    check(r, comm);
  });
  m.def("broadcast", [](Comm& c, std::uintptr_t buf, size_t count, int dt, int root, int algo, std::uintptr_t stream) {
    scComm_t comm = c.get();
    scResult_t r;
    {
      CallTurn turn(c);
      r = scBroadcast(ptr(buf), count, scDataType_t(dt), root, scAlgo_t(algo), comm, ptr(stream));
    }
    check(r, comm);
  });
  m.def("barrier", [](Comm& c, std::uintptr_t stream) {
    scComm_t comm = c.get();
    scResult_t r;
    {
      CallTurn turn(c);
      r = scBarrier(comm, ptr(stream));
    }
    check(r, comm);
  });
  m.def("abort", [](Comm& c) {
    scComm_t comm = c.get();
    check(scCommAbort(comm), comm);
  });
  m.def(
      "shrink",
      [](Comm& c, const std::vector<int>& exclude) {
        scComm_t comm = c.get(), out = nullptr;
        scResult_t r;
        {
          CallTurn turn(c);
          r = scCommShrink(comm, exclude.data(), int(exclude.size()), &out);
        }
        check(r, comm);
        return new Comm(out);
      },
      py::return_value_policy::take_ownership);
  m.def("error_string", [](int code) { return std::string(scGetErrorString(scResult_t(code))); });
}

}  // namespace scpy
