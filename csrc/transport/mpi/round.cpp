#include "transport/mpi/round.h"

#include <algorithm>
#include <sched.h>

#include <cstring>
#include <mutex>

#include "core/error.h"
#include "core/hot_tls.h"
#include "transport/mpi/util.h"
#include "transport/mpi/wait.h"

namespace sc {
namespace {

constexpr size_t kMaxChunk = size_t(1) << 30;

// A thread's spare round memory (operator new below). The pointer itself
// is trivially destructible, so that reading it needs no guard (which
// would be a __tls_get_addr call per access); a second variable, touched
// once per thread, frees the spare when the thread ends.
thread_local void* tlsSpare SC_HOT_TLS = nullptr;
thread_local bool tlsSpareArmed SC_HOT_TLS = false;
struct FreeSpare {
  bool armed = false;
  ~FreeSpare() {
    ::operator delete(tlsSpare);
    tlsSpare = nullptr;
  }
};
thread_local FreeSpare tlsFreeSpare;

// An op through the shared-memory queues, as a send or a receive of the round.
void addShm(ShmRound& shm, const P2POp& op) {
  if (op.kind == P2POp::Recv) shm.recv(op.peer, op.buf, op.bytes);
  else shm.send(op.peer, op.buf, op.bytes);
}

class MpiRound final : public Round {
 public:
  MpiRound(const MpiLink& link, uint64_t seq, uint32_t sig, std::unique_ptr<MpiRoundState>* spare)
      : l_(link),
        seq_(seq),
        tagStaged_(link.code.tag(seq, sig, true)),
        tagProbed_(link.code.tag(seq, sig, false)),
        spare_(spare),
        s_(spare->get() ? std::move(*spare) : std::make_unique<MpiRoundState>()),
        stage_(s_->stage),
        reqs_(s_->reqs),
        msgs_(s_->msgs),
        probing_(s_->probing),
        st_(s_->st),
        shm_(link.shm, seq, sig, s_->shmSends, s_->shmRecvs) {
    reqs_.clear();
    msgs_.clear();
    probing_.clear();
  }
  // A round whose messages all go through shared memory and were posted on
  // the transport's spare state already (postMpiRound): it takes the state
  // and waits for what posting left.
  MpiRound(const MpiLink& link, uint64_t seq, uint32_t sig, std::unique_ptr<MpiRoundState>* spare,
           const ShmRound& posted)
      : l_(link),
        seq_(seq),
        tagStaged_(link.code.tag(seq, sig, true)),
        tagProbed_(link.code.tag(seq, sig, false)),
        spare_(spare),
        s_(std::move(*spare)),
        stage_(s_->stage),
        reqs_(s_->reqs),
        msgs_(s_->msgs),
        probing_(s_->probing),
        st_(s_->st),
        shm_(posted) {
    reqs_.clear();
    msgs_.clear();
    probing_.clear();
  }
  // Reports what posting found wrong at the head of a queue (moveShm's errors).
  void afterPost() { moveShm(); }

  void post(const std::vector<P2POp>& ops) {
    // The shared-memory messages first, in one pass (on one machine they are
    // all of a round's messages, and then MPI is not called at all); the
    // staged receives' slots counted on the way, so that posting never moves
    // them.
    size_t slots = 0, viaMpi = 0;
    for (const auto& op : ops) {
      if (shm_.takes(op.peer, op.bytes)) {
        addShm(shm_, op);
      } else {
        ++viaMpi;
        slots += op.kind == P2POp::Recv && staged(op.bytes);
      }
    }
    if (viaMpi) postMpi(ops, slots);
    moveShm();  // the sends, at once where their queues have room
  }

  // Whether post() moved every message (all of them through shared memory):
  // the round is then done, and wait() would have nothing to do.
  bool finishedInPost() {
    done_ = reqs_.empty() && probing_.empty() && shm_.done();
    return done_;
  }

