// Timing shared by the tools: a timed loop of calls combined over ranks (with
// the communicator's traffic counters), and the time of one call on the host
// clock or on a CUDA stream.
#pragma once

#include <functional>
#include <vector>

#include "common/group.h"
#include "common/rank.h"

namespace scbench {

// Seconds on the steady clock.
double now();

// The median of v: its middle value, the mean of the two middle ones for an
// even count, 0 for none.
double median(std::vector<double> v);

// One timed loop, combined over ranks. Times are per call in microseconds:
// wall until rs's stream is drained, cpu until the last call returned.
// Traffic is per call, from scCommGetStats (mean and max over ranks), and so
// is the calls' structure (max over ranks): rounds, handshakes with peers'
// hosts, host waits for the device, CUDA events created, messages reduced
// as they arrived (scStats_t.msgsReduced).
struct Timing {
  double timeUs = 0, cpuTimeUs = 0;
  double sentAvg = 0, sentMax = 0, msgsMax = 0, msgsReducedMax = 0;
  double roundsMax = 0, rendezvousMax = 0, hostSyncsMax = 0, eventsMax = 0;
};

// A barrier, then `calls` calls of `call`, timed together; the per-rank
// times are combined with `how`. Collective: every rank calls it.
Timing timeCalls(Group& g, RankState& rs, long calls, Combine how, const std::function<void()>& call);

// Seconds of f() on `device`: CUDA events around it on `stream` (nullptr: the
// default stream), so the time is the device's and excludes the launch; on
// the host the steady clock (f must be synchronous).
double secondsOf(bool device, void* stream, const std::function<void()>& f);

}  // namespace scbench
