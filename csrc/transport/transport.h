// The transport contract: a round of point-to-point sends and receives that are
// posted together and completed together — the shape of
// ncclGroupStart / ncclSend / ncclRecv / ncclGroupEnd. Schedules see nothing
// else of the network, so one schedule runs on MPI, NCCL and in-process ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "sparcoll/sparcoll.h"

namespace sc {

// Where a communicator's buffers live.
enum class Mem { Host, Device };

class Backend;
class Ctx;

// A receive whose message is reduced on arrival instead of stored: buf =
// message op own (own op message when ownFirst), elementwise over
// bytes / dtypeSize(dt) elements, by `be` on the round's stream. No staging
// buffer and no second pass over the data. Set only where the transport
// says it can (Transport::fusesReduce); be == nullptr: a plain receive.
struct FusedReduce {
  Backend* be = nullptr;
  const void* own = nullptr;
  scDataType_t dt = scFloat32;
  scRedOp_t op = scSum;
  bool ownFirst = false;
};

struct P2POp {
  enum Kind { Send, Recv } kind;
  int peer;
  void* buf;  // const for sends; kept non-const so one struct serves both
  size_t bytes;
  FusedReduce fuse{};  // receives only
};

// A posted round. wait() completes it: for host transports the data has
// arrived / left the buffers; for device transports the transfers are ordered
// on the stream given to post(). Destroying a round that was not waited for
// (error path) cancels or drains it so no buffer is touched afterwards.
class Round {
 public:
  virtual ~Round() = default;
  virtual void wait(const Deadline& dl) = 0;
};

// A call's schedule as data (Transport::plans): what one rank's schedule
// posted, waited for and computed, in its order. Ctx records it as the
// schedule runs, enqueueing nothing; the transport then runs every rank's
// plan at once. A dense schedule's steps never depend on the data, so the
// record is the schedule itself. Kept by the communicator and cleared per
// call, so a run of calls reuses its capacity.
struct CallPlan {
  enum Kind { Post, Wait, Reduce, Copy, Divide };
  struct Step {
    Kind kind;
    size_t first = 0, count = 0;  // Post: its ops in `ops`; Wait: the post it completes (its index among posts)
    void* dst = nullptr;          // Reduce: dst = a op b; Copy: bytes (count) from a; Divide: dst /= divisor
    const void* a = nullptr;
    const void* b = nullptr;
    scDataType_t dt = scFloat32;
    scRedOp_t op = scSum;
    int divisor = 1;
    const char* phase = nullptr;  // Ctx::phase at the step, for errors
    int step = 0, steps = 0;
  };
  std::vector<Step> steps;
  std::vector<P2POp> ops;
  size_t posts = 0;
  void clear() {
    steps.clear();
    ops.clear();
    posts = 0;
  }
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  virtual Mem mem() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Posts every op of the round. Messages between a pair of ranks match in the
  // order they were posted; rounds are waited for in the order they were posted.
  // Every collective call starts with its sequence number (scComm::seq) and
  // the hash of its signature (core/call.h); a transport that can tag
  // messages keeps calls apart with them: a message of another call is never
  // taken, and is reported as scRemoteError where the transport can see it.
  void beginCall(uint64_t seq, uint32_t sigHash) {
    seq_ = seq;
    sig_ = sigHash;
  }
  uint64_t callSeq() const { return seq_; }

  // The communicator's counters (scStats_t), which the transport adds its
  // own structure to: handshakes with peers' hosts and CUDA events created.
  // Bound once by the communicator that owns the transport.
  void bindStats(scStats_t* stats) { stats_ = stats; }
  void countRendezvous(uint64_t n = 1) {
    if (stats_) stats_->rendezvous += n;
  }
  void countEventCreated() {
    if (stats_) ++stats_->eventsCreated;
  }