  // The messages that go through MPI: the staged receives, then the sends
  // (reqs_ = [staged | sends | probe-matched, as they are matched]).
  void postMpi(const std::vector<P2POp>& ops, size_t slots) {
    if (stage_.size() < slots * kStagedBytes) stage_.resize(slots * kStagedBytes);
    reqs_.reserve(ops.size());
    msgs_.reserve(ops.size());
    for (const auto& op : ops) {
      if (shm_.takes(op.peer, op.bytes) || op.kind != P2POp::Recv || !staged(op.bytes)) continue;
      MPI_Request req;
      char* slot = stage_.data() + nStaged_ * kStagedBytes;
      mpiCheck(MPI_Irecv(slot, int(kStagedBytes), MPI_BYTE, op.peer, tagStaged_, l_.comm, &req), "MPI_Irecv");
      add(req, {op.peer, static_cast<char*>(op.buf), op.bytes, op.bytes});
      ++nStaged_;
    }
    for (const auto& op : ops) {
      if (shm_.takes(op.peer, op.bytes)) continue;
      for (size_t off = 0; off < op.bytes || (off == 0 && op.bytes == 0); off += kMaxChunk) {
        const size_t n = std::min(kMaxChunk, op.bytes - off);
        const Msg m{op.peer, static_cast<char*>(op.buf) + off, n, op.bytes};
        if (op.kind == P2POp::Recv) {
          if (!staged(op.bytes)) probing_.push_back(m);
        } else {
          MPI_Request req;
          mpiCheck(MPI_Isend(m.buf, int(n), MPI_BYTE, op.peer, staged(op.bytes) ? tagStaged_ : tagProbed_, l_.comm,
                             &req),
                   "MPI_Isend");
          add(req, m);
          ++nSends_;
        }
        if (op.bytes == 0) break;
      }
    }
  }

  void wait(const Deadline& dl) override {
    int flag = 0;
    unsigned polls = 0, idle = 0;
    st_.resize(reqs_.size() + probing_.size());
    const bool ok = pollUntil(dl, [&] {
      matchProbed();
      if (++polls % 16 == 0) {
        checkAbortNotice(l_.ctl, l_.id);
        if (l_.code.packed) otherCalls();
        strayShm();
      }
      const bool moved = moveShm();
      // A probe that finds nothing moved MPI's progress engine (the sends
      // included) once: one trip per poll, as below.
      if (!probing_.empty()) return false;
      // Everything is posted: one trip through MPI's progress engine per poll.
      if (reqs_.empty()) flag = 1;  // shared memory alone: no trip through MPI at all
      if (!flag) mpiCheck(MPI_Testall(int(reqs_.size()), reqs_.data(), &flag, st_.data()), "MPI_Testall");
      if (!flag) return false;
      if (shm_.done()) return true;
      // Only shared-memory messages left: MPI's progress no longer yields the
      // core for us, so idle passes do (peers waiting for a core are what
      // this rank waits for when ranks outnumber cores).
      idle = moved ? 0 : idle + 1;
      if (idle >= shm_.idlePassesBeforeYield()) {
        idle = 0;
        sched_yield();
      }
      return false;
    });
    if (!ok)
      SC_THROW(scTimeout, "deadline of ", dl.seconds, " s expired in call #", seq_, ": rank ", l_.rank, " was ",
               pendingText());
    done_ = true;
    for (size_t i = 0; i < nStaged_; ++i) {
      const Msg& m = msgs_[i];
      int n = 0;
      MPI_Get_count(&st_[i], MPI_BYTE, &n);
      if (size_t(n) != m.bytes) sizeMismatch(m, n);
      if (n) std::memcpy(m.buf, stage_.data() + i * kStagedBytes, m.bytes);
    }
  }

  ~MpiRound() override {
    if (!done_ && !cancel()) return;  // MPI may still write to the state's buffers: never freed (cancel)
    if (!*spare_) *spare_ = std::move(s_);
  }

  // A call posts a round or more: the thread keeps one round's memory for
  // its next, instead of a malloc and a free per round.
  static void* operator new(size_t n) {
    if (void* p = tlsSpare) {
      tlsSpare = nullptr;
      return p;
    }
    return ::operator new(n);
  }
  static void operator delete(void* p) {
    if (tlsSpare) return ::operator delete(p);
    if (!tlsSpareArmed) {
      tlsSpareArmed = true;
      tlsFreeSpare.armed = true;  // constructs it: its destructor runs at the thread's end
    }
    tlsSpare = p;
  }

 private:
  using Msg = MpiMsg;

  bool staged(size_t bytes) const { return l_.code.packed && bytes <= kStagedBytes; }
  void add(MPI_Request r, const Msg& m) {
    reqs_.push_back(r);
    msgs_.push_back(m);
  }
  bool isSend(size_t i) const { return i >= nStaged_ && i < nStaged_ + nSends_; }
  // Whether request i (a staged receive) has yet to complete; does not free it.
  bool pending(size_t i) {
    int flag = 1;
    if (reqs_[i] != MPI_REQUEST_NULL) MPI_Request_get_status(reqs_[i], &flag, MPI_STATUS_IGNORE);
    return !flag;
  }

