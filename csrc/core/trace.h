// What a communicator remembers of its calls: a flight recorder of the last
// calls (SPARCOLL_FLIGHT_RECORDER, default 32), written to stderr when a call
// times out, and, with SPARCOLL_TRACE=DIR, a
// Chrome trace (JSON array format, one event per call) in DIR, one file per
// communicator rank, that tools/sparcoll-trace-merge joins for Perfetto.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/call.h"
#include "transport/transport.h"

namespace sc {

// One collective call.
struct CallRecord {
  uint64_t seq = 0;
  CallSig sig;
  std::chrono::steady_clock::time_point t0;  // the trace's wall-clock start derives from it (writeEvent)
  double durUs = -1;   // -1: in flight
  scResult_t status = scSuccess;
  uint64_t bytesSent = 0, bytesRecv = 0;  // the call's traffic (scStats_t); the totals so far while in flight
  uint32_t rounds = 0;                    // rounds posted (the mismatch check's included)
  std::vector<int> peers;                 // distinct peers, first use first (at most kMaxPeers kept)
  uint32_t morePeers = 0;                 // distinct peers beyond those (exact up to 128 peers in all)
  const char* phase = nullptr;            // where the schedule last posted a round (Ctx::phase)
  int step = 0, steps = 0;
  static constexpr size_t kMaxPeers = 64;
};

class Recorder {
 public:
  // keep: flight recorder entries (0: none); traceDir: "" for no trace.
  Recorder(size_t keep, std::string traceDir, int rank, int size, const char* transport);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Call `seq` starts (setCall), with the communicator's traffic so far.
  // Without a trace, its start and end are read from the coarse clock
  // (core/deadline.h: no precise read per call), and the dump gives a call
  // shorter than its resolution as "under 8 ms"; with a trace, from the
  // precise clock (a trace's events need microseconds).
  void begin(uint64_t seq, const CallSig& sig, const scStats_t& stats);
  // A round of the current call (Ctx::post).
  void round(const std::vector<P2POp>& ops, const char* phase, int step, int steps);
  // The calls numbered after `fromSeq` end (the outermost C entry point
  // returns). Writes the trace event; dumps the flight recorder to stderr on
  // scTimeout.
  void end(uint64_t fromSeq, scResult_t status, const std::string& error, const scStats_t& stats);
  // The flight recorder, oldest first, one line per call.
  std::string dump() const;
  bool active() const { return keep_ > 0 || trace_; }

 private:
  CallRecord* open();  // the innermost call in flight, or null
  void writeEvent(const CallRecord& r, const std::string& error);

  std::vector<CallRecord> ring_;
  size_t keep_, next_ = 0, used_ = 0;
  std::vector<size_t> open_;  // ring slots of calls in flight, outermost first
  // The peers of the innermost call in flight, for round(): a set of 128
  // slots, each holding a peer and the call (seq) that put it there. A
  // nested call takes it over; end() puts the outer call's listed peers back.
  bool firstSight(uint64_t seq, int peer);  // whether peer is new to call seq (now added)
  static constexpr int kPeerSetBits = 7;
  struct PeerSlot {
    uint64_t seq = 0;  // 0: no call (calls are numbered from 1)
    int peer = 0;
  };
  std::array<PeerSlot, size_t(1) << kPeerSetBits> peerSet_{};
  std::FILE* trace_ = nullptr;
  bool first_ = true;
  const int rank_, size_;
  const char* transport_;
  uint64_t id_;
  // The wall clock at the steady clock's zero, read once: a trace event's
  // wall-clock start (comparable across ranks and hosts) is then derived from
  // the call's steady-clock start, with no wall-clock read per call.
  double wallAtSteadyZeroUs_;
};

}  // namespace sc
