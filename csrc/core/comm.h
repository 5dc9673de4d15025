// The communicator: rank/size, transport, compute backend, resolved config,
// traffic counters, scratch memory and the error state the C API reports.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "core/call.h"
#include "core/deadline.h"
#include "core/dtype.h"
#include "core/kept_pick.h"
#include "core/scratch.h"
#include "core/trace.h"
#include "model/model.h"
#include "transport/transport.h"

namespace sc {
namespace topo {
struct CommTopo;  // topology/topology.h
}

struct Config {
  scTransport_t transport = scTransportMpi;
  int device = -1;
  double timeout = 300.0;
  scAlgo_t algo = scAlgoAuto;  // what scAlgoAuto resolves to (scAlgoAuto: cost model)
  size_t pipelineBytes = 0;    // 0: backend default
  // The cost model's inputs (model/model.h): the tuning file (null: none),
  // SPARCOLL_ALPHA/BETA/GAMMA, and the machines the ranks span: found by the
  // transport's constructor (MPI: shared-memory split), 1 where it cannot
  // tell (local, nccl from a unique id); SPARCOLL_MACHINES (machinesEnv > 0)
  // overrides it.
  std::shared_ptr<const model::Tuning> tuning;
  std::string tuningPath;  // the file tuning was read from (empty: none), for the ranks' agreement
  model::Overrides env;
  int machines = 1;
  int machinesEnv = 0;
  // SPARCOLL_MODEL_TRANSPORT: price this communicator as one of another
  // transport (its tuning-file entries, rules and built-in parameters; nccl's
  // device memory, mpi's host memory), e.g. local threads standing in for an
  // MPI job in sparcoll-sim. -1: its own.
  int modelTransport = -1;
  scCheck_t check = scCheckNative;  // resolved: never scCheckDefault
  // core/trace.h: calls kept for the flight recorder (SPARCOLL_FLIGHT_RECORDER)
  // and the trace directory (SPARCOLL_TRACE; empty: no trace).
  size_t flightRecorder = 32;
  std::string traceDir;
  // The topology file (scConfig_t.topologyFile / SPARCOLL_TOPOLOGY_FILE;
  // topology/topology.h): its path (empty: none) and contents, read at
  // resolveConfig and parsed at creation, after the ranks compared digests;
  // topologyReadError: why it could not be read (empty: read).
  std::string topologyPath, topologyText, topologyReadError;
};

// Merges the caller's scConfig_t (may be NULL) with environment overrides:
// SPARCOLL_TIMEOUT, SPARCOLL_ALGO, SPARCOLL_PIPELINE_BYTES, SPARCOLL_ALPHA/BETA/GAMMA,
// SPARCOLL_MACHINES, SPARCOLL_MODEL_TRANSPORT, SPARCOLL_CHECK, SPARCOLL_FLIGHT_RECORDER, SPARCOLL_TRACE,
// and reads the tuning file (scConfig_t.tuningFile, else
// SPARCOLL_TUNING_FILE) and the topology file (scConfig_t.topologyFile, else
// SPARCOLL_TOPOLOGY_FILE).
Config resolveConfig(const scConfig_t* cfg, scTransport_t transport);
// SPARCOLL_TIMEOUT in seconds, 300 when unset; scInvalidArgument naming the
// variable unless a positive number.
double timeoutFromEnv();
// The cost model of a communicator of P ranks made with cfg.
model::Model commModel(const Config& cfg, bool device, int P);
// "ring" -> scAlgoRing ...; false when unknown.
bool parseAlgo(const char* s, scAlgo_t* out);
const char* algoName(scAlgo_t a);

// The registry of live communicators (core/api_comm.cpp).
void registerComm(const scComm* comm);
void unregisterComm(const scComm* comm) noexcept;

}  // namespace sc

