// MPI transport: host buffers, MPI_Isend for a round's sends and matched
// probes (MPI_Improbe + MPI_Imrecv) for its receives, with a test loop bounded
// by a deadline (MPI_Waitall could block forever on a rank that never comes).
// Messages over 1 GiB are split so counts fit MPI's int. The communicator is a
// duplicate of the caller's, so sparcoll's traffic never matches theirs.
//
// Why probes and not posted receives: a receive is only posted once the
// message's size is known to be the expected one, so a peer that sends more
// (ranks that made different calls) never truncates a receive. That keeps
// clear of Open MPI's shared-memory single-copy path, which corrupts the heap
// on truncated receives, and turns every size mismatch into scRemoteError
// naming the peer. Each message's tag is the call's sequence number, so
// leftovers of a mismatched call are never taken by a later call.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <random>
#include <cstring>

#include "core/memkind.h"
#include "model/mpi/machines.h"
#include "transport/factory.h"
#include "transport/mpi/shrink.h"
#include "transport/mpi/util.h"
#include "transport/mpi/wait.h"

namespace sc {
namespace {

constexpr size_t kMaxChunk = size_t(1) << 30;

// A call's tag: where MPI offers 31-bit tags (Open MPI, MPICH), the low 20
// bits are the call's sequence number and the high 11 bits a hash of its
// signature, so a message can be told to be a different call's (probes below);
// elsewhere the sequence number alone.
struct TagCode {
  bool packed;
  uint64_t span;
  static constexpr int kSeqBits = 20;
  static constexpr uint32_t kSeqMask = (1u << kSeqBits) - 1;
  int tag(uint64_t seq, uint32_t sig) const {
    if (!packed) return int(seq % span);
    return int((uint32_t(seq) & kSeqMask) | ((sig & 0x7ffu) << kSeqBits));
  }
  // How far a message's call is ahead of (> 0) or behind (< 0) call `seq`.
  int64_t callsAhead(int tag, uint64_t seq) const {
    const uint32_t d = (uint32_t(tag) - uint32_t(seq)) & kSeqMask;
    return d >= (kSeqMask + 1) / 2 ? int64_t(d) - int64_t(kSeqMask + 1) : int64_t(d);
  }
};

class MpiRound final : public Round {
 public:
  MpiRound(MPI_Comm comm, MPI_Comm ctl, uint64_t id, const TagCode& code, int rank, uint64_t seq, uint32_t sig)
      : comm_(comm), ctl_(ctl), id_(id), code_(code), tag_(code.tag(seq, sig)), rank_(rank), seq_(seq) {}
  int tag() const { return tag_; }
  // Room for n messages (one chunk each, the common case), so posting allocates once per vector.
  void reserve(size_t n) {
    for (auto* v : {&sendReqs, &recvReqs}) v->reserve(n);
    for (auto* v : {&sends, &recvs, &receiving}) v->reserve(n);
  }

  struct Msg {
    int peer;
    char* buf;
    size_t bytes;  // this chunk's
    size_t total;  // the whole message's, for messages
  };
  std::vector<MPI_Request> sendReqs;
  std::vector<Msg> sends;             // parallel to sendReqs
  std::vector<Msg> recvs;             // not yet matched, in posted order
  std::vector<MPI_Request> recvReqs;  // matched, receiving
  std::vector<Msg> receiving;         // parallel to recvReqs

  void wait(const Deadline& dl) override {
    int flag = 0;
    unsigned polls = 0;
    bool sendsDone = false;
    const bool ok = pollUntil(dl, [&] {
      matchRecvs();
      if (++polls % 16 == 0) {
        checkAbortNotice(ctl_, id_);
        if (!recvs.empty() && code_.packed) otherCalls();
      }
      // The sends keep moving while receives wait for their messages; once
      // they are done a poll is one trip through MPI's progress engine.
      if (!sendsDone) {
        mpiCheck(MPI_Testall(int(sendReqs.size()), sendReqs.data(), &flag, MPI_STATUSES_IGNORE), "MPI_Testall");
        sendsDone = flag != 0;
      }
      if (!sendsDone || !recvs.empty()) return false;
      mpiCheck(MPI_Testall(int(recvReqs.size()), recvReqs.data(), &flag, MPI_STATUSES_IGNORE), "MPI_Testall");
      return flag != 0;
    });
    if (!ok) SC_THROW(scTimeout, "deadline of ", dl.seconds, " s expired in call #", seq_, ": rank ", rank_,
                      " was ", pendingText());
    done_ = true;
  }

