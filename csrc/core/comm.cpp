#include "core/comm.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "core/entry.h"
#include "core/env.h"
#include "core/names.h"
#include "model/tuning.h"

namespace sc {
namespace {

double envDouble(env::Var var, double dflt) {
  const char* v = env::get(var);
  if (!v) return dflt;
  char* end = nullptr;
  double d = std::strtod(v, &end);
  SC_ARG(end && *end == '\0', "environment variable ", env::setting(var), " is not a number");
  return d;
}

// A model parameter from the environment: NaN when unset, else a finite number >= 0.
double envParam(env::Var var) {
  const char* v = env::get(var);
  if (!v) return NAN;
  const double d = envDouble(var, 0);
  SC_ARG(std::isfinite(d) && d >= 0, "environment variable ", env::setting(var), " must be a finite number >= 0");
  return d;
}

// The ring slice size (scConfig_t.pipelineBytes, SPARCOLL_PIPELINE_BYTES): 0 for
// the default, else at least one element of the widest type (a slice holds
// whole elements) and at most 1 GiB: every ring call allocates two slices of
// scratch, so SIZE_MAX was accepted at creation and then failed every ring call.
constexpr size_t kMinPipelineBytes = 8, kMaxPipelineBytes = size_t(1) << 30;

void checkPipelineBytes(size_t b, const char* what) {
  SC_ARG(b == 0 || (b >= kMinPipelineBytes && b <= kMaxPipelineBytes), what, " = ", b,
         " is out of range: 0 (default) or ", kMinPipelineBytes, " to ", kMaxPipelineBytes, " bytes (1 GiB)");
}

// SPARCOLL_PIPELINE_BYTES: decimal digits only. strtod took "-1" (and then
// size_t(-1.0) is undefined) and "1.5"; a byte count has neither.
size_t envPipelineBytes(const char* v) {
  constexpr env::Var kVar = env::Var::PipelineBytes;
  size_t n = 0;
  for (const char* p = v; *p; ++p) {
    SC_ARG(*p >= '0' && *p <= '9', "environment variable ", env::setting(kVar),
           " is not a byte count (a non-negative integer)");
    const size_t digit = size_t(*p - '0');
    SC_ARG(n <= (SIZE_MAX - digit) / 10, "environment variable ", env::setting(kVar), " overflows size_t");
    n = n * 10 + digit;
  }
  checkPipelineBytes(n, env::name(kVar));
  return n;
}

}  // namespace

double timeoutFromEnv() {
  const double t = envDouble(env::Var::Timeout, 300.0);
  SC_ARG(t > 0, "environment variable ", env::setting(env::Var::Timeout),
         " must be a positive number of seconds (inf: no deadline)");
  return t;
}

// parseAlgo and algoName: core/names.cpp (the one scAlgo_t name table).

// scConfig_t before tuningFile was added: callers built against that header
// pass this size, and the fields from tuningFile on are not theirs to read.
constexpr size_t kConfigSizeV1 = offsetof(scConfig_t, tuningFile);
// ... and before check was added.
constexpr size_t kConfigSizeV2 = offsetof(scConfig_t, check);
// ... and before topologyFile was added.
constexpr size_t kConfigSizeV3 = offsetof(scConfig_t, topologyFile);

// The topology file's path and contents (parsed at creation, topology/topology.h):
// a file that cannot be read is noted, not thrown, so that MPI ranks first
// compare what they read.
void readTopology(Config& c, const char* path) {
  c.topologyPath = path;
  std::ifstream f(path, std::ios::binary);
  struct stat st;
  if (!f || ::stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
    c.topologyReadError = cat("topology file '", path, "': cannot read: ", std::strerror(errno ? errno : ENOENT));
    return;
  }
  if (st.st_size > (16 << 20)) {
    c.topologyReadError = cat("topology file '", path, "': larger than 16 MiB");
    return;
  }
  std::ostringstream all;
  all << f.rdbuf();
  c.topologyText = all.str();
}

Config resolveConfig(const scConfig_t* in, scTransport_t transport) {
  Config c;
  c.transport = transport;
  const char* tuningFile = nullptr;
  const char* topologyFile = nullptr;
  scCheck_t check = scCheckDefault;
  if (in) {
    SC_ARG(in->size == 0 || in->size == kConfigSizeV1 || in->size == kConfigSizeV2 || in->size == kConfigSizeV3 ||
               in->size >= sizeof(scConfig_t),
           "scConfig_t.size is ", in->size, ", expected ", sizeof(scConfig_t),
           " (initialise it with SC_CONFIG_INITIALIZER)");
    if (in->size >= kConfigSizeV2) tuningFile = in->tuningFile;
    if (in->size >= sizeof(scConfig_t)) topologyFile = in->topologyFile;
    if (in->size >= kConfigSizeV3) {
      SC_ARG(in->check >= scCheckDefault && in->check <= scCheckOff, "unknown scConfig_t.check ", int(in->check));
      check = in->check;
    }
    SC_ARG(in->algo >= 0 && in->algo < scNumAlgos, "unknown algorithm ", int(in->algo), " in scConfig_t");
    c.device = in->device;
    SC_ARG(!std::isnan(in->timeoutSeconds), "scConfig_t.timeoutSeconds is NaN (0: ", env::name(env::Var::Timeout),
           " or 300 s)");
    if (in->timeoutSeconds > 0) c.timeout = in->timeoutSeconds;
    else c.timeout = timeoutFromEnv();
    c.algo = in->algo;
    checkPipelineBytes(in->pipelineBytes, "scConfig_t.pipelineBytes");
    c.pipelineBytes = in->pipelineBytes;
  } else {
    c.timeout = timeoutFromEnv();
  }
  if (const char* a = env::get(env::Var::Algo)) {
    SC_ARG(parseAlgo(a, &c.algo), env::setting(env::Var::Algo), " is not one of ", algoNameList());
  }
  if (check == scCheckDefault) {
    check = scCheckNative;
    if (const char* v = env::get(env::Var::Check)) {
      const std::string s = v;
      if (s == "0" || s == "off") check = scCheckOff;
      else if (s == "1" || s == "all") check = scCheckAll;
      else if (s == "native") check = scCheckNative;
      else SC_THROW(scInvalidArgument, env::setting(env::Var::Check), " is not one of 0 (off), 1 (all), native");
    }
  }
  c.check = check;
  if (env::get(env::Var::FlightRecorder)) {
    const double d = envDouble(env::Var::FlightRecorder, 0);
    SC_ARG(d >= 0 && d <= 1e6 && d == double(size_t(d)), env::setting(env::Var::FlightRecorder),
           " is not a number of calls from 0 (off) to 1000000");
    c.flightRecorder = size_t(d);
  }
  if (const char* v = env::get(env::Var::Trace)) {
    struct stat st;
    SC_ARG(::stat(v, &st) == 0 && S_ISDIR(st.st_mode), env::setting(env::Var::Trace),
           " is not a directory (create it first; every rank writes its own file there)");
    c.traceDir = v;
  }
  if (const char* v = env::get(env::Var::PipelineBytes)) c.pipelineBytes = envPipelineBytes(v);
  // Read once, when the process makes its first communicator (core/entry.cpp).
  if (const char* v = env::get(env::Var::Membarrier))
    SC_ARG(membarrierSetting(v) != Membarrier::Invalid, env::setting(env::Var::Membarrier),
           " is not 0 or off (each call's entry fences) or 1 or on (the default: destroys fence, by membarrier)");
  // The cost model's parameters: these overrides beat the tuning file, which
  // beats the built-in defaults (model/model.cpp).
  c.env.alpha = envParam(env::Var::Alpha);
  c.env.beta = envParam(env::Var::Beta);
  c.env.gamma = envParam(env::Var::Gamma);
  c.env.betaShared = envParam(env::Var::BetaShared);
  c.env.messageOverhead = envParam(env::Var::MessageOverhead);
  if (env::get(env::Var::Machines)) {
    const double d = envDouble(env::Var::Machines, 0);
    SC_ARG(d >= 1 && d <= 1e9 && d == double(int(d)), env::setting(env::Var::Machines), " is not a positive integer");
    c.machinesEnv = int(d);
  }
  if (const char* t = env::get(env::Var::ModelTransport)) {
    const std::string s = t;
    c.modelTransport = s == "mpi"     ? scTransportMpi
                       : s == "nccl"  ? scTransportNccl
                       : s == "local" ? scTransportLocal
                                      : -1;
    SC_ARG(c.modelTransport >= 0, env::setting(env::Var::ModelTransport), " is not one of mpi, nccl, local");
  }
  // An empty string is "not given", as for the environment variables.
  if (tuningFile && *tuningFile) {
    c.tuning = model::loadTuning(tuningFile);
    c.tuningPath = tuningFile;
  } else if (const char* f = env::get(env::Var::TuningFile)) {
    c.tuning = model::loadTuning(f, env::name(env::Var::TuningFile));
    c.tuningPath = f;
  }
  if (topologyFile && *topologyFile) readTopology(c, topologyFile);
  else if (const char* f = env::get(env::Var::TopologyFile)) readTopology(c, f);
  return c;
}

model::Model commModel(const Config& cfg, bool device, int P) {
  const int machines = cfg.machinesEnv > 0 ? cfg.machinesEnv : cfg.machines;
  scTransport_t transport = cfg.transport;
  if (cfg.modelTransport >= 0) {
    transport = scTransport_t(cfg.modelTransport);
    if (transport != scTransportLocal) device = transport == scTransportNccl;  // nccl: device memory; mpi: host
  }
  return model::makeModel(cfg.tuning, cfg.env, transport, device, P, machines, cfg.algo);
}

}  // namespace sc

