// A round's messages through the shared-memory queues (shm.h): sends'
// fragments into their queues, receives' out of theirs, and what a failed or
// timed-out round says of them.
#include <algorithm>
#include <string>

#include "core/error.h"
#include "transport/mpi/shm.h"

namespace sc {

ShmRound::Problem::Kind ShmRound::progress(bool* moved) {
  // A problem is kept in problem_ and its kind returned: the whole struct
  // returned by value cost every call's pass a few stores.
  auto fail = [&](Problem p) {
    problem_ = p;
    return p.kind;
  };
  if (done()) return Problem::None;
  const uint64_t pass = q_->nextPass();
  // Sends in posted order, a fragment per free slot; a full queue holds back
  // the rest of the message and the later sends to its peer.
  for (Msg& m : sends_) {
    if (m.done) continue;
    if (m.posted) {  // read by its receiver yet? (it holds back no other send)
      if (q_->taken(m.peer, m.index)) {
        m.done = true;
        ++finished_;
        *moved = true;
      }
      continue;
    }
    if (!q_->firstInPass(q_->sendStamps_, m.peer, pass)) continue;
    if (m.bytes > q_->maxBytes()) {  // single copy: a descriptor, which the receiver reads from
      if (!q_->tryPost(m.peer, {seq_, sig_, uint32_t(m.bytes), kShmDescriptor, 0}, m.buf, &m.index)) continue;
      m.posted = true;
      *moved = true;
      q_->sendStamps_[size_t(m.peer)] = 0;
      continue;
    }
    for (;;) {
      const size_t n = std::min(kShmBytes, m.bytes - m.moved);
      if (!q_->trySend(m.peer, {seq_, sig_, uint32_t(m.bytes), uint32_t(m.moved), 0}, m.buf + m.moved, n)) break;
      m.moved += n;
      *moved = true;
      if (m.moved == m.bytes) {
        m.done = true;
        ++finished_;
        q_->sendStamps_[size_t(m.peer)] = 0;  // the next send to this peer may go in this pass too
        break;
      }
    }
  }
  // Receives: the first one still waiting from each peer takes the head of
  // that peer's queue, fragment by fragment (then the next one may, in the
  // same pass).
  for (Msg& m : recvs_) {
    if (m.done || !q_->firstInPass(q_->recvStamps_, m.peer, pass)) continue;
    for (const ShmHeader* h; (h = q_->peek(m.peer)) != nullptr;) {
      if (h->seq < seq_) {  // a leftover of an earlier, mismatched call
        q_->pop(m.peer, h);
        *moved = true;
        continue;
      }
      if (h->seq != seq_ || h->sig != sig_) return fail({Problem::OtherCall, &m, h->seq, h->bytes});
      if (h->offset == kShmDescriptor) {
        if (h->bytes != m.bytes || m.moved) return fail({Problem::Size, &m, h->seq, h->bytes});
        ShmDescriptor* d = ShmQueues::descriptorOf(h);
        auto revoked = [&] { return d->state.load(std::memory_order_acquire) == ShmDescriptor::kRevoked; };
        if (revoked()) return fail({Problem::Revoked, &m, h->seq, h->bytes});
        // A read that fails on a revoked descriptor found the buffer gone.
        if (const int err = q_->readFrom(m.peer, d, m.buf, m.bytes))
          return fail({revoked() ? Problem::Revoked : Problem::Unreadable, &m, h->seq, h->bytes, err});
        // Claimed after reading: a sender that revoked first may have freed
        // or reused the buffer while it was read.
        uint32_t posted = ShmDescriptor::kPosted;
        if (!d->state.compare_exchange_strong(posted, ShmDescriptor::kTaken, std::memory_order_acq_rel))
          return fail({Problem::Revoked, &m, h->seq, h->bytes});
        q_->pop(m.peer, h);
        m.moved = m.bytes;
        m.done = true;
        ++finished_;
        *moved = true;
        q_->recvStamps_[size_t(m.peer)] = 0;
        break;
      }
      if (h->bytes != m.bytes || h->offset != m.moved) return fail({Problem::Size, &m, h->seq, h->bytes});
      const size_t n = std::min(kShmBytes, m.bytes - m.moved);
      q_->copyOut(m.peer, h, m.buf + m.moved, n);
      q_->pop(m.peer, h);
      m.moved += n;
      *moved = true;
      if (m.moved == m.bytes) {
        m.done = true;
        ++finished_;
        q_->recvStamps_[size_t(m.peer)] = 0;
        break;
      }
    }
  }
  return Problem::None;
}

void ShmRound::revoke() {
  for (Msg& m : sends_)
    if (m.posted && !m.done) {
      q_->revoke(m.peer, m.index);
      m.done = true;
      ++finished_;
    }
}

long ShmRound::strayFrom(int peer) const {
  if (!q_ || !q_->reaches(peer)) return -1;
  for (const Msg& m : recvs_)
    if (m.peer == peer && !m.done) return -1;  // progress() takes (or judges) it
  const ShmHeader* h = q_->peek(peer);
  return h && h->seq == seq_ ? long(h->bytes) : -1;
}

void ShmRound::describe(const std::function<void(const std::string&)>& add) const {
  auto part = [](const Msg& m) { return m.moved ? " (" + bytesText(m.moved) + " of it moved)" : std::string(); };
  for (const Msg& m : recvs_)
    if (!m.done) add("waiting for " + bytesText(m.bytes) + " from rank " + std::to_string(m.peer) + part(m));
  for (const Msg& m : sends_)
    if (m.posted && !m.done)
      add("waiting for rank " + std::to_string(m.peer) + " to read " + bytesText(m.bytes) + " (single copy)");
    else if (!m.done)
      add("waiting for rank " + std::to_string(m.peer) + " to take " + bytesText(m.bytes) + part(m) +
          " (its shared-memory queue from this rank is full)");
}

}  // namespace sc
