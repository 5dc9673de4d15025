// sparcoll C++ API: a thin RAII layer over the C API (sparcoll.h).
//
//   sparcoll::Comm comm = sparcoll::Comm::mpi();          // after MPI_Init
//   comm.allReduce(x.data(), y.data(), x.size());         // dtype deduced, sum, auto
//   auto group = sparcoll::Comm::local(4);                // 4 ranks as threads
//   sparcoll::Comm::fromUniqueId(n, id, rank);            // nccl, id from Comm::uniqueId()
//   comm.estimateTime(scCollAllReduce, n, scFloat32);     // the cost model's prediction
//
// Failures throw sparcoll::Error carrying the scResult_t and the detailed
// message of scGetLastError(). Buffers follow the C API's rules.
#ifndef SPARCOLL_SPARCOLL_HPP_
#define SPARCOLL_SPARCOLL_HPP_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sparcoll/sparcoll.h"

namespace sparcoll {

class Error : public std::runtime_error {
 public:
  Error(scResult_t code, const std::string& msg) : std::runtime_error(msg), code_(code) {}
  scResult_t code() const noexcept { return code_; }

 private:
  scResult_t code_;
};

inline void check(scResult_t r, scComm_t comm = nullptr) {
  if (r != scSuccess) {
    const char* detail = scGetLastError(comm);
    throw Error(r, (detail && *detail) ? detail : scGetErrorString(r));
  }
}

// scDataType_t of a C++ element type (float16/bfloat16: pass the dtype explicitly).
template <typename T>
struct DataTypeOf;
template <>
struct DataTypeOf<int8_t> {
  static constexpr scDataType_t value = scInt8;
};
template <>
struct DataTypeOf<uint8_t> {
  static constexpr scDataType_t value = scUint8;
};
template <>
struct DataTypeOf<int32_t> {
  static constexpr scDataType_t value = scInt32;
};
template <>
struct DataTypeOf<uint32_t> {
  static constexpr scDataType_t value = scUint32;
};
template <>
struct DataTypeOf<int64_t> {
  static constexpr scDataType_t value = scInt64;
};
template <>
struct DataTypeOf<uint64_t> {
  static constexpr scDataType_t value = scUint64;
};
template <>
struct DataTypeOf<float> {
  static constexpr scDataType_t value = scFloat32;
};
template <>
struct DataTypeOf<double> {
  static constexpr scDataType_t value = scFloat64;
};

class Config {
 public:
  Config() : c_(SC_CONFIG_INITIALIZER) {}
  Config& transport(scTransport_t t) {
    c_.transport = t;
    return *this;
  }
  Config& device(int d) {
    c_.device = d;
    return *this;
  }
  Config& timeout(double seconds) {
    c_.timeoutSeconds = seconds;
    return *this;
  }
  Config& algorithm(scAlgo_t a) {
    c_.algo = a;
    return *this;
  }
  Config& pipelineBytes(size_t b) {
    c_.pipelineBytes = b;
    return *this;
  }
  // A tuning file (README "Cost model"); "" = env SPARCOLL_TUNING_FILE. Kept here, so a
  // Config may be copied and outlive the caller's string.
  Config& tuningFile(std::string path) {
    tuning_ = std::move(path);
    return *this;
  }
  const scConfig_t* get() const {
    c_.tuningFile = tuning_.empty() ? nullptr : tuning_.c_str();
    return &c_;
  }