  [[noreturn]] void sizeMismatch(const Msg& m, int n) {
    SC_THROW(scRemoteError, "message size mismatch in call #", seq_, ": rank ", l_.rank, " expected ", m.bytes,
             " bytes from rank ", m.peer, " but it sent ", n,
             " (the ranks made different calls, or the same call with different counts)");
  }

  // Matches each probe-matched receive whose message has arrived (in posted
  // order: a probe finds a pair's messages in the order they were sent, so
  // receives from one peer are matched in the order they were posted).
  void matchProbed() {
    if (probing_.empty()) return;
    // One probe for any message of this call first: a pass that finds none
    // costs one trip through MPI's progress engine instead of one per waiting
    // receive (each of which may yield the core when ranks outnumber cores).
    int any = 0;
    mpiCheck(MPI_Iprobe(MPI_ANY_SOURCE, tagProbed_, l_.comm, &any, MPI_STATUS_IGNORE), "MPI_Iprobe");
    if (!any) return;
    size_t keep = 0;  // probing_[0, keep): the receives this pass left waiting
    for (size_t i = 0; i < probing_.size(); ++i) {
      const Msg m = probing_[i];
      int flag = 0;
      MPI_Message msg;
      MPI_Status st;
      // A receive waits while an earlier one from its peer waits, or a
      // message arriving meanwhile would match the later receive first.
      const bool peerWaits = std::any_of(probing_.begin(), probing_.begin() + std::ptrdiff_t(keep),
                                         [&](const Msg& w) { return w.peer == m.peer; });
      if (!peerWaits) mpiCheck(MPI_Improbe(m.peer, tagProbed_, l_.comm, &flag, &msg, &st), "MPI_Improbe");
      if (!flag) {
        probing_[keep++] = m;
        continue;
      }
      int n = 0;
      MPI_Get_count(&st, MPI_BYTE, &n);
      if (size_t(n) != m.bytes) {
        drain(msg, n);
        sizeMismatch(m, n);
      }
      MPI_Request req;
      mpiCheck(MPI_Imrecv(m.buf, n, MPI_BYTE, &msg, &req), "MPI_Imrecv");
      add(req, m);
    }
    probing_.resize(keep);
  }

  // Moves the shared-memory messages; whether any moved. A message of
  // another size or of another call at the head of a queue is
  // scRemoteError naming its sender.
  bool moveShm() {
    if (shm_.done()) return false;  // nothing through shared memory (between machines: every message)
    bool moved = false;
    const ShmRound::Problem::Kind kind = shm_.progress(&moved);
    if (kind == ShmRound::Problem::None) return moved;
    const ShmRound::Problem& p = shm_.problem();
    if (p.kind == ShmRound::Problem::Size)
      sizeMismatch({p.m->peer, p.m->buf, p.m->bytes, p.m->bytes}, int(p.theirBytes));
    if (p.kind == ShmRound::Problem::OtherCall) mismatchedCall(p.m->peer, p.m->bytes, int64_t(p.theirSeq - seq_));
    if (p.kind == ShmRound::Problem::Unreadable)
      SC_THROW(scRemoteError, "call #", seq_, ": rank ", l_.rank, " could not read the ", bytesText(p.m->bytes),
               " that rank ", p.m->peer, " sent by single copy (", std::strerror(p.err),
               "; SPARCOLL_MPI_CMA=0 sends such messages through MPI)");
    if (p.kind == ShmRound::Problem::Revoked)
      SC_THROW(scRemoteError, "call #", seq_, ": rank ", p.m->peer, " withdrew the ", bytesText(p.m->bytes),
               " it was sending to rank ", l_.rank, " (its call failed)");
    return moved;
  }

  [[noreturn]] void mismatchedCall(int peer, size_t expected, int64_t ahead) {
    SC_THROW(scRemoteError, "mismatched calls: rank ", l_.rank, " in call #", seq_, " expected ", bytesText(expected),
             " from rank ", peer, ", which sent a message of ",
             ahead == 0 ? std::string("a different call (another collective, count, data type, op or algorithm)")
                        : cat("its call #", seq_ + uint64_t(ahead)),
             " instead");
  }

