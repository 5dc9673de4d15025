// Shared-memory queues between the ranks of one node, for the MPI transport's
// small messages (at most ShmQueues::maxBytes()).
//
// Every ordered pair of ranks on a node (j -> i) has a queue of slots in
// memory that both map: the sender copies a message into the next free
// slots, a fragment of at most kShmBytes each, and publishes them;
// the receiver copies them out and frees the slots. That is one copy in, one
// copy out and, for a message of up to 32 bytes, one cache line handed over
// (shm.cpp, the segment's layout), with no matching and no request. When
// its 4 slots are taken, a sender spills fragments into a deeper part of the
// queue (128 lines), so it runs ahead of a receiver that waits for a core as
// far as MPI's eager sends do, while the slots it reuses stay in cache: on a
// node, MPI's own path (Open MPI's pml and shared-memory btl) costs several
// times that for small messages, and more again when ranks outnumber cores.
//
// How large a message the queues take: at most 16 KiB where larger messages
// go by single copy (below), which is faster above that. Without single
// copy, where the node's ranks outnumber its cores, every hand-over through
// MPI (its rendezvous, a probe) waits for the peer to get a core, and the
// queues take up to 32 KiB (above that, their second copy costs more than
// MPI's hand-overs). SPARCOLL_MPI_SHM_MAX_BYTES sets the limit.
//
// Larger messages between the ranks of a node go by single copy where the
// kernel lets one process read another's memory (Cross Memory Attach,
// process_vm_readv, as Open MPI's shared-memory btl does): the sender puts a
// descriptor of its buffer in the queue, and the receiver reads the message
// straight from the sender's memory into its own buffer, then marks the
// descriptor taken, which completes the send. No MPI matching, no probe, and
// the receive is as good as posted (the receiver looks at its queues on every
// pass). A sender whose call fails revokes its descriptors before it returns
// (a compare-and-swap on the descriptor's state, which the receiver also
// makes after reading): a receiver that loses the race discards what it read,
// so a buffer the caller frees or reuses is never delivered as data.
// SPARCOLL_MPI_CMA=0 keeps such messages on MPI.
//
// Each fragment carries the call's sequence number, the hash of its
// signature, the message's size and the fragment's offset, so a receiver
// tells a message of another call, or of another size, from the one it
// expects, and names the sender.
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

constexpr size_t kShmBytes = 4096;               // a slot's bytes: the largest fragment
constexpr uint64_t kShmSlots = 4;                // slots per queue
constexpr size_t kShmLine = 64;                  // a slot's first line: stamp, header, the first bytes
constexpr size_t kShmInline = 32;                // a fragment's bytes in its slot line
constexpr uint64_t kShmSpillLines = 128;         // spill lines per queue, at most (fewer on large nodes)
constexpr size_t kShmSpillRing = 2 * kShmBytes;  // a queue's ring for spilled fragments' other bytes

// What a slot says of its fragment.
struct ShmHeader {
  uint64_t seq;     // the call's sequence number
  uint32_t sig;     // the call's signature hash
  uint32_t bytes;   // the whole message's size
  uint32_t offset;  // where the fragment starts in it; kShmDescriptor: the slot holds a ShmDescriptor
  uint32_t at;      // a spilled fragment: where its bytes past the line lie in the spill ring
};
constexpr uint32_t kShmDescriptor = UINT32_MAX;

// A single-copy message: where it is in the sender's memory, and whether the
// receiver has read it (kTaken) or the sender has withdrawn it (kRevoked).
struct ShmDescriptor {
  enum : uint32_t { kPosted = 1, kTaken = 2, kRevoked = 3 };
  uint64_t addr;
  std::atomic<uint32_t> state;
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
  // The largest message the queues take (the same on every rank of a node).
  size_t maxBytes() const { return maxBytes_; }
  // Whether larger messages go by single copy (the same on every rank).
  bool singleCopy() const { return singleCopy_; }

  // Sender side: copies a fragment (at most kShmBytes, from data) into the
  // queue to `to`; false when that queue is full (try again later).
  bool trySend(int to, const ShmHeader& h, const void* data, size_t bytes);
  // Receiver side: the oldest fragment from `from` not yet taken, or null.
  // copyOut copies the first `bytes` of h, what peek returned, out;
  // descriptorOf(h): a single-copy message's descriptor. pop() frees it.
  const ShmHeader* peek(int from) const;
  void copyOut(int from, const ShmHeader* h, void* dst, size_t bytes) const;
  static ShmDescriptor* descriptorOf(const ShmHeader* h);
  void pop(int from, const ShmHeader* h);

  // Single copy, sender side: puts a descriptor of buf in the queue to `to`
  // (false when full); *index: its place in the queue. taken: whether the
  // receiver has read it. revoke: withdraws it unless the receiver has read
  // it already; afterwards the receiver never delivers it.
  bool tryPost(int to, const ShmHeader& h, const void* buf, uint64_t* index);
  bool taken(int to, uint64_t index) const;
  void revoke(int to, uint64_t index);
  // Receiver side: reads the message a descriptor at the head of from's queue
  // names into buf; 0, or the errno of the read. The caller then claims the
  // descriptor (what it read is the message only if the claim succeeds).
  int readFrom(int from, const ShmDescriptor* d, void* buf, size_t bytes) const;

  // Idle passes of a wait (nothing moved) before it yields the core: one
  // where ranks outnumber cores or MPI is told to yield when idle, else a
  // spin of 64.
  unsigned idlePassesBeforeYield() const { return yieldWhenIdle_ ? 1 : 64; }

