// NCCL transport: device buffers; a round is ncclGroupStart, ncclSend/ncclRecv
// on the transport's side stream (core/cuda_util.h SideStream), ncclGroupEnd.
// The side stream follows the caller's stream at each post, and the caller's
// stream waits for a round only when the schedule waits for it (the events
// marking the rounds are pooled: transport/event_pool.h), so a
// schedule's local work between the two (the ring reducing slice k while
// slice k+1 moves) overlaps the transfer. Native collectives and the barrier
// stay on the caller's stream. The communicator is nonblocking
// (config.blocking = 0) so that no NCCL call can block the host without a
// deadline: every call that answers ncclInProgress is polled with
// ncclCommGetAsyncError until done or until the deadline, after which the
// caller's error path aborts the communicator (ncclCommAbort).
//
// Creation from an ncclUniqueId lives here (ncclCommFromId), with its
// MPI-free entry points scGetUniqueId / scCommInitRank; the bootstrap over MPI
// (transport/nccl_mpi/bootstrap.cpp) only moves the id and calls ncclCommFromId.
#include <cuda_runtime_api.h>
#include <sched.h>

#include <cstring>
#include <memory>

#include "core/cuda_util.h"
#include "transport/event_pool.h"
#include "transport/factory.h"
#include "transport/nccl/init.h"
#include "transport/nccl/util.h"

namespace sc {
namespace {

cudaStream_t asStream(void* s) { return static_cast<cudaStream_t>(s); }

class NcclTransport;

// Stream-ordered: the transfers were enqueued on the side stream by post(),
// which recorded `done` after them; waiting makes the caller's stream wait for
// `done` (the host never blocks) and checks that NCCL has not failed
// asynchronously since. A round dropped unwaited (an error path) still orders
// the caller's stream after it, so nothing the caller frees on its stream is
// freed under a transfer.
class NcclRound final : public Round {
 public:
  NcclRound(NcclTransport& t, cudaStream_t caller, cudaEvent_t done) : t_(t), caller_(caller), done_(done) {}
  ~NcclRound() override;
  void wait(const Deadline&) override;

 private:
  NcclTransport& t_;
  const cudaStream_t caller_;
  const cudaEvent_t done_;
  bool waited_ = false;
};

class NcclTransport final : public Transport {
 public:
  NcclTransport(ncclComm_t comm, int rank, int size, int device, double timeout)
      : comm_(comm), rank_(rank), size_(size), device_(device), timeout_(timeout), side_(device) {
    DeviceScope on(device_);
    SC_CUDA_CHECK(cudaMalloc(&barrierBuf_, sizeof(int)));
    SC_CUDA_CHECK(cudaMemset(barrierBuf_, 0, sizeof(int)));
  }

  ~NcclTransport() override {
    if (comm_ && revoked_) {
      ncclCommAbort(comm_);  // finalize is invalid after a revoke
    } else if (comm_) {
      // Finalize flushes outstanding work; bounded, and abort if it cannot finish.
      try {
        DeviceScope on(device_);
        SC_NCCL_CALL(comm_, Deadline::in(timeout_), ncclCommFinalize(comm_));
        ncclCommDestroy(comm_);
      } catch (...) {
        ncclCommAbort(comm_);
      }
    }
    if (barrierBuf_) cudaFree(barrierBuf_);
    (void)cudaGetLastError();
  }

