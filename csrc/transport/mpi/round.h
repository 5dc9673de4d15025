// One round of the MPI transport: its sends, its receives and the wait for
// them, bounded by a deadline (MPI_Waitall could block forever on a rank that
// never comes).
//
// Messages of at most ShmQueues::maxBytes() between ranks of one node go through
// shared-memory queues (shm.h) where the transport has them. The others,
// and all messages where it has none, go through MPI. Receives from MPI come
// in two kinds, by the size of the message:
// - Small messages (at most kStagedBytes) are received into a staging slot of
//   kStagedBytes, posted at once, and copied out once every request of the
//   round is done. No message that can match a slot is larger than it, so no
//   receive is ever truncated, and the wait is one MPI_Testall per poll, as in
//   MPI's own neighbour and point-to-point collectives.
// - Larger ones are matched by probes (MPI_Improbe + MPI_Imrecv): a receive is
//   only posted once the message's size is known to be the expected one, so a
//   peer that sends more (ranks that made different calls) never truncates a
//   receive. That keeps clear of Open MPI's shared-memory single-copy path,
//   which corrupts the heap on truncated receives.
// The two kinds travel under different tags, so a message never matches a
// receive of the other kind; every size mismatch is scRemoteError naming the
// peer.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "transport/mpi/shm.h"
#include "transport/transport.h"

namespace sc {

// A call's tags: where MPI offers 31-bit tags (Open MPI, MPICH), the low 20
// bits are the call's sequence number, bit 20 tells small messages (staged)
// from large ones, and the high 10 bits hold a hash of the call's signature,
// so a message can be told to be a different call's; elsewhere the sequence
// number alone, and every receive is probe-matched.
struct TagCode {
  bool packed = false;
  uint64_t span = 32768;
  static constexpr int kSeqBits = 20;
  static constexpr uint32_t kSeqMask = (1u << kSeqBits) - 1;
  int tag(uint64_t seq, uint32_t sig, bool staged) const {
    if (!packed) return int(seq % span);
    return int((uint32_t(seq) & kSeqMask) | (uint32_t(staged) << kSeqBits) | ((sig & 0x3ffu) << (kSeqBits + 1)));
  }
  // How far a message's call is ahead of (> 0) or behind (< 0) call `seq`.
  int64_t callsAhead(int tag, uint64_t seq) const {
    const uint32_t d = (uint32_t(tag) - uint32_t(seq)) & kSeqMask;
    return d >= (kSeqMask + 1) / 2 ? int64_t(d) - int64_t(kSeqMask + 1) : int64_t(d);
  }
};

// What a round needs of its transport.
struct MpiLink {
  MPI_Comm comm = MPI_COMM_NULL;  // the call's messages
  MPI_Comm ctl = MPI_COMM_NULL;   // abort notices
  uint64_t id = 0;                // the communicator's, in abort notices
  TagCode code;
  int rank = 0;
  ShmQueues* shm = nullptr;  // small messages to and from this node's ranks (shm.h); null: MPI alone
};

constexpr size_t kStagedBytes = 4096;

struct MpiMsg {
  int peer;
  char* buf;
  size_t bytes;  // this chunk's
  size_t total;  // the whole message's, for messages
};

// A round's buffers, lent by the transport so that a round in the steady
// state allocates nothing but itself.
struct MpiRoundState {
  std::vector<char> stage;
  std::vector<MPI_Request> reqs;
  std::vector<MpiMsg> msgs, probing;
  std::vector<MPI_Status> st;
  std::vector<ShmRound::Msg> shmSends, shmRecvs;
};

// Posts ops (messages over 1 GiB in chunks, as MPI counts are int). spare is
// the transport's round state: a round borrows it (or makes its own while
// another round holds it) and hands it back once none of its requests can
// still write to it; link and spare must outlive the round (the transport's).
std::unique_ptr<Round> postMpiRound(const MpiLink& link, uint64_t seq, uint32_t sig, const std::vector<P2POp>& ops,
                                    std::unique_ptr<MpiRoundState>* spare);

}  // namespace sc
