// A host communicator in a CUDA build must not create a CUDA context: an MPI
// rank on host buffers that lands on a GPU node would otherwise take a
// context (hundreds of MB, hundreds of ms) on GPU 0 from its first call.
// One test per process, run first: the process has no context when it starts.
// The driver is asked through the runtime's entry point lookup (no libcuda link).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "common/harness.h"
#include "sparcoll/sparcoll.h"

namespace {

template <class F>
F driverFn(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess) return nullptr;
  return reinterpret_cast<F>(p);
}

// Devices whose primary context is active.
std::vector<int> activeContexts() {
  auto state = driverFn<CUresult (*)(CUdevice, unsigned*, int*)>("cuDevicePrimaryCtxGetState");
  std::vector<int> active;
  for (int d = 0; state && d < sctest::gpuCount(); ++d) {
    unsigned flags = 0;
    int on = 0;
    if (state(CUdevice(d), &flags, &on) == CUDA_SUCCESS && on) active.push_back(d);
  }
  return active;
}

TEST(GpuNoContext, HostCallsCreateNoContextAndDevicePointersAreStillRejected) {
  if (sctest::gpuCount() == 0) GTEST_SKIP() << "no CUDA device present";
  ASSERT_TRUE(activeContexts().empty()) << "a context existed before any sparcoll call";
  constexpr int P = 2;
  scComm_t comms[P];
  ASSERT_EQ(scCommInitLocal(comms, P, nullptr, nullptr), scSuccess) << scGetLastError(nullptr);
  std::vector<std::thread> ts;
  std::vector<scResult_t> rc(P * 4, scInternalError);
  for (int r = 0; r < P; ++r)
    ts.emplace_back([&, r] {
      std::vector<float> x(1000, float(r + 1)), y(1000 * P);
      rc[r * 4 + 0] = scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoAuto, comms[r], nullptr);
      rc[r * 4 + 1] = scAllGather(x.data(), y.data(), x.size(), scFloat32, scAlgoAuto, comms[r], nullptr);
      const uint32_t idx[2] = {3, 7 + uint32_t(r)};
      const float val[2] = {1, 2};
      rc[r * 4 + 2] =
          scSparseAllReduce(idx, val, 2, 1000, scIndexU32, scFloat32, scSum, scSparseAuto, y.data(), comms[r], nullptr);
      scTopkConfig_t cfg = SC_TOPK_CONFIG_INITIALIZER;
      cfg.method = scTopkExact;
      cfg.k = 10;
      std::vector<uint32_t> oi(10);
      std::vector<float> ov(10);
      rc[r * 4 + 3] = scTopkSelect(x.data(), x.size(), scFloat32, &cfg, oi.data(), ov.data(), 10, nullptr, nullptr);
    });
  for (auto& t : ts) t.join();
  for (int i = 0; i < P * 4; ++i) EXPECT_EQ(rc[i], scSuccess) << "call " << i % 4 << " on rank " << i / 4;
  EXPECT_TRUE(activeContexts().empty()) << "host calls created a CUDA context";

  // Once a context exists, a device pointer passed to a host communicator is
  // still detected and rejected.
  void* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 4000), cudaSuccess);
  ts.clear();
  for (int r = 0; r < P; ++r)
    ts.emplace_back([&, r] { rc[r] = scAllReduce(d, d, 1000, scFloat32, scSum, scAlgoAuto, comms[r], nullptr); });
  for (auto& t : ts) t.join();
  for (int r = 0; r < P; ++r) {
    EXPECT_EQ(rc[r], scInvalidArgument) << "rank " << r;
    EXPECT_NE(std::string(scGetLastError(comms[r])).find("device memory"), std::string::npos)
        << scGetLastError(comms[r]);
  }
  cudaFree(d);
  for (int r = 0; r < P; ++r) scCommDestroy(comms[r]);
}

}  // namespace