  const char* name() const override { return "nccl"; }
  Mem mem() const override { return Mem::Device; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::unique_ptr<Round> post(const std::vector<P2POp>& ops, void* stream, const Deadline& dl) override {
    DeviceScope on(device_);
    ready();
    for (const auto& op : ops)
      SC_ARG(op.peer >= 0 && op.peer < size_, "peer ", op.peer, " out of range [0, ", size_, ")");
    const cudaStream_t s = side_.after(asStream(stream));
    SC_NCCL_CHECK(comm_, ncclGroupStart());
    ncclResult_t rc = ncclSuccess;
    const char* failed = nullptr;
    for (const auto& op : ops) {
      if (op.bytes == 0) continue;  // both sides skip: sizes come from the same layout
      // size_t counts: no splitting needed (NCCL >= 2.x takes 64-bit counts).
      rc = op.kind == P2POp::Send ? ncclSend(op.buf, op.bytes, ncclInt8, op.peer, comm_, s)
                                  : ncclRecv(op.buf, op.bytes, ncclInt8, op.peer, comm_, s);
      if (rc != ncclSuccess && rc != ncclInProgress) {
        failed = op.kind == P2POp::Send ? "ncclSend" : "ncclRecv";
        break;
      }
    }
    // The group must be closed even when an operation was refused.
    const ncclResult_t end = ncclGroupEnd();
    if (failed) ncclCheck(rc, comm_, failed, __FILE__, __LINE__);
    SC_NCCL_CALL(comm_, dl, end);
    return std::make_unique<NcclRound>(*this, asStream(stream), static_cast<cudaEvent_t>(events_.record(s, *this)));
  }

  // A one-element allreduce that every rank must join, then a bounded wait for
  // it on the stream (watching for asynchronous NCCL errors meanwhile).
  void barrier(void* stream, const Deadline& dl) override {
    DeviceScope on(device_);
    ready();
    SC_NCCL_CALL(comm_, dl, ncclAllReduce(barrierBuf_, barrierBuf_, 1, ncclInt32, ncclSum, comm_, asStream(stream)));
    for (int i = 0;; ++i) {
      const cudaError_t rc = cudaStreamQuery(asStream(stream));
      if (rc == cudaSuccess) return;
      if (rc != cudaErrorNotReady) cudaCheck(rc, "cudaStreamQuery (NCCL barrier)", __FILE__, __LINE__);
      ncclCheckAsync(comm_, "barrier");
      dl.check("all ranks to reach the NCCL barrier");
      if (i > 64) sched_yield();
    }
  }

  // An NCCL with ncclCommRevoke revokes: in-flight work stops, and the
  // communicator stays for scCommShrink (ncclCommShrink) until destroyed. Older
  // NCCL can only abort. The API is found by its flag macro, not by version:
  // it arrived within the 2.28 series (2.28.3's nccl.h lacks it, 2.28.9 has it).
  void abort() noexcept override {
    if (!comm_ || revoked_) return;
#ifdef NCCL_REVOKE_DEFAULT
    DeviceScope on(device_);
    const ncclResult_t rc = ncclCommRevoke(comm_, NCCL_REVOKE_DEFAULT);
    if (rc == ncclSuccess || rc == ncclInProgress) {
      revoked_ = true;
      return;
    }
#endif
    ncclCommAbort(comm_);
    comm_ = nullptr;
  }

  std::unique_ptr<Transport> shrink(const std::vector<int>& exclude, const Deadline& dl) override;

  void nativeAllReduce(const void* send, void* recv, size_t count, scDataType_t dt, scRedOp_t op, void* stream,
                       const Deadline& dl) override {
    DeviceScope on(device_);
    ready();
    SC_NCCL_CALL(comm_, dl, ncclAllReduce(send, recv, count, ncclTypeOf(dt), ncclOpOf(op), comm_, asStream(stream)));
  }
  void nativeReduceScatter(const void* send, void* recv, size_t recvcount, scDataType_t dt, scRedOp_t op, void* stream,
                           const Deadline& dl) override {
    DeviceScope on(device_);
    ready();
    SC_NCCL_CALL(comm_, dl,
                 ncclReduceScatter(send, recv, recvcount, ncclTypeOf(dt), ncclOpOf(op), comm_, asStream(stream)));
  }
  void nativeAllGather(const void* send, void* recv, size_t sendcount, scDataType_t dt, void* stream,
                       const Deadline& dl) override {
    DeviceScope on(device_);
    ready();
    SC_NCCL_CALL(comm_, dl, ncclAllGather(send, recv, sendcount, ncclTypeOf(dt), comm_, asStream(stream)));
  }
  void nativeBroadcast(void* buf, size_t count, scDataType_t dt, int root, void* stream, const Deadline& dl) override {
    DeviceScope on(device_);
    ready();
    SC_NCCL_CALL(comm_, dl, ncclBroadcast(buf, buf, count, ncclTypeOf(dt), root, comm_, asStream(stream)));
  }
  bool nativeHasAvg() const override { return true; }
  EventPool& events() { return events_; }

  // Before each operation: usable, and, once per call (its first
  // operation), no pending asynchronous error. Asking NCCL every round cost
  // two host calls a round; an error arising during a call still surfaces,
  // at the next call's first operation (or in a deadline-bounded wait).
  void ready() {
    usable();
    if (seq_ == checkedSeq_) return;
    ncclCheckAsync(comm_, "the previous operation");
    checkedSeq_ = seq_;
  }
  void usable() const { SC_REQUIRE(comm_ && !revoked_, scInvalidUsage, "NCCL communicator was aborted"); }

 private:
  ncclComm_t comm_;
  const int rank_, size_, device_;
  const double timeout_;
  void* barrierBuf_ = nullptr;
  bool revoked_ = false;
  uint64_t checkedSeq_ = ~uint64_t(0);  // the call whose first operation checked NCCL's state
  SideStream side_;
  EventPool events_{device_};
};

// The caller's stream waits for the round even when it was dropped unwaited;
// the event then has no wait left to come and goes back to the pool.
NcclRound::~NcclRound() {
  if (!waited_ && cudaStreamWaitEvent(caller_, done_, 0) != cudaSuccess) (void)cudaGetLastError();
  t_.events().put(done_);
}

void NcclRound::wait(const Deadline&) {
  waited_ = true;
  SC_CUDA_CHECK(cudaStreamWaitEvent(caller_, done_, 0));
  t_.usable();
}

// Collective over the ranks not excluded. After a revoke (an earlier failure
// or scCommAbort) the parent is waited for until quiescent, as ncclCommShrink
// requires; a parent that was never revoked may still run work, which
// NCCL_SHRINK_ABORT ends first.
std::unique_ptr<Transport> NcclTransport::shrink(const std::vector<int>& exclude, const Deadline& dl) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  SC_REQUIRE(comm_, scInvalidUsage, "scCommShrink: the NCCL communicator was aborted, and this NCCL (",
             NCCL_VERSION_CODE, ") cannot revoke one to keep it for a shrink");
  DeviceScope on(device_);
  // The revoke is complete when the state leaves ncclInProgress (an error
  // state, from the failure that caused it, is no obstacle to the shrink).
  for (int i = 0; revoked_; ++i) {
    ncclResult_t st = ncclSuccess;
    if (ncclCommGetAsyncError(comm_, &st) != ncclSuccess || st != ncclInProgress) break;
    if (dl.expired())
      SC_THROW(scTimeout, "scCommShrink: deadline of ", dl.seconds,
               " s expired while NCCL was "
               "still revoking the communicator's operations");
    pollBackoff(i);
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  std::vector<int> excl = exclude;
  ncclComm_t nc = nullptr;
  const ncclResult_t rc = ncclCommShrink(comm_, excl.data(), int(excl.size()), &nc, &config,
                                         revoked_ ? NCCL_SHRINK_DEFAULT : NCCL_SHRINK_ABORT);
  try {
    if (rc != ncclInProgress) ncclCheck(rc, comm_, "ncclCommShrink", __FILE__, __LINE__);
    SC_REQUIRE(nc, scInternalError, "ncclCommShrink returned no communicator");
    SC_NCCL_CALL(nc, dl, ncclInProgress);  // the new communicator is ready
    int rank = 0, size = 0;
    SC_NCCL_CHECK(nc, ncclCommUserRank(nc, &rank));
    SC_NCCL_CHECK(nc, ncclCommCount(nc, &size));
    return std::make_unique<NcclTransport>(nc, rank, size, device_, timeout_);
  } catch (...) {
    if (nc) ncclCommAbort(nc);
    throw;
  }
#else
  (void)exclude;
  (void)dl;
  SC_THROW(scInvalidUsage, "scCommShrink on the nccl transport needs NCCL 2.27 or later (ncclCommShrink); this is ",
           NCCL_VERSION_CODE);
#endif
}

}  // namespace

int ncclPrepareDevice(int wanted, int localRank) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    SC_THROW(scCudaError, "the nccl transport needs a CUDA device: ",
             rc != cudaSuccess ? cudaGetErrorString(rc) : "cudaGetDeviceCount found none");
  }
  int device = wanted;
  if (wanted >= 0) {
    SC_ARG(wanted < count, "scConfig_t.device = ", wanted, " but only ", count, " CUDA device(s) are visible");
  } else if (localRank >= 0) {
    SC_REQUIRE(localRank < count, scInvalidUsage, "node-local rank ", localRank, " has no GPU of its own (", count,
               " visible); run at most one rank per GPU or set scConfig_t.device");
    device = localRank;
  } else {
    SC_CUDA_CHECK(cudaGetDevice(&device));
  }
  DeviceScope probe(device);
  SC_CUDA_CHECK(cudaFree(nullptr));  // creates the context: a broken GPU fails here, on every rank
  return device;
}

