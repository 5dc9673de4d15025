// GPU sparse allreduce (label gpu): every CUDA stream operation against the CPU
// reference on random and adversarial inputs (ops_suite.h), for both index
// types and every value width; then every schedule on device memory over the
// local transport (P threads sharing GPU 0) against the exact reference, dense
// and sparse results, bit-identical across ranks. Skips without a device.
#include <cuda_runtime_api.h>

#include "gpu/gpu_util.h"
#include "ops_suite.h"
#include "sparse_check.h"

namespace sptest {
namespace {

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

struct DevMem : Mem {
  std::vector<void*> ptrs;
  ~DevMem() override {
    for (void* p : ptrs) cudaFree(p);
  }
  void* alloc(size_t bytes) override {
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, std::max<size_t>(bytes, 1)), cudaSuccess);
    EXPECT_EQ(cudaMemset(p, 0xCD, std::max<size_t>(bytes, 1)), cudaSuccess);  // garbage, like the host suite
    ptrs.push_back(p);
    return p;
  }
  void put(void* dst, const void* src, size_t bytes) override {
    if (bytes) EXPECT_EQ(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  }
  void get(void* dst, const void* src, size_t bytes) override {
    if (bytes) EXPECT_EQ(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  }
};

using gputest::Slots;

TEST(SparseGpu, OpsMatchCpuReference) {
  SC_REQUIRE_GPU();
  CUDA_OK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  for (scIndexType_t it : {scIndexU32, scIndexU64})
    for (scDataType_t vt : {scInt8, scUint8, scInt32, scInt64, scFloat16, scBfloat16, scFloat32, scFloat64}) {
      SCOPED_TRACE(testing::Message() << (it == scIndexU64 ? "u64 " : "u32 ") << typeStr(vt));
      Slots slots;
      sc::sp::OpsEnv env;
      env.stream = stream;
      env.device = 0;
      env.scratch = [&slots](int slot, size_t bytes) { return slots.get(slot, bytes); };
      auto ops = sc::sp::makeCudaOps(it, vt, env);
      DevMem mem;
      OpsSuite(*ops, mem, 17).runAll();
    }
  cudaStreamDestroy(stream);
}

// Every operation leaves the caller's current device as it found it (the ops
// work on env.device = 0; the caller is on device 1). Needs two GPUs.
TEST(SparseGpu, OpsKeepTheCallersDevice) {
  SC_REQUIRE_GPU();
  int n = 0;
  CUDA_OK(cudaGetDeviceCount(&n));
  if (n < 2) GTEST_SKIP() << "needs 2 GPUs (a call on device 0 from a thread on device 1)";
  CUDA_OK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  Slots slots;
  sc::sp::OpsEnv env;
  env.stream = stream;
  env.device = 0;
  env.scratch = [&slots](int slot, size_t bytes) { return slots.get(slot, bytes); };
  DevMem mem;
  const uint32_t hi[] = {3, 1, 3, 7};
  const float hv[] = {1, 2, 3, 4};
  void *idx = mem.alloc(sizeof hi), *val = mem.alloc(sizeof hv), *oi = mem.alloc(64), *ov = mem.alloc(64),
       *dense = mem.alloc(64), *words = mem.alloc(64);
  mem.put(idx, hi, sizeof hi);
  mem.put(val, hv, sizeof hv);
  CUDA_OK(cudaSetDevice(1));
  auto ops = sc::sp::makeCudaOps(scIndexU32, scFloat32, env);
  auto* cnt = static_cast<uint64_t*>(words);
  auto expectOn1 = [](const char* what) {
    int d = -1;
    ASSERT_EQ(cudaGetDevice(&d), cudaSuccess);
    EXPECT_EQ(d, 1) << what << " moved the caller to device " << d;
  };
  expectOn1("makeCudaOps");
  ops->validate(idx, 4, 8, true, cnt);
  expectOn1("validate");
  ops->sortCoalesce(idx, val, 4, oi, ov, cnt);
  expectOn1("sortCoalesce");
  ops->mergeSum(oi, ov, 3, oi, ov, 0, idx, val, cnt);
  expectOn1("mergeSum");
  ops->densify(oi, ov, 3, 0, 8, dense);
  expectOn1("densify");
  ops->scatterAdd(oi, ov, 3, 0, dense);
  expectOn1("scatterAdd");
  const uint64_t bounds[] = {0, 4, 8};
  ops->split(oi, 3, nullptr, bounds, 2, cnt, cnt + 3);
  expectOn1("split");
  ops->sparsify(dense, 8, 0, oi, ov, cnt);
  expectOn1("sparsify");
  uint64_t m = 0;
  ops->toHost(&m, cnt, 8);
  expectOn1("toHost");
  EXPECT_EQ(m, 3u);  // 1, 3, 7 are non-zero
  CUDA_OK(cudaSetDevice(0));
  cudaStreamDestroy(stream);
}

// The schedules on device buffers: P threads, one device-local communicator each.
TEST(SparseGpu, SchedulesOnDeviceMemory) {
  SC_REQUIRE_GPU();
  for (int P : {1, 2, 3, 4, 5, 8}) {
    SCOPED_TRACE(testing::Message() << "P=" << P);
    const uint64_t N = 50021;
    struct Case {
      Dist d;
      double dens;
      scDataType_t dt;
      scIndexType_t it;
      scRedOp_t op;
    };
    const Case cases[] = {{Dist::Uniform, 1e-3, scFloat32, scIndexU32, scSum},
                          {Dist::PowerLaw, 0.05, scFloat16, scIndexU64, scSum},
                          {Dist::Uniform, 0.3, scInt32, scIndexU32, scAvg},
                          {Dist::Disjoint, 1.0 / P, scBfloat16, scIndexU32, scSum},
                          {Dist::Identical, 0.01, scFloat64, scIndexU64, scAvg},
                          {Dist::Uniform, 1.0, scUint8, scIndexU32, scSum}};
    std::vector<std::vector<Input>> inputs;
    std::vector<std::vector<uint8_t>> wants;
    for (const Case& c : cases) {
      inputs.push_back(makeAll(c.d, N, kFor(N, c.dens), P, inputs.size() + 3, isUnsigned(c.dt)));
      wants.push_back(expectedDense(inputs.back(), N, c.dt, c.op));
    }
    std::vector<int> devices(P, 0);
    scConfig_t cfg = sctest::testConfig();
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
          cudaStream_t stream;
          ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
          scSparseResult_t res = nullptr;
          ASSERT_EQ(scSparseResultCreate(comm, &res), scSuccess);
          for (size_t ci = 0; ci < std::size(cases); ++ci) {
            const Case& c = cases[ci];
            const Input& in = inputs[ci][rank];
            const auto hi = packIndices(in.idx, c.it);
            const auto hv = packValues(in.val, c.dt);
            const size_t esz = typeSize(c.dt), isz = c.it == scIndexU64 ? 8 : 4;
            void *di = nullptr, *dv = nullptr, *dout = nullptr;
            ASSERT_EQ(cudaMalloc(&di, hi.size() + 1), cudaSuccess);
            ASSERT_EQ(cudaMalloc(&dv, hv.size() + 1), cudaSuccess);
            ASSERT_EQ(cudaMalloc(&dout, N * esz), cudaSuccess);
            ASSERT_EQ(cudaMemcpy(di, hi.data(), hi.size(), cudaMemcpyHostToDevice), cudaSuccess);
            ASSERT_EQ(cudaMemcpy(dv, hv.data(), hv.size(), cudaMemcpyHostToDevice), cudaSuccess);
            for (scSparseAlgo_t algo : kAllAlgos) {
              SCOPED_TRACE(testing::Message() << "case " << ci << " " << scSparseAlgoName(algo));
              // Dense result.
              EXPECT_EQ(scSparseAllReduce(di, dv, in.idx.size(), N, c.it, c.dt, c.op, algo, dout, comm, stream),
                        scSuccess)
                  << scGetLastError(comm);
              EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
              std::vector<uint8_t> out(N * esz);
              EXPECT_EQ(cudaMemcpy(out.data(), dout, out.size(), cudaMemcpyDeviceToHost), cudaSuccess);
              EXPECT_EQ(compareDense(out.data(), wants[ci], N, c.dt), "") << "rank " << rank;
              int d1 = 0;  // bit-identical across ranks (digest over host-side copies)
              EXPECT_TRUE(sameOnAllRanks(comm, digest(out.data(), out.size()))) << "rank " << rank;
              // Sparse result.
              EXPECT_EQ(scSparseAllReduceToSparse(di, dv, in.idx.size(), N, c.it, c.dt, c.op, algo, nullptr, res, comm,
                                                  stream),
                        scSuccess)
                  << scGetLastError(comm);
              EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
              size_t nnz = 0;
              const void *ri = nullptr, *rv = nullptr;
              scSparseResultIsDense(res, &d1);
              scSparseResultNnz(res, &nnz);
              scSparseResultIndices(res, &ri);
              scSparseResultValues(res, &rv);
              std::vector<uint8_t> hri(nnz * isz + 1), hrv(nnz * esz + 1);
              if (!d1 && nnz) EXPECT_EQ(cudaMemcpy(hri.data(), ri, nnz * isz, cudaMemcpyDeviceToHost), cudaSuccess);
              if (nnz) EXPECT_EQ(cudaMemcpy(hrv.data(), rv, nnz * esz, cudaMemcpyDeviceToHost), cudaSuccess);
              if (d1) EXPECT_EQ(compareDense(hrv.data(), wants[ci], N, c.dt), "") << "rank " << rank;
              else
                EXPECT_EQ(compareSparse(hri.data(), hrv.data(), nnz, c.it, wants[ci], N, c.dt), "") << "rank " << rank;
            }
            cudaFree(di);
            cudaFree(dv);
            cudaFree(dout);
          }
          scSparseResultDestroy(res);
          cudaStreamDestroy(stream);
        },
        &cfg, devices.data());
  }
}

