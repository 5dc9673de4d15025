// NCCL transport: device buffers; a round is ncclGroupStart, ncclSend/ncclRecv
// on the caller's stream, ncclGroupEnd. The communicator is nonblocking
// (config.blocking = 0) so that no NCCL call can block the host without a
// deadline: every call that answers ncclInProgress is polled with
// ncclCommGetAsyncError until done or until the deadline, after which the
// caller's error path aborts the communicator (ncclCommAbort).
//
// Bootstrap over MPI: the node-local rank (MPI_Comm_split_type shared) picks the
// GPU unless the config names one; every rank reports whether it is ready
// (one allreduce, so a local failure fails everyone at once instead of leaving
// them waiting), rank 0's ncclUniqueId is broadcast, then ncclCommInitRankConfig.
#include <cuda_runtime_api.h>
#include <sched.h>

#include <memory>

#include "reduce.cuh"
#include "transport/factory.h"
#include "transport/mpi_util.h"
#include "transport/nccl_util_nccl.h"

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

// Rank of this process among the ranks of its node (collective over comm).
int nodeLocalRank(MPI_Comm comm, int rank) {
  MPI_Comm node;
  mpiCheck(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  return local;
}

void NcclRound::wait(const Deadline&) { t_.ready(); }

// The GPU of this rank: cfg.device, else the node-local rank's. Throws with a
// message naming the problem (no GPU, too few GPUs for the ranks of a node).
int pickDevice(int localRank, int wanted) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    SC_THROW(scCudaError, "the nccl transport needs a CUDA device: cudaGetDeviceCount failed: ", cudaGetErrorString(rc));
  }
  if (wanted >= 0) {
    SC_ARG(wanted < count, "scConfig_t.device = ", wanted, " but only ", count, " CUDA device(s) are visible");
    return wanted;
  }
  SC_REQUIRE(localRank < count, scInvalidUsage, "node-local rank ", localRank, " has no GPU of its own (", count,
             " visible); run at most one rank per GPU or set scConfig_t.device");
  return localRank;
}

// What rank 0 broadcasts. Heap-held: on a timeout MPI may still write into it.
struct Boot {
  int ok = 1;
  ncclUniqueId id{};
};

}  // namespace

std::unique_ptr<scComm> makeNcclComm(const void* mpiComm, const Config& cfg) {
  const Deadline dl = Deadline::in(cfg.timeout);
  MPI_Comm comm;
  mpiCheck(MPI_Comm_dup(mpiCommFrom(mpiComm), &comm), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int localRank = nodeLocalRank(comm, rank);

  // 1. Local preparation; any failure is shared with every rank before anyone waits on NCCL.
  int device = -1;
  auto boot = std::make_unique<Boot>();
  std::unique_ptr<Error> localError;
  try {
    device = pickDevice(localRank, cfg.device);
    DeviceScope probe(device);
    SC_CUDA_CHECK(cudaFree(nullptr));  // creates the context: a broken GPU fails here, on every rank
    if (rank == 0) SC_NCCL_CHECK(nullptr, ncclGetUniqueId(&boot->id));
  } catch (const Error& e) {
    localError = std::make_unique<Error>(e);
    boot->ok = 0;
  }
  MPI_Request req;
  auto okAll = std::make_unique<int>(0);
  mpiCheck(MPI_Iallreduce(&boot->ok, okAll.get(), 1, MPI_INT, MPI_MIN, comm, &req), "MPI_Iallreduce");
  try {
    mpiWaitDeadline(&req, dl, "the NCCL bootstrap (readiness of all ranks)");
  } catch (...) {
    boot.release();  // MPI may still read/write these
    okAll.release();
    throw;
  }
  if (localError || !*okAll) {
    MPI_Comm_free(&comm);
    if (localError) throw *localError;
    SC_THROW(scRemoteError, "another rank failed to prepare the NCCL communicator (see its error)");
  }

  // 2. Rank 0's unique id to everyone.
  mpiCheck(MPI_Ibcast(&boot->id, sizeof(ncclUniqueId), MPI_BYTE, 0, comm, &req), "MPI_Ibcast");
  try {
    mpiWaitDeadline(&req, dl, "the NCCL bootstrap (broadcast of the unique id)");
  } catch (...) {
    boot.release();
    throw;
  }
  MPI_Comm_free(&comm);

  // 3. Nonblocking init on this rank's device, completed with the deadline.
  DeviceScope on(device);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t nc = nullptr;
  const ncclResult_t rc = ncclCommInitRankConfig(&nc, size, boot->id, rank, &config);
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
    t = std::make_unique<NcclTransport>(nc, rank, size, device, cfg.timeout);
  } catch (...) {
    ncclCommAbort(nc);
    throw;
  }
  return std::make_unique<scComm>(std::move(t), makeCudaBackend(device), c);
}

}  // namespace sc
