// The communicator: rank/size, transport, compute backend, resolved config,
// traffic counters, scratch memory and the error state the C API reports.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "core/deadline.h"
#include "core/dtype.h"
#include "core/scratch.h"
#include "transport/transport.h"

namespace sc {

struct Config {
  scTransport_t transport = scTransportMpi;
  int device = -1;
  double timeout = 300.0;
  scAlgo_t algo = scAlgoAuto;   // what scAlgoAuto resolves to (scAlgoAuto: cost model)
  size_t pipelineBytes = 0;     // 0: backend default
  // alpha-beta-gamma model of this transport, seconds and seconds/byte.
  double alpha = 0, beta = 0, gamma = 0;
};

// Merges the caller's scConfig_t (may be NULL) with environment overrides:
// SPARCOLL_TIMEOUT, SPARCOLL_ALGO, SPARCOLL_PIPELINE_BYTES, SPARCOLL_ALPHA/BETA/GAMMA.
Config resolveConfig(const scConfig_t* cfg, scTransport_t transport);
// "ring" -> scAlgoRing ...; false when unknown.
bool parseAlgo(const char* s, scAlgo_t* out);
const char* algoName(scAlgo_t a);

}  // namespace sc

struct scComm {
  std::unique_ptr<sc::Transport> transport;
  std::unique_ptr<sc::Backend> backend;
  sc::Config cfg;
  scStats_t stats{};
  bool aborted = false;
  std::string abortReason;
  std::string lastError;

  scComm(std::unique_ptr<sc::Transport> t, std::unique_ptr<sc::Backend> b, sc::Config c)
      : transport(std::move(t)), backend(std::move(b)), cfg(c) {}
  ~scComm();

  int rank() const { return transport->rank(); }
  int size() const { return transport->size(); }
  bool device() const { return backend->mem() == sc::Mem::Device; }
  sc::Deadline deadline() const { return sc::Deadline::in(cfg.timeout); }
  size_t pipelineBytes() const {
    return cfg.pipelineBytes ? cfg.pipelineBytes : (device() ? (4u << 20) : (1u << 20));
  }
  // The grow-only scratch buffer of `slot` (kept between calls), for work
  // enqueued on `stream` (the call's stream; NULL on host communicators).
  char* scratch(sc::Scratch slot, size_t bytes, void* stream);

 private:
  std::vector<std::pair<void*, size_t>> scratch_;
};
