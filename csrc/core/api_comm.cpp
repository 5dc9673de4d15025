// C API: communicator lifecycle, queries, statistics, error strings.
#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/api_guard.h"
#include "topology/topology.h"
#include "transport/factory.h"

namespace sc {
namespace {
thread_local std::string tlsLastError;
// The communicator this thread's last failure concerned, when it was recorded
// for this thread alone (recordThreadError): a refused call, a failed query.
thread_local const scComm* tlsErrorAbout = nullptr;
// This thread's copies of communicators' last errors (scGetLastError): each
// stays valid until the thread asks for the same communicator's again, even
// if the communicator fails again or is destroyed meanwhile.
thread_local std::unordered_map<const scComm*, std::string> tlsShown;
// A communicator's lastError is written by the thread holding it and copied
// by any thread's scGetLastError (error paths and queries only).
std::mutex gErrorMutex;
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
  if (comm->aborted.load(std::memory_order_relaxed)) return;  // only the holder of the call aborts
  comm->abortReason = why;
  comm->aborted.store(true, std::memory_order_release);
  comm->transport->notifyAbort(why);
  comm->transport->abort();
}

// A wait that an interrupt ended throws the deadline's scTimeout (its
// deadline passed at once, core/deadline.h): it becomes scInterrupted, with
// the wait's own words kept ("in call #3: rank 0 was waiting for rank 1...").
constexpr const char* kInterruptedBy = " was interrupted (scCommInterrupt, or the process's interrupt check: a signal)";

std::string interruptedText(const scComm* comm, const std::string& msg) {
  std::string where = msg;
  const size_t d = where.find("deadline of ");
  const size_t e = d == std::string::npos ? d : where.find(" expired", d);
  if (e != std::string::npos) where.erase(d, e + 8 - d + (e + 8 < where.size() && where[e + 8] == ' '));
  return cat("rank ", comm->rank(), kInterruptedBy, " at ", where);
}

scResult_t recordError(scComm* comm, scResult_t code, const std::string& msg) {
  const bool interrupted = comm && code == scTimeout && comm->interrupted.load(std::memory_order_relaxed);
  if (interrupted) code = scInterrupted;
  std::string full = std::string(scGetErrorString(code)) + ": " + (interrupted ? interruptedText(comm, msg) : msg);
  tlsLastError = full;
  tlsErrorAbout = nullptr;
  if (!comm) return code;
  {
    std::lock_guard<std::mutex> lk(gErrorMutex);
    comm->lastError = full;
  }
  const bool fatal = code == scTimeout || code == scMpiError || code == scNcclError || code == scCudaError ||
                     code == scRemoteError || code == scSystemError || code == scInterrupted;
  if (fatal) abortComm(comm, full);
  return code;
}

scResult_t recordThreadError(const scComm* about, scResult_t code, const std::string& msg) {
  tlsLastError = std::string(scGetErrorString(code)) + ": " + msg;
  tlsErrorAbout = about;
  return code;
}

void commUnusable(const scComm* comm) {
  SC_ARG(comm != nullptr, "communicator is NULL");
  if (!comm->aborted.load(std::memory_order_acquire))  // interrupted between waits: this call fails, and aborts it
    SC_THROW(scInterrupted, "rank ", comm->rank(), kInterruptedBy, " before this call");
  SC_THROW(scInvalidUsage, "communicator was aborted after an earlier failure: ", comm->abortReason);
}

}  // namespace sc

using namespace sc;

// The thread's own failure when its last concerned comm (or comm is none or
// dead), else a copy of comm's, made while comm is held as a query.
extern "C" const char* scGetLastError(scComm_t comm) {
  if (!comm || comm == tlsErrorAbout || !holdQuery(comm)) return tlsLastError.c_str();
  const char* text = kNoError.c_str();
  try {
    if (tlsShown.size() > 16)  // forget the copies of dead communicators
      for (auto it = tlsShown.begin(); it != tlsShown.end();) {
        if (it->first != comm && !commLive(it->first)) it = tlsShown.erase(it);
        else ++it;
      }
    std::string& shown = tlsShown[comm];
    std::lock_guard<std::mutex> lk(gErrorMutex);
    shown = comm->lastError;
    text = shown.c_str();
  } catch (...) {  // out of memory: no text rather than none of the caller's
  }
  releaseQuery(comm);
  return text;
}