 private:
  mutable scConfig_t c_;
  std::string tuning_;
};

// A cost-model prediction (scEstimateTime): seconds of the algorithm asked
// for, and what auto would run (a value of the collective's algorithm enum).
struct Estimate {
  double seconds = 0;
  int autoAlgo = 0;
};

// Owns one scComm_t. Movable, not copyable.
class Comm {
 public:
  Comm() = default;
  explicit Comm(scComm_t c) : c_(c) {}
  Comm(Comm&& o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
  Comm& operator=(Comm&& o) noexcept {
    if (this != &o) {
      reset();
      c_ = std::exchange(o.c_, nullptr);
    }
    return *this;
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm() { reset(); }

  // mpiComm: pointer to an MPI_Comm, nullptr = MPI_COMM_WORLD.
  static Comm mpi(const void* mpiComm = nullptr, const Config& cfg = Config()) {
    scComm_t c = nullptr;
    check(scCommInitMpi(&c, mpiComm, cfg.get()));
    return Comm(c);
  }
  // NCCL-style creation without MPI: one process makes uniqueId(), every rank
  // gets it and calls fromUniqueId (cfg.device -1 = the current CUDA device).
  static scUniqueId uniqueId() {
    scUniqueId id;
    check(scGetUniqueId(&id));
    return id;
  }
  static Comm fromUniqueId(int nranks, const scUniqueId& id, int rank, const Config& cfg = Config()) {
    scComm_t c = nullptr;
    check(scCommInitRank(&c, nranks, id, rank, cfg.get()));
    return Comm(c);
  }
  // nranks communicators for nranks threads; devices empty = host memory.
  static std::vector<Comm> local(int nranks, const std::vector<int>& devices = {}, const Config& cfg = Config()) {
    if (!devices.empty() && int(devices.size()) != nranks)
      throw Error(scInvalidArgument, "devices must be empty or have one entry per rank");
    std::vector<scComm_t> raw(nranks > 0 ? nranks : 0);
    check(scCommInitLocal(raw.data(), nranks, devices.empty() ? nullptr : devices.data(), cfg.get()));
    std::vector<Comm> out;
    for (scComm_t c : raw) out.emplace_back(c);
    return out;
  }

  scComm_t get() const { return c_; }
  int rank() const {
    int r = 0;
    check(scCommRank(c_, &r), c_);
    return r;
  }
  int size() const {
    int s = 0;
    check(scCommSize(c_, &s), c_);
    return s;
  }
  // The CUDA device of a device communicator, -1 for a host one.
  int device() const {
    int d = -1;
    check(scCommDevice(c_, &d), c_);
    return d;
  }
  scStats_t stats() const {
    scStats_t s{};
    check(scCommGetStats(c_, &s), c_);
    return s;
  }
  void resetStats() { check(scCommResetStats(c_), c_); }
  void barrier(void* stream = nullptr) { check(scBarrier(c_, stream), c_); }
  // scCommAbort: peers waiting on this rank fail within about a second.
  void abort() { check(scCommAbort(c_), c_); }
  // scCommShrink: a communicator of the other ranks, by every rank not excluded.
  Comm shrink(const std::vector<int>& exclude) const {
    scComm_t c = nullptr;
    check(scCommShrink(c_, exclude.data(), int(exclude.size()), &c), c_);
    return Comm(c);
  }
  // The cost model's prediction for one call (scEstimateTime: count, dt and density as there).
  Estimate estimateTime(scCollective_t coll, size_t count, scDataType_t dt, int algo = 0, double density = 0) const {
    Estimate e;
    check(scEstimateTime(c_, coll, algo, count, dt, density, &e.seconds, &e.autoAlgo), c_);
    return e;
  }

  void allReduce(const void* send, void* recv, size_t count, scDataType_t dt, scRedOp_t op = scSum,
                 scAlgo_t algo = scAlgoAuto, void* stream = nullptr) {
    check(scAllReduce(send, recv, count, dt, op, algo, c_, stream), c_);
  }
  template <typename T>
  void allReduce(const T* send, T* recv, size_t count, scRedOp_t op = scSum, scAlgo_t algo = scAlgoAuto,
                 void* stream = nullptr) {
    allReduce(send, recv, count, DataTypeOf<T>::value, op, algo, stream);
  }
  void reduceScatter(const void* send, void* recv, size_t recvcount, scDataType_t dt, scRedOp_t op = scSum,
                     scAlgo_t algo = scAlgoAuto, void* stream = nullptr) {
    check(scReduceScatter(send, recv, recvcount, dt, op, algo, c_, stream), c_);
  }
  template <typename T>
  void reduceScatter(const T* send, T* recv, size_t recvcount, scRedOp_t op = scSum, scAlgo_t algo = scAlgoAuto,
                     void* stream = nullptr) {
    reduceScatter(send, recv, recvcount, DataTypeOf<T>::value, op, algo, stream);
  }
  void allGather(const void* send, void* recv, size_t sendcount, scDataType_t dt, scAlgo_t algo = scAlgoAuto,
                 void* stream = nullptr) {
    check(scAllGather(send, recv, sendcount, dt, algo, c_, stream), c_);
  }
  template <typename T>
  void allGather(const T* send, T* recv, size_t sendcount, scAlgo_t algo = scAlgoAuto, void* stream = nullptr) {
    allGather(send, recv, sendcount, DataTypeOf<T>::value, algo, stream);
  }
  // In place: every rank's buf ends up holding root's (scBroadcast).
  void broadcast(void* buf, size_t count, scDataType_t dt, int root = 0, scAlgo_t algo = scAlgoAuto,
                 void* stream = nullptr) {
    check(scBroadcast(buf, count, dt, root, algo, c_, stream), c_);
  }
  template <typename T>
  void broadcast(T* buf, size_t count, int root = 0, scAlgo_t algo = scAlgoAuto, void* stream = nullptr) {
    broadcast(buf, count, DataTypeOf<T>::value, root, algo, stream);
  }

 private:
  void reset() noexcept {
    if (c_) scCommDestroy(c_);
    c_ = nullptr;
  }
  scComm_t c_ = nullptr;
};

// The cost model of a hypothetical communicator: nranks ranks on `machines`
// machines, made with cfg here (scCostModelCreate). Movable, not copyable.
class CostModel {
 public:
  explicit CostModel(int nranks, int machines = 1, bool device = false, const Config& cfg = Config()) {
    check(scCostModelCreate(&m_, cfg.get(), nranks, machines, device ? 1 : 0));
  }
  CostModel(CostModel&& o) noexcept : m_(std::exchange(o.m_, nullptr)) {}
  CostModel& operator=(CostModel&& o) noexcept {
    if (this != &o) {
      scCostModelDestroy(m_);
      m_ = std::exchange(o.m_, nullptr);
    }
    return *this;
  }
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;
  ~CostModel() { scCostModelDestroy(m_); }

  Estimate estimateTime(scCollective_t coll, size_t count, scDataType_t dt, int algo = 0, double density = 0) const {
    Estimate e;
    check(scCostModelEstimateTime(m_, coll, algo, count, dt, density, &e.seconds, &e.autoAlgo));
    return e;
  }
  // A neighbour allgather's terms (scTopologyCostTerms) priced for blocks of
  // `bytes` bytes (scCostModelNeighborTime).
  double neighborTime(const scNbrCostTerms_t& terms, size_t bytes) const {
    double s = 0;
    check(scCostModelNeighborTime(m_, &terms, bytes, &s));
    return s;
  }

 private:
  scCostModel_t m_ = nullptr;
};

}  // namespace sparcoll

#endif  // SPARCOLL_SPARCOLL_HPP_
