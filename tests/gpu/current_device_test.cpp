// Every API call leaves the caller's current CUDA device as it found it. Ranks
// are often threads, and a call that moved its caller to another GPU would
// send the caller's next kernel or allocation there. The caller sits on one
// GPU (its "home") while the work is elsewhere: a host communicator (no
// device at all), a device-local communicator on the other GPU, NCCL ranks
// each on the GPU that is not their caller's, and top-k on the other GPU's
// memory. After each call the current device must still be home. Needs 2 GPUs
// (with one, no call could move its caller anywhere).
#include <thread>

#include "common/harness.h"
#include "gpu/gpu_util.h"

namespace {

// Fails the test when a call failed or left the caller off `home` (then puts
// the caller back, so every call is judged on its own).
struct Probe {
  int home;
  scComm_t comm;
  void operator()(scResult_t r, const char* what) const {
    EXPECT_EQ(r, scSuccess) << what << ": " << scGetLastError(comm) << scGetLastError(nullptr);
    int d = -1;
    EXPECT_EQ(cudaGetDevice(&d), cudaSuccess);
    EXPECT_EQ(d, home) << what << " left its caller on device " << d << " instead of " << home;
    if (d != home) cudaSetDevice(home);
  }
};
#define CALL(expr) call((expr), #expr)

// Buffers where the communicator works: host memory, or device `device`
// (allocated there, the caller then back on home).
struct Buffers {
  int device, home;  // device < 0: host
  std::vector<std::vector<char>> host;
  std::vector<void*> dev;
  ~Buffers() {
    for (void* p : dev) cudaFree(p);
  }
  template <typename T>
  void* make(const std::vector<T>& init) {
    const size_t bytes = init.size() * sizeof(T);
    if (device < 0) {
      host.emplace_back(reinterpret_cast<const char*>(init.data()), reinterpret_cast<const char*>(init.data()) + bytes);
      return host.back().data();
    }
    void* p = nullptr;
    GPU_CHECK(cudaSetDevice(device));
    GPU_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
    GPU_CHECK(cudaMemcpy(p, init.data(), bytes, cudaMemcpyHostToDevice));
    GPU_CHECK(cudaSetDevice(home));
    dev.push_back(p);
    return p;
  }
};

scConfig_t config() {
  scConfig_t c = sctest::testConfig();
  c.timeoutSeconds = 60;
  return c;
}

// Every collective, query and handle call of the C API on one rank of comm.
// native: the transport has a native collective (not device-local ones).
void everyCall(scComm_t comm, int rank, int P, bool native, bool nccl, void* stream, Buffers& B) {
  const Probe call{B.home, comm};
  int r = -1, n = 0, isDev = 0, dev = -2;
  CALL(scCommRank(comm, &r));
  CALL(scCommSize(comm, &n));
  CALL(scCommIsDevice(comm, &isDev));
  CALL(scCommDevice(comm, &dev));
  EXPECT_EQ(dev, B.device);
  scStats_t st{};
  CALL(scCommGetStats(comm, &st));
  CALL(scCommResetStats(comm));
  scAlgo_t algo = scAlgoAuto;
  CALL(scAllReduceAlgoFor(comm, 1 << 20, &algo));
  double sec = 0;
  int pick = 0;
  CALL(scEstimateTime(comm, scCollAllReduce, 0, 1 << 20, scFloat32, 0.0, &sec, &pick));

  const size_t N = 4096;
  std::vector<float> ones(N * size_t(P), 1.0f);
  void *x = B.make(ones), *y = B.make(ones);
  std::vector<scAlgo_t> algos = {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl};
  if (native) algos.push_back(scAlgoNative);
  for (scAlgo_t a : algos) CALL(scAllReduce(x, y, N, scFloat32, scSum, a, comm, stream));
  CALL(scReduceScatter(x, y, N, scFloat32, scSum, scAlgoRing, comm, stream));
  CALL(scAllGather(x, y, N, scFloat32, scAlgoRecDbl, comm, stream));
  CALL(scBroadcast(x, N, scFloat32, P - 1, scAlgoScatterAllGather, comm, stream));
  CALL(scBarrier(comm, stream));

  // Sparse allreduce: dense and sparse results, the result's accessors.
  void* si = B.make(std::vector<uint32_t>{uint32_t(rank), 10u + uint32_t(rank), 100u});
  void* sv = B.make(std::vector<float>{1, 2, 3});
  CALL(scSparseAllReduce(si, sv, 3, N, scIndexU32, scFloat32, scSum, scSsarRecDbl, y, comm, stream));
  CALL(scSparseAllReduce(si, sv, 3, N, scIndexU32, scFloat32, scSum, scSparseDense, y, comm, stream));
  scSparseResult_t res = nullptr;
  CALL(scSparseResultCreate(comm, &res));
  CALL(scSparseAllReduceToSparse(si, sv, 3, N, scIndexU32, scFloat32, scSum, scSsarSplitAllGather, nullptr, res, comm,
                                 stream));
  int isDense = 0;
  size_t nnz = 0, dim = 0;
  const void *ri = nullptr, *rv = nullptr;
  scSparseAlgo_t sa = scSparseAuto;
  CALL(scSparseResultIsDense(res, &isDense));
  CALL(scSparseResultNnz(res, &nnz));
  CALL(scSparseResultDim(res, &dim));
  CALL(scSparseResultIndices(res, &ri));
  CALL(scSparseResultValues(res, &rv));
  CALL(scSparseResultAlgo(res, &sa));
  CALL(scSparseResultDestroy(res));
  const std::vector<size_t> perRank(size_t(P), 3);
  CALL(scSparseAlgoFor(comm, perRank.data(), N, scIndexU32, scFloat32, nullptr, 1, &sa));

  // DSOP, dense and sparse inputs.
  void* a = B.make(std::vector<float>(16, 1.0f));
  void* b = B.make(std::vector<float>(8, 2.0f));
  void* G = B.make(std::vector<float>(16 * 8, 0.0f));
  for (scDsopAlgo_t d : {scDsopAllGather, scDsopAllReduceRing, scDsopGRabenseifner, scDsopAllScatter})
    CALL(scDsop(a, 16, b, 8, G, scFloat32, d, comm, stream));
  void* di = B.make(std::vector<uint64_t>{1, 5});
  CALL(scDsopSparse(static_cast<const uint64_t*>(di), a, 2, 16, static_cast<const uint64_t*>(di), b, 2, 8, G, scFloat32,
                    scDsopGRabenseifner, comm, stream));
  scDsopAlgo_t da = scDsopAuto;
  CALL(scDsopAlgoFor(comm, 16, 8, scFloat32, &da));

  // Neighbourhood allgather on a ring.
  const int src = (rank + P - 1) % P, dst = (rank + 1) % P;
  scTopology_t topo = nullptr;
  CALL(scTopologyCreate(&topo, comm, 1, &src, 1, &dst));
  CALL(scNeighborAllGather(x, 64, y, scFloat32, scNbrAuto, topo, stream));
  scNbrAlgo_t na = scNbrAuto;
  CALL(scNeighborAlgoFor(topo, 256, &na));
  CALL(scTopologyDestroy(topo));

  // A shrunk copy (nobody excluded) runs a call and goes away. NCCL shrinks
  // only from 2.27 on; an older one refuses (scInvalidUsage), its caller
  // still on home.
  scComm_t sub = nullptr;
  const scResult_t shrunk = scCommShrink(comm, nullptr, 0, &sub);
  if (nccl && shrunk == scInvalidUsage) {
    EXPECT_EQ(gputest::currentDevice(), B.home) << "a refused scCommShrink moved its caller";
  } else {
    call(shrunk, "scCommShrink");
    CALL(scAllReduce(x, y, N, scFloat32, scSum, scAlgoRing, sub, stream));
    CALL(scCommDestroy(sub));
  }

  // Top-k where the buffers are: stateless, then a state on the same memory.
  scTopkConfig_t cfg = SC_TOPK_CONFIG_INITIALIZER;
  cfg.k = 40;
  void* ti = B.make(std::vector<uint64_t>(N, 0));
  void* tv = B.make(std::vector<float>(N, 0.0f));
  scTopkInfo_t info{};
  for (scTopkMethod_t m : {scTopkApprox, scTopkExact, scTopkThreshold}) {
    cfg.method = m;
    CALL(scTopkSelect(x, N, scFloat32, &cfg, ti, tv, N, &info, stream));
  }
  cfg.method = scTopkApprox;
  scTopkState_t ts = nullptr;
  uint64_t step = 0;
  CALL(scTopkStateCreate(&ts, N, scFloat32, B.device));
  CALL(scTopkSelectFeedback(ts, x, &cfg, ti, tv, N, &info, stream));
  void* residual = nullptr;
  CALL(scTopkStateResidual(ts, &residual));
  CALL(scTopkStateGetStep(ts, &step));
  CALL(scTopkStateSetStep(ts, step + 1));
  CALL(scTopkStateReset(ts, stream));
  CALL(scTopkStateDestroy(ts));
  if (stream) EXPECT_EQ(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), cudaSuccess);
}

