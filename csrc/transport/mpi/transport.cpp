// MPI transport: host buffers, MPI_Isend/MPI_Irecv for a round and a test loop
// with a deadline (MPI_Waitall could block forever on a rank that never comes).
// Messages over 1 GiB are split so counts fit MPI's int. The communicator is a
// duplicate of the caller's, so sparcoll's traffic never matches theirs.
#include <mpi.h>
#include <sched.h>

#include <climits>
#include <thread>
#include <cstring>

#include "core/memkind.h"
#include "model/mpi/machines.h"
#include "transport/factory.h"
#include "transport/mpi/util.h"

namespace sc {
namespace {

constexpr size_t kMaxChunk = size_t(1) << 30;
constexpr int kTag = 7000;

class MpiRound final : public Round {
 public:
  // p2p: point-to-point requests, which MPI lets us cancel; a nonblocking
  // collective's request cannot be cancelled (MPI-3.1 §5.12).
  explicit MpiRound(bool p2p) : p2p_(p2p) {}
  std::vector<MPI_Request> reqs;
  bool done = false;

  void wait(const Deadline& dl) override {
    int flag = 0;
    // Poll hot for 2 ms (each test moves message fragments forward), then back
    // off with short sleeps so that a rank left waiting long (a slow or absent
    // peer) hands its core to ranks that have work: with more ranks than cores
    // a spinning waiter slows everyone.
    const auto start = Clock::now();
    for (unsigned spins = 0;; ++spins) {
      mpiCheck(MPI_Testall(int(reqs.size()), reqs.data(), &flag, MPI_STATUSES_IGNORE), "MPI_Testall");
      if (flag) break;
      if (dl.expired())
        SC_THROW(scTimeout, "deadline of ", dl.seconds, " s expired with ", reqs.size(),
                 " MPI requests of a round still pending (a peer never posted its part)");
      if (Clock::now() - start < std::chrono::milliseconds(2)) {
        sched_yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(spins % 8 == 0 ? 50 : 10));
      }
    }
    done = true;
  }

  ~MpiRound() override {
    if (done || !p2p_) return;  // an unfinished collective stays with the (now aborted) communicator
    // Error path: cancel what is pending and free it; never block here.
    for (auto& r : reqs) {
      if (r == MPI_REQUEST_NULL) continue;
      MPI_Cancel(&r);
      MPI_Request_free(&r);
    }
  }

 private:
  bool p2p_;
};

}  // namespace

class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(MPI_Comm parent) {
    mpiCheck(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiTransport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && !aborted_) MPI_Comm_free(&comm_);
  }
  const char* name() const override { return "mpi"; }
  Mem mem() const override { return Mem::Host; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  MPI_Comm comm() const { return comm_; }
  const void* mpiComm() const override { return &comm_; }
  void waitMpi(void* request, const Deadline& dl) override {
    MpiRound r(false);
    r.reqs = {*static_cast<MPI_Request*>(request)};
    r.wait(dl);
  }

  std::unique_ptr<Round> post(const std::vector<P2POp>& ops, void*, const Deadline&) override {
    SC_REQUIRE(!aborted_, scInvalidUsage, "MPI transport was aborted");
    auto round = std::make_unique<MpiRound>(true);
    // Receives first so that eager sends land in posted buffers.
    for (int pass = 0; pass < 2; ++pass) {
      for (const auto& op : ops) {
        if ((op.kind == P2POp::Recv) != (pass == 0)) continue;
        for (size_t off = 0; off < op.bytes || (off == 0 && op.bytes == 0); off += kMaxChunk) {
          const int n = int(std::min(kMaxChunk, op.bytes - off));
          MPI_Request req;
          char* p = static_cast<char*>(op.buf) + off;
          if (op.kind == P2POp::Recv)
            mpiCheck(MPI_Irecv(p, n, MPI_BYTE, op.peer, kTag, comm_, &req), "MPI_Irecv");
          else
            mpiCheck(MPI_Isend(p, n, MPI_BYTE, op.peer, kTag, comm_, &req), "MPI_Isend");
          round->reqs.push_back(req);
          if (op.bytes == 0) break;
        }
      }
    }
    return round;
  }

  void barrier(void*, const Deadline& dl) override {
    MpiRound r(false);
    r.reqs.resize(1);
    mpiCheck(MPI_Ibarrier(comm_, &r.reqs[0]), "MPI_Ibarrier");
    r.wait(dl);
  }

  void abort() noexcept override { aborted_ = true; }

  // The baseline: Open MPI's own collectives (nonblocking, so the deadline holds).
  void nativeAllReduce(const void* send, void* recv, size_t count, scDataType_t dt, scRedOp_t op, void*,
                       const Deadline& dl) override {
    MpiType t(dt, op);
    MpiRound r(false);
    r.reqs.resize(1);
    for (size_t off = 0; off < count; off += t.maxCount()) {
      const size_t n = std::min(t.maxCount(), count - off);
      const void* s = send == recv ? MPI_IN_PLACE : static_cast<const char*>(send) + off * t.size;
      mpiCheck(MPI_Iallreduce(s, static_cast<char*>(recv) + off * t.size, int(n), t.type, t.op, comm_, &r.reqs[0]),
               "MPI_Iallreduce");
      r.done = false;
      r.wait(dl);
    }
  }
  void nativeReduceScatter(const void* send, void* recv, size_t recvcount, scDataType_t dt, scRedOp_t op,
                           void*, const Deadline& dl) override {
    MpiType t(dt, op);
    SC_ARG(recvcount <= t.maxCount(), "native reduce-scatter supports at most ", t.maxCount(), " elements per rank");
    const bool inPlace = static_cast<const char*>(send) + size_t(rank_) * recvcount * t.size == recv;
    MpiRound r(false);
    r.reqs.resize(1);
    mpiCheck(MPI_Ireduce_scatter_block(inPlace ? MPI_IN_PLACE : send, inPlace ? const_cast<void*>(send) : recv,
                                       int(recvcount), t.type, t.op, comm_, &r.reqs[0]),
             "MPI_Ireduce_scatter_block");
    r.wait(dl);
    if (inPlace && rank_ != 0) {
      // MPI_IN_PLACE leaves the result at the start of the buffer; NCCL's convention wants it at block rank.
      std::memmove(recv, send, recvcount * t.size);
    }
  }
  void nativeAllGather(const void* send, void* recv, size_t sendcount, scDataType_t dt, void*,
                       const Deadline& dl) override {
    const size_t esz = dtypeSize(dt);
    SC_ARG(sendcount * esz <= size_t(INT_MAX), "native allgather supports at most 2 GiB per rank");
    const bool inPlace = static_cast<char*>(recv) + size_t(rank_) * sendcount * esz == send;
    MpiRound r(false);
    r.reqs.resize(1);
    mpiCheck(MPI_Iallgather(inPlace ? MPI_IN_PLACE : send, int(sendcount * esz), MPI_BYTE, recv,
                            int(sendcount * esz), MPI_BYTE, comm_, &r.reqs[0]),
             "MPI_Iallgather");
    r.wait(dl);
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  bool aborted_ = false;
};

MPI_Comm mpiCommFrom(const void* mpiComm) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  SC_REQUIRE(init && !fin, scInvalidUsage, "MPI is not initialised (call MPI_Init before scCommInitMpi)");
  return mpiComm ? *static_cast<const MPI_Comm*>(mpiComm) : MPI_COMM_WORLD;
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
