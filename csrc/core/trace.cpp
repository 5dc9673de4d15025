#include "core/trace.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/deadline.h"
#include "core/env.h"
#include "core/error.h"

namespace sc {
namespace {

std::atomic<uint64_t> gNextId{0};

double wallUs() {
  using namespace std::chrono;
  return double(duration_cast<microseconds>(system_clock::now().time_since_epoch()).count());
}

std::string host() {
  char h[256] = {};
  if (gethostname(h, sizeof h - 1) != 0) return "host";
  return h;
}

std::string durText(double us) {
  char b[32];
  if (us < 1e3) std::snprintf(b, sizeof b, "%.0f us", us);
  else if (us < 1e6) std::snprintf(b, sizeof b, "%.3f ms", us / 1e3);
  else std::snprintf(b, sizeof b, "%.3f s", us / 1e6);
  return b;
}

double usOf(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

}  // namespace

Recorder::Recorder(size_t keep, const std::string& traceDir, int rank, int size, const char* transport)
    : keep_(keep),
      rank_(rank),
      size_(size),
      transport_(transport),
      id_(gNextId++),
      wallAtSteadyZeroUs_(wallUs() - usOf(std::chrono::steady_clock::now().time_since_epoch())) {
  // The calls in flight live in the ring too: room for a few nested ones
  // (a call the library makes inside another) even with no history kept.
  ring_.resize(std::max<size_t>(keep_, 8));
  if (traceDir.empty()) return;
  const std::string path = cat(traceDir, "/sparcoll-", host(), "-", getpid(), "-", id_, ".json");
  trace_ = std::fopen(path.c_str(), "w");
  SC_REQUIRE(trace_, scSystemError, env::name(env::Var::Trace), ": cannot create ", path, ": ", std::strerror(errno));
  // The JSON array format lets a trace end without its ']' (a rank that was
  // killed): every event is flushed as written.
  const nlohmann::json meta = {
      {{"name", "process_name"}, {"ph", "M"}, {"pid", rank_}, {"args", {{"name", cat("rank ", rank_)}}}},
      {{"name", "thread_name"},
       {"ph", "M"},
       {"pid", rank_},
       {"tid", id_},
       {"args",
        {{"name",
          cat(transport_, " communicator of ", size_, " ranks (", host(), ", pid ", getpid(), ", #", id_, ")")}}}}};
  std::fprintf(trace_, "[\n%s,\n%s", meta[0].dump().c_str(), meta[1].dump().c_str());
  std::fflush(trace_);
}

Recorder::~Recorder() {
  if (!trace_) return;
  std::fputs("\n]\n", trace_);
  std::fclose(trace_);
}

void Recorder::beginTimed(uint64_t seq, const CallSig& sig, const scStats_t& stats) {
  // A nested call shares its caller's deadline start, which may predate it.
  const size_t slot = start(seq, sig, stats, Clock::now());
  // A nested call (DSOP's allreduce) may have reused the slot of its caller
  // when the ring is that small: that caller is then no longer in flight here.
  for (size_t i = 0; i < open_.size(); ++i)
    if (open_[i] == slot) open_.erase(open_.begin() + long(i--));
  open_.push_back(slot);
}

CallRecord* Recorder::open() { return open_.empty() ? nullptr : &ring_[open_.back()]; }

void Recorder::laterPeer(CallRecord& r, int peer) {
  if (r.nPeers == CallRecord::kFirstPeers) {  // the call's first peer past the scanned ones
    r.laterPeers.clear();                     // keeps its capacity: no allocation per call once warm
    for (int p : r.firstPeers) firstSight(r.seq, p);
  }
  // Each further peer is looked up in a small hash set of the call's peers
  // (one probe or two), not in the list so far: a call with many neighbours
  // posts many messages.
  if (!firstSight(r.seq, peer)) return;
  if (r.nPeers < CallRecord::kMaxPeers) {
    r.laterPeers.push_back(peer);
    ++r.nPeers;
  } else {
    ++r.morePeers;
  }
}

std::vector<int> CallRecord::peers() const {
  std::vector<int> all(firstPeers, firstPeers + std::min<size_t>(nPeers, kFirstPeers));
  if (nPeers > kFirstPeers) all.insert(all.end(), laterPeers.begin(), laterPeers.end());
  return all;
}

bool Recorder::firstSight(uint64_t seq, int peer) {
  // Open addressing with linear probing; a slot of another call is free. A
  // call only ever adds, so a peer it added lies before the first free slot
  // on its probe path.
  size_t i = (uint32_t(peer) * 2654435761u) >> (32 - kPeerSetBits);
  for (size_t k = 0; k < peerSet_.size(); ++k, i = (i + 1) & (peerSet_.size() - 1)) {
    PeerSlot& s = peerSet_[i];
    if (s.seq != seq) {
      s = {seq, peer};
      return true;
    }
    if (s.peer == peer) return false;
  }
  return true;  // more distinct peers than slots: counted again (morePeers overcounts)
}

double Recorder::usSince(Clock::time_point t0, Clock::time_point* now) {
  Clock::time_point t = now ? *now : Clock::now();
  if (now && t == CallRecord::kUntimed) t = *now = Clock::now();
  return usOf(t - t0);
}

void Recorder::endAll(uint64_t fromSeq, scResult_t status, const std::string& error, const scStats_t& stats,
                      int64_t waitStart) {
  bool dumpIt = false, popped = false;
  Clock::time_point now = CallRecord::kUntimed;  // read once, if a call is timed
  while (CallRecord* r = open()) {
    if (r->seq <= fromSeq) break;
    open_.pop_back();
    popped = true;
    finish(*r, status, stats, waitStart, &now);
    if (trace_) writeEvent(*r, status == scSuccess ? std::string() : error);
    // Timeouts only: the peers of a rank that timed out fail with its
    // message (scRemoteError), and mismatches name their cause already.
    dumpIt = dumpIt || status == scTimeout;
  }
  // Back in the call these were nested in (DSOP's allreduce), which they
  // took the peer set over from: its listed peers go back in (the first
  // ones are scanned, not looked up in the set).
  if (CallRecord* outer = open(); popped && outer && outer->nPeers > CallRecord::kFirstPeers)
    for (int p : outer->peers()) firstSight(outer->seq, p);
  if (dumpIt && keep_) {
    const std::string d = dump(waitStart);
    std::fprintf(stderr, "sparcoll: rank %d of %d (%s communicator #%llu, pid %d): %s; its last calls:\n%s", rank_,
                 size_, transport_, static_cast<unsigned long long>(id_), int(getpid()), error.c_str(), d.c_str());
    std::fflush(stderr);
  }
}

std::string Recorder::dump(int64_t waitStart) const {
  std::string out;
  const size_t n = std::min(used_, keep_);
  for (size_t i = 0; i < n; ++i) {
    const CallRecord& r = ring_[(next_ + ring_.size() - n + i) % ring_.size()];
    out += cat("  #", r.seq, " ", r.sig.text(), ": ");
    if (r.durUs == -1) {
      const Clock::time_point t0 = r.t0 != CallRecord::kUntimed ? r.t0
                                   : waitStart > 0              ? Clock::time_point(Clock::duration(waitStart))
                                                                : CallRecord::kUntimed;
      out += t0 == CallRecord::kUntimed ? std::string("in flight, no long wait yet")
                                        : cat("in flight for ", durText(usOf(Clock::now() - t0)));
    } else {
      // Traffic is counted when a round is posted: a failed call's may not all have moved.
      out += cat(r.status == scSuccess ? "ok" : scGetErrorString(r.status),
                 r.durUs == CallRecord::kNoLongWait ? std::string(" without a long wait") : " in " + durText(r.durUs),
                 r.status == scSuccess ? ", sent " : ", posted: sent ", bytesText(r.bytesSent), ", received ",
                 bytesText(r.bytesRecv));
    }
    out += cat(", ", r.rounds, r.rounds == 1 ? " round" : " rounds");
    if (r.nPeers) {
      out += ", peers";
      for (int p : r.peers()) out += cat(" ", p);
      if (r.morePeers) out += cat(" and ", r.morePeers, " more");
    }
    if (r.phase)
      out += r.steps ? cat(", last at ", r.phase, " step ", r.step + 1, "/", r.steps) : cat(", last at ", r.phase);
    out += "\n";
  }
  return out;
}

void Recorder::writeEvent(const CallRecord& r, const std::string& error) {
  nlohmann::json args = {{"call", r.seq},
                         {"signature", r.sig.text()},
                         {"algorithm", r.sig.algo ? r.sig.algo : ""},
                         {"bytes_sent", r.bytesSent},
                         {"bytes_received", r.bytesRecv},
                         {"rounds", r.rounds},
                         {"peers", r.peers()},
                         {"status", scGetErrorString(r.status)}};
  if (r.sig.count != CallSig::kNoCount) args["count"] = r.sig.count;
  if (r.morePeers) args["more_peers"] = r.morePeers;
  if (!error.empty()) args["error"] = error;
  const double startUs = wallAtSteadyZeroUs_ + usOf(r.t0.time_since_epoch());  // t0 is precise with a trace
  const nlohmann::json ev = {{"name", r.sig.name}, {"cat", "collective"}, {"ph", "X"},  {"ts", startUs},
                             {"dur", r.durUs},     {"pid", rank_},        {"tid", id_}, {"args", args}};
  std::fprintf(trace_, ",\n%s", ev.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  std::fflush(trace_);
}

}  // namespace sc
