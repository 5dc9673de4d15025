// NCCL transport: device buffers; a round is ncclGroupStart, ncclSend/ncclRecv
// on the caller's stream, ncclGroupEnd. The communicator is nonblocking
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
#include "transport/factory.h"
#include "transport/nccl/init.h"
#include "transport/nccl/util.h"

namespace sc {
namespace {

cudaStream_t asStream(void* s) { return static_cast<cudaStream_t>(s); }

class NcclTransport;

// Stream-ordered: the transfers were enqueued by post(); waiting only checks
// that NCCL has not failed asynchronously since.
class NcclRound final : public Round {
 public:
  explicit NcclRound(NcclTransport& t) : t_(t) {}
  void wait(const Deadline&) override;

 private:
  NcclTransport& t_;
};

class NcclTransport final : public Transport {
 public:
  NcclTransport(ncclComm_t comm, int rank, int size, int device, double timeout)
      : comm_(comm), rank_(rank), size_(size), device_(device), timeout_(timeout) {
    DeviceScope on(device_);
    SC_CUDA_CHECK(cudaMalloc(&barrierBuf_, sizeof(int)));
    SC_CUDA_CHECK(cudaMemset(barrierBuf_, 0, sizeof(int)));
  }

  ~NcclTransport() override {
    if (comm_) {
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
    SC_NCCL_CHECK(comm_, ncclGroupStart());
    ncclResult_t rc = ncclSuccess;
    const char* failed = nullptr;
    for (const auto& op : ops) {
      if (op.bytes == 0) continue;  // both sides skip: sizes come from the same layout
      // size_t counts: no splitting needed (NCCL >= 2.x takes 64-bit counts).
      rc = op.kind == P2POp::Send
               ? ncclSend(op.buf, op.bytes, ncclInt8, op.peer, comm_, asStream(stream))
               : ncclRecv(op.buf, op.bytes, ncclInt8, op.peer, comm_, asStream(stream));
      if (rc != ncclSuccess && rc != ncclInProgress) {
        failed = op.kind == P2POp::Send ? "ncclSend" : "ncclRecv";
        break;
      }
    }
    // The group must be closed even when an operation was refused.
    const ncclResult_t end = ncclGroupEnd();
    if (failed) ncclCheck(rc, comm_, failed, __FILE__, __LINE__);
    SC_NCCL_CALL(comm_, dl, end);
    return std::make_unique<NcclRound>(*this);
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

  void abort() noexcept override {
    if (!comm_) return;
    ncclCommAbort(comm_);
    comm_ = nullptr;
  }

  void nativeAllReduce(const void* send, void* recv, size_t count, scDataType_t dt, scRedOp_t op, void* stream,
                       const Deadline& dl) override {
    DeviceScope on(device_);
    ready();
    SC_NCCL_CALL(comm_, dl, ncclAllReduce(send, recv, count, ncclTypeOf(dt), ncclOpOf(op), comm_, asStream(stream)));
  }
  void nativeReduceScatter(const void* send, void* recv, size_t recvcount, scDataType_t dt, scRedOp_t op,
                           void* stream, const Deadline& dl) override {
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
  bool nativeHasAvg() const override { return true; }

  // Before each operation (and on each round's completion): usable, no pending
  // asynchronous error.
  void ready() {
    SC_REQUIRE(comm_, scInvalidUsage, "NCCL communicator was aborted");
    ncclCheckAsync(comm_, "the previous operation");
  }

 private:
  ncclComm_t comm_;
  const int rank_, size_, device_;
  const double timeout_;
  void* barrierBuf_ = nullptr;
};

void NcclRound::wait(const Deadline&) { t_.ready(); }

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