  // A receive still waiting: is the peer's next message another call's? One
  // of an earlier call is a leftover of a mismatched call (drained); one of
  // this call with another signature, or of a later call, means the peer made
  // a different call from this rank's; one of this call in the other size
  // class, that the peer sent another size (scRemoteError, at once, not at
  // the deadline).
  void otherCalls() {
    for (const Msg& m : probing_) otherCall(m);
    for (size_t i = 0; i < nStaged_; ++i)
      if (pending(i)) otherCall(msgs_[i]);
    for (const ShmRound::Msg& m : shm_.recvs())
      if (!m.done) otherCall({m.peer, m.buf, m.bytes, m.bytes}, &m);
  }
  // A probe-matched receive whose sender put a message of this call in its
  // shared-memory queue instead: the sender sent a small message.
  void strayShm() {
    for (const Msg& m : probing_)
      if (const long n = shm_.strayFrom(m.peer); n >= 0) sizeMismatch(m, int(n));
  }
  // shmWait: m is a receive through the shared-memory queue (ShmRound::Msg).
  void otherCall(const Msg& m, const ShmRound::Msg* shmWait = nullptr) {
    int flag = 0;
    MPI_Status st;
    mpiCheck(MPI_Iprobe(m.peer, MPI_ANY_TAG, l_.comm, &flag, &st), "MPI_Iprobe");
    if (!flag) return;
    // The peer may have queued this call's message and gone on to a later
    // call between the last look at its queue and this probe: look again.
    if (shmWait) {
      moveShm();
      if (shmWait->done) return;
    }
    const bool probingPeer =
        std::any_of(probing_.begin(), probing_.end(), [&](const Msg& w) { return w.peer == m.peer; });
    if (st.MPI_TAG == tagProbed_ && probingPeer) return;  // matchProbed takes it
    // This call's, of the other size class: a staged one would have matched
    // a posted slot, so the peer sent another size than expected.
    if (st.MPI_TAG == tagStaged_ || st.MPI_TAG == tagProbed_) sizeMismatch(m, drainNext(m.peer, st.MPI_TAG));
    const int64_t ahead = l_.code.callsAhead(st.MPI_TAG, seq_);
    if (ahead < 0) {
      drainNext(m.peer, st.MPI_TAG);
      return;
    }
    mismatchedCall(m.peer, m.total, ahead);
  }

  // Drains peer's next message of tag (probed just before); returns its bytes.
  int drainNext(int peer, int tag) {
    int flag = 0, n = 0;
    MPI_Message msg;
    MPI_Status st;
    mpiCheck(MPI_Improbe(peer, tag, l_.comm, &flag, &msg, &st), "MPI_Improbe");
    if (!flag) return 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    drain(msg, n);
    return n;
  }