// P local ranks (devices: NULL for host memory), every thread on `home`; the
// creation and the destruction are probed too.
void runLocal(int P, const int* devices, int home) {
  GPU_CHECK(cudaSetDevice(home));
  const Probe call{home, nullptr};
  const scConfig_t cfg = config();
  std::vector<scComm_t> comms(size_t(P), nullptr);
  CALL(scCommInitLocal(comms.data(), P, devices, &cfg));
  if (!comms[0]) return;
  std::vector<std::thread> ts;
  for (int r = 0; r < P; ++r)
    ts.emplace_back([&, r] {
      gputest::guarded([&](scComm_t comm, int rank) {
        cudaStream_t s = nullptr;
        if (devices) {
          GPU_CHECK(cudaSetDevice(devices[rank]));
          GPU_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        }
        GPU_CHECK(cudaSetDevice(home));
        Buffers B{devices ? devices[rank] : -1, home, {}, {}};
        everyCall(comm, rank, P, !devices, false, s, B);
        if (s) cudaStreamDestroy(s);
      })(comms[size_t(r)], r);
    });
  for (auto& t : ts) t.join();
  for (scComm_t c : comms) CALL(scCommDestroy(c));
}

TEST(CurrentDevice, HostCommunicator) {
  SC_REQUIRE_GPU();
  SC_REQUIRE_GPUS(2);
  runLocal(2, nullptr, 1);  // home 1: a stray switch to the default device 0 shows
}

