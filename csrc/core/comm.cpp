#include "core/comm.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace sc {
namespace {

double envDouble(const char* name, double dflt) {
  const char* v = std::getenv(name);
  if (!v || !*v) return dflt;
  char* end = nullptr;
  double d = std::strtod(v, &end);
  SC_ARG(end && *end == '\0', "environment variable ", name, "='", v, "' is not a number");
  return d;
}

}  // namespace

bool parseAlgo(const char* s, scAlgo_t* out) {
  for (int i = 0; i < scNumAlgos; ++i)
    if (std::strcmp(s, algoName(scAlgo_t(i))) == 0) { *out = scAlgo_t(i); return true; }
  return false;
}

const char* algoName(scAlgo_t a) {
  static const char* names[] = {"auto", "ring", "rabenseifner", "recdbl", "native"};
  return (a >= 0 && a < scNumAlgos) ? names[a] : "?";
}

Config resolveConfig(const scConfig_t* in, scTransport_t transport) {
  Config c;
  c.transport = transport;
  if (in) {
    SC_ARG(in->size == 0 || in->size >= sizeof(scConfig_t),
           "scConfig_t.size is ", in->size, ", expected ", sizeof(scConfig_t),
           " (initialise it with SC_CONFIG_INITIALIZER)");
    SC_ARG(in->algo >= 0 && in->algo < scNumAlgos, "unknown algorithm ", int(in->algo), " in scConfig_t");
    c.device = in->device;
    if (in->timeoutSeconds > 0) c.timeout = in->timeoutSeconds;
    else c.timeout = envDouble("SPARCOLL_TIMEOUT", 300.0);
    c.algo = in->algo;
    c.pipelineBytes = in->pipelineBytes;
  } else {
    c.timeout = envDouble("SPARCOLL_TIMEOUT", 300.0);
  }
  SC_ARG(c.timeout > 0, "timeout must be positive, got ", c.timeout);
  if (const char* a = std::getenv("SPARCOLL_ALGO"); a && *a) {
    SC_ARG(parseAlgo(a, &c.algo), "SPARCOLL_ALGO='", a,
           "' is not one of auto, ring, rabenseifner, recdbl, native");
  }
  if (std::getenv("SPARCOLL_PIPELINE_BYTES"))
    c.pipelineBytes = size_t(envDouble("SPARCOLL_PIPELINE_BYTES", 0));
  // Default model parameters per transport (fitted on this project's machines,
  // see README "Choosing an algorithm"); environment overrides them.
  switch (transport) {
    case scTransportNccl: c.alpha = 10e-6; c.beta = 1.0 / 20e9; c.gamma = 1.0 / 400e9; break;
    case scTransportLocal: c.alpha = 3e-6; c.beta = 1.0 / 6e9; c.gamma = 1.0 / 4e9; break;
    default: c.alpha = 5e-6; c.beta = 1.0 / 4e9; c.gamma = 1.0 / 4e9; break;
  }
  c.alpha = envDouble("SPARCOLL_ALPHA", c.alpha);
  c.beta = envDouble("SPARCOLL_BETA", c.beta);
  c.gamma = envDouble("SPARCOLL_GAMMA", c.gamma);
  return c;
}

}  // namespace sc

scComm::~scComm() {
  // The transport first: an NCCL communicator's finalize (bounded) flushes work
  // that may still read or write scratch memory.
  transport.reset();
  for (auto& s : scratch_) backend->release(s.first);
}

char* scComm::scratch(sc::Scratch slot, size_t bytes, void* stream) {
  const size_t i = size_t(slot);
  if (scratch_.size() <= i) scratch_.resize(i + 1, {nullptr, 0});
  auto& s = scratch_[i];
  if (s.second < bytes) {
    if (s.first) {
      // The old buffer may still be in use by work queued on this call's stream
      // (any kind, torch's non-blocking side streams included) or by earlier
      // calls on blocking streams (what the legacy stream orders after): wait
      // for both, bounded by the deadline, since that work may wait on a peer
      // that never sends. The release's own implicit synchronisation then finds
      // nothing of this communicator pending. (Earlier calls on other
      // non-blocking streams would race on scratch anyway: sparcoll.h asks the
      // caller to order a communicator's calls on different streams.)
      const sc::Deadline dl = deadline();
      backend->sync(stream, dl);
      if (stream) backend->sync(nullptr, dl);
      backend->release(s.first);
      s = {nullptr, 0};
    }
    s.first = backend->alloc(bytes);
    s.second = bytes;
  }
  return static_cast<char*>(s.first);
}