scComm::scComm(std::unique_ptr<sc::Transport> t, std::unique_ptr<sc::Backend> b, sc::Config c)
    : transport(std::move(t)),
      backend(std::move(b)),
      cfg(std::move(c)),
      model(sc::commModel(cfg, backend->mem() == sc::Mem::Device, transport->size())),
      recorder(std::make_unique<sc::Recorder>(cfg.flightRecorder, cfg.traceDir, transport->rank(), transport->size(),
                                              transport->name())),
      rank_(transport->rank()),
      size_(transport->size()) {
  transport->bindStats(&stats);
  sc::registerComm(this);
}

scComm::~scComm() {
  sc::unregisterComm(this);
  // The transport first: an NCCL communicator's finalize (bounded) flushes work
  // that may still read or write scratch memory.
  transport.reset();
  for (auto& s : scratch_) backend->release(s.first);
}

void scComm::holdScratch(bool on, void* stream) noexcept {
  holding_ = on;
  if (on) return;
  for (void* p : held_) {
    try {
      backend->releaseOn(p, stream, deadline());
    } catch (...) {
      backend->release(p);  // the stream is broken: nothing more runs on it
    }
  }
  held_.clear();
}

char* scComm::scratch(sc::Scratch slot, size_t bytes, void* stream) {
  const size_t i = size_t(slot);
  if (scratch_.size() <= i) scratch_.resize(i + 1, {nullptr, 0});
  auto& s = scratch_[i];
  if (s.second < bytes) {
    if (s.first) {
      // The old buffer may still be in use by work queued on this call's
      // stream (a transport's rounds included: the stream waits for each),
      // so it goes back in that stream's order: on a device, to the pool
      // without any wait, which also means no hang behind a dead peer's
      // transfer. Earlier calls on other streams were ordered before this one
      // by the caller, as sparcoll.h asks of calls on different streams.
      if (holding_) held_.push_back(s.first);
      else backend->releaseOn(s.first, stream, deadline());
      s = {nullptr, 0};
    }
    s.first = backend->allocOn(bytes, stream);
    s.second = bytes;
    ++stats.scratchAllocs;
  }
  return static_cast<char*>(s.first);
}