std::unique_ptr<scComm> ncclCommFromId(const ncclUniqueId& id, int nranks, int rank, int device, const Config& cfg,
                                       const Deadline& dl) {
  DeviceScope on(device);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t nc = nullptr;
  const ncclResult_t rc = ncclCommInitRankConfig(&nc, nranks, id, rank, &config);
  try {
    SC_NCCL_CALL(nc, dl, rc);
  } catch (...) {
    if (nc) ncclCommAbort(nc);
    throw;
  }

  Config c = cfg;
  c.device = device;
  std::unique_ptr<Transport> t;
  try {
    t = std::make_unique<NcclTransport>(nc, rank, nranks, device, cfg.timeout);
  } catch (...) {
    ncclCommAbort(nc);
    throw;
  }
  return std::make_unique<scComm>(std::move(t), makeCudaBackend(device), c);
}

// scUniqueId carries an ncclUniqueId byte for byte.
static_assert(NCCL_UNIQUE_ID_BYTES == SC_UNIQUE_ID_BYTES, "scUniqueId must hold an ncclUniqueId");
static_assert(sizeof(scUniqueId) == sizeof(ncclUniqueId), "scUniqueId must hold an ncclUniqueId");

namespace {

void uniqueId(scUniqueId* out) {
  ncclUniqueId id;
  SC_NCCL_CHECK(nullptr, ncclGetUniqueId(&id));
  std::memcpy(out, &id, sizeof id);
}

std::unique_ptr<scComm> commFromUniqueId(int nranks, const scUniqueId& uid, int rank, const Config& cfg) {
  const Deadline dl = Deadline::in(cfg.timeout);
  const int device = ncclPrepareDevice(cfg.device, -1);
  ncclUniqueId id;
  std::memcpy(&id, &uid, sizeof id);
  return ncclCommFromId(id, nranks, rank, device, cfg, dl);
}

}  // namespace

SC_PROVIDE(makeNcclUniqueId, uniqueId);
SC_PROVIDE(makeNcclCommFromId, commFromUniqueId);

}  // namespace sc