 private:
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
  // In receiver's segment (indices on this node): the count of fragments
  // from sender taken, fragment n's slot line and page, spill line k, and
  // the spill ring.
  std::atomic<uint64_t>& headOf(int receiver, int sender) const;
  char* line(int receiver, int sender, uint64_t n) const;
  char* bulk(int receiver, int sender, uint64_t n) const;
  char* spillLine(int receiver, int sender, uint64_t k) const;
  char* spillRing(int receiver, int sender) const;
  static std::atomic<uint64_t>& stampOf(char* line) { return *reinterpret_cast<std::atomic<uint64_t>*>(line); }
  // Where a slot line holds the fragment's first bytes, or a descriptor.
  static char* inlineOf(char* line) { return line + kShmLine - kShmInline; }
  // Sender side (i: the receiver's index on this node): whether fragment n's
  // slot is free (the receiver took the slot's last fragment); else a spill
  // line for fragment n with `ringBytes` of the spill ring reserved (*at:
  // where), or null when the spill is full too. publish() hands it over.
  bool slotFree(int i, uint64_t n);
  char* spill(int i, uint64_t n, size_t ringBytes, uint32_t* at);
  void publish(int i, char* line, uint64_t n);
  // Receiver side: the line of the next fragment from i, in its slot or
  // spilled (*spilled), once published; else null.
  char* arrived(int i, bool* spilled) const;
  static char* lineOf(const ShmHeader* h);
  bool spilled(int i, const ShmHeader* h) const;  // h, peek()'s from queue i, is in a spill line
  // A single-copy send's descriptor, or null once the receiver popped it.
  ShmDescriptor* unpopped(int to, uint64_t index) const;

  std::vector<int> slotOf_;     // per rank of comm: its index on this node, -1 elsewhere or itself
  std::vector<char*> segment_;  // per index on this node: that rank's segment, mapped here
  size_t segmentBytes_ = 0;
  // Where a segment's slot lines, spill lines, pages and spill rings start.
  size_t linesAt_ = 0, spillAt_ = 0, bulkAt_ = 0, ringAt_ = 0;
  uint64_t spillLines_ = 0;  // spill lines per queue (a power of two)
  size_t maxBytes_ = kShmBytes;
  bool singleCopy_ = false;
  std::vector<int> pids_;  // per index on this node: that rank's process
  // Per index on this node, this rank's own counts (never shared): fragments
  // sent into its queue, that queue's head when last read, fragments taken
  // from its queue into this rank.
  std::vector<uint64_t> sent_, headSeen_, taken_;
  // The same for the spill: the sender's fragment number + 1 last put in
  // each slot (0: none; index * kShmSlots + slot); spill lines written, and
  // known taken; per spill line (index * spillLines_ + k % spillLines_) its
  // fragment's number and where the spill ring is free up to once it is
  // taken; the spill ring's bytes reserved so far (a running count). The
  // receiver's spill lines taken.
  std::vector<uint64_t> lastIn_, spillSent_, spillDone_, spillFrag_, ringEnd_, ringSent_, spillTaken_;
  int mine_ = -1;  // this rank's index on the node
  uint64_t pass_ = 0;
  bool yieldWhenIdle_ = false;
  friend class ShmRound;
  std::vector<uint64_t> sendStamps_, recvStamps_;
};

// A round's messages through the queues, in posted order. Messages between
// a pair go in the order posted, as MPI's do, a message's fragments one
// after another.
class ShmRound {
 public:
  struct Msg {
    int peer;
    char* buf;
    size_t bytes;
    bool done;
    size_t moved;         // bytes sent or received so far
    bool posted = false;  // a single-copy send whose descriptor is in the queue, at index
    uint64_t index = 0;
  };
  // What progress() found wrong: a message of this call of another size (or
  // a fragment out of its place), or a message of another call (a later one,
  // or this call number with another signature), at the head of a receive's
  // queue.
  // Single copy: the sender's memory could not be read (errno in err), or
  // the sender revoked the message (its call failed).
  struct Problem {
    enum Kind { None, Size, OtherCall, Unreadable, Revoked } kind = None;
    const Msg* m = nullptr;
    uint64_t theirSeq = 0;
    uint32_t theirBytes = 0;
    int err = 0;
  };

  ShmRound(ShmQueues* q, uint64_t seq, uint32_t sig, std::vector<Msg>& sends, std::vector<Msg>& recvs)
      : q_(q), seq_(seq), sig_(sig), sends_(sends), recvs_(recvs) {
    sends_.clear();
    recvs_.clear();
  }
  bool takes(int peer, size_t bytes) const {
    return q_ && (bytes <= q_->maxBytes() || (q_->singleCopy() && bytes < kShmDescriptor)) && q_->reaches(peer);
  }
  void send(int peer, const void* buf, size_t bytes) {
    sends_.push_back({peer, static_cast<char*>(const_cast<void*>(buf)), bytes, false, 0});
  }
  void recv(int peer, void* buf, size_t bytes) { recvs_.push_back({peer, static_cast<char*>(buf), bytes, false, 0}); }

  // Moves what it can: sends' fragments into free slots, receives' out of
  // their queues (a queue's leftovers of earlier calls, from a mismatched
  // call, dropped).
  // Sets *moved when anything moved; stops at the first problem, whose kind
  // it returns (problem() has the rest; None: no problem).
  Problem::Kind progress(bool* moved);
  const Problem& problem() const { return problem_; }
  bool done() const { return finished_ == sends_.size() + recvs_.size(); }
  // The error path: withdraws every single-copy send not yet read, so that
  // the caller may free its buffers once the round is gone.
  void revoke();
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
  Problem problem_;  // progress()'s last problem
};

}  // namespace sc
