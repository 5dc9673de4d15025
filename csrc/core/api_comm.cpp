// C API: communicator lifecycle, queries, statistics, error strings.
#include <memory>
#include <vector>

#include "core/api_guard.h"
#include "transport/factory.h"

namespace sc {
namespace {
thread_local std::string tlsLastError;
}

void recordError(scComm* comm, scResult_t code, const std::string& msg) {
  std::string full = std::string(scGetErrorString(code)) + ": " + msg;
  tlsLastError = full;
  if (!comm) return;
  comm->lastError = full;
  const bool fatal = code == scTimeout || code == scMpiError || code == scNcclError ||
                     code == scCudaError || code == scRemoteError || code == scSystemError;
  if (fatal && !comm->aborted) {
    comm->aborted = true;
    comm->abortReason = full;
    comm->transport->abort();
  }
}

void checkComm(const scComm* comm) {
  SC_ARG(comm != nullptr, "communicator is NULL");
  SC_REQUIRE(!comm->aborted, scInvalidUsage, "communicator was aborted after an earlier failure: ",
             comm->abortReason);
}

}  // namespace sc

using namespace sc;

extern "C" const char* scGetLastError(scComm_t comm) {
  return comm ? comm->lastError.c_str() : tlsLastError.c_str();
}

extern "C" scResult_t scCommInitMpi(scComm_t* out, const void* mpiComm, const scConfig_t* cfg) {
  return scGuard(nullptr, [&] {
    SC_ARG(out != nullptr, "output communicator pointer is NULL");
    *out = nullptr;
    const scTransport_t kind = cfg ? cfg->transport : scTransportMpi;
    SC_ARG(kind == scTransportMpi || kind == scTransportNccl,
           "scCommInitMpi takes transport mpi or nccl (use scCommInitLocal for local)");
    Config c = resolveConfig(cfg, kind);
    *out = (kind == scTransportNccl ? makeNcclComm(mpiComm, c) : makeMpiComm(mpiComm, c)).release();
  });
}

extern "C" scResult_t scGetUniqueId(scUniqueId* id) {
  return scGuard(nullptr, [&] {
    SC_ARG(id != nullptr, "unique id pointer is NULL");
    makeNcclUniqueId(id);
  });
}

// Arguments are checked before the build's capabilities, as scCommInitMpi does,
// so a caller's mistake is reported the same way on every build.
extern "C" scResult_t scCommInitRank(scComm_t* out, int nranks, scUniqueId id, int rank, const scConfig_t* cfg) {
  return scGuard(nullptr, [&] {
    SC_ARG(out != nullptr, "output communicator pointer is NULL");
    *out = nullptr;
    SC_ARG(nranks >= 1, "nranks must be >= 1, got ", nranks);
    SC_ARG(rank >= 0 && rank < nranks, "rank ", rank, " is outside [0, nranks = ", nranks, ")");
    // A zeroed id is the usual sign of an id that was never filled in or never
    // received; NCCL would only fail on it at the deadline.
    bool blank = true;
    for (char ch : id.internal) blank = blank && ch == 0;
    SC_ARG(!blank, "the unique id is all zeros: pass the id that scGetUniqueId returned on one rank to every rank");
    Config c = resolveConfig(cfg, scTransportNccl);
    *out = makeNcclCommFromId(nranks, id, rank, c).release();
  });
}

extern "C" scResult_t scCommInitLocal(scComm_t* comms, int nranks, const int* devices, const scConfig_t* cfg) {
  return scGuard(nullptr, [&] {
    SC_ARG(comms != nullptr, "output communicator array is NULL");
    SC_ARG(nranks >= 1, "nranks must be >= 1, got ", nranks);
    Config c = resolveConfig(cfg, scTransportLocal);
    std::vector<std::unique_ptr<scComm>> made = makeLocalComms(nranks, devices, c);
    for (int i = 0; i < nranks; ++i) comms[i] = made[i].release();
  });
}

extern "C" scResult_t scCommDestroy(scComm_t comm) {
  return scGuard(nullptr, [&] {
    SC_ARG(comm != nullptr, "communicator is NULL");
    delete comm;
  });
}

extern "C" scResult_t scCommRank(scComm_t comm, int* rank) {
  return scGuard(comm, [&] {
    SC_ARG(comm && rank, "NULL argument");
    *rank = comm->rank();
  });
}

extern "C" scResult_t scCommSize(scComm_t comm, int* size) {
  return scGuard(comm, [&] {
    SC_ARG(comm && size, "NULL argument");
    *size = comm->size();
  });
}

extern "C" scResult_t scCommIsDevice(scComm_t comm, int* isDevice) {
  return scGuard(comm, [&] {
    SC_ARG(comm && isDevice, "NULL argument");
    *isDevice = comm->device() ? 1 : 0;
  });
}

extern "C" scResult_t scCommDevice(scComm_t comm, int* device) {
  return scGuard(comm, [&] {
    SC_ARG(comm && device, "NULL argument");
    *device = comm->device() ? comm->cfg.device : -1;
  });
}

extern "C" scResult_t scCommGetStats(scComm_t comm, scStats_t* stats) {
  return scGuard(comm, [&] {
    SC_ARG(comm && stats, "NULL argument");
    *stats = comm->stats;
  });
}

extern "C" scResult_t scCommResetStats(scComm_t comm) {
  return scGuard(comm, [&] {
    SC_ARG(comm, "communicator is NULL");
    comm->stats = scStats_t{};
  });
}