struct scComm {
  std::unique_ptr<sc::Transport> transport;
  std::unique_ptr<sc::Backend> backend;
  sc::Config cfg;
  scStats_t stats{};
  // Set (release) after abortReason: a query of another thread may read both.
  std::atomic<bool> aborted{false};
  std::string abortReason;
  std::string lastError;
  sc::model::Model model;  // what every auto of this communicator decides on
  // Each dense collective's last auto pick (algo/dense.h: chooseAlgo), by
  // sc::Coll (a scCollective_t).
  sc::KeptPick densePick[scNumCollectives];
  // Collective calls started so far (this one included while it runs): the
  // transport tags the call's messages with it, so leftovers of a mismatched
  // call can never be taken by a later one. A call counts once its arguments
  // passed their local checks (setCall, before its first message): a call
  // refused on one rank alone leaves the ranks in step.
  uint64_t seq = 0;
  sc::CallSig call;  // the current (or last) call's signature (core/call.h)
  // The last signature hashed, and its hash: a loop of one call hashes once.
  sc::CallSig hashedSig;
  uint32_t sigHash = 0;
  std::unique_ptr<sc::Recorder> recorder;  // flight recorder and trace (core/trace.h)
  // The thread inside a collective call (api_guard.h: scCall; entry.h); a default id
  // when none is. A call the library makes from inside another (DSOP's
  // allreduce) is on the same thread and nests.
  std::atomic<std::thread::id> inUse{};
  // The topology file's tree, this communicator's ring order and link
  // counters (topology/topology.h); null without a file: rank order.
  std::shared_ptr<sc::topo::CommTopo> topo;

  // Registers the communicator as live (entry.h: commLive); the destructor
  // unregisters it.
  scComm(std::unique_ptr<sc::Transport> t, std::unique_ptr<sc::Backend> b, sc::Config c);
  ~scComm();

  // The transport's, kept here: every call's Ctx reads both (two virtual
  // calls otherwise), and a transport's never change.
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool device() const { return backend->mem() == sc::Mem::Device; }
  // scCommInterrupt's flag: every deadline of the communicator watches it
  // (core/deadline.h), and a wait's interrupt check may set it.
  mutable std::atomic<bool> interrupted{false};
  sc::Deadline deadline() const { return sc::Deadline::in(cfg.timeout).stoppedBy(&interrupted); }
  // When the current call (the outermost C entry point) began waiting: a
  // Clock tick count, Deadline::kNotStarted until the call's first wait
  // looks at its deadline, and kOutside between calls. The call's deadline
  // counts from there (core/deadline.h), so a call whose messages are all
  // there when it looks reads no clock for its deadline.
  static constexpr sc::Clock::rep kOutside = -1;  // negative: Deadline's "between calls"
  std::atomic<sc::Clock::rep> callStart{kOutside};
  // Outside a call, a deadline from now.
  sc::Deadline callDeadline() {
    return callStart.load(std::memory_order_relaxed) == kOutside
               ? deadline()
               : sc::Deadline::atFirstLook(&callStart, cfg.timeout).stoppedBy(&interrupted);
  }
  size_t pipelineBytes() const { return cfg.pipelineBytes ? cfg.pipelineBytes : (device() ? (4u << 20) : (1u << 20)); }
  // The grow-only scratch buffer of `slot` (kept between calls), for work
  // enqueued on `stream` (the call's stream; NULL on host communicators).
  char* scratch(sc::Scratch slot, size_t bytes, void* stream);
  // While a planned call is recorded (algo/ctx.h), a scratch buffer that grows
  // keeps its old memory: work recorded on it is enqueued only when the plan
  // runs, after a stream-ordered release would already have handed it out
  // again. holdScratch(false, stream) releases what was kept, on `stream`.
  void holdScratch(bool on, void* stream = nullptr) noexcept;
  // The planned call's record, its capacity kept across calls.
  sc::CallPlan plan;
  // Blocks the host until `stream`'s work is done (Backend::sync), counted in
  // scStats_t.hostSyncs on device communicators: every wait of a call for
  // the device goes through here.
  void hostSync(void* stream, const sc::Deadline& dl) {
    if (device()) ++stats.hostSyncs;
    backend->sync(stream, dl);
  }

 private:
  std::vector<std::pair<void*, size_t>> scratch_;
  bool holding_ = false;
  std::vector<void*> held_;
  int rank_ = 0, size_ = 1;
};
