// C API: communicator lifecycle, queries, statistics, error strings.
#include <algorithm>
#include <memory>
#include <vector>

#include "core/api_guard.h"
#include "transport/factory.h"

namespace sc {
namespace {
thread_local std::string tlsLastError;
const std::string kNoError;  // a successful call's error text: no temporary string, no guard per call
}  // namespace

void endCalls(scComm* comm, uint64_t before, scResult_t r) noexcept {
  try {
    comm->recorder->end(before, r, r == scSuccess ? kNoError : comm->lastError, comm->stats,
                         comm->callStart.load(std::memory_order_relaxed));
  } catch (...) {  // a trace that cannot be written never fails the call
  }
}

// Marks comm aborted (once), tells its peers why, and aborts its transport.
void abortComm(scComm* comm, const std::string& why) {
  if (comm->aborted) return;
  comm->aborted = true;
  comm->abortReason = why;
  comm->transport->notifyAbort(why);
  comm->transport->abort();
}

void recordError(scComm* comm, scResult_t code, const std::string& msg) {
  std::string full = std::string(scGetErrorString(code)) + ": " + msg;
  tlsLastError = full;
  if (!comm) return;
  comm->lastError = full;
  const bool fatal = code == scTimeout || code == scMpiError || code == scNcclError ||
                     code == scCudaError || code == scRemoteError || code == scSystemError;
  if (fatal) abortComm(comm, full);
}

void commUnusable(const scComm* comm) {
  SC_ARG(comm != nullptr, "communicator is NULL");
  SC_THROW(scInvalidUsage, "communicator was aborted after an earlier failure: ", comm->abortReason);
}

}  // namespace sc

using namespace sc;

extern "C" const char* scGetLastError(scComm_t comm) {
  return comm && commLive(comm) ? comm->lastError.c_str() : tlsLastError.c_str();
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
    retireComm(comm);
    delete comm;
  });
}

extern "C" scResult_t scCommAbort(scComm_t comm) {
  // Held like a call, so that no call of another thread runs meanwhile.
  return scCall(comm, [&] {
    checkComm(comm);
    abortComm(comm, cat("scCommAbort was called on rank ", comm->rank()));
  });
}

extern "C" scResult_t scCommShrink(scComm_t comm, const int* excludeRanks, int nexclude, scComm_t* newcomm) {
  // Held like a call; an aborted comm is allowed (no checkComm).
  return scCall(comm, [&] {
    SC_ARG(newcomm != nullptr, "output communicator pointer is NULL");
    *newcomm = nullptr;
    SC_ARG(comm != nullptr, "communicator is NULL");
    const int P = comm->size(), me = comm->rank();
    SC_ARG(nexclude >= 0 && nexclude < P, "nexclude = ", nexclude, " is outside [0, size = ", P, ")");
    SC_ARG(nexclude == 0 || excludeRanks != nullptr, "excludeRanks is NULL with nexclude = ", nexclude);
    std::vector<int> exclude(excludeRanks, excludeRanks + nexclude);
    for (int i = 0; i < nexclude; ++i) {
      SC_ARG(exclude[size_t(i)] >= 0 && exclude[size_t(i)] < P, "excludeRanks[", i, "] = ", exclude[size_t(i)],
             " is outside [0, size = ", P, ")");
      SC_ARG(exclude[size_t(i)] != me, "excludeRanks[", i, "] = ", me,
             " is the calling rank: an excluded rank does not call scCommShrink");
    }
    std::sort(exclude.begin(), exclude.end());
    SC_ARG(std::adjacent_find(exclude.begin(), exclude.end()) == exclude.end(), "excludeRanks lists rank ",
           *std::adjacent_find(exclude.begin(), exclude.end()), " twice");
    std::unique_ptr<Transport> t = comm->transport->shrink(exclude, comm->deadline());
    auto backend = comm->device() ? makeCudaBackend(comm->cfg.device) : makeCpuBackend();
    *newcomm = new scComm(std::move(t), std::move(backend), comm->cfg);
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
