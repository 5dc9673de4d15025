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

// One collective call. What a call writes lies in its first two cache lines
// (alignas): later peers, beyond the first kFirstPeers, only in calls with
// more.
struct alignas(64) CallRecord {
  uint64_t seq = 0;
  CallSig sig;
  // When the call is timed from (kUntimed: not known yet); the trace's
  // wall-clock start derives from it (writeEvent).
  std::chrono::steady_clock::time_point t0;
  double durUs = -1;  // -1: in flight; kNoLongWait: ended without a wait long enough to time
  scResult_t status = scSuccess;
  uint32_t rounds = 0;                    // rounds posted (the mismatch check's included)
  uint64_t bytesSent = 0, bytesRecv = 0;  // the call's traffic (scStats_t); the totals so far while in flight
  const char* phase = nullptr;            // where the schedule last posted a round (Ctx::phase)
  int step = 0, steps = 0;
  // Distinct peers, first use first: nPeers listed (at most kMaxPeers), the
  // first kFirstPeers of them in firstPeers, the others in laterPeers (valid
  // only while nPeers > kFirstPeers); morePeers distinct ones beyond (exact
  // up to 128 peers in all).
  uint32_t nPeers = 0, morePeers = 0;
  static constexpr size_t kFirstPeers = 4;
  int firstPeers[kFirstPeers] = {};
  std::vector<int> laterPeers;
  std::vector<int> peers() const;  // the listed peers, in order

  static constexpr size_t kMaxPeers = 64;
  static constexpr std::chrono::steady_clock::time_point kUntimed{};
  static constexpr double kNoLongWait = -2;
};

class Recorder {
 public:
  // keep: flight recorder entries (0: none); traceDir: "" for no trace.
  Recorder(size_t keep, const std::string& traceDir, int rank, int size, const char* transport);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Call `seq` starts (setCall), with the communicator's traffic so far.
  // No clock is read here, nor at the end of a call that never waited long:
  // with 8 ranks on 2 cores, two clock reads per call (even of the coarse
  // clock, a few nanoseconds each) made a neighbour allgather of 8-64 B
  // about 5 % slower (bench/results/neighbor-cpu-mpi-2026-11-29-recorder.md).
  // A call is timed on the precise clock from the start of its deadline (the
  // first look of one of its waits at the clock: scComm::callStart, passed
  // to end()) to its end; one nested in another, and every call with a
  // trace (whose events need their start), from its start.
  // The common cases (a call not nested in another, without a trace) are
  // inline: the recorder runs on every call's path.
  void begin(uint64_t seq, const CallSig& sig, const scStats_t& stats) {
    if (!active()) return;
    if (trace_ || !open_.empty()) return beginTimed(seq, sig, stats);
    open_.push_back(start(seq, sig, stats, CallRecord::kUntimed));
  }
  // A round of the current call (Ctx::post).
  void round(const std::vector<P2POp>& ops, const char* phase, int step, int steps) {
    if (open_.empty()) return;
    CallRecord& r = ring_[open_.back()];
    ++r.rounds;
    r.phase = phase;
    r.step = step;
    r.steps = steps;
    for (const P2POp& o : ops) addPeer(r, o.peer);
  }
  // The calls numbered after `fromSeq` end (the outermost C entry point
  // returns); waitStart is the calls' deadline start (scComm::callStart: a
  // steady-clock tick count, <= 0 when no wait looked at the clock). Writes
  // the trace event; dumps the flight recorder to stderr on scTimeout.
  void end(uint64_t fromSeq, scResult_t status, const std::string& error, const scStats_t& stats,
           int64_t waitStart = 0) {
    if (open_.empty()) return;
    if (open_.size() != 1 || trace_ || status == scTimeout) return endAll(fromSeq, status, error, stats, waitStart);
    CallRecord& r = ring_[open_[0]];
    if (r.seq <= fromSeq) return;
    open_.pop_back();
    finish(r, status, stats, waitStart, nullptr);
  }
  // The flight recorder, oldest first, one line per call.
  // waitStart: as in end(), for a call still in flight.
  std::string dump(int64_t waitStart = 0) const;
  bool active() const { return keep_ > 0 || trace_; }