extern "C" scResult_t scCommInitMpi(scComm_t* out, const void* mpiComm, const scConfig_t* cfg) {
  return scGuard(nullptr, [&] {
    SC_ARG(out != nullptr, "output communicator pointer is NULL");
    *out = nullptr;
    const scTransport_t kind = cfg ? cfg->transport : scTransportMpi;
    SC_ARG(kind == scTransportMpi || kind == scTransportNccl,
           "scCommInitMpi takes transport mpi or nccl (use scCommInitLocal for local)");
    // A rank whose settings fail still joins the agreement, so that the others
    // learn of it instead of waiting in MPI's creation calls.
    Config c;
    std::unique_ptr<Error> failure;
    try {
      c = resolveConfig(cfg, kind);
    } catch (const Error& e) {
      failure = std::make_unique<Error>(e);
    }
    const double timeout = !failure                         ? c.timeout
                           : cfg && cfg->timeoutSeconds > 0 ? cfg->timeoutSeconds
                                                            : Config{}.timeout;
    agreeOverMpi(mpiComm, failure ? nullptr : &c, failure.get(), timeout);
    if (failure) throw *failure;
    topo::checkSupported(c, kind == scTransportNccl);  // the same on every rank: the agreement compared the files
    std::unique_ptr<scComm> made = kind == scTransportNccl ? makeNcclComm(mpiComm, c) : makeMpiComm(mpiComm, c);
    topo::setupExchanged(*made);
    *out = made.release();
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
    topo::checkSupported(c, true);
    *out = makeNcclCommFromId(nranks, id, rank, c).release();
  });
}

extern "C" scResult_t scCommInitLocal(scComm_t* comms, int nranks, const int* devices, const scConfig_t* cfg) {
  return scGuard(nullptr, [&] {
    SC_ARG(comms != nullptr, "output communicator array is NULL");
    SC_ARG(nranks >= 1, "nranks must be >= 1, got ", nranks);
    Config c = resolveConfig(cfg, scTransportLocal);
    topo::checkSupported(c, devices != nullptr);
    std::vector<std::unique_ptr<scComm>> made = makeLocalComms(nranks, devices, c);
    std::vector<scComm*> raw;
    for (auto& m : made) raw.push_back(m.get());
    topo::setupLocal(raw);
    for (int i = 0; i < nranks; ++i) comms[i] = made[i].release();
  });
}

extern "C" scResult_t scCommDestroy(scComm_t comm) {
  return scGuard(nullptr, [&] {
    SC_ARG(comm != nullptr, "communicator is NULL");
    retireComm(comm);
    retireTopologiesOf(comm);
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
    // Not the communicator's deadline: an interrupted one has passed, and
    // shrinking is how a job goes on after an abort.
    std::unique_ptr<Transport> t = comm->transport->shrink(exclude, Deadline::in(comm->cfg.timeout));
    auto backend = comm->device() ? makeCudaBackend(comm->cfg.device) : makeCpuBackend();
    auto shrunk = std::make_unique<scComm>(std::move(t), std::move(backend), comm->cfg);
    std::vector<int> kept;  // the new ranks are the old ones left, in order
    for (int q = 0; q < P; ++q)
      if (!std::binary_search(exclude.begin(), exclude.end(), q)) kept.push_back(q);
    topo::setupShrunk(*shrunk, *comm, kept);
    *newcomm = shrunk.release();
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

// The counters are written by the calls: read and reset as a call, held
// alone (refused while another thread is inside a call on comm).
extern "C" scResult_t scCommGetStats(scComm_t comm, scStats_t* stats) {
  return scCall(comm, [&] {
    SC_ARG(comm && stats, "NULL argument");
    *stats = comm->stats;
  });
}

extern "C" scResult_t scCommResetStats(scComm_t comm) {
  return scCall(comm, [&] {
    SC_ARG(comm, "communicator is NULL");
    comm->stats = scStats_t{};
    if (comm->topo) std::fill(comm->topo->linkBytes.begin(), comm->topo->linkBytes.end(), 0);
  });
}