  // Takes a message of the wrong size off the wire, so its sender's send
  // completes; bounded, since the sender is alive and sending it.
  void drain(MPI_Message& msg, int n) {
    std::vector<char> sink(size_t(std::max(n, 1)));
    MPI_Request req;
    if (MPI_Imrecv(sink.data(), n, MPI_BYTE, &msg, &req) != MPI_SUCCESS) return;
    int flag = 0;
    const Deadline dl = Deadline::in(1.0);
    if (!pollUntil(dl, [&] { return MPI_Test(&req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || flag; })) {
      MPI_Cancel(&req);
      MPI_Request_free(&req);
    }
  }

  // What the round still waits for, by peer: "waiting for 1.0 MiB from rank 3;
  // waiting for rank 2 to take 4.0 KiB (12 messages)": each distinct wait
  // once with its count (a round may wait for hundreds of alike messages
  // from one peer), the first kShown of them.
  std::string pendingText() {
    constexpr size_t kShown = 8;
    std::vector<std::pair<std::string, size_t>> items;
    auto add = [&](const std::string& s) {
      for (auto& [text, n] : items)
        if (text == s) return void(++n);
      items.emplace_back(s, 1);
    };
    for (const Msg& m : probing_) add("waiting for " + bytesText(m.total) + " from rank " + std::to_string(m.peer));
    shm_.describe(add);
    for (size_t i = 0; i < reqs_.size(); ++i) {
      if (!pending(i)) continue;
      const Msg& m = msgs_[i];
      if (isSend(i)) add("waiting for rank " + std::to_string(m.peer) + " to take " + bytesText(m.total));
      else if (i < nStaged_) add("waiting for " + bytesText(m.total) + " from rank " + std::to_string(m.peer));
      else add("receiving " + bytesText(m.total) + " from rank " + std::to_string(m.peer));
    }
    std::string out;
    for (size_t i = 0; i < items.size() && i < kShown; ++i)
      out += (i ? "; " : "") + items[i].first + (items[i].second > 1 ? cat(" (", items[i].second, " messages)") : "");
    if (items.size() > kShown) out += cat("; and ", items.size() - kShown, " more");
    return out.empty() ? "finishing a round" : out;
  }

  // Error path. The caller may free its buffers once we return, so a transfer
  // still under way must end first: cancel what MPI can cancel (a send nobody
  // matched, a receive with no message yet), then wait, briefly, for the rest
  // (a send a peer is draining, a receive whose data is arriving; half a
  // second at most: a send no peer matched cannot be cancelled in every MPI,
  // and the call must end within a second of its deadline). What is still
  // pending after that belongs to a peer that stopped mid-transfer; it is
  // left to MPI, and so is the staging buffer it may still write to.
  // Returns whether every request ended.
  bool cancel() noexcept {
    shm_.revoke();  // no peer reads this rank's buffers by single copy after this
    for (auto& r : reqs_)
      if (r != MPI_REQUEST_NULL) MPI_Cancel(&r);
    const Deadline dl = Deadline::in(0.5);
    pollUntil(dl, [&] {
      int flag = 0;
      return reqs_.empty() || MPI_Testall(int(reqs_.size()), reqs_.data(), &flag, MPI_STATUSES_IGNORE) != MPI_SUCCESS ||
             flag;
    });
    bool stagedLeft = false;
    for (size_t i = 0; i < reqs_.size(); ++i) {
      if (reqs_[i] == MPI_REQUEST_NULL) continue;
      stagedLeft |= i < nStaged_ && pending(i);
      MPI_Request_free(&reqs_[i]);
    }
    if (!stagedLeft) return true;
    static std::mutex m;
    try {
      static auto* kept = new std::vector<std::unique_ptr<MpiRoundState>>;
      std::lock_guard<std::mutex> lk(m);
      kept->push_back(std::move(s_));
    } catch (...) {  // no memory to keep it in: leaked, as MPI may still write it
      (void)s_.release();
    }
    return false;
  }

  const MpiLink& l_;  // the transport's, which outlives its rounds
  uint64_t seq_;
  int tagStaged_, tagProbed_;
  std::unique_ptr<MpiRoundState>* spare_;
  std::unique_ptr<MpiRoundState> s_;
  std::vector<char>& stage_;        // the staged receives' slots, kStagedBytes each
  std::vector<MPI_Request>& reqs_;  // [staged receives | sends | probe-matched receives]
  std::vector<MpiMsg>& msgs_;       // parallel to reqs_
  std::vector<MpiMsg>& probing_;    // probe-matched receives not yet matched, in posted order
  std::vector<MPI_Status>& st_;
  ShmRound shm_;  // the messages through shared memory
  size_t nStaged_ = 0, nSends_ = 0;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<Round> postMpiRound(const MpiLink& link, uint64_t seq, uint32_t sig, const std::vector<P2POp>& ops,
                                    std::unique_ptr<MpiRoundState>* spare) {
  // Every message through shared memory (a round among one machine's ranks,
  // the common case there): posted on the spare state without a round
  // object, which is made only when something is left to wait for. A small
  // call's fixed cost is what decides its time when ranks outnumber cores.
  if (link.shm && *spare) {
    MpiRoundState& s = **spare;
    ShmRound shm(link.shm, seq, sig, s.shmSends, s.shmRecvs);
    if (std::all_of(ops.begin(), ops.end(), [&](const P2POp& op) { return shm.takes(op.peer, op.bytes); })) {
      for (const auto& op : ops) addShm(shm, op);
      bool moved = false;
      const bool problem = shm.progress(&moved) != ShmRound::Problem::None;
      if (!problem && shm.done()) return nullptr;
      auto round = std::make_unique<MpiRound>(link, seq, sig, spare, shm);
      if (problem) round->afterPost();  // throws what progress found
      return round;
    }
  }
  auto round = std::make_unique<MpiRound>(link, seq, sig, spare);
  round->post(ops);
  // Nothing left to wait for (a rank that only sends, where its queues had
  // room; a receiver whose messages were there): no wait, which would only
  // find the round done, and the round's memory goes back to the spare now.
  if (round->finishedInPost()) return nullptr;
  return round;
}

}  // namespace sc