 private:
  CallRecord* open();  // the innermost call in flight, or null
  // The next slot of the ring, filled for call seq; its index.
  size_t start(uint64_t seq, const CallSig& sig, const scStats_t& stats, std::chrono::steady_clock::time_point t0) {
    const size_t i = next_;
    CallRecord& r = ring_[i];
    if (++next_ == ring_.size()) next_ = 0;  // not a modulo: a division per call
    if (used_ < ring_.size()) ++used_;
    r.seq = seq;
    r.sig = sig;
    r.t0 = t0;
    r.durUs = -1;
    r.status = scSuccess;
    r.rounds = 0;
    r.bytesSent = stats.bytesSent;
    r.bytesRecv = stats.bytesRecv;
    r.phase = nullptr;
    r.step = r.steps = 0;
    r.nPeers = r.morePeers = 0;  // laterPeers is cleared when first used (laterPeer)
    return i;
  }
  // begin() with a trace or inside another call: timed from its start.
  void beginTimed(uint64_t seq, const CallSig& sig, const scStats_t& stats);
  // end() of every other case: nested calls, a trace, a timeout's dump.
  void endAll(uint64_t fromSeq, scResult_t status, const std::string& error, const scStats_t& stats, int64_t waitStart);
  // Call r ended: its outcome, traffic and duration (from its start, else
  // from waitStart (> 0) when it has none, else kNoLongWait). now, when
  // given, is read once for several calls.
  static void finish(CallRecord& r, scResult_t status, const scStats_t& stats, int64_t waitStart,
                     std::chrono::steady_clock::time_point* now) {
    if (r.t0 == CallRecord::kUntimed && waitStart > 0)
      r.t0 = std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(waitStart));
    r.durUs = r.t0 == CallRecord::kUntimed ? CallRecord::kNoLongWait : usSince(r.t0, now);
    r.status = status;
    r.bytesSent = stats.bytesSent - r.bytesSent;
    r.bytesRecv = stats.bytesRecv - r.bytesRecv;
  }
  // Microseconds from t0 to now (*now, read here if unset).
  static double usSince(std::chrono::steady_clock::time_point t0, std::chrono::steady_clock::time_point* now);
  void writeEvent(const CallRecord& r, const std::string& error);

  std::vector<CallRecord> ring_;
  size_t keep_, next_ = 0, used_ = 0;
  std::vector<size_t> open_;  // ring slots of calls in flight, outermost first
  // The peers of the innermost call in flight, for round(): a set of 128
  // slots, each holding a peer and the call (seq) that put it there. A
  // nested call takes it over; end() puts the outer call's listed peers back.
  bool firstSight(uint64_t seq, int peer);  // whether peer is new to call seq (now added)
  // Lists peer for call r unless listed: the first CallRecord::kFirstPeers
  // by scanning them (a few compares, where the set costs a hash and a
  // probe), the later ones through the set (laterPeer, out of line).
  void addPeer(CallRecord& r, int peer) {
    const uint32_t n = r.nPeers < CallRecord::kFirstPeers ? r.nPeers : uint32_t(CallRecord::kFirstPeers);
    for (uint32_t i = 0; i < n; ++i)
      if (r.firstPeers[i] == peer) return;
    if (r.nPeers < CallRecord::kFirstPeers) r.firstPeers[r.nPeers++] = peer;
    else laterPeer(r, peer);
  }
  void laterPeer(CallRecord& r, int peer);
  static constexpr int kPeerSetBits = 7;
  struct PeerSlot {
    uint64_t seq = 0;  // 0: no call (calls are numbered from 1)
    int peer = 0;
  };
  std::array<PeerSlot, size_t(1) << kPeerSetBits> peerSet_{};
  std::FILE* trace_ = nullptr;
  const int rank_, size_;
  const char* transport_;
  uint64_t id_;
  // The wall clock at the steady clock's zero, read once: a trace event's
  // wall-clock start (comparable across ranks and hosts) is then derived from
  // the call's steady-clock start, with no wall-clock read per call.
  double wallAtSteadyZeroUs_;
};

}  // namespace sc