  ~MpiRound() override {
    if (done_) return;
    // Error path. The caller may free its buffers once we return, so a
    // transfer still under way must end first: cancel what MPI can cancel (a
    // send nobody matched), then wait, briefly, for the rest (a send a peer is
    // draining, a receive whose data is arriving; half a second at most: a
    // send no peer matched cannot be cancelled in every MPI, and the call must
    // end within a second of its deadline). What is still pending after that
    // belongs to a peer that stopped mid-transfer; it is left to MPI.
    for (auto* v : {&sendReqs, &recvReqs})
      for (auto& r : *v)
        if (r != MPI_REQUEST_NULL) MPI_Cancel(&r);
    const Deadline dl = Deadline::in(0.5);
    pollUntil(dl, [&] {
      int flag = 0;
      for (auto* v : {&sendReqs, &recvReqs})
        if (!v->empty() && MPI_Testall(int(v->size()), v->data(), &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS && !flag)
          return false;
      return true;
    });
    for (auto* v : {&sendReqs, &recvReqs})
      for (auto& r : *v)
        if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }

 private:
  // Matches each waiting receive whose message has arrived (in posted order:
  // a probe finds a pair's messages in the order they were sent, so receives
  // from one peer are matched in the order they were posted).
  void matchRecvs() {
    if (recvs.empty()) return;
    // One probe for any message of this call first: a pass that finds none
    // costs one trip through MPI's progress engine instead of one per waiting
    // receive (each of which may yield the core when ranks outnumber cores).
    int any = 0;
    mpiCheck(MPI_Iprobe(MPI_ANY_SOURCE, tag_, comm_, &any, MPI_STATUS_IGNORE), "MPI_Iprobe");
    if (!any) return;
    size_t keep = 0;  // recvs[0, keep): the receives this pass left waiting
    for (size_t i = 0; i < recvs.size(); ++i) {
      const Msg m = recvs[i];
      int flag = 0;
      MPI_Message msg;
      MPI_Status st;
      // A receive waits while an earlier one from its peer waits, or a
      // message arriving meanwhile would match the later receive first.
      const bool peerWaits = std::any_of(recvs.begin(), recvs.begin() + keep,
                                         [&](const Msg& w) { return w.peer == m.peer; });
      if (!peerWaits) mpiCheck(MPI_Improbe(m.peer, tag_, comm_, &flag, &msg, &st), "MPI_Improbe");
      if (!flag) {
        recvs[keep++] = m;
        continue;
      }
      int n = 0;
      MPI_Get_count(&st, MPI_BYTE, &n);
      if (size_t(n) != m.bytes) {
        drain(msg, n);
        SC_THROW(scRemoteError, "message size mismatch in call #", seq_, ": rank ", rank_, " expected ",
                 m.bytes, " bytes from rank ", m.peer, " but it sent ", n,
                 " (the ranks made different calls, or the same call with different counts)");
      }
      MPI_Request req;
      mpiCheck(MPI_Imrecv(m.buf, n, MPI_BYTE, &msg, &req), "MPI_Imrecv");
      recvReqs.push_back(req);
      receiving.push_back(m);
    }
    recvs.resize(keep);
  }

  // A receive still waiting: is the peer's next message another call's? One
  // of an earlier call is a leftover of a mismatched call (drained); one of
  // this call with another signature, or of a later call, means the peer made
  // a different call from this rank's (scRemoteError, at once, not at the
  // deadline).
  void otherCalls() {
    for (const Msg& m : recvs) {
      int flag = 0;
      MPI_Status st;
      mpiCheck(MPI_Iprobe(m.peer, MPI_ANY_TAG, comm_, &flag, &st), "MPI_Iprobe");
      if (!flag || st.MPI_TAG == tag_) continue;
      const int64_t ahead = code_.callsAhead(st.MPI_TAG, seq_);
      if (ahead < 0) {
        MPI_Message msg;
        MPI_Status st2;
        mpiCheck(MPI_Improbe(m.peer, st.MPI_TAG, comm_, &flag, &msg, &st2), "MPI_Improbe");
        int n = 0;
        MPI_Get_count(&st2, MPI_BYTE, &n);
        if (flag) drain(msg, n);
        continue;
      }
      SC_THROW(scRemoteError, "mismatched calls: rank ", rank_, " in call #", seq_, " expected ",
               bytesText(m.total), " from rank ", m.peer, ", which sent a message of ",
               ahead == 0 ? std::string("a different call (another collective, count, data type, op or algorithm)")
                          : cat("its call #", seq_ + uint64_t(ahead)),
               " instead");
    }
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
  // waiting for rank 2 to take 4.0 KiB".
  std::string pendingText() {
    std::string out;
    auto add = [&](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
    for (const Msg& m : recvs) add("waiting for " + bytesText(m.total) + " from rank " + std::to_string(m.peer));
    for (size_t i = 0; i < recvReqs.size(); ++i) {
      int flag = 1;
      if (recvReqs[i] != MPI_REQUEST_NULL) MPI_Test(&recvReqs[i], &flag, MPI_STATUS_IGNORE);
      if (!flag) add("receiving " + bytesText(receiving[i].total) + " from rank " + std::to_string(receiving[i].peer));
    }
    for (size_t i = 0; i < sendReqs.size(); ++i) {
      int flag = 1;
      if (sendReqs[i] != MPI_REQUEST_NULL) MPI_Test(&sendReqs[i], &flag, MPI_STATUS_IGNORE);
      if (!flag) add("waiting for rank " + std::to_string(sends[i].peer) + " to take " + bytesText(sends[i].total));
    }
    return out.empty() ? "finishing a round" : out;
  }

  MPI_Comm comm_, ctl_;
  uint64_t id_;
  TagCode code_;
  int tag_, rank_;
  uint64_t seq_;
  bool done_ = false;
};

}  // namespace

class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(MPI_Comm parent) {
    mpiCheck(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
    // Errors come back as codes (mpiCheck turns them into scMpiError); never
    // let MPI abort the job on a peer's mistake.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    mpiCheck(MPI_Comm_dup(comm_, &ctl_), "MPI_Comm_dup");
    // The communicator's id, rank 0's, for abort notices (above).
    id_ = std::random_device{}() * 0x9E3779B97F4A7C15ull ^ uint64_t(Clock::now().time_since_epoch().count());
    mpiCheck(MPI_Bcast(&id_, 1, MPI_UINT64_T, 0, comm_), "MPI_Bcast");
    void* ub = nullptr;
    int flag = 0;
    MPI_Comm_get_attr(comm_, MPI_TAG_UB, &ub, &flag);
    const uint64_t ubv = flag && ub ? uint64_t(*static_cast<int*>(ub)) : 32767;  // MPI guarantees >= 32767
    code_ = TagCode{ubv >= uint64_t(INT_MAX), ubv + 1};
  }
  ~MpiTransport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    // A collective left pending by a timeout still references the
    // communicator and cannot be cancelled: that one is left to MPI.
    if (finalized) return;
    // Notices still on their way are left to MPI, with their buffer.
    int sent = 1;
    if (!notices_.empty()) MPI_Testall(int(notices_.size()), notices_.data(), &sent, MPI_STATUSES_IGNORE);
    if (!sent) {
      for (auto& r : notices_) if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
      notice_.release();
    }
    if (!collectivePending_) MPI_Comm_free(&comm_);
    MPI_Comm_free(&ctl_);
  }
  const char* name() const override { return "mpi"; }
  Mem mem() const override { return Mem::Host; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  MPI_Comm comm() const { return comm_; }
  const void* mpiComm() const override { return &comm_; }
  void waitMpi(void* request, const Deadline& dl) override {
    waitCollective(*static_cast<MPI_Request*>(request), dl, "an MPI collective", &collectivePending_, ctl_, id_);
  }

  std::unique_ptr<Round> post(const std::vector<P2POp>& ops, void*, const Deadline&) override {
    checkUsable();
    auto round = std::make_unique<MpiRound>(comm_, ctl_, id_, code_, rank_, seq_, sig_);
    const int tag = round->tag();
    round->reserve(ops.size());
    for (const auto& op : ops) {
      for (size_t off = 0; off < op.bytes || (off == 0 && op.bytes == 0); off += kMaxChunk) {
        const size_t n = std::min(kMaxChunk, op.bytes - off);
        MpiRound::Msg m{op.peer, static_cast<char*>(op.buf) + off, n, op.bytes};
        if (op.kind == P2POp::Recv) {
          round->recvs.push_back(m);
        } else {
          MPI_Request req;
          mpiCheck(MPI_Isend(m.buf, int(n), MPI_BYTE, op.peer, tag, comm_, &req), "MPI_Isend");
          round->sendReqs.push_back(req);
          round->sends.push_back(m);
        }
        if (op.bytes == 0) break;
      }
    }
    return round;
  }

  void barrier(void*, const Deadline& dl) override {
    checkUsable();
    MPI_Request req;
    mpiCheck(MPI_Ibarrier(comm_, &req), "MPI_Ibarrier");
    waitCollective(req, dl, "MPI_Ibarrier", &collectivePending_, ctl_, id_);
  }

  void abort() noexcept override { aborted_ = true; }
  std::unique_ptr<Transport> shrink(const std::vector<int>& exclude, const Deadline&) override {
    MPI_Comm s = mpiShrink(comm_, exclude);
    auto t = std::make_unique<MpiTransport>(s);
    MPI_Comm_free(&s);
    return t;
  }
  void notifyAbort(const std::string& why) noexcept override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized || aborted_ || !notices_.empty()) return;
    try {
      notice_ = std::make_unique<std::string>(idText(id_) + why.substr(0, kAbortMax));
    } catch (...) {
      return;
    }
    for (int q = 0; q < size_; ++q) {
      if (q == rank_) continue;
      MPI_Request r;
      if (MPI_Isend(notice_->data(), int(notice_->size()), MPI_CHAR, q, kAbortTag, ctl_, &r) == MPI_SUCCESS)
        notices_.push_back(r);
    }
  }