  // Whether receives from `peer` may carry a FusedReduce: the transport
  // reads the sender's buffer itself (in-process ranks on host memory, or on
  // one device), so it can reduce straight out of it. The buffer a fused
  // receive writes must not overlap what its round sends.
  virtual bool fusesReduce(int /*peer*/) const { return false; }

  // Whether the dense schedules run as plans (CallPlan): recorded by every
  // rank, then run by runPlan, which meets the other ranks once per call
  // instead of at every message. The local transport on device buffers:
  // there one thread can enqueue every rank's work in an order that keeps
  // each stream's waits behind the records they wait for.
  virtual bool plans() const { return false; }
  // Runs this rank's part of a planned call (`plan`, recorded by `c`, whose
  // backend, stream and deadline it is); returns once every rank's work is
  // enqueued, or throws the same error on every rank that met.
  virtual void runPlan(const CallPlan& /*plan*/, const Ctx& /*c*/) {
    SC_THROW(scInternalError, name(), " transport runs no planned calls");
  }

  // Null where there is nothing to wait for (a transport may return it for
  // a round without messages).
  virtual std::unique_ptr<Round> post(const std::vector<P2POp>& ops, void* stream, const Deadline& dl) = 0;
  virtual void barrier(void* stream, const Deadline& dl) = 0;
  // Makes later operations fail fast; releases what can be released. Never throws.
  virtual void abort() noexcept = 0;
  // Tells the peers, best effort and without blocking, that this rank aborted
  // the communicator and why: a peer waiting on this rank then fails with
  // scRemoteError naming it within a second, instead of at its deadline.
  // Called before abort(). Transports that cannot tell ignore it.
  virtual void notifyAbort(const std::string& /*why*/) noexcept {}
  // The transport of a new communicator of this one's ranks less `exclude`
  // (sorted, distinct, in range, without this rank), renumbered in rank order:
  // collective over the remaining ranks only, so a dead rank takes no part.
  // Allowed after abort(): that is what it is for. Transports that cannot
  // throw scInvalidUsage saying why.
  virtual std::unique_ptr<Transport> shrink(const std::vector<int>& /*exclude*/, const Deadline& /*dl*/) {
    SC_THROW(scInvalidUsage, "the ", name(), " transport cannot shrink a communicator");
  }

  // Baseline collectives of the underlying library (MPI_Allreduce, ncclAllReduce...).
  // Count/types are already validated. avg is handled by the caller when the
  // library lacks it (nativeHasAvg()).
  virtual void nativeAllReduce(const void* send, void* recv, size_t count, scDataType_t dt, scRedOp_t op, void* stream,
                               const Deadline& dl) = 0;
  virtual void nativeReduceScatter(const void* send, void* recv, size_t recvcount, scDataType_t dt, scRedOp_t op,
                                   void* stream, const Deadline& dl) = 0;
  virtual void nativeAllGather(const void* send, void* recv, size_t sendcount, scDataType_t dt, void* stream,
                               const Deadline& dl) = 0;
  // In place: every rank's buf becomes root's.
  virtual void nativeBroadcast(void* buf, size_t count, scDataType_t dt, int root, void* stream,
                               const Deadline& dl) = 0;
  virtual bool nativeHasAvg() const { return false; }

  // MPI transports: the MPI_Comm under them (as an MPI_Comm*), and a wait,
  // bounded by the deadline, for a nonblocking collective's MPI_Request (on
  // that communicator or one derived from it), so that other areas can call
  // MPI's own collectives (the neighbourhood collectives' native). NULL and
  // an error elsewhere.
  virtual const void* mpiComm() const { return nullptr; }
  virtual void waitMpi(void* /*request*/, const Deadline& /*dl*/) {
    SC_THROW(scInternalError, name(), " transport has no MPI requests to wait for");
  }

 protected:
  uint64_t seq_ = 0;
  uint32_t sig_ = 0;
  scStats_t* stats_ = nullptr;
};

}  // namespace sc