// Bad input on device memory is caught (the check runs on the GPU) and
// reported on every rank; the communicator stays usable.
TEST(SparseGpu, BadInputOnDevice) {
  SC_REQUIRE_GPU();
  const int P = 2;
  std::vector<int> devices(P, 0);
  scConfig_t cfg = sctest::testConfig();
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
        const uint32_t good[] = {1, 5, 9}, bad[] = {1, 9, 5};
        const float val[] = {1, 2, 3};
        void *di = nullptr, *dv = nullptr, *dout = nullptr;
        ASSERT_EQ(cudaMalloc(&di, sizeof good), cudaSuccess);
        ASSERT_EQ(cudaMalloc(&dv, sizeof val), cudaSuccess);
        ASSERT_EQ(cudaMalloc(&dout, 10 * sizeof(float)), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(di, rank == 1 ? bad : good, sizeof good, cudaMemcpyHostToDevice), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(dv, val, sizeof val, cudaMemcpyHostToDevice), cudaSuccess);
        EXPECT_EQ(scSparseAllReduce(di, dv, 3, 10, scIndexU32, scFloat32, scSum, scSparseAuto, dout, comm, nullptr),
                  scInvalidArgument);
        const std::string msg = scGetLastError(comm);
        if (rank == 1) EXPECT_NE(msg.find("indices[2] = 5 is below indices[1] = 9"), std::string::npos) << msg;
        else EXPECT_NE(msg.find("on another rank"), std::string::npos) << msg;
        // Host memory on a device communicator is rejected.
        EXPECT_EQ(scSparseAllReduce(good, val, 3, 10, scIndexU32, scFloat32, scSum, scSparseAuto, dout, comm, nullptr),
                  scInvalidArgument);
        ASSERT_EQ(cudaMemcpy(di, good, sizeof good, cudaMemcpyHostToDevice), cudaSuccess);
        EXPECT_EQ(scSparseAllReduce(di, dv, 3, 10, scIndexU32, scFloat32, scSum, scSparseAuto, dout, comm, nullptr),
                  scSuccess)
            << scGetLastError(comm);
        cudaFree(di);
        cudaFree(dv);
        cudaFree(dout);
      },
      &cfg, devices.data());
}

}  // namespace
}  // namespace sptest
