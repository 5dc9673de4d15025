// Shared-memory queues between the ranks of one node, for the MPI transport's
// small messages (at most kShmBytes).
//
// Every ordered pair of ranks on a node (j -> i) has a queue of kShmSlots
// slots in memory that both map: the sender copies a message into the next
// free slot and publishes it; the receiver copies it out and frees the slot.
// That is one copy in, one copy out and two cache-line hand-overs per
// message, with no matching and no request: on a node, MPI's own path
// (Open MPI's pml and shared-memory btl) costs several times that for small
// messages, and more again when ranks outnumber cores.
//
// Each slot carries the call's sequence number, the hash of its signature
// and the message's size, so a receiver tells a message of another call, or
// of another size, from the one it expects, and names the sender.
//
// The memory is POSIX shared memory (shm_open), one segment per rank holding
// the queues into it, unlinked as soon as every rank of the node has mapped
// it: nothing is left behind, even when a process dies, and releasing it
// needs no peer (unlike MPI_Win_free, which is collective).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sc {

constexpr size_t kShmBytes = 4096;  // the largest message a queue carries
constexpr uint64_t kShmSlots = 4;   // slots per queue

// What a slot says of its message.
struct ShmHeader {
  uint64_t seq;    // the call's sequence number
  uint32_t sig;    // the call's signature hash
  uint32_t bytes;  // the message's size
};

class ShmQueues {
 public:
  // Collective over comm. Null where no rank of comm shares a node with
  // another, where SPARCOLL_MPI_SHM=0 on any rank, or where shared memory
  // could not be set up on any rank (the ranks then all use MPI alone).
  static std::unique_ptr<ShmQueues> create(MPI_Comm comm, uint64_t id);
  ~ShmQueues();
  ShmQueues(const ShmQueues&) = delete;
  ShmQueues& operator=(const ShmQueues&) = delete;

  // Whether messages to and from rank q (of comm) go through a queue: q is
  // another rank of this node.
  bool reaches(int q) const { return q >= 0 && size_t(q) < slotOf_.size() && slotOf_[size_t(q)] >= 0; }

  // Sender side: copies the message into the queue to `to`; false when that
  // queue is full (try again later).
  bool trySend(int to, const ShmHeader& h, const void* data);
  // Receiver side: the oldest message from `from` not yet taken, or null;
  // its bytes follow the header. pop() frees it.
  const ShmHeader* peek(int from) const;
  void pop(int from);

  // Idle passes of a wait (nothing moved) before it yields the core: one
  // where ranks outnumber cores or MPI is told to yield when idle, else a
  // spin of 64.
  unsigned idlePassesBeforeYield() const { return yieldWhenIdle_ ? 1 : 64; }

 private:
  struct Queue;
  ShmQueues() = default;
  // Per rank of comm, for a round's pass over its messages: which peers a
  // pass has seen already (a stamp per pass, so nothing is cleared).
  bool firstInPass(std::vector<uint64_t>& stamps, int peer, uint64_t pass) const {
    if (stamps.size() < slotOf_.size()) stamps.assign(slotOf_.size(), 0);
    if (stamps[size_t(peer)] == pass) return false;
    stamps[size_t(peer)] = pass;
    return true;
  }
  uint64_t nextPass() { return ++pass_; }
  Queue* queueInto(int receiver, int sender) const;

  std::vector<int> slotOf_;      // per rank of comm: its index on this node, -1 elsewhere or itself
  std::vector<char*> segment_;   // per index on this node: that rank's segment, mapped here
  size_t segmentBytes_ = 0;
  int mine_ = -1;                // this rank's index on the node
  uint64_t pass_ = 0;
  bool yieldWhenIdle_ = false;
  friend class ShmRound;
  std::vector<uint64_t> sendStamps_, recvStamps_;
};

// A round's messages through the queues, in posted order. Messages between
// a pair go in the order posted, as MPI's do.
class ShmRound {
 public:
  struct Msg {
    int peer;
    char* buf;
    size_t bytes;
    bool done;
  };
  // What progress() found wrong: a message of this call of another size, or
  // a message of another call (a later one, or this call number with
  // another signature), at the head of a receive's queue.
  struct Problem {
    enum Kind { None, Size, OtherCall } kind = None;
    const Msg* m = nullptr;
    uint64_t theirSeq = 0;
    uint32_t theirBytes = 0;
  };

  ShmRound(ShmQueues* q, uint64_t seq, uint32_t sig, std::vector<Msg>& sends, std::vector<Msg>& recvs)
      : q_(q), seq_(seq), sig_(sig), sends_(sends), recvs_(recvs) {
    sends_.clear();
    recvs_.clear();
  }
  bool takes(int peer, size_t bytes) const { return q_ && bytes <= kShmBytes && q_->reaches(peer); }
  void send(int peer, const void* buf, size_t bytes) { sends_.push_back({peer, static_cast<char*>(const_cast<void*>(buf)), bytes, false}); }
  void recv(int peer, void* buf, size_t bytes) { recvs_.push_back({peer, static_cast<char*>(buf), bytes, false}); }

  // Moves what it can: sends into free slots, receives out of their queues
  // (a queue's leftovers of earlier calls, from a mismatched call, dropped).
  // Sets *moved when anything moved; stops at the first problem.
  Problem progress(bool* moved);
  bool done() const { return finished_ == sends_.size() + recvs_.size(); }
  // Whether this call's message from peer waits in its queue while no
  // receive of this round takes it there (the peer sent a small message
  // where this rank expects a large one): its size, or -1.
  long strayFrom(int peer) const;
  // Each message still to go, for timeouts: "waiting for 8 B from rank 3".
  void describe(const std::function<void(const std::string&)>& add) const;
  const std::vector<Msg>& recvs() const { return recvs_; }
  unsigned idlePassesBeforeYield() const { return q_ ? q_->idlePassesBeforeYield() : 1; }

 private:
  ShmQueues* q_;
  uint64_t seq_;
  uint32_t sig_;
  std::vector<Msg>& sends_;
  std::vector<Msg>& recvs_;
  size_t finished_ = 0;
};

}  // namespace sc