TEST(CurrentDevice, DeviceLocalCommunicator) {
  SC_REQUIRE_GPU();
  SC_REQUIRE_GPUS(2);
  const int devices[2] = {1, 1};
  runLocal(2, devices, 0);
}

#ifdef SPARCOLL_HAVE_NCCL
// Two NCCL ranks from one unique id, rank r on GPU r, its thread on the other.
TEST(CurrentDevice, NcclCommunicator) {
  SC_REQUIRE_GPU();
  SC_REQUIRE_GPUS(2);
  const int P = 2;
  scUniqueId id;
  ASSERT_EQ(scGetUniqueId(&id), scSuccess) << scGetLastError(nullptr);
  std::vector<std::thread> ts;
  for (int r = 0; r < P; ++r)
    ts.emplace_back([&, r] {
      const int dev = r, home = 1 - r;
      gputest::guarded([&](scComm_t, int rank) {
        GPU_CHECK(cudaSetDevice(dev));
        cudaStream_t s = nullptr;
        GPU_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        GPU_CHECK(cudaSetDevice(home));
        const Probe call{home, nullptr};
        scConfig_t cfg = config();
        cfg.device = dev;
        scComm_t comm = nullptr;
        CALL(scCommInitRank(&comm, P, id, rank, &cfg));
        if (!comm) return;
        Buffers B{dev, home, {}, {}};
        everyCall(comm, rank, P, true, true, s, B);
        CALL(scCommDestroy(comm));
        cudaStreamDestroy(s);
      })(nullptr, r);
    });
  for (auto& t : ts) t.join();
}
#endif

// Top-k without a communicator: the input's device runs the work, whatever
// device the caller is on; stateless and with a state, on a NULL stream too.
TEST(CurrentDevice, TopkOnAnotherDevice) {
  SC_REQUIRE_GPU();
  SC_REQUIRE_GPUS(2);
  for (int home : {0, 1}) {
    GPU_CHECK(cudaSetDevice(home));
    Buffers B{1 - home, home, {}, {}};
    const Probe call{home, nullptr};
    const size_t N = 100000;
    std::vector<float> v(N);
    for (size_t i = 0; i < N; ++i) v[i] = float(int(i * 7919 % 2001) - 1000);
    void *x = B.make(v), *ti = B.make(std::vector<uint32_t>(N)), *tv = B.make(std::vector<float>(N));
    scTopkConfig_t cfg = SC_TOPK_CONFIG_INITIALIZER;
    cfg.k = 1000;
    scTopkInfo_t info{};
    size_t cap = 0;
    for (scTopkMethod_t m : {scTopkApprox, scTopkApproxAtMost, scTopkExact, scTopkThreshold}) {
      cfg.method = m;
      CALL(scTopkMaxOutput(N, &cfg, &cap));
      CALL(scTopkSelect(x, N, scFloat32, &cfg, ti, tv, N, &info, nullptr));
      CALL(scTopkSelect(x, N, scFloat32, &cfg, ti, tv, N, nullptr, nullptr));
    }
    scTopkState_t ts = nullptr;
    CALL(scTopkStateCreate(&ts, N, scFloat32, 1 - home));
    CALL(scTopkSelectFeedback(ts, x, &cfg, ti, tv, N, &info, nullptr));
    CALL(scTopkStateReset(ts, nullptr));
    CALL(scTopkStateDestroy(ts));
  }
}

}  // namespace
