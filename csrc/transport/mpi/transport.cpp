// MPI transport: host buffers, rounds of MPI_Isend and receives (round.h),
// MPI's nonblocking collectives for native, all bounded by a deadline. The
// communicator is a duplicate of the caller's, so sparcoll's traffic never
// matches theirs. Each message's tag carries the call's sequence number, so
// leftovers of a mismatched call are never taken by a later call.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <random>
#include <cstring>

#include "core/memkind.h"
#include "model/mpi/machines.h"
#include "transport/factory.h"
#include "transport/mpi/round.h"
#include "transport/mpi/shrink.h"
#include "transport/mpi/util.h"
#include "transport/mpi/wait.h"

namespace sc {
namespace {

// MPI_Finalize deletes MPI_COMM_SELF's attributes before anything else
// (MPI-3.1 §8.7.1): an attribute whose delete callback raises a flag tells
// every later call that MPI is gone for a load, where MPI_Finalized costs a
// call into MPI (about 60 instructions) on every round.
std::atomic<bool> gFinalizing{false};

int onFinalize(MPI_Comm, int, void*, void*) {
  gFinalizing.store(true, std::memory_order_release);
  return MPI_SUCCESS;
}

// Whether MPI is finalized or being finalized. The attribute goes on once per
// process, with the first communicator; if MPI refuses it, every look asks
// MPI_Finalized instead.
bool mpiGone() {
  static const bool watched = [] {
    int key = MPI_KEYVAL_INVALID;
    return MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, onFinalize, &key, nullptr) == MPI_SUCCESS &&
           MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr) == MPI_SUCCESS;
  }();
  if (gFinalizing.load(std::memory_order_acquire)) return true;
  if (watched) return false;
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

}  // namespace

class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(MPI_Comm parent) {
    mpiGone();  // watches MPI_Finalize from now on
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
    try {
      shm_ = ShmQueues::create(comm_, id_);
    } catch (...) {  // no destructor runs for a constructor that throws
      MPI_Comm_free(&ctl_);
      MPI_Comm_free(&comm_);
      throw;
    }
    link_ = MpiLink{comm_, ctl_, id_, code_, rank_, shm_.get()};
  }
  ~MpiTransport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    // A collective left pending by a timeout still references the
    // communicator and cannot be cancelled: that one is left to MPI.
    if (finalized) return;
    // Abort notices that reached this rank are taken; an aborted one's own
    // get 0.1 s to be taken (and its peers', sent at the same time, 10 ms of
    // quiet to arrive). Notices still on their way after that are left to
    // MPI, with their buffer.
    const bool sent = drainAbortNotices(ctl_, notices_, aborted_ ? 0.01 : 0, Deadline::in(aborted_ ? 0.1 : 0));
    if (!sent) {
      for (auto& r : notices_)
        if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
      (void)notice_.release();  // left to MPI with the notices
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
    // Nothing to move (a rank without neighbours, a step that skips it): no
    // round to set up and wait for, which cost an empty call most of its time.
    if (ops.empty()) return nullptr;
    countRendezvous(ops.size());  // each message meets its partner's host
    return postMpiRound(link_, seq_, sig_, ops, &stage_);
  }

  void barrier(void*, const Deadline& dl) override {
    checkUsable();
    countRendezvous();
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
  void nativeReduceScatter(const void* send, void* recv, size_t recvcount, scDataType_t dt, scRedOp_t op, void*,
                           const Deadline& dl) override {
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
    mpiCheck(MPI_Iallgather(inPlace ? MPI_IN_PLACE : send, int(sendcount * esz), MPI_BYTE, recv, int(sendcount * esz),
                            MPI_BYTE, comm_, &req),
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
    SC_REQUIRE(!mpiGone(), scInvalidUsage, "MPI was finalized: destroy sparcoll communicators before MPI_Finalize");
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
  std::unique_ptr<MpiRoundState> stage_;  // lent to one round at a time (round.h)
  std::unique_ptr<ShmQueues> shm_;        // small messages within the node (shm.h)
  MpiLink link_;                          // what a round needs of all the above (round.h), lent to each
};

MPI_Comm mpiCommFrom(const void* mpiComm) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  SC_REQUIRE(!fin, scInvalidUsage,
             "MPI was finalized (create sparcoll communicators between MPI_Init and MPI_Finalize)");
  SC_REQUIRE(init, scInvalidUsage, "MPI is not initialised (call MPI_Init before scCommInitMpi)");
  const MPI_Comm c = mpiComm ? *static_cast<const MPI_Comm*>(mpiComm) : MPI_COMM_WORLD;
  SC_ARG(c != MPI_COMM_NULL,
         "the MPI communicator is MPI_COMM_NULL (a rank outside the group of an "
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