  // The baseline: Open MPI's own collectives (nonblocking, so the deadline holds).
  void nativeAllReduce(const void* send, void* recv, size_t count, scDataType_t dt, scRedOp_t op, void*,
                       const Deadline& dl) override {
    checkUsable();
    MpiType t(dt, op);
    for (size_t off = 0; off < count; off += t.maxCount()) {
      const size_t n = std::min(t.maxCount(), count - off);
      const void* s = send == recv ? MPI_IN_PLACE : static_cast<const char*>(send) + off * t.size;
      MPI_Request req;
      mpiCheck(MPI_Iallreduce(s, static_cast<char*>(recv) + off * t.size, int(n), t.type, t.op, comm_, &req),
               "MPI_Iallreduce");
      waitCollective(req, dl, "MPI_Iallreduce", &collectivePending_, ctl_, id_);
    }
  }
  void nativeReduceScatter(const void* send, void* recv, size_t recvcount, scDataType_t dt, scRedOp_t op,
                           void*, const Deadline& dl) override {
    checkUsable();
    MpiType t(dt, op);
    SC_ARG(recvcount <= t.maxCount(), "native reduce-scatter supports at most ", t.maxCount(), " elements per rank");
    const bool inPlace = static_cast<const char*>(send) + size_t(rank_) * recvcount * t.size == recv;
    MPI_Request req;
    mpiCheck(MPI_Ireduce_scatter_block(inPlace ? MPI_IN_PLACE : send, inPlace ? const_cast<void*>(send) : recv,
                                       int(recvcount), t.type, t.op, comm_, &req),
             "MPI_Ireduce_scatter_block");
    waitCollective(req, dl, "MPI_Ireduce_scatter_block", &collectivePending_, ctl_, id_);
    if (inPlace && rank_ != 0) {
      // MPI_IN_PLACE leaves the result at the start of the buffer; NCCL's convention wants it at block rank.
      std::memmove(recv, send, recvcount * t.size);
    }
  }
  void nativeAllGather(const void* send, void* recv, size_t sendcount, scDataType_t dt, void*,
                       const Deadline& dl) override {
    checkUsable();
    const size_t esz = dtypeSize(dt);
    SC_ARG(sendcount * esz <= size_t(INT_MAX), "native allgather supports at most 2 GiB per rank");
    const bool inPlace = static_cast<char*>(recv) + size_t(rank_) * sendcount * esz == send;
    MPI_Request req;
    mpiCheck(MPI_Iallgather(inPlace ? MPI_IN_PLACE : send, int(sendcount * esz), MPI_BYTE, recv,
                            int(sendcount * esz), MPI_BYTE, comm_, &req),
             "MPI_Iallgather");
    waitCollective(req, dl, "MPI_Iallgather", &collectivePending_, ctl_, id_);
  }
  void nativeBroadcast(void* buf, size_t count, scDataType_t dt, int root, void*, const Deadline& dl) override {
    checkUsable();
    // As bytes, in pieces of at most INT_MAX bytes (MPI counts are int).
    const size_t bytes = count * dtypeSize(dt), maxPiece = size_t(INT_MAX);
    for (size_t off = 0; off < bytes; off += maxPiece) {
      const size_t n = std::min(maxPiece, bytes - off);
      MPI_Request req;
      mpiCheck(MPI_Ibcast(static_cast<char*>(buf) + off, int(n), MPI_BYTE, root, comm_, &req), "MPI_Ibcast");
      waitCollective(req, dl, "MPI_Ibcast", &collectivePending_, ctl_, id_);
    }
  }

