// The MPI transport's waits: a deadline-bounded test loop (MPI_Wait could
// block forever on a rank that never comes), the abort notices a wait looks
// for, and the wait for a nonblocking collective's request.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "core/deadline.h"

namespace sc {

// Polls until done() (which also moves the round forward), hot for 100 ms
// (each test moves message fragments forward), then with short sleeps so that
// a rank left waiting long (a slow or absent peer) does not hold a core for
// nothing. While hot it never yields by itself: under oversubscription MPI's
// own progress yields when idle (mpirun sets mpi_yield_when_idle), as it does
// inside MPI_Wait, and a yield of ours on top hands the core away when the
// message is about to arrive (8 ranks on 2 cores, 8 B ring exchange: 3.2 us
// per call with MPI's yields alone, 6.6 us with one more every 4 polls). A
// shorter hot phase (2 ms) cost large calls 5-10 % against MPI's own blocking
// calls: a sleep of 10-50 us before the last test. The clock is read every 8
// polls (none when the first poll finds the round done): the deadline and the
// hot phase are far coarser than a poll.
// Returns false when the deadline passed first.
template <typename F>
bool pollUntil(const Deadline& dl, F done) {
  constexpr auto kHot = std::chrono::milliseconds(100);
  if (done()) return true;  // most short rounds: no clock read at all
  const auto start = Clock::now();
  bool hot = true;
  for (unsigned spins = 1;; ++spins) {
    if (done()) return true;
    if (hot && spins % 8 != 0) continue;
    const auto now = Clock::now();
    if (dl.passedAt(now)) return false;
    hot = now - start < kHot;
    if (!hot) std::this_thread::sleep_for(std::chrono::microseconds(spins % 8 == 0 ? 50 : 10));
  }
}

// Abort notices travel on a second duplicate of the caller's communicator
// (never matched by a call's messages): a few hundred bytes naming the rank and
// why it aborted. Waits look for one every few polls.
constexpr int kAbortTag = 1;
constexpr size_t kAbortMax = 1024;

// A notice starts with the communicator's id (16 hex digits and '|'): an MPI
// library may hand a message sent to a freed communicator to a later one that
// reuses its context id, and such a stale notice must not abort it.
constexpr size_t kIdChars = 17;
std::string idText(uint64_t id);

// Throws scRemoteError when a peer's abort notice for communicator `id` has
// arrived on ctl.
void checkAbortNotice(MPI_Comm ctl, uint64_t id);

// Before ctl is freed: takes the abort notices that reached this rank off the
// wire and, where this rank sent its own (`sent`), gives them until dl to be
// taken, waiting also for `quiet` seconds without a new notice (peers that
// aborted at the same time). Notices left unmatched when every rank of a
// communicator aborted made Open MPI's next MPI_Comm_dup spin in its
// context-id agreement (one run in four at P = 3). Returns whether every
// request of `sent` completed (the caller frees the others).
bool drainAbortNotices(MPI_Comm ctl, std::vector<MPI_Request>& sent, double quiet, const Deadline& dl);

// Waits for a nonblocking collective's request (MPI_Ibarrier,
// MPI_Iallreduce...) until dl; *pending stays true if it timed out (MPI
// cannot cancel it). Throws scTimeout, or scRemoteError on a peer's abort
// notice (none looked for when ctl is MPI_COMM_NULL).
void waitCollective(MPI_Request& req, const Deadline& dl, const char* what, bool* pending, MPI_Comm ctl, uint64_t id);

}  // namespace sc
