// The transport contract: a round of point-to-point sends and receives that are
// posted together and completed together — the shape of
// ncclGroupStart / ncclSend / ncclRecv / ncclGroupEnd. Schedules see nothing
// else of the network, so one schedule runs on MPI, NCCL and in-process ranks.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/deadline.h"
#include "sparcoll/sparcoll.h"

namespace sc {

// Where a communicator's buffers live.
enum class Mem { Host, Device };

struct P2POp {
  enum Kind { Send, Recv } kind;
  int peer;
  void* buf;  // const for sends; kept non-const so one struct serves both
  size_t bytes;
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

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  virtual Mem mem() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Posts every op of the round. Messages between a pair of ranks match in the
  // order they were posted; rounds are waited for in the order they were posted.
  virtual std::unique_ptr<Round> post(const std::vector<P2POp>& ops, void* stream,
                                      const Deadline& dl) = 0;
  virtual void barrier(void* stream, const Deadline& dl) = 0;
  // Makes later operations fail fast; releases what can be released. Never throws.
  virtual void abort() noexcept = 0;

  // Baseline collectives of the underlying library (MPI_Allreduce, ncclAllReduce...).
  // Count/types are already validated. avg is handled by the caller when the
  // library lacks it (nativeHasAvg()).
  virtual void nativeAllReduce(const void* send, void* recv, size_t count, scDataType_t dt,
                               scRedOp_t op, void* stream, const Deadline& dl) = 0;
  virtual void nativeReduceScatter(const void* send, void* recv, size_t recvcount, scDataType_t dt,
                                   scRedOp_t op, void* stream, const Deadline& dl) = 0;
  virtual void nativeAllGather(const void* send, void* recv, size_t sendcount, scDataType_t dt,
                               void* stream, const Deadline& dl) = 0;
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
};

}  // namespace sc