 private:
  void checkUsable() const {
    SC_REQUIRE(!aborted_, scInvalidUsage, "MPI transport was aborted");
    int finalized = 0;
    MPI_Finalized(&finalized);
    SC_REQUIRE(!finalized, scInvalidUsage, "MPI was finalized: destroy sparcoll communicators before MPI_Finalize");
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm ctl_ = MPI_COMM_NULL;  // abort notices
  uint64_t id_ = 0;
  std::unique_ptr<std::string> notice_;
  std::vector<MPI_Request> notices_;
  int rank_ = 0, size_ = 1;
  TagCode code_{false, 32768};
  bool aborted_ = false;
  bool collectivePending_ = false;
};

MPI_Comm mpiCommFrom(const void* mpiComm) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  SC_REQUIRE(!fin, scInvalidUsage, "MPI was finalized (create sparcoll communicators between MPI_Init and MPI_Finalize)");
  SC_REQUIRE(init, scInvalidUsage, "MPI is not initialised (call MPI_Init before scCommInitMpi)");
  const MPI_Comm c = mpiComm ? *static_cast<const MPI_Comm*>(mpiComm) : MPI_COMM_WORLD;
  SC_ARG(c != MPI_COMM_NULL, "the MPI communicator is MPI_COMM_NULL (a rank outside the group of an "
         "MPI_Comm_split or MPI_Comm_create gets it: create no sparcoll communicator there)");
  return c;
}

namespace {

// The machines are counted here, while the MPI communicator is at hand, for
// the cost model's level (SPARCOLL_MACHINES, when set, spares the count).
std::unique_ptr<scComm> createMpiComm(const void* mpiComm, const Config& cfg) {
  auto t = std::make_unique<MpiTransport>(mpiCommFrom(mpiComm));
  Config c = cfg;
  if (c.machinesEnv == 0) c.machines = mpiMachines(t->comm(), Deadline::in(cfg.timeout));
  return std::make_unique<scComm>(std::move(t), makeCpuBackend(), std::move(c));
}

}  // namespace

SC_PROVIDE(makeMpiComm, createMpiComm);

}  // namespace sc
